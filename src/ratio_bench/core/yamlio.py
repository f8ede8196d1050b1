"""YAML from files we did not write, with its size and its alias expansion bounded.

PyYAML's safe loader builds no objects, but an alias bomb (``a: &a [x, x]``, ``b: &b [*a, *a]``, ...) composes
into a small graph of shared lists that expands to billions of values as soon as anything walks it (``str()``,
JSON, validation). Every YAML the project reads from a user, a release or a config goes through
:func:`load_yaml`, which refuses such a document before any caller sees it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ratio_bench.core.errors import RatioError

MAX_YAML_BYTES = 16 * 1024 * 1024
MAX_YAML_VALUES = 1_000_000  # values after alias expansion; the s2orc build config has a few hundred


class YAMLLimitError(yaml.YAMLError):
    """A document over the size or expansion bound; ``problem`` says which, as PyYAML's own errors do."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = None


class SafeLoader(yaml.SafeLoader):
    """PyYAML's safe loader (no Python tags); a subclass so that callers can add constructors of their own."""


def load_yaml(text: str, loader: type[yaml.SafeLoader] = SafeLoader) -> Any:
    """Parse one YAML document; :class:`YAMLLimitError` when it is too large or expands too far."""
    if len(text) > MAX_YAML_BYTES:
        raise YAMLLimitError(f"the document has {len(text):,} characters (the limit is {MAX_YAML_BYTES:,})")
    try:
        data = yaml.load(text, Loader=loader)  # noqa: S506 (a SafeLoader subclass)
    except RecursionError:
        raise YAMLLimitError("the document nests too deeply") from None
    expanded_size(data)
    return data


def yaml_problem(exc: yaml.YAMLError) -> str:
    """``line 3: invalid YAML: <what PyYAML found>``: where and what, on one line."""
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}: " if mark else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"{where}invalid YAML: {' '.join(str(problem).split())}"


def read_yaml_file(path: str | Path) -> Any:
    """A user's YAML file, parsed; ``RatioError`` naming the file when it cannot be read or parsed."""
    path = Path(path)
    try:
        return load_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise RatioError(f"{path}: {yaml_problem(exc)}; fix the file", value=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or exc
        raise RatioError(f"{path}: cannot read it as a UTF-8 YAML file ({reason})", value=path) from None


def expanded_size(data: Any, limit: int = MAX_YAML_VALUES) -> int:
    """How many values ``data`` holds once shared (aliased) parts are counted each time they are reached.

    Shared containers are sized once (by identity), so a bomb is measured without being expanded; a container
    that contains itself (``&a [*a]``) is refused, since nothing downstream can walk it.
    """
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(value: Any) -> int:
        if not isinstance(value, dict | list):
            return 1
        key = id(value)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise YAMLLimitError("an alias refers to a value that contains it (a recursive alias)")
        active.add(key)
        children = [*value.keys(), *value.values()] if isinstance(value, dict) else value
        total = 1
        for child in children:
            total += size(child)
            if total > limit:
                raise YAMLLimitError(f"aliases expand the document past {limit:,} values (an alias bomb?)")
        active.discard(key)
        sizes[key] = total
        return total

    try:
        return size(data)
    except RecursionError:
        raise YAMLLimitError("the document nests too deeply") from None
