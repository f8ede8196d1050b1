"""The handlers of the ``serve`` commands (``ratio_bench.serve.cli`` builds their parsers and names these
handlers as strings; ``cli.handler`` imports this module when one of them runs, so ``--help`` and argument errors
load none of the libraries below)."""

from __future__ import annotations

import argparse
import ipaddress
import json
import shlex
import sys
from pathlib import Path

from rich.table import Table
from rich.text import Text

from ratio_bench.core import extras
from ratio_bench.core.errors import RatioError, UsageError
from ratio_bench.core.extras import require
from ratio_bench.core.io import RejectLog, prepare_output_dir, report_console
from ratio_bench.corpus.options import reader_settings
from ratio_bench.dataset.hub_release import release_folder
from ratio_bench.evaluation.analysis.typed_hits import is_hits_file, read_queries, write_hits
from ratio_bench.leaderboard.board import LiveBoard
from ratio_bench.leaderboard.hub import RepoRef
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.serve import candidates
from ratio_bench.serve.batch import search_queries
from ratio_bench.serve.index import KIND, build_index, load_index, parse_model_args
from ratio_bench.serve.launch import listen, searcher_of, server_config
from ratio_bench.serve.search import ROLE_PRIOR, QueryError, Searcher, check_query

QUERY_FLAGS = {"text": "TEXT", "moves": "--moves", "k": "--k"}  # a query error's field, as a flag


def cmd_index(args: argparse.Namespace) -> int:
    if bool(args.dataset) == bool(args.corpus):
        raise UsageError("give either --dataset DIR --split SPLIT or --corpus PATH...")
    if args.corpus_meta and not args.dataset:
        raise UsageError(
            "--corpus-meta goes with --dataset (own papers read with --corpus carry their titles)"
        )
    models = parse_model_args(args.model)
    prepare_output_dir(args.out, KIND)  # before minutes of reading and encoding
    console = report_console()

    if args.dataset:
        args.dataset = release_folder(args.dataset)  # a Hub release: its checked copy in the cache
        cands = candidates.from_release(
            args.dataset, args.split, args.corpus_meta or (), reader_settings(args)
        )
    else:
        with RejectLog(args.rejects) as rejects:
            cands = candidates.from_corpus(args.corpus, reader_settings(args), rejects)
    console.print(
        ", ".join(f"{k}: {v:,}" if isinstance(v, int) else f"{k}: {v}" for k, v in cands.counts.items())
    )
    report = build_index(
        cands,
        models,
        args.out,
        cache=EmbeddingCache(args.cache_dir),
        ann_kind=args.ann,
        batch_size=args.batch_size,
        trust_remote_code=args.trust_remote_code,
    )
    for key, name in report.models.items():
        seconds = report.encode_s.get(key)
        console.print(
            f"{name}: " + (f"encoded in {seconds:.1f} s" if seconds is not None else "BM25 index saved")
        )
        if key in report.ann:
            a = report.ann[key]
            console.print(
                f"  {a.kind}: built in {a.build_s:.1f} s, recall@10 vs exact {a.recall_at_10:.3f}, "
                f"{a.ann_ms:.2f} ms vs {a.exact_ms:.2f} ms per query (x{a.speedup:.1f})"
            )
    if args.ann and not report.ann:
        console.print(f"--ann {args.ann}: no dense model, so no ANN index (BM25 is searched as is)")
    console.print(
        f"{report.candidates:,} candidates -> {report.out} (embedding cache hits: {report.cache_hits})"
    )
    where = shlex.quote(str(report.out))
    console.print(
        f"next: ratio search 'a problem sentence' --index {where}  (or ratio serve --index {where})",
        highlight=False,
    )
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    if (args.text is None) == (args.queries is None) or (args.queries is None) != (args.out is None):
        raise UsageError("give one sentence (TEXT), or --queries FILE.jsonl with --out HITS.parquet")
    index = load_index(args.index)  # the cheap checks first: a bad query must not wait for the models
    if args.queries is not None:
        return _search_file(args, index)
    try:
        check_query(args.text, args.moves, args.k, index.moves)
    except QueryError as e:
        raise UsageError(f"{QUERY_FLAGS[e.field]}: {e}") from e
    searcher = Searcher(index, exact=args.exact, trust_remote_code=args.trust_remote_code)
    prior = args.role_prior
    results = searcher.search(args.text, args.moves, args.k, prior)
    used = searcher.prior_used(prior)
    info = searcher.describe()
    if args.json:
        json.dump(
            {
                "query": args.text,
                "k": args.k,
                "notice": info["notice"],
                "role_prior": used,
                "results": results,
            },
            sys.stdout,
            indent=2,
            ensure_ascii=False,
        )
        sys.stdout.write("\n")
        return 0
    console = report_console()
    models = info["models"]
    if info["notice"]:
        console.print(f"Not move-aware: {info['notice']}.")
    if used:
        console.print(f"{ROLE_PRIOR} (--role-prior).")
    for move, hits in results.items():
        t = Table(title=f"{move.capitalize()} ({models[move]})", show_lines=False, expand=True)
        t.add_column("#", justify="right")
        t.add_column("score", justify="right")
        t.add_column("sentence", ratio=3)
        t.add_column("paper", ratio=1)
        for h in hits:
            where = " · ".join(str(h[f]) for f in ("paper_id", "venue", "date", "section") if h[f])
            paper = Text(h["title"] + "\n", style="italic") + where if h.get("title") else Text(where)
            t.add_row(str(h["rank"]), f"{h['score']:.3f}", Text(h["text"]), paper)
        console.print(t)
    return 0


def _search_file(args: argparse.Namespace, index) -> int:
    """``ratio search --queries FILE --out HITS``: every query of the file, hits written by candidate id."""

    queries = read_queries(args.queries)
    for q in queries:
        try:
            check_query(q.text, args.moves, args.k, index.moves)
        except QueryError as e:
            raise UsageError(f"--queries {args.queries}: query {q.query_id}: {e}") from e
    if (args.out.exists() or args.out.is_symlink()) and not is_hits_file(args.out):
        raise UsageError(
            f"--out {args.out}: exists and is not a hits file of `ratio search --queries`; nothing was "
            "overwritten. Choose another path"
        )
    searcher = Searcher(index, exact=args.exact, trust_remote_code=args.trust_remote_code)
    prior = args.role_prior
    hits = search_queries(searcher, queries, args.k, args.moves, args.system or "", prior)
    source = {"models": searcher.describe()["models"], "role_prior": searcher.prior_used(prior)}
    write_hits(args.out, hits, dict(index.manifest.source) | source)
    systems = sorted({h.system for h in hits})
    report_console().print(
        f"{len(queries)} queries, {len(hits):,} hits ({', '.join(systems)}) -> {args.out}", highlight=False
    )
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    uvicorn = extras.load("uvicorn")

    app_module = extras.load("ratio_bench.serve.app")  # the serve extra (FastAPI)
    if args.docs_assets:
        app_module.check_docs_assets(args.docs_assets)
    _check_proxies(args.trust_proxy)
    live = _live_board(args)
    if args.index is None and live is None:
        raise UsageError(
            "--index: give an index to search (or --leaderboard-from REPO to serve the board only)"
        )
    sock = listen(args.host, args.port)
    if args.results and not args.results.is_dir():
        raise RatioError(f"--results {args.results}: no such folder (leaderboard entries, e.g. eval/results)")
    results, note = (None, "") if live else board_folder(args.results, Path.cwd())
    port = sock.getsockname()[1]
    site = (
        app_module.SiteAddress.for_bind(args.host, port, args.public_host)
        if live and live.allow_submissions
        else None
    )
    searcher = searcher_of(args) if args.index else None
    app = app_module.create_app(
        searcher, docs_assets=args.docs_assets, results=results, live_board=live, site=site
    )
    if note:
        print(note, file=sys.stderr)
    print(f"serving on http://{args.host}:{port}/ (API docs at /docs; Ctrl-C stops)", file=sys.stderr)
    uvicorn.Server(server_config(app, args.log_level, args.trust_proxy)).run(sockets=[sock])
    return 0


def _check_proxies(proxies: list[str]) -> None:
    """Each ``--trust-proxy`` is an address or a network (what uvicorn's forwarded_allow_ips takes), never ``*``."""

    for proxy in proxies:
        try:
            ipaddress.ip_network(proxy, strict=False)
        except ValueError:
            raise UsageError(
                f"--trust-proxy {proxy!r}: give the reverse proxy's IP address or network (e.g. 127.0.0.1, "
                "10.0.0.0/8); its X-Forwarded-For then names the client"
            ) from None


REPO_RESULTS = Path("eval") / "results"  # the committed entries, in a checkout of this repository


def board_folder(results: Path | None, cwd: Path) -> tuple[Path | None, str]:
    """The folder ``/leaderboard`` serves and the line that says so: ``--results``, else the checkout's
    ``eval/results`` when ``cwd`` has one with entries (a newcomer's ``ratio serve`` shows the committed board),
    else none, with how to get one."""
    if results is not None:
        return results, f"leaderboard at /leaderboard from {results}"
    default = cwd / REPO_RESULTS
    if default.is_dir() and any(default.glob("*.json")):
        return default, f"leaderboard at /leaderboard from {REPO_RESULTS} (--results DIR for another folder)"
    return None, f"no leaderboard: no {REPO_RESULTS} here; give --results DIR to serve one at /leaderboard"


def _live_board(args: argparse.Namespace):
    """The leaderboard service's page (``--leaderboard-from``), checked before anything is loaded."""
    if args.leaderboard_from is None:
        if args.allow_submissions or args.leaderboard_requests or args.public_host:
            raise UsageError(
                "--allow-submissions, --leaderboard-requests and --public-host go with --leaderboard-from REPO"
            )
        return None
    if args.results:
        raise UsageError("--results and --leaderboard-from: serve one leaderboard, a folder or a repository")
    if args.allow_submissions and not args.leaderboard_requests:
        raise UsageError("--allow-submissions: give the queue with --leaderboard-requests REPO")

    requests = args.leaderboard_requests and RepoRef.parse(
        args.leaderboard_requests, "--leaderboard-requests"
    )
    board = LiveBoard(
        RepoRef.parse(args.leaderboard_from, "--leaderboard-from"),
        requests.repo_id if requests else None,
        refresh_s=args.refresh,
        allow_submissions=args.allow_submissions,
    )
    board.page()  # a repository that cannot be read is a one-line error now, not a 502 later
    return board


def _host_port(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8000`` for IPv6) from ``--http``."""
    host, sep, port = value.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--http {value}: give HOST:PORT, e.g. 127.0.0.1:8765 (PORT 0: any free port)")
    return host, int(port)


def cmd_mcp(args: argparse.Namespace) -> int:
    require("serve")
    mcp = extras.load("ratio_bench.serve.mcp")  # the MCP SDK and pydantic: the serve extra
    address = _host_port(args.http) if args.http else None
    sock = listen(*address) if address else None  # a taken port fails before minutes of loading models
    server = mcp.create_server(searcher_of(args))
    if sock is None:
        server.run("stdio")  # stdout is the protocol channel: everything else goes to stderr
        return 0
    uvicorn = extras.load("uvicorn")

    port = sock.getsockname()[1]
    print(
        f"MCP server on http://{args.http.rpartition(':')[0]}:{port}{mcp.MCP_PATH} (Ctrl-C stops)",
        file=sys.stderr,
    )
    app = mcp.http_app(server, address[0])
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    return 0
