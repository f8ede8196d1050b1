"""The committed files written from :mod:`ratio_bench.core.relations`: ``make generate`` runs this module.

A relation reaches two files that are not Python we import: the published submission schema (its relation
enums, :func:`~ratio_bench.evaluation.entry.schema.render_schema`) and the mteb task file for mteb users
(:func:`~ratio_bench.evaluation.scoring.mteb_file.render_task_file`). Both are rendered here from the relation
records, so a new relation is one record in ``core/relations.py`` and one run of::

    python -m ratio_bench.evaluation.generated          # write what changed
    python -m ratio_bench.evaluation.generated --check  # exit 1 naming a stale file (the test does the same)

Files are written atomically and only when their bytes change; the checkout is required (an installed wheel has
no mteb file and a read-only schema).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import atomic_open
from ratio_bench.core.resources import data_root, installed
from ratio_bench.evaluation.entry.schema import render_schema
from ratio_bench.evaluation.scoring.mteb_file import render_task_file

# Repository path -> its render from the committed text (the schema is its own template; the task file is whole).
GENERATED: dict[str, Callable[[str], str]] = {
    "eval/submission.schema.json": render_schema,
    "eval/mteb/ratio_retrieval.py": lambda _committed: render_task_file(),
}


def checkout() -> Path:
    if installed():
        raise RatioError(
            "the generated files live in a checkout of ratio-bench: run this from one (pip install -e .)"
        )
    return data_root()


def _read(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


def stale(root: Path) -> dict[str, str]:
    """The generated files whose committed bytes differ from their render, with the render."""
    out = {}
    for name, render in GENERATED.items():
        committed = _read(root / name)
        text = render(committed)
        if text != committed:
            out[name] = text
    return out


def write(root: Path) -> list[str]:
    """Write every stale generated file (atomically); the names written."""
    changed = stale(root)
    for name, text in changed.items():
        with atomic_open(root / name, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    return sorted(changed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ratio_bench.evaluation.generated", description=__doc__)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file is stale")
    args = parser.parse_args(argv)
    try:
        root = checkout()
        names = sorted(stale(root)) if args.check else write(root)
    except RatioError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for name in names:
        print(f"{name}: {'stale (run make generate)' if args.check else 'written'}")
    if not names:
        print(f"up to date: {', '.join(GENERATED)}")
    return 1 if args.check and names else 0


if __name__ == "__main__":
    sys.exit(main())
