"""Command-line options shared by every command that talks to a judge, and the objects built from them.

Precedence: a flag on the command line, then the ``judge:`` block of the build config (for ``ratio
silver``), then the defaults of ``JudgeSettings``. The API key is never a flag: it is read from the
environment variable named by ``--api-key-env``; without it, ``$OPENAI_API_KEY`` is sent to the OpenAI API
only and other servers get no key. Every value is checked before anything is opened or sent.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any

from ratio_bench.core.errors import RatioError, UsageError
from ratio_bench.core.io import report_console
from ratio_bench.core.options import json_or_text, parse_assignments
from ratio_bench.llm.batch import BatchJudge
from ratio_bench.llm.cache import ReplyCache
from ratio_bench.llm.client import Judge, JudgeSettings
from ratio_bench.llm.endpoint import normalise_base_url
from ratio_bench.llm.pricing import PriceTable

DEFAULT_CACHE = (
    Path(os.environ.get("RATIO_CACHE", Path.home() / ".cache" / "ratio")) / "judge" / "replies.sqlite"
)


def judge_flag(name: str, prefix: str = "") -> str:
    """The flag of judge option ``name`` under ``prefix``: ``--judge-base-url`` for ``judge-`` (a name that
    already starts with the prefix keeps its spelling: ``--judge-id``)."""
    return f"--{name if name.startswith(prefix) else prefix + name}"


def add_judge_options(
    p: argparse.ArgumentParser, model_required: bool = True, prefix: str = "", batch: bool = True
) -> argparse._ArgumentGroup:
    """The judge's options, in a group of their own (returned, for a command's own judging options).

    ``prefix`` (``"judge-"``) spells every flag ``--judge-...`` (destination ``judge_...``) for a command
    whose own flags they would shadow, such as the leaderboard worker; read them back with
    :func:`prefixed_judge_args`. ``batch=False`` leaves out the Batch API, whose results can take a day, for
    a command that must not wait that long.
    """
    g = p.add_argument_group("judge")

    def add(name: str, **kwargs: Any) -> None:
        if kwargs.get("action") != "store_true":
            kwargs.setdefault("metavar", name.upper().replace("-", "_"))  # BASE_URL, not JUDGE_BASE_URL
        g.add_argument(judge_flag(name, prefix), dest=(prefix + name).replace("-", "_"), **kwargs)

    def f(name: str) -> str:
        return judge_flag(name, prefix)

    add("base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (default: OpenAI)")
    add("model", required=model_required, help="judge model name as the server knows it")
    add(
        "api-key-env",
        metavar="NAME",
        help=f"environment variable whose key is sent to {f('base-url')} "
        "(default: $OPENAI_API_KEY, to OpenAI only)",
    )
    add(
        "judge-id",
        metavar="ID",
        help="cache identity shared on purpose by several endpoints "
        f"(default: the normalised {f('base-url')})",
    )
    add("temperature", type=float, help=f"sampling temperature (default 0; 'none' models: use {f('param')})")
    add("no-temperature", action="store_true", help="send no temperature (reasoning models)")
    add("max-tokens", type=int, help="reply token limit (default 512)")
    add("no-json-mode", action="store_true", help="do not send response_format=json_object")
    add(
        "param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra request field, e.g. reasoning_effort=medium (repeatable; VALUE may be JSON)",
    )
    add("workers", type=int, help="parallel requests (default 4)")
    add("timeout", type=float, help="seconds per request (default 120)")
    add("max-retries", type=int, help="retries per request (default 6)")
    add(
        "breaker",
        type=int,
        help="refused connections / unresolvable hosts in a row that stop the run (default 3)",
    )
    add("max-cost", type=float, help="stop sending once this many USD are spent")
    add("prices", type=Path, help="price table YAML (default: the packaged one)")
    add("cache", type=Path, default=DEFAULT_CACHE, help=f"reply cache (default {DEFAULT_CACHE})")
    if batch:
        add("batch", action="store_true", help="use the Batch API (cheaper, asynchronous)")
        add("poll-seconds", type=float, default=30.0, help="Batch API polling interval")
    add("quiet", action="store_true", help="no progress bars")
    return g


def prefixed_judge_args(args: argparse.Namespace, prefix: str) -> argparse.Namespace | None:
    """The judge options given as ``--<prefix>...``, named as the functions here read them (``model``,
    ``base_url``, ...); None when no judge model is given: the command does not judge. A judge option given
    without a model is a ``UsageError`` (it would be silently unused)."""
    head = prefix.replace("-", "_")
    found = {k[len(head) :]: v for k, v in vars(args).items() if k.startswith(head)}
    if found.get("model") is None:
        stray = [
            k for k, v in found.items() if not (v is None or v is False or v == [] or v == DEFAULT_CACHE)
        ]
        if stray:
            raise UsageError(
                f"{judge_flag(stray[0].replace('_', '-'), prefix)}: judging is on only with a judge model; "
                f"add {judge_flag('model', prefix)} NAME"
            )
        return None
    return argparse.Namespace(**found, flag_prefix=prefix)


def renamed_flags(text: str, args: argparse.Namespace) -> str:
    """``text`` with the judge flags it names (``--base-url``) spelled as the command takes them
    (``--judge-base-url``, see :func:`prefixed_judge_args`): the judge code's messages name plain flags."""
    prefix = getattr(args, "flag_prefix", "")
    if not prefix:
        return text
    names = {k.replace("_", "-") for k in vars(args)}
    return re.sub(
        r"(?<![\w-])--([a-z][a-z-]*)", lambda m: judge_flag(m[1], prefix) if m[1] in names else m[0], text
    )


def settings_from_args(args: argparse.Namespace, defaults: dict[str, Any] | None = None) -> JudgeSettings:
    d = dict(defaults or {})
    if args.model:
        d["model"] = args.model
    if not d.get("model"):
        raise UsageError("no judge model: pass --model (or set silver.judge.model in the build config)")
    for flag, name in (
        ("base_url", "base_url"),
        ("temperature", "temperature"),
        ("max_tokens", "max_tokens"),
        ("workers", "workers"),
        ("timeout", "timeout_s"),
        ("max_retries", "max_retries"),
        ("breaker", "breaker"),
        ("max_cost", "max_cost_usd"),
        ("judge_id", "judge_id"),
        ("api_key_env", "api_key_env"),
    ):
        if getattr(args, flag) is not None:
            d[name] = getattr(args, flag)
    if args.no_temperature:
        d["temperature"] = None
    if args.no_json_mode:
        d["json_mode"] = False
    d["params"] = dict(d.get("params") or {}) | parse_assignments(
        args.param, "--param", value_type=json_or_text
    )
    known = set(JudgeSettings.__dataclass_fields__)
    unknown = set(d) - known
    if unknown:
        raise UsageError(
            f"unknown judge settings in the build config's silver.judge: {', '.join(sorted(unknown))}"
        )
    settings = JudgeSettings(**d)
    check_settings(settings, args)
    return settings


_LIMITS = (  # (field, flag, smallest allowed, what it means)
    ("workers", "--workers", 1, "parallel requests"),
    ("timeout_s", "--timeout", 1e-9, "seconds"),
    ("max_retries", "--max-retries", 0, "retries"),
    ("breaker", "--breaker", 1, "failures"),
    ("max_tokens", "--max-tokens", 1, "tokens"),
    ("max_cost_usd", "--max-cost", 1e-9, "USD"),
)


def check_settings(settings: JudgeSettings, args: argparse.Namespace) -> None:
    """``UsageError`` naming the flag of the first value out of range (the run would fail or never stop)."""
    normalise_base_url(settings.base_url)
    for name, flag, low, unit in _LIMITS:
        value = getattr(settings, name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or value < low
        ):
            bound = "at least 1" if low == 1 else ("0 or more" if low == 0 else "more than 0")
            raise UsageError(f"{flag} {value!r}: {unit} must be {bound}")
    if settings.judge_id is not None and not settings.judge_id.strip():
        raise UsageError("--judge-id must not be empty")
    if getattr(args, "poll_seconds", 1.0) <= 0:
        raise UsageError(f"--poll-seconds {args.poll_seconds!r}: must be more than 0")


def make_judge(args: argparse.Namespace, defaults: dict[str, Any] | None = None):
    """(judge, batch judge or None) for the parsed options."""
    try:
        settings = settings_from_args(args, defaults)
        prices = PriceTable.load(args.prices)  # a bad table is refused before the cache is opened
        judge = Judge(settings, ReplyCache(args.cache), prices, progress=not args.quiet)
    except RatioError as exc:
        if not getattr(args, "flag_prefix", ""):
            raise
        raise type(exc)(renamed_flags(str(exc), args)) from None
    batch = None
    if getattr(args, "batch", False):
        batch = BatchJudge(judge, poll_s=args.poll_seconds)
    return judge, batch


def print_run_summary(summary: dict[str, Any]) -> None:
    console = report_console()
    cost = f"${summary['cost_usd']:.4f}" if summary["priced"] else "unpriced model ($0 counted)"
    console.print(
        f"requests sent {summary['requests']:,} | cache hits {summary['cache_hits']:,} | retries "
        f"{summary['retries']:,} | re-asks {summary['reasks']:,} | invalid {summary['invalid']:,} | failed "
        f"{summary['errors']:,} | skipped (cap) {summary['skipped_budget']:,}"
    )
    console.print(
        f"tokens: prompt {summary['prompt_tokens']:,}, completion {summary['completion_tokens']:,} | cost {cost}"
        + (
            f" | batches {summary['batches']} ({summary['batch_requests']:,} requests, "
            f"{summary['batch_failed']:,} re-sent)"
            if summary["batches"]
            else ""
        )
        + (
            f" | usage anomalies {summary['usage_anomalies']:,} (charged by estimate)"
            if summary["usage_anomalies"]
            else ""
        )
    )
