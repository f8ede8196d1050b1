"""A release small enough to judge by hand, a fake judge that decides by words, and saved runs over it."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

# A release small enough to judge by hand (tests/judge/test_candidates.py, tests/evaluation/scoring/test_pool.py):
# three Address test queries, nine candidates, two saved runs. The fake judge's two Address prompts accept a
# candidate by a word in it: prompt 1 ("address-silver-split") on "good" or "nice", prompt 2 on "good" or
# "fine"; so hard agreement accepts "good", soft agreement any of the three.
JUDGED_QUERIES = {  # query id -> (query, gold id, paper)
    "q1": ("dense retrievers miss rare technical terms", "g1", "P1"),
    "q2": ("training data for the parser is scarce", "g2", "P2"),
    "q3": ("labels from crowd workers are noisy", "g3", "P3"),
}


JUDGED_CORPUS = {  # candidate id -> (text, paper)
    "g1": ("a lexical channel works good for rare terms", "P1"),
    "g2": ("we synthesise plain parses from a grammar", "P2"),
    "g3": ("a fine grained agreement model reweights labels", "P3"),
    "d1": ("good results follow from contrastive pretraining", "P9"),
    "d2": ("a nice trick is to cache the encoder", "P1"),
    "d3": ("fine tuning on clean subsets helps", "P8"),
    "d4": ("plain baselines remain strong", "P7"),
    "d5": ("good parsers transfer across languages", "P2"),
    "d6": ("plain averaging of votes is common", "P6"),
}


JUDGED_RUNS = {
    "A": {"q1": ["d1", "g1", "d4"], "q2": ["d4", "d2", "d5"], "q3": ["g3", "d3", "d6"]},
    "B": {"q1": ["d4", "d6", "d1"], "q2": ["g2", "d4", "d6"], "q3": ["d2", "d1", "g3"]},
}


def judged_decide(messages: list[dict[str, str]]) -> bool:
    """The fake judge's verdict on a candidate-mode request (see JUDGED_CORPUS)."""
    from ratio_bench.llm.prompts import get_prompt

    first = get_prompt("address-silver-split").messages("candidate", query="", candidate="")[0]["content"]
    words = set(messages[1]["content"].split("\ns2: ", 1)[1].split())
    return bool(words & ({"good", "nice"} if messages[0]["content"] == first else {"good", "fine"}))


def write_judged_release(root: Path, version: str = "0.0") -> Path:
    """The release above (manifest, Address test queries, test corpus) at ``root``."""

    from ratio_bench.dataset.contract import CORPUS_SCHEMA, QUERY_SCHEMA

    queries = [
        {"query_id": q, "query": t, "gold_id": g, "gold": JUDGED_CORPUS[g][0], "relation": "address",
         "marker": "to address this", "paper_id": p}
        for q, (t, g, p) in JUDGED_QUERIES.items()
    ]  # fmt: skip
    corpus = [
        {"id": c, "text": t, "paper_id": p, "role": "address" if c.startswith("g") else "distractor"}
        for c, (t, p) in JUDGED_CORPUS.items()
    ]
    for config, rows, schema in (("address", queries, QUERY_SCHEMA), ("corpus", corpus, CORPUS_SCHEMA)):
        (root / "data" / config).mkdir(parents=True)
        pq.write_table(
            pa.Table.from_pylist(rows, schema=schema), root / "data" / config / "test-00000-of-00001.parquet"
        )
    from ratio_bench.dataset.contract import file_checksums

    manifest = {"kind": "release", "name": "tiny", "version": version, "lexicon_sha256": "-",
                "files": file_checksums(root), "rows": {"address": {"test": 3}, "corpus": {"test": 9}}}  # fmt: skip
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


def save_judged_run(release: Path, name: str, out: Path, ranked: dict[str, list[str]] | None = None) -> Path:
    """A saved run of ``release`` whose Address rankings are ``ranked`` (default: JUDGED_RUNS[name])."""

    from ratio_bench.evaluation.scoring.evaluate import ScoreResult
    from ratio_bench.evaluation.scoring.runs import save_run

    ranked = ranked or JUDGED_RUNS[name]
    scores = {q: [1.0 - i / 10 for i in range(len(ids))] for q, ids in ranked.items()}
    result = ScoreResult(
        f"model-{name}", {}, {}, 0.0, runs={"address": ranked}, run_scores={"address": scores}
    )
    return save_run(result, json.loads((release / "manifest.json").read_text()), "test", out)
