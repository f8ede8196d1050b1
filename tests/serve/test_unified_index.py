"""One index for all three moves from one unified model: candidates encoded once, each move's instruction."""

from __future__ import annotations

from pathlib import Path

from sentence_transformers import SentenceTransformer
from tests.helpers.training import build_tiny

from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.encoder import DenseEncoder
from ratio_bench.serve import candidates
from ratio_bench.serve.index import build_index, load_index
from ratio_bench.serve.search import Searcher

MOVES = ("address", "broaden", "specify")


def _unified(tmp_path) -> Path:
    model = SentenceTransformer(str(build_tiny("bert", tmp_path)), device="cpu")
    model.prompts = {
        "address": "solve: ",
        "broaden": "generalise: ",
        "specify": "refine: ",
        "document": "d: ",
    }
    model.save(str(tmp_path / "unified"))
    return tmp_path / "unified"


def _count_encodes(monkeypatch) -> list[tuple[int, str]]:
    """Every DenseEncoder.encode call as (number of texts, prompt); the real encoder still runs."""
    calls: list[tuple[int, str]] = []
    real = DenseEncoder.encode

    def counting(self, texts, prompt, role="document", progress=None):
        calls.append((len(texts), prompt))
        return real(self, texts, prompt, role, progress)

    monkeypatch.setattr(DenseEncoder, "encode", counting)
    return calls


def test_unified_model_one_encoding_three_instructions(library, tmp_path):
    out = tmp_path / "index"
    report = build_index(
        candidates.from_corpus([library]),
        dict.fromkeys(MOVES, str(_unified(tmp_path))),
        out,
        cache=EmbeddingCache(tmp_path / "cache"),
    )
    assert len(report.encode_s) == 1  # the candidates encoded once for all three moves
    index = load_index(out)
    (entry,) = index.manifest.models.values()
    assert entry.query_prompts == {"address": "solve: ", "broaden": "generalise: ", "specify": "refine: "}
    results = Searcher(index, exact=True).search("gradient leakage in federated learning", k=4)
    scores = {m: [h["score"] for h in results[m]] for m in MOVES}
    assert scores["address"] != scores["specify"]  # each move's own instruction was applied


def test_a_unified_model_named_three_ways_encodes_the_corpus_once(library, tmp_path, monkeypatch):
    folder = _unified(tmp_path)
    monkeypatch.chdir(tmp_path)
    cands = candidates.from_corpus([library])
    calls = _count_encodes(monkeypatch)
    refs = {"address": "unified", "broaden": str(folder), "specify": "./unified/"}  # one folder, 3 spellings
    report = build_index(cands, refs, tmp_path / "index", cache=EmbeddingCache(tmp_path / "cache"))
    assert calls == [(len(cands.ids), "d: ")]  # one corpus encode, with the shared document prompt
    manifest = load_index(tmp_path / "index").manifest
    assert len(report.encode_s) == 1 and len(set(manifest.moves.values())) == 1


def test_three_specialists_encode_the_corpus_three_times(library, tmp_path, monkeypatch):
    cands = candidates.from_corpus([library])
    tiny = build_tiny("bert", tmp_path)
    refs = {}
    for move in MOVES:  # the same weights saved three times with different prompts: three models
        model = SentenceTransformer(str(tiny), device="cpu")
        model.prompts = {"query": f"{move} query: ", "document": "document: "}
        model.save(str(tmp_path / move))
        refs[move] = str(tmp_path / move)
    calls = _count_encodes(monkeypatch)
    build_index(cands, refs, tmp_path / "index", cache=EmbeddingCache(tmp_path / "cache"))
    assert calls == [(len(cands.ids), "document: ")] * 3
