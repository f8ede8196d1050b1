import json

import pyarrow.parquet as pq
import pytest
from tests.helpers.cli import assert_user_error, run_ratio

from ratio_bench.evaluation.scoring.evaluate import load_split, score
from ratio_bench.evaluation.scoring.runs import RunError, load_run, save_run
from ratio_bench.retrieval.registry import resolve


def test_a_saved_run_holds_the_ranked_lists_in_parquet_and_trec(small_release, tmp_path):
    data = load_split(small_release, "test")
    result = score(resolve("bm25"), data, keep_runs=True)
    save_run(result, data.manifest, "test", tmp_path / "run")
    run = load_run(tmp_path / "run", data.manifest)
    assert run.ranked == {rel: {q: ids[:100] for q, ids in r.items()} for rel, r in result.runs.items()}
    table = pq.read_table(tmp_path / "run" / "address.parquet").to_pylist()
    trec = (tmp_path / "run" / "address.trec").read_text().splitlines()
    assert len(trec) == len(table) and trec[0].split()[:4] == [
        table[0]["query_id"],
        "Q0",
        table[0]["candidate_id"],
        "1",
    ]
    scores = [r["score"] for r in table if r["query_id"] == table[0]["query_id"]]
    assert scores == sorted(scores, reverse=True)
    assert run.manifest["split"] == "test" and run.manifest["k"] == 100


def test_a_run_of_another_release_is_refused(small_release, tmp_path):
    data = load_split(small_release, "test")
    save_run(score(resolve("bm25"), data, keep_runs=True), data.manifest, "test", tmp_path / "run")
    other = data.manifest | {"version": "9.9"}
    with pytest.raises(RunError, match=f"^{tmp_path / 'run'}: .*re-score"):
        load_run(tmp_path / "run", other)


def test_score_save_run_from_the_cli_and_refuses_a_foreign_folder(small_release, tmp_path):
    run = run_ratio("score", "--model", "bm25", "--dataset", small_release, "--save-run", tmp_path / "r")
    assert run.code == 0, run.err
    assert json.loads((tmp_path / "r" / "manifest.json").read_text())["kind"] == "run"
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    bad = run_ratio("score", "--model", "bm25", "--dataset", small_release, "--save-run", tmp_path / "mine")
    assert_user_error(bad, "--save-run")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "mine"
