import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ratio_bench.evaluation.analysis.analyses import mined_role_precision
from ratio_bench.evaluation.analysis.typed_hits import (
    Hit,
    HitsError,
    is_hits_file,
    mined_role_verdict,
    precision_at_k,
    precision_markdown,
    read_hits,
    read_queries,
    write_hits,
)
from ratio_bench.evaluation.scoring.evaluate import Queries, ScoreResult, SplitData
from ratio_bench.evaluation.scoring.uncertainty import Bootstrap, mean_interval


def hits_of(system, move, lists):
    """Hits from {query id: [candidate ids, best first]}."""
    return [
        Hit(system, qid, move, rank, cid) for qid, ids in lists.items() for rank, cid in enumerate(ids, 1)
    ]


def test_precision_at_k_is_the_mean_share_per_query_and_missing_verdicts_count_as_misses():
    hits = hits_of("s", "address", {"q1": ["a", "b", "c", "x"], "q2": ["d", "e", "f"]})
    good = {("q1", "a"), ("q1", "x"), ("q2", "d"), ("q2", "e")}
    unjudged = {("q2", "f")}

    def verdict(h):
        return None if (h.query_id, h.candidate_id) in unjudged else (h.query_id, h.candidate_id) in good

    (cell,) = precision_at_k(hits, verdict, k=3)
    # q1: only "a" in its top 3 ("x" is 4th) -> 1/3; q2: d, e of 3 -> 2/3; mean 1/2
    assert cell.precision == pytest.approx(0.5)
    assert (cell.queries, cell.hits, cell.decided) == (2, 6, 5)
    assert cell.low <= cell.precision <= cell.high
    # a short list is divided by k, not by its length
    (short,) = precision_at_k(hits_of("s", "address", {"q": ["a"]}), lambda h: True, k=5)
    assert short.precision == pytest.approx(0.2)


def test_mean_interval_is_seeded_and_collapses_on_equal_values():
    values = [0.0, 0.2, 0.4, 0.4, 0.6, 1.0, 0.8, 0.2] * 8
    first, again = mean_interval(values), mean_interval(values)
    assert first == again and first.low < np.mean(values) < first.high
    assert mean_interval(values, Bootstrap(seed=1)) != first
    same = mean_interval([0.4] * 30)
    assert same.low == pytest.approx(0.4) and same.high == pytest.approx(0.4)
    assert mean_interval([]) is None


def test_mined_role_verdict_and_the_table_render():
    roles = {"a": "address", "b": "specify"}
    verdict = mined_role_verdict(roles)
    assert verdict(Hit("s", "q", "address", 1, "a")) is True
    assert verdict(Hit("s", "q", "address", 2, "b")) is False
    assert verdict(Hit("s", "q", "address", 3, "zz")) is None
    cells = precision_at_k(hits_of("bm25", "address", {"q": ["a", "b"]}), verdict, k=2)
    text = precision_markdown({"judged": cells}, ["bm25", "other"], ["address", "broaden"])
    assert "| bm25 | 50.0 [50.0, 50.0] | — | 1 | — |" in text
    assert "| other | — | — | — | — |" in text


def test_mined_role_precision_reads_a_kept_run():
    data = SplitData(
        ["g1", "d1", "s1"],
        ["gold", "distractor", "specify gold"],
        ["address", "common_irrelevant", "specify"],
        {"address": Queries(["q1"], ["problem"], ["g1"])},
        {},
    )
    result = ScoreResult("m", {}, {}, 0.0, runs={"address": {"q1": ["g1", "d1", "s1"]}})
    (cell,) = mined_role_precision(result, data, k=2)
    assert (cell.system, cell.move, cell.precision, cell.queries) == ("m", "address", 0.5, 1)


def test_hits_round_trip_with_their_source(tmp_path):
    path = tmp_path / "hits.parquet"
    hits = hits_of("bm25", "specify", {"q1": ["a", "b"]})
    write_hits(path, hits, {"release": {"name": "r", "version": "1", "split": "test"}})
    assert is_hits_file(path)
    back, sources = read_hits([path])
    assert back == hits and sources == [{"release": {"name": "r", "version": "1", "split": "test"}}]
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1]}), other)
    assert not is_hits_file(other) and not is_hits_file(tmp_path / "missing.parquet")
    with pytest.raises(HitsError, match="no column system"):
        read_hits([other])


def test_queries_file_errors_name_the_line(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"query_id": "a", "query": "x fails."}) + "\n\n" + '{"query_id": "b"}\n')
    with pytest.raises(HitsError, match=r"q.jsonl:3: not a query row"):
        read_queries(path)
    path.write_text(
        json.dumps({"query_id": "a", "query": "x"}) + "\n" + json.dumps({"query_id": "a", "query": "y"})
    )
    with pytest.raises(HitsError, match=r":2: query_id 'a' appears twice"):
        read_queries(path)
    path.write_text(json.dumps({"query_id": "a", "query": "x", "inspired_by": "arxiv/1", "field": "nlp"}))
    (q,) = read_queries(path)
    assert (q.query_id, q.text, q.inspired_by, q.field) == ("a", "x", "arxiv/1", "nlp")
