"""The data files ratio-bench ships: the lexicon, card templates, submission schema, build presets, training configs.

They have one copy in git, in the repository's top-level folders (``lexicon/``, ``model_cards/``, ``eval/``,
``dataset_scripts/``, ``training/``). The wheel maps those folders into ``ratio_bench/_data/`` at build time
(``pyproject.toml``), and :func:`data_path` reads them from there through ``importlib.resources``; an editable
checkout has no ``_data`` folder, so it reads the top-level folders themselves. Either way the relative path is
the same, e.g. ``data_path("lexicon", "v1")``.
"""

from __future__ import annotations

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
    import dataclasses
    import string

    text = data_path("model_cards", template).read_text(encoding="utf-8")
    return string.Template(text).substitute(dataclasses.asdict(values))


def is_path(ref: str | Path) -> bool:
    """A user's own file or folder: one that exists, or a YAML file name (a user's path always wins)."""
    path = Path(ref)
    return path.exists() or path.suffix in (".yaml", ".yml")


def preset(folder: str, ref: str | Path) -> Path:
    """``ref`` as a path when it is one, else the shipped ``<folder>/<ref>.yaml`` (``ratio build --config dev``).

    A name that is neither is a one-line error listing the shipped presets.
    """
    if is_path(ref):
        return Path(ref)
    shipped = data_path(folder)
    found = shipped / f"{ref}.yaml"
    if found.is_file() and found.resolve().is_relative_to(shipped.resolve()):
        return found
    names = sorted(p.relative_to(shipped).with_suffix("").as_posix() for p in shipped.rglob("*.yaml"))
    raise RatioError(f"{ref}: no such file, nor a shipped preset (one of: {', '.join(names)})", value=ref)


def preset_dir(folder: str, ref: str | Path, top: str) -> Path:
    """``ref`` as a folder when it is one, else a shipped folder of presets: ``top`` names ``<folder>`` itself
    and any other name its subfolder (``ratio train-all --dir dev`` reads the shipped ``training/dev``)."""
    if is_path(ref):
        return Path(ref)
    shipped = data_path(folder)
    found = shipped if str(ref) == top else shipped / ref
    if found.is_dir() and found.resolve().is_relative_to(shipped.resolve()):
        return found
    names = [top] + sorted(p.relative_to(shipped).as_posix() for p in shipped.rglob("*") if p.is_dir())
    raise RatioError(f"{ref}: no such folder, nor a shipped one (one of: {', '.join(names)})", value=ref)
