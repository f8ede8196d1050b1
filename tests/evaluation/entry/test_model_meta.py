"""An entry's ``model_meta``: the loaded model's shape, its card's licence and base model (bounded), the measured
cost on a named hardware class, the schema's and the validator's bounds, and what the mteb export makes of it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from tests.helpers.entries import ranked_entry
from tests.helpers.training import build_tiny

from ratio_bench.evaluation.entry.model_meta import MAX_TEXT, ModelMeta, card_facts, check_model_meta
from ratio_bench.evaluation.scoring import engine
from ratio_bench.evaluation.scoring.evaluate import load_split
from ratio_bench.evaluation.scoring.results import SubmissionError, validate_submission
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.registry import resolve

CARD = """---
license: apache-2.0
base_model: sentence-transformers/all-MiniLM-L6-v2
tags: [sentence-transformers]
---
# A tiny model
"""


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    folder = build_tiny("bert", tmp_path_factory.mktemp("tiny"))
    (folder / "README.md").write_text(CARD, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def test_split(small_release):
    return load_split(small_release, "test")


def _entry(setup, release, cache=None) -> dict:
    """The test split's entry of ``setup``, scored by the engine (as ``ratio score`` and the worker do)."""
    return engine.score(setup, release, ["test"], cache=cache).splits[0].entry.to_json()


def test_an_entry_carries_the_loaded_models_shape_its_card_and_the_measured_cost(
    tmp_path, tiny_bert, small_release
):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(tiny_bert), device="cpu")
    setup = resolve(str(tiny_bert), "generic")
    entry = _entry(setup, small_release, EmbeddingCache(tmp_path / "c"))
    meta = entry["model_meta"]
    assert meta["parameters"] == sum(p.numel() for p in model.parameters()) > 0
    assert meta["embedding_dim"] == model.get_embedding_dimension() and meta["max_tokens"] == 64
    assert (meta["license"], meta["base_model"]) == ("apache-2.0", "sentence-transformers/all-MiniLM-L6-v2")
    assert meta["hardware"].startswith("cpu-") and meta["hardware"].split("-")[1].endswith("core")
    assert meta["throughput_texts_per_s"] > 0 and meta["peak_memory_mb"] > 10
    validate_submission(json.loads(json.dumps(entry)))
    # a re-score from the cache encodes nothing: no throughput is claimed for it
    again = _entry(setup, small_release, EmbeddingCache(tmp_path / "c"))
    assert again["model_meta"]["throughput_texts_per_s"] is None
    assert again["model_meta"]["parameters"] == meta["parameters"]


def test_bm25_has_no_model_shape_but_names_its_hardware(small_release):
    entry = _entry(resolve("bm25"), small_release)
    meta = entry["model_meta"]
    assert (
        meta["parameters"] is None
        and meta["embedding_dim"] is None
        and meta["throughput_texts_per_s"] is None
    )
    assert meta["hardware"].startswith("cpu-")


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        ("license: " + "x" * 5000 + "\nbase_model: [a/b, c/d]\n", ("x" * (MAX_TEXT - 3) + "...", "a/b, c/d")),
        ('license: "mit\\u0000\\u001b[31m red"\nbase_model: {evil: 1}\n', ("mit [31m red", None)),
        ("license: [unclosed\n", (None, None)),  # YAML that does not parse: unknown, never a crash
        ("license: 3\n", (None, None)),
    ],
)
def test_card_values_are_bounded_printable_text_or_unknown(tmp_path, front, expected):
    (tmp_path / "README.md").write_text(f"---\n{front}---\n# card\n", encoding="utf-8")
    assert card_facts(tmp_path) == expected
    license_, base = card_facts(tmp_path)
    assert check_model_meta(ModelMeta(license=license_, base_model=base).to_json()) is None


def test_no_card_or_a_huge_card_is_unknown(tmp_path):
    assert card_facts(tmp_path) == (None, None)
    (tmp_path / "README.md").write_bytes(b"---\nlicense: mit\n---\n" + b"x" * (1 << 21))
    assert card_facts(tmp_path) == (None, None)


@pytest.mark.parametrize(
    ("meta", "where"),
    [
        ({"parameters": -1}, "model_meta/parameters"),
        ({"parameters": 1.5}, "model_meta/parameters"),
        ({"throughput_texts_per_s": -3.0}, "model_meta/throughput_texts_per_s"),
        ({"peak_memory_mb": math.inf}, "model_meta/peak_memory_mb"),
        ({"license": "x" * 201}, "model_meta/license"),
        ({"hardware": "gpu\nhost=secret"}, "model_meta/hardware"),
        ({"cost_usd": 1}, "model_meta"),
    ],
)
def test_out_of_bounds_model_meta_rejects_the_entry(meta, where):
    entry = ranked_entry("m", {"address": [1, 2]})
    validate_submission(
        entry | {"model_meta": ModelMeta(parameters=10, hardware="cpu-2core-x86_64").to_json()}
    )
    with pytest.raises(SubmissionError, match=f"invalid submission at {where}"):
        validate_submission(entry | {"model_meta": meta})


def test_the_mteb_export_carries_the_model_facts():
    pytest.importorskip("mteb")
    from ratio_bench.evaluation.entry.record import Entry
    from ratio_bench.leaderboard.hub_results import RepoResult
    from ratio_bench.leaderboard.mteb_export import model_meta

    block = ModelMeta(
        parameters=22_713_216, embedding_dim=384, max_tokens=256, license="Apache-2.0",
        base_model="nreimers/MiniLM-L6-H384-uncased", training_cutoff="2021-06-30", hardware="cpu-2core-x86_64",
        throughput_texts_per_s=120.5, peak_memory_mb=900.0,
    )  # fmt: skip
    entry = ranked_entry("org/m:saved", {"address": [1]}) | {"model_meta": block.to_json()}
    meta = model_meta(
        RepoResult("org/m/x/saved/test.json", Entry.from_json(entry), "org/m", "c" * 40, "saved")
    )
    assert (meta.n_parameters, meta.embed_dim, meta.max_tokens) == (22_713_216, 384, 256)
    assert (meta.license, meta.adapted_from, meta.memory_usage_mb) == (
        "apache-2.0",
        "nreimers/MiniLM-L6-H384-uncased",
        round(22_713_216 * 4 / 2**20),
    )
    odd = entry | {"model_meta": ModelMeta(license="my own licence", base_model="two, models").to_json()}
    meta = model_meta(RepoResult("", Entry.from_json(odd), "org/m", "c" * 40, "saved"))
    assert meta.license is None and meta.adapted_from is None and meta.n_parameters is None


def _cost_board(tmp_path):
    from ratio_bench.evaluation.board.leaderboard import load_board

    for name, hardware, speed in (
        ("a", "cpu-2core-x86_64", 50.0),
        ("b", "NVIDIA H100", 900.0),
        ("c", None, None),
    ):
        meta = ModelMeta(parameters=1000, embedding_dim=8, license="<b>mit</b>", hardware=hardware,
                         throughput_texts_per_s=speed, peak_memory_mb=700.0)  # fmt: skip
        entry = ranked_entry(f"model-{name}", {"address": [1, 2]})
        if hardware:
            entry["model_meta"] = meta.to_json()
        (tmp_path / f"{name}.json").write_text(json.dumps(entry), encoding="utf-8")
    return load_board(tmp_path)


def test_the_cost_is_shown_once_as_columns_and_filtered_by_hardware_class(tmp_path):
    from ratio_bench.evaluation.board.cost import UnknownHardware, hardware_classes, on_hardware
    from ratio_bench.evaluation.board.render.html import leaderboard_html
    from ratio_bench.evaluation.board.render.markdown import leaderboard_markdown

    board = _cost_board(tmp_path)
    md, page = leaderboard_markdown(board), leaderboard_html(board)
    assert "Model and cost" not in md and "Model and cost" not in page  # no second, per-hardware section
    assert ">peak MB</th>" in page and "| peak MB |" in md
    assert (
        ">licence</th>" in page and "&lt;b&gt;mit&lt;/b&gt;" in page and "<b>mit" not in page
    )  # the card's, escaped
    assert "| licence |" in md and "cut-off" not in md  # a column only where some entry states it
    assert hardware_classes(board) == ["NVIDIA H100", "cpu-2core-x86_64"]
    h100 = leaderboard_markdown(on_hardware(board, "NVIDIA H100"))
    assert "model-b" in h100 and "model-a" not in h100 and "model-c" not in h100
    assert r"| 900 \(NVIDIA H100\) | 700 |" in h100
    with pytest.raises(
        UnknownHardware, match="'TPU': no entry was measured on it; use one of: NVIDIA H100, cpu"
    ):
        on_hardware(board, "TPU")


def test_ratio_leaderboard_hardware_keeps_that_class_and_refuses_an_unknown_one(tmp_path, capsys):
    from ratio_bench.cli import main

    _cost_board(tmp_path)
    out = tmp_path / "board.md"
    assert main(["leaderboard", str(tmp_path), "--hardware", "cpu-2core-x86_64", "--markdown", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "model-a" in text and "model-b" not in text
    assert main(["leaderboard", str(tmp_path), "--hardware", "TPU"]) == 1
    err = capsys.readouterr().err
    assert "hardware 'TPU'" in err and "Traceback" not in err


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="Linux's resident high-water mark")
def test_peak_memory_is_the_runs_not_the_processs_lifetime():
    import numpy as np

    from ratio_bench.evaluation.entry.model_meta import peak_memory_mb, reset_peak_memory

    block = np.ones(25_000_000)  # 200 MB touched
    high = peak_memory_mb()
    del block
    reset_peak_memory()
    assert peak_memory_mb() < high - 150
