"""Drift over test snapshots: a trend made by the query mix, one within sources, none; aligned to the release's
queries or skipped; the statistics checked against plain OLS and scipy; the command's table and report."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from tests.helpers.cli import run_ratio
from tests.helpers.corpus import write_jsonl
from tests.helpers.dataset import dated_paper, write_config
from tests.helpers.entries import ranking

from ratio_bench.dataset.release import Release
from ratio_bench.evaluation.analysis import drift
from ratio_bench.evaluation.board.leaderboard import load_board
from ratio_bench.evaluation.scoring.evaluate import Queries, result_of_runs
from ratio_bench.evaluation.scoring.results import leaderboard_entry

# Address queries per (month, source): the easy-to-be source "a" grows from a quarter to three quarters.
SIZES = {1: {"a": 2, "b": 10}, 2: {"a": 6, "b": 6}, 3: {"a": 10, "b": 2}}
FAST = drift.Settings(permutations=2000)


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Release:
    """Three monthly snapshots (2022-01..03) of 12 Address queries from two sources, "a/..." and "b/..."."""
    from ratio_bench.dataset.build import build_release
    from ratio_bench.dataset.config import load_config

    root = tmp_path_factory.mktemp("drift")
    every = {"address": 2, "broaden": 1, "specify": 1}
    records = [
        dated_paper("a/train", "2020-05", every, 1, "A training paper"),
        dated_paper("a/valid", "2021-05", every, 1, "A validation paper"),
    ]
    for month, sizes in SIZES.items():
        records += [
            dated_paper(
                f"{src}/m{month}", f"2022-0{month}-10", {"address": n, "specify": 1}, 6, f"{src} {month}"
            )
            for src, n in sizes.items()
        ]
    (root / "corpus").mkdir()
    write_jsonl(root / "corpus" / "a.jsonl", records)
    snapshots = {"period": "month", "min_queries": 2, "max_queries": {}, "pool_size": 16}
    config = load_config(write_config(root / "cfg.yaml", root / "corpus", root / "work", snapshots=snapshots))
    build_release(config, root / "ratio", progress=False)
    return Release.open(root / "ratio")


Rank = Callable[[int, str, int], int]  # (month, source, position within its month and source) -> gold rank


def write_entries(release: Release, folder: Path, model: str, rank: Rank, drop_one: str = "") -> Path:
    """``model``'s entry on each snapshot (made by ``leaderboard_entry``) with the gold at ``rank(...)``;
    ``drop_one``: that split's entry leaves one query out (as if scored on another build)."""
    folder.mkdir(parents=True, exist_ok=True)
    for split in release.snapshots:
        table = release.queries("address", split, ["query_id", "paper_id"]).to_pylist()
        rows = sorted((r["query_id"], r["paper_id"]) for r in table)[: -1 if split == drop_one else None]
        seen: dict[str, int] = {}
        runs = {}
        for qid, paper in rows:
            source = paper.split("/")[0]
            position = seen[source] = seen.get(source, -1) + 1
            runs[qid] = ranking(f"gold-{qid}", rank(int(split[-2:]), source, position))
        ids = [q for q, _ in rows]
        queries = {"address": Queries(ids, [""] * len(ids), [f"gold-{q}" for q in ids])}
        entry = leaderboard_entry(result_of_runs(model, {"address": runs}, queries), release.manifest, split)
        (folder / f"{split}.json").write_text(json.dumps(entry.to_json()), encoding="utf-8")
    return folder


def analyze(release: Release, folder: Path, settings: drift.Settings = FAST) -> drift.Report:
    return drift.analyze(release, load_board(folder), ("address",), settings)


def test_a_trend_made_by_an_easier_source_in_later_months_is_the_mix(release, tmp_path):
    # every "a" query is found first and every "b" one missed: MRR@10 rises 17 -> 50 -> 83 with a's share
    report = analyze(release, write_entries(release, tmp_path, "m", lambda m, s, i: 1 if s == "a" else 0))
    (row,) = report.rows
    assert [round(s.mrr_at_10, 2) for s in row.snapshots] == [0.17, 0.5, 0.83]
    assert row.raw.slope == pytest.approx(400.0) and row.raw.p_value < 0.01
    assert row.after_mix.slope == pytest.approx(0.0, abs=1e-9) and row.after_mix.p_value > 0.5
    assert row.verdict == drift.MIX
    assert row.sources == {"a": {"queries": 18, "mrr_at_10": 1.0}, "b": {"queries": 18, "mrr_at_10": 0.0}}
    assert report.mix["address"]["test_2022_01"]["shares"] == pytest.approx({"b": 10 / 12, "a": 2 / 12})


def test_a_trend_within_every_source_is_beyond_the_mix(release, tmp_path):
    # both sources: missed in January, second in February, first in March
    report = analyze(release, write_entries(release, tmp_path, "m", lambda m, s, i: {1: 0, 2: 2, 3: 1}[m]))
    (row,) = report.rows
    assert row.raw.p_value < 0.01 and row.after_mix.p_value < 0.01
    assert row.after_mix.slope == pytest.approx(600.0)
    assert row.verdict == drift.BEYOND


def test_a_flat_model_has_no_drift_and_the_same_seed_gives_the_same_report(release, tmp_path):
    # within every month and source, every other query is found first: no month is easier than another
    folder = write_entries(release, tmp_path, "m", lambda m, s, i: 1 if i % 2 == 0 else 0)
    report = analyze(release, folder)
    (row,) = report.rows
    assert row.raw.p_value >= 0.05 and row.after_mix.p_value >= 0.05
    assert row.verdict == drift.NO_DRIFT
    assert analyze(release, folder).to_json() == report.to_json()


def test_the_permutation_test_is_seeded_and_agrees_with_ols_and_scipy():
    from scipy import stats

    rng = np.random.default_rng(5)
    months = rng.integers(0, 12, 300).astype(float)
    strata = rng.integers(0, 3, 300)
    rr = 0.004 * months + 0.2 * strata + rng.normal(0, 0.3, 300)
    raw = drift.trend(rr, months, np.zeros(300, dtype=np.int64))
    within = drift.trend(rr, months, strata)
    assert raw.slope == pytest.approx(np.polyfit(months, rr, 1)[0] * 1200)
    dummies = np.eye(3)[strata]
    assert within.slope == pytest.approx(np.linalg.lstsq(np.c_[months, dummies], rr)[0][0] * 1200)
    scipy_p = stats.permutation_test(
        (months, rr), lambda x, y: np.polyfit(x, y, 1)[0], permutation_type="pairings", n_resamples=9999,
        random_state=0,
    ).pvalue  # fmt: skip
    assert raw.p_value == pytest.approx(scipy_p, abs=0.03) and 0.05 < raw.p_value < 0.95
    assert drift.trend(rr, months, strata) == within
    assert drift.trend(rr, months, strata, drift.Settings(seed=1)).p_value != within.p_value


def test_a_raw_slope_the_mix_does_not_shrink_is_unresolved_not_explained():
    raw = drift.Trend(10.0, 0.001)
    assert drift.verdict(raw, drift.Trend(3.0, 0.4)) == drift.MIX
    assert drift.verdict(raw, drift.Trend(8.0, 0.2)) == drift.UNRESOLVED  # same size, less power
    assert drift.verdict(raw, drift.Trend(-9.0, 0.01)) == drift.BEYOND
    assert drift.verdict(drift.Trend(None, None, "one snapshot"), raw) == "undetermined: one snapshot"


def test_an_entry_of_another_build_is_skipped_with_its_reason_never_misaligned(release, tmp_path):
    folder = write_entries(
        release, tmp_path, "m", lambda m, s, i: 1 if s == "a" else 0, drop_one="test_2022_02"
    )
    report = analyze(release, folder)
    (skipped,) = report.skipped
    assert (skipped.split, skipped.relation) == ("test_2022_02", "address")
    assert "query ids sha256" in skipped.reason and "another release build" in skipped.reason
    (row,) = report.rows
    assert [s.split for s in row.snapshots] == ["test_2022_01", "test_2022_03"]


def test_results_of_another_release_or_none_on_snapshots_are_one_error(release, tmp_path):
    other = write_entries(release, tmp_path / "other", "m", lambda m, s, i: 1, drop_one="test_2022_01")
    for split in ("test_2022_02", "test_2022_03"):
        (other / f"{split}.json").unlink()
    with pytest.raises(drift.DriftError, match="results of another release build"):
        analyze(release, other)
    (tmp_path / "none").mkdir()
    with pytest.raises(drift.DriftError, match="ratio score --split snapshots --out DIR"):
        analyze(release, tmp_path / "none")


def test_the_command_prints_a_table_per_relation_and_replaces_only_its_own_report(release, tmp_path):
    folder = write_entries(release, tmp_path / "entries", "m", lambda m, s, i: 1 if s == "a" else 0)
    out = tmp_path / "drift.json"
    argv = ["analyze", "drift", "--dataset", release.root, "--results", folder, "--relations", "address"]
    for _ in range(2):  # the second run replaces the first run's report
        run = run_ratio(*argv, "--out", out, "--plot", tmp_path / "drift.png")
        assert run.code == 0, run.err
    assert (tmp_path / "drift.png").read_bytes().startswith(b"\x89PNG")
    assert "drift explained by the query mix" in run.out and "9,999 shuffles" in run.out
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["ratio_analysis"] == "drift" and report["rows"][0]["verdict"] == drift.MIX
    mine = tmp_path / "mine.json"
    mine.write_text('{"my": "notes"}', encoding="utf-8")
    run = run_ratio(*argv, "--out", mine)
    assert run.code == 1 and "not a report of `ratio analyze drift`" in run.err
    assert mine.read_text(encoding="utf-8") == '{"my": "notes"}'
