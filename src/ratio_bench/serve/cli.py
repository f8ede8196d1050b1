"""``ratio index``, ``ratio search`` and ``ratio serve``: inspiration search from the command line."""

from __future__ import annotations

import argparse
from pathlib import Path

from ratio_bench.core.options import add_release_option
from ratio_bench.core.relations import RELATIONS
from ratio_bench.corpus.options import add_reader_options
from ratio_bench.serve.options import ANN_KINDS, DEFAULT_K, add_query_options


def register(sub) -> None:
    """The four commands of this group: index, search, serve, mcp."""
    _register_index(sub)
    _register_search(sub)
    _register_serve(sub)
    register_mcp(sub)


def _register_index(sub) -> None:
    p = sub.add_parser("index", help="build a search index over a release split or your own papers")
    src = p.add_argument_group("candidates (one of)")
    add_release_option(src, " (with --split)")
    src.add_argument(
        "--split", default="test", help="the release split whose corpus is indexed (default: test)"
    )
    src.add_argument("--corpus", type=Path, nargs="+", help="your own papers: corpus files or folders")
    p.add_argument(
        "--corpus-meta",
        type=Path,
        nargs="+",
        metavar="PATH",
        help="with --dataset: the corpus the release was built from, for paper titles (a release has none)",
    )
    p.add_argument(
        "--model",
        action="append",
        required=True,
        metavar="REF|MOVE=REF",
        help="model for every move (NAME[:SETUP], a folder, or bm25), or one per move: --model address=REF",
    )
    p.add_argument("--out", type=Path, required=True, help="index folder (new, empty, or an earlier index)")
    p.add_argument("--ann", choices=ANN_KINDS, help="also build an approximate faiss index (large corpora)")
    p.add_argument("--cache-dir", type=Path, help="embedding cache (default: ~/.cache/ratio/embeddings)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--trust-remote-code", action="store_true", help="allow models that run their own code")
    p.add_argument("--rejects", type=Path, help="with --corpus: one JSON line per rejected or flagged paper")
    add_reader_options(p)
    p.set_defaults(func="ratio_bench.serve.commands:cmd_index")


def _register_search(sub) -> None:
    p = sub.add_parser("search", help="find inspirations for one sentence in an index")
    p.add_argument("text", nargs="?", help="the sentence to search for")
    add_query_options(p)
    p.add_argument(
        "--queries", type=Path, help="search every query of a JSONL file (query_id, query) instead of TEXT"
    )
    p.add_argument("--out", type=Path, help="with --queries: the hits, by candidate id (Parquet)")
    p.add_argument("--system", help="with --queries: the name the hits carry (default: each move's model)")
    p.add_argument(
        "--moves", nargs="+", metavar="MOVE", help=f"a subset of {', '.join(RELATIONS)} (default: all)"
    )
    p.add_argument("--k", type=int, default=DEFAULT_K, help=f"results per move (default: {DEFAULT_K})")
    p.add_argument("--json", action="store_true", help="print the API's JSON instead of tables")
    p.add_argument(
        "--role-prior",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="an index of a release: rank the move's mined golds first (default: off, the model alone; on 69 "
        "judged queries it lowered precision, eval/judged/typed-search)",
    )
    p.set_defaults(func="ratio_bench.serve.commands:cmd_search")


def _register_serve(sub) -> None:
    p = sub.add_parser("serve", help="serve an index: JSON API, OpenAPI docs and a search page")
    add_query_options(p, index_required=False)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000; 0: any free port)")
    p.add_argument("--docs-assets", type=Path, help="local Swagger UI / ReDoc files for offline /docs")
    p.add_argument(
        "--results",
        type=Path,
        help="leaderboard entries to serve at /leaderboard (default: ./eval/results when there is one)",
    )
    board = p.add_argument_group("leaderboard service (ratio leaderboard submit|worker)")
    board.add_argument(
        "--leaderboard-from", metavar="REPO[@REV]", help="serve this results repository's board"
    )
    board.add_argument("--leaderboard-requests", metavar="REPO", help="and this requests queue beside it")
    board.add_argument(
        "--allow-submissions",
        action="store_true",
        help="a submission form (the checks of `submit`), made as the Hub user whose token it carries; "
        "docs/security-form.md",
    )
    board.add_argument(
        "--public-host",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="an address browsers use to reach the form (behind a proxy, or with --host 0.0.0.0); repeatable",
    )
    board.add_argument(
        "--trust-proxy",
        action="append",
        default=[],
        metavar="ADDR",
        help="a reverse proxy's address whose X-Forwarded-For names the client (default: none; the client is "
        "the socket's peer); repeatable",
    )
    board.add_argument(
        "--refresh",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="render the page again after this long even when no repository changed (default 60; a new commit "
        "shows within 5 s)",
    )
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    p.set_defaults(func="ratio_bench.serve.commands:cmd_serve")


def register_mcp(sub: argparse._SubParsersAction) -> None:
    """``ratio mcp``: its parser here with the other serving commands; its handler in ``serve.mcp``."""
    p = sub.add_parser("mcp", help="serve an index's search as MCP tools for agents (stdio, or --http)")

    add_query_options(p)
    p.add_argument(
        "--http", metavar="HOST:PORT", help="streamable HTTP at http://HOST:PORT/mcp instead of stdio"
    )
    p.set_defaults(func="ratio_bench.serve.commands:cmd_mcp")
