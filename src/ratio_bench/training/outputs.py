"""Output folders of ``ratio train``: ours to resume, anything else refused.

A folder is ours when it holds the marker written at its creation, which also records what it was made from
(config and dataset), so a resumed run never mixes trials of another setup or release into one summary.
A non-empty folder without the marker is the user's and is never written into. Unlike a release or an index,
a training folder is filled in place (trials and checkpoints appear as they finish, so a killed run resumes),
never swapped in, so ``core.io.staged_dir`` does not apply and nothing here ever removes a folder.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ratio_bench.core.errors import RatioError
from ratio_bench.core.io import write_json

MARKER = "ratio-training.json"


class OutputError(RatioError):
    """An output folder that is not ours to write into."""


def is_main_process() -> bool:
    """Rank 0 of a ``torchrun`` launch, or a plain run: the one process that checks and writes outputs."""
    return int(os.environ.get("RANK", "0")) == 0


def prepare_output(out: str | Path, identity: dict[str, Any]) -> Path:
    """Create ``out`` (or accept it as an earlier run's output with the same ``identity``) and mark it."""

    out = Path(out)
    if not is_main_process():
        out.mkdir(parents=True, exist_ok=True)
        return out
    marker = out / MARKER
    if marker.is_file():
        recorded = json.loads(marker.read_text(encoding="utf-8"))
        if recorded != identity:
            changed = sorted(
                k for k in identity.keys() | recorded.keys() if identity.get(k) != recorded.get(k)
            )
            raise OutputError(
                f"{out}: an output of another training run (different {', '.join(changed)}); "
                "pass a new folder",
                value=out,
            )
        return out
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise OutputError(
            f"{out}: exists and is not a ratio training output (no {MARKER}); refusing to write into it, "
            "pass an empty or new folder",
            value=out,
        )
    out.mkdir(parents=True, exist_ok=True)
    write_json(marker, identity)
    return out
