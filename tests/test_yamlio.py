"""YAML from files we did not write: alias bombs, recursive aliases, deep nesting and size are refused at load
time, quickly, as one YAMLLimitError; an ordinary document loads exactly as PyYAML's safe loader reads it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from ratio_bench.core.yamlio import MAX_YAML_BYTES, YAMLLimitError, expanded_size, load_yaml

REPO = Path(__file__).resolve().parents[1]


def alias_bomb(levels: int = 9, width: int = 10) -> str:
    """``width ** levels`` values once expanded, from ``levels`` short lines."""
    lines = [f"l0: &l0 [{', '.join(['x'] * width)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_without_being_expanded():
    start = time.perf_counter()
    with pytest.raises(YAMLLimitError, match="alias bomb"):
        load_yaml(alias_bomb())  # 10^9 values
    assert time.perf_counter() - start < 2


def test_shared_aliases_under_the_limit_are_counted_each_time_they_are_reached():
    data = load_yaml(alias_bomb(levels=3))
    assert data["l2"] == [[["x"] * 10] * 10] * 10
    assert expanded_size(data) == 1 + 3 + (1 + 10) + (1 + 10 * 11) + (1 + 10 * (1 + 10 * 11))
    with pytest.raises(YAMLLimitError, match="past 1,000 values"):
        expanded_size(data, limit=1000)


def test_a_recursive_alias_is_refused():
    with pytest.raises(YAMLLimitError, match="recursive alias"):
        load_yaml("a: &a [1, *a]\n")
    with pytest.raises(YAMLLimitError, match="recursive alias"):
        load_yaml("a: &a {b: *a}\n")


def test_deep_nesting_is_refused_not_a_recursion_error():
    with pytest.raises(YAMLLimitError, match="nests too deeply"):
        load_yaml("[" * 100_000 + "]" * 100_000)


def test_an_oversized_document_is_refused_before_parsing():
    with pytest.raises(YAMLLimitError, match=f"the limit is {MAX_YAML_BYTES:,}"):
        load_yaml("#" * (MAX_YAML_BYTES + 1))


def test_limit_errors_are_yaml_errors_with_a_one_line_problem():
    with pytest.raises(yaml.YAMLError) as caught:
        load_yaml(alias_bomb())
    assert "\n" not in caught.value.problem and caught.value.problem_mark is None


@pytest.mark.parametrize("config", sorted((REPO / "dataset_scripts").glob("*.yaml")), ids=lambda p: p.name)
def test_an_ordinary_config_loads_as_the_safe_loader_reads_it(config):
    text = config.read_text(encoding="utf-8")
    assert load_yaml(text) == yaml.safe_load(text)
