"""One index for all three moves from one unified model: candidates encoded once, each move's instruction."""

from __future__ import annotations

from sentence_transformers import SentenceTransformer
from tests.training.conftest import build_tiny

from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.serve import candidates
from ratio_bench.serve.index import build_index, load_index
from ratio_bench.serve.search import Searcher

MOVES = ("address", "broaden", "specify")


def test_unified_model_one_encoding_three_instructions(library, tmp_path):
    model = SentenceTransformer(str(build_tiny("bert", tmp_path)), device="cpu")
    model.prompts = {
        "address": "solve: ",
        "broaden": "generalise: ",
        "specify": "refine: ",
        "document": "d: ",
    }
    model.save(str(tmp_path / "unified"))
    out = tmp_path / "index"
    report = build_index(
        candidates.from_corpus([library]),
        dict.fromkeys(MOVES, str(tmp_path / "unified")),
        out,
        cache=EmbeddingCache(tmp_path / "cache"),
    )
    assert len(report.encode_s) == 1  # the candidates encoded once for all three moves
    index = load_index(out)
    (entry,) = index.manifest["models"].values()
    assert entry["query_prompts"] == {"address": "solve: ", "broaden": "generalise: ", "specify": "refine: "}
    results = Searcher(index, exact=True).search("gradient leakage in federated learning", k=4)
    scores = {m: [h["score"] for h in results[m]] for m in MOVES}
    assert scores["address"] != scores["specify"]  # each move's own instruction was applied
