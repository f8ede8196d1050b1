"""The data files ratio-bench ships: the lexicon, card templates, submission schema, build presets, training configs.

They have one copy in git, in the repository's top-level folders (``lexicon/``, ``model_cards/``, ``eval/``,
``dataset_scripts/``, ``training/``). The wheel maps those folders into ``ratio_bench/_data/`` at build time
(``pyproject.toml``), and :func:`data_path` reads them from there through ``importlib.resources``; an editable
checkout has no ``_data`` folder, so it reads the top-level folders themselves. Either way the relative path is
the same, e.g. ``data_path("lexicon", "v1")``.
"""

from __future__ import annotations

import dataclasses
import string
from importlib.resources import files
from pathlib import Path

from ratio_bench.core.errors import RatioError


def data_root() -> Path:
    """The folder holding the shipped data folders: ``ratio_bench/_data`` when installed, else the checkout."""
    packaged = files("ratio_bench") / "_data"
    if packaged.is_dir():
        if not isinstance(packaged, Path):  # a zip import: the lexicon loader and datatrove need real files
            raise RatioError(f"{packaged}: ratio-bench must be installed unpacked (pip install ratio-bench)")
        return packaged
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "lexicon" / "v1").is_dir():
        return checkout
    raise RatioError(
        f"ratio-bench's data files are not installed ({packaged} is missing); reinstall the package: "
        "pip install --force-reinstall ratio-bench"
    )


def installed() -> bool:
    """Whether the data files are the installed package's (read-only for commands that grow a lexicon)."""
    return (files("ratio_bench") / "_data").is_dir()


def data_path(*parts: str) -> Path:
    """A shipped data file or folder, e.g. ``data_path("eval", "submission.schema.json")``."""
    return data_root().joinpath(*parts)


def fill_card_template(template: str, values: object) -> str:
    """The shipped card ``model_cards/<template>`` filled from a dataclass of its ``$fields``: the one way both
    the dataset card and the model card are rendered."""

    text = data_path("model_cards", template).read_text(encoding="utf-8")
    return string.Template(text).substitute(dataclasses.asdict(values))


def _preset_name(ref: str | Path) -> str | None:
    """``ref`` as written when it can name a shipped preset: relative, no ``.``/``~`` start, no YAML suffix.
    ``./dev`` or ``dev.yaml`` are paths; ``dev``, ``dev/ablations`` and ``stella-en-1.5b-v5-generic-address``
    are names."""
    text = str(ref)
    if not text or text.startswith((".", "/", "~")) or "\\" in text or text.endswith((".yaml", ".yml")):
        return None
    return text


def shipped_preset(folder: str, ref: str | Path, top: str | None = None) -> Path | None:
    """The shipped preset ``ref`` names (``<folder>/<ref>.yaml``, or with ``top`` a preset folder: ``top``
    itself or a subfolder), or None when it names none. A shipped name always means the shipped preset, so a
    file of the user's that happens to be called ``dev`` in the working folder never stands in for it (give
    ``./dev`` for that file)."""
    name = _preset_name(ref)
    if name is None:
        return None
    shipped = data_path(folder)
    if top is None:
        found = shipped / f"{name}.yaml"
        ok = found.is_file()
    else:
        found = shipped if name == top else shipped / name
        ok = found.is_dir()
    return found if ok and found.resolve().is_relative_to(shipped.resolve()) else None


def preset(folder: str, ref: str | Path) -> Path:
    """The shipped ``<folder>/<ref>.yaml`` when ``ref`` names one (``ratio build --config dev``), else ``ref`` as
    the user's path, which must exist or be a YAML file name (its reader then says it is missing).

    A name that is neither is a one-line error listing the shipped presets.
    """
    found = shipped_preset(folder, ref)
    if found is not None:
        return found
    path = Path(ref)
    if path.exists() or path.suffix in (".yaml", ".yml"):
        return path
    shipped = data_path(folder)
    names = sorted(p.relative_to(shipped).with_suffix("").as_posix() for p in shipped.rglob("*.yaml"))
    raise RatioError(f"{ref}: no such file, nor a shipped preset (one of: {', '.join(names)})", value=ref)


def preset_dir(folder: str, ref: str | Path, top: str, other: dict[str, str] | None = None) -> Path:
    """A shipped folder of presets when ``ref`` names one (``top`` names ``<folder>`` itself and any other name
    its subfolder: ``ratio train-all --dir dev`` reads the shipped ``training/dev``), else ``ref`` as the user's
    folder, which must exist. ``other``: shipped subfolders of another kind (``training/adapters`` holds adapter
    configs), never listed, and named with the hint they map to."""
    other = other or {}
    found = shipped_preset(folder, ref, top)
    name = _preset_name(ref)
    if found is not None and name in other:
        raise RatioError(f"{ref}: {other[name]}", value=ref)
    if found is not None:
        return found
    path = Path(ref)
    if path.exists():
        return path
    shipped = data_path(folder)
    names = [top] + sorted(
        rel
        for rel in (p.relative_to(shipped).as_posix() for p in shipped.rglob("*") if p.is_dir())
        if rel.split("/")[0] not in other
    )
    raise RatioError(f"{ref}: no such folder, nor a shipped one (one of: {', '.join(names)})", value=ref)
