import json

import pytest
from tests.helpers.cli import assert_user_error, run_ratio

from ratio_bench.core.relations import RELATIONS
from ratio_bench.dataset.release import Release
from ratio_bench.evaluation.analysis.typed_hits import Hit, Query
from ratio_bench.judge.labelling import label_pairs
from ratio_bench.judge.typed_search import (
    TypedSearchError,
    labelling_pairs,
    read_verdicts,
    report,
)

QUERIES = [Query("q1", "Training is slow."), Query("q2", "Models forget old tasks.")]
TEXTS = {c: f"sentence {c}" for c in "abcdef"}


def test_pairs_pool_every_system_once_per_query_and_candidate_and_hide_the_system():
    hits = [
        Hit("bm25", "q1", "address", 1, "a"),
        Hit("bm25", "q1", "broaden", 1, "a"),
        Hit("dense", "q1", "address", 1, "b"),
        Hit("dense", "q1", "specify", 2, "a"),
        Hit("dense", "q2", "address", 1, "c"),
    ]
    pairs = labelling_pairs(hits, QUERIES, TEXTS, seed=0)
    asked = [(p["query_id"], p["gold_id"]) for p in pairs]
    assert sorted(set(asked)) == [("q1", "a"), ("q1", "b"), ("q2", "c")]
    assert len(pairs) == 3 * len(RELATIONS)  # every move asked of every distinct candidate
    assert all(set(p) == {"relation", "query_id", "query", "marker", "gold_id", "gold"} for p in pairs)
    assert pairs[0]["gold"] == TEXTS[pairs[0]["gold_id"]]
    orders = {
        tuple(asked)
        for seed in range(8)
        for asked in [[(p["query_id"], p["gold_id"]) for p in labelling_pairs(hits, QUERIES, TEXTS, seed)]]
    }
    assert len(orders) > 1 and labelling_pairs(hits, QUERIES, TEXTS, 3) == labelling_pairs(
        hits, QUERIES, TEXTS, 3
    )
    with pytest.raises(TypedSearchError, match="candidate zz"):
        labelling_pairs([Hit("s", "q1", "address", 1, "zz")], QUERIES, TEXTS, 0)
    with pytest.raises(TypedSearchError, match="query q9"):
        labelling_pairs([Hit("s", "q9", "address", 1, "a")], QUERIES, TEXTS, 0)


def test_verdicts_join_back_to_each_system_and_conflicts_are_refused(tmp_path):
    labels = tmp_path / "labels.jsonl"
    hits = [
        Hit("x", "q1", "address", 1, "a"),
        Hit("x", "q1", "address", 2, "b"),
        Hit("y", "q1", "address", 1, "b"),
    ]
    pairs = [p for p in labelling_pairs(hits, QUERIES, TEXTS, 0) if p["relation"] == "address"]
    answers = iter("y" if p["gold_id"] == "a" else "n" for p in pairs)
    label_pairs(pairs, labels, "agent", ask=lambda _: next(answers), show=lambda _: None, store_text=False)
    assert "sentence" not in labels.read_text()  # candidates by id only
    verdicts, who = read_verdicts(labels)
    assert who == ["agent"] and verdicts == {("q1", "address", "a"): True, ("q1", "address", "b"): False}
    result = report(hits, verdicts, {"a": "address", "b": "address"}, k=2)
    judged = {c.system: c.precision for c in result.judged}
    assert judged == {"x": 0.5, "y": 0.0}  # y: its one hit is a miss, and k=2 divides
    assert {c.system: c.precision for c in result.mined_role} == {"x": 1.0, "y": 0.5}
    row = json.loads(labels.read_text().splitlines()[0])
    with labels.open("a") as fh:
        fh.write(json.dumps(row | {"label": not row["label"]}) + "\n")
    with pytest.raises(TypedSearchError, match="labelled both ways"):
        read_verdicts(labels)
    assert read_verdicts(labels, annotator="someone else")[0] == {}


def test_search_label_report_end_to_end(small_release, tmp_path):
    index = tmp_path / "idx"
    assert (
        run_ratio(
            "index", "--dataset", small_release, "--split", "test", "--model", "bm25", "--out", index
        ).code
        == 0
    )
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        "\n".join(json.dumps({"query_id": q.query_id, "query": q.text}) for q in QUERIES) + "\n"
    )
    hits = tmp_path / "hits.parquet"
    found = run_ratio("search", "--queries", queries, "--out", hits, "--index", index, "--k", "2")
    assert found.code == 0, found.err
    assert "2 queries, 12 hits (bm25:unigram)" in found.out
    prior_hits = tmp_path / "prior.parquet"
    found = run_ratio(
        "search", "--queries", queries, "--out", prior_hits, "--index", index, "--k", "2", "--role-prior"
    )
    assert found.code == 0 and "(bm25:unigram + role prior)" in found.out, found.err
    pairs = tmp_path / "pairs.jsonl"
    made = run_ratio(
        "judge",
        "typed-search",
        "pairs",
        "--hits",
        hits,
        prior_hits,
        "--queries",
        queries,
        "--dataset",
        small_release,
        "--out",
        pairs,
    )
    assert made.code == 0, made.err
    rows = [json.loads(x) for x in pairs.read_text().splitlines()]
    labels = tmp_path / "labels.jsonl"
    answers = iter("y" if p["relation"] == "address" else "n" for p in rows)
    label_pairs(rows, labels, "agent", ask=lambda _: next(answers), show=lambda _: None, store_text=False)
    out = tmp_path / "report.json"
    done = run_ratio(
        "judge",
        "typed-search",
        "report",
        "--hits",
        hits,
        prior_hits,
        "--labels",
        labels,
        "--dataset",
        small_release,
        "--k",
        "2",
        "--out",
        out,
    )
    assert done.code == 0, done.err
    body = json.loads(out.read_text())
    judged = {(c["system"], c["move"]): c["precision"] for c in body["judged"]}
    for system in ("bm25:unigram", "bm25:unigram + role prior"):
        assert [judged[(system, m)] for m in RELATIONS] == [1.0, 0.0, 0.0]
    mined = {(c["system"], c["move"]): c["precision"] for c in body["mined_role"]}
    roles = Release.open(small_release).corpus("test", ["role"]).column("role").to_pylist()
    # the prior ranks the move's mined golds first: all of the top 2 where the pool has 2 of them
    assert mined[("bm25:unigram + role prior", "address")] == min(1.0, roles.count("address") / 2)
    assert mined[("bm25:unigram + role prior", "address")] >= mined[("bm25:unigram", "address")]
    assert body["release"]["manifest_sha256"] == Release.open(small_release).manifest_sha256
    assert "| bm25:unigram | 100.0 [100.0, 100.0] |" in out.with_suffix(".md").read_text()
    # nothing of the user's is overwritten, and a file that is no hits file is named
    assert_user_error(
        run_ratio(
            "judge",
            "typed-search",
            "pairs",
            "--hits",
            hits,
            "--queries",
            queries,
            "--dataset",
            small_release,
            "--out",
            pairs,
        ),
        "--out",
        "exists",
        code=2,
    )
    assert_user_error(
        run_ratio("search", "--queries", queries, "--out", pairs, "--index", index), "--out", code=2
    )
    assert_user_error(
        run_ratio("search", "text", "--queries", queries, "--index", index), "--queries", code=2
    )
    assert_user_error(
        run_ratio(
            "judge", "typed-search", "report", "--hits", pairs, "--labels", labels, "--dataset", small_release
        ),
        "--hits",
        str(pairs),
    )
