"""The options and defaults of the commands that search an index (``ratio index``, ``search``, ``serve``, ``mcp``).

Light on purpose: the command parsers read it, and ``ratio search --help`` must not load faiss or a model.
"""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_K = 10  # results per move
ANN_KINDS = ("hnsw", "ivf")  # the approximate faiss indexes `ratio index --ann` builds


def add_query_options(p: argparse.ArgumentParser, index_required: bool = True) -> None:
    """The options of every command that searches an index (search, serve, mcp)."""
    p.add_argument(
        "--index", type=Path, required=index_required, help="an index folder built by `ratio index`"
    )
    p.add_argument("--exact", action="store_true", help="exact search even if the index has an ANN file")
    p.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="allow the index's models to run their own code (never taken from the index itself)",
    )
