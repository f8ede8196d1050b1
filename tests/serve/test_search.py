import json
import shutil
from pathlib import Path

import pytest
from tests.helpers.models import make_remote_code

from ratio_bench.core.errors import RatioError
from ratio_bench.retrieval.bm25 import BM25Retriever
from ratio_bench.retrieval.encoder import DenseEncoder
from ratio_bench.retrieval.registry import ModelUnavailableError
from ratio_bench.serve.index import TOPICAL_NOTICE, IndexFolderError, load_index
from ratio_bench.serve.manifest import IndexManifest, IndexModel
from ratio_bench.serve.search import MAX_QUERY_CHARS, QueryError, Searcher, check_query


def test_results_are_ranked_per_move_with_provenance_and_links(searcher):
    results = searcher.search("dense retrievers miss rare technical terms", k=3)
    assert list(results) == ["address", "broaden", "specify"]
    hits = results["address"]
    assert [h["rank"] for h in hits] == [1, 2, 3]
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    top = hits[0]
    assert top["text"] == "Dense retrievers miss rare technical terms in scientific queries."
    assert (top["paper_id"], top["title"], top["venue"]) == (
        "arxiv/2503.01234",
        "Sparse channels for dense retrieval",
        "arXiv",
    )
    assert top["url"] == "https://arxiv.org/abs/2503.01234"


def test_a_subset_of_moves_and_k(searcher):
    results = searcher.search("federated gradient leakage", moves=["specify", "specify"], k=1)
    assert list(results) == ["specify"] and len(results["specify"]) == 1
    assert results["specify"][0]["paper_id"] == "iclr26/AbCdEfGh12"
    assert len(searcher.search("oversmoothing graph", k=100)["broaden"]) == 8  # k above the corpus size


@pytest.mark.parametrize(
    ("text", "moves", "k", "field"),
    [
        ("", None, 10, "text"),
        ("  \n ", None, 10, "text"),
        ("x" * (MAX_QUERY_CHARS + 1), None, 10, "text"),
        ("fine", None, 0, "k"),
        ("fine", None, 101, "k"),
        ("fine", ["address", "expand"], 10, "moves"),
    ],
)
def test_bad_queries_name_their_field(text, moves, k, field):
    with pytest.raises(QueryError) as e:
        check_query(text, moves, k, ["address", "broaden", "specify"])
    assert e.value.field == field


def _copy(index: Path, tmp_path: Path) -> tuple[Path, dict]:
    """A copy of ``index`` to edit, with its manifest."""
    shutil.copytree(index, tmp_path / "index")
    return tmp_path / "index", json.loads((tmp_path / "index" / "manifest.json").read_text())


def _save(index: Path, manifest: dict) -> Path:
    (index / "manifest.json").write_text(json.dumps(manifest))
    return index


def test_a_model_runs_its_code_by_the_users_flag_never_by_the_manifest(tiny_index, tmp_path, monkeypatch):
    index, manifest = _copy(tiny_index, tmp_path)
    entry = manifest["models"]["bert_none"]
    marker = tmp_path / "remote-code-ran"
    make_remote_code(index / entry["folder"], marker)
    entry["trust_remote_code"] = True  # whoever wrote the index says so: not enough
    with pytest.raises(
        ModelUnavailableError, match="models/bert_none: this model runs its own code.*--trust-remote-code"
    ):
        Searcher(load_index(_save(index, manifest)))
    assert not marker.exists()

    class Loaded(Exception):
        pass

    def load(setup, batch_size=64):
        raise Loaded(setup.path, setup.trust_remote_code)

    monkeypatch.setattr(DenseEncoder, "load", load)
    with pytest.raises(Loaded) as loaded:
        Searcher(load_index(index), trust_remote_code=True)  # the user's own flag
    assert loaded.value.args == (str(index / entry["folder"]), True)


def test_a_manifest_reference_is_a_registered_name_never_a_path(tiny_index, tmp_path):
    index, manifest = _copy(tiny_index, tmp_path)
    entry = manifest["models"]["bert_none"]
    assert Path(entry.pop("folder")) and Path(entry["ref"]).is_dir()  # a model folder on this machine
    with pytest.raises(
        IndexFolderError, match="manifest field models.bert_none.ref .* is not a registered model"
    ):
        Searcher(load_index(_save(index, manifest)))


def test_a_truncated_ann_file_is_one_error_line(tiny_index, tmp_path):
    index, manifest = _copy(tiny_index, tmp_path)
    ann_file = index / manifest["models"]["bert_none"]["ann"]["file"]
    ann_file.write_bytes(ann_file.read_bytes()[:100])
    with pytest.raises(RatioError, match=f"{ann_file}: not a readable faiss index .*read error") as refused:
        Searcher(load_index(index))
    assert "\n" not in str(refused.value)
    assert Searcher(load_index(index), exact=True).search("private gradient updates", k=1)  # --exact skips it


def _manifest(moves: dict[str, str], **prompts: dict) -> IndexManifest:
    models = {
        key: IndexModel("dense", key, **{"query_prompt": "q: ", **prompts.get(key, {})})
        for key in set(moves.values())
    }
    return IndexManifest({}, moves, models)


@pytest.mark.parametrize(
    ("manifest", "aware"),
    [
        (_manifest(dict.fromkeys(("address", "broaden", "specify"), "bm25")), False),
        (_manifest(dict.fromkeys(("address", "broaden", "specify"), "minilm")), False),
        (_manifest({"address": "a", "broaden": "a", "specify": "b"}), True),
        (
            _manifest(
                dict.fromkeys(("address", "broaden", "specify"), "u"),
                u={"query_prompts": {"address": "a: ", "broaden": "b: ", "specify": "s: "}},
            ),
            True,
        ),
        (  # per-move prompts that are all the same are one prompt
            _manifest(
                dict.fromkeys(("address", "broaden"), "u"),
                u={"query_prompts": {"address": "x", "broaden": "x"}},
            ),
            False,
        ),
    ],
)
def test_an_index_is_move_aware_only_with_different_models_or_prompts(manifest, aware):
    assert manifest.move_aware is aware


def test_health_says_when_results_are_topical(searcher, tiny_index):
    info = searcher.describe()  # BM25 for every move
    assert info["move_aware"] is False and info["notice"] == TOPICAL_NOTICE
    assert "topical, not move-specific" in TOPICAL_NOTICE
    mixed = Searcher(
        load_index(tiny_index), exact=True
    ).describe()  # a dense model for two moves, BM25 for one
    assert mixed["move_aware"] is True and mixed["notice"] is None


def test_bm25_is_indexed_once_by_ratio_index_and_loaded_by_search(bm25_index, monkeypatch):
    manifest = json.loads((bm25_index / "manifest.json").read_text())
    (entry,) = manifest["models"].values()
    assert entry["bm25"] == "bm25/bm25_unigram" and f"{entry['bm25']}/params.index.json" in manifest["files"]
    rebuilt = Searcher(load_index(bm25_index)).search("private gradient updates", k=3)

    def no_rebuild(self, corpus, setup="unigram"):
        raise AssertionError("BM25 re-indexed at load")

    monkeypatch.setattr(BM25Retriever, "__init__", no_rebuild)
    assert Searcher(load_index(bm25_index)).search("private gradient updates", k=3) == rebuilt


@pytest.mark.parametrize("where", ["../elsewhere", "/tmp", "candidates.parquet/.."])
def test_a_saved_bm25_folder_must_lie_inside_the_index(bm25_index, tmp_path, where):
    index, manifest = _copy(bm25_index, tmp_path)
    manifest["models"]["bm25_unigram"]["bm25"] = where
    with pytest.raises(IndexFolderError, match="models.bm25_unigram.bm25 .* must be a file or folder inside"):
        load_index(_save(index, manifest))


def test_a_damaged_bm25_folder_is_one_error_line(bm25_index, tmp_path):
    index, _ = _copy(bm25_index, tmp_path)
    (index / "bm25/bm25_unigram/params.index.json").write_text("{not json")
    with pytest.raises(IndexFolderError, match="models.bm25_unigram.bm25 cannot be read"):
        Searcher(load_index(index))
    (index / "bm25/bm25_unigram/params.index.json").unlink()
    (index / "bm25/bm25_unigram/params.index.json").symlink_to(tmp_path / "outside.json")
    with pytest.raises(IndexFolderError, match="is a link or not a plain file"):
        load_index(index)


def _release_like_index(tmp_path: Path) -> Path:
    """A BM25 index of candidates with mined roles, as a release split gives them: the distractor matches the
    query best by words, the Address gold less so."""
    import pyarrow as pa

    from ratio_bench.serve.candidates import PROVENANCE_SCHEMA, Candidates
    from ratio_bench.serve.index import build_index

    rows = [
        (
            "d1",
            "Rare technical terms in queries confuse dense retrievers, unlike sparse ones.",
            "explicit_contrast",
        ),
        ("g1", "We add a sparse lexical channel that recovers rare technical terms.", "address"),
        ("g2", "Retrieval of scientific sentences is one case of semantic search.", "broaden"),
        ("g3", "Chemistry abstracts full of compound names are a concrete such setting.", "specify"),
    ]
    table = pa.Table.from_pylist(
        [
            {"id": i, "text": t, "paper_id": f"p/{i}", "title": None, "date": None, "venue": None,
             "section": None, "role": r}
            for i, t, r in rows
        ],
        schema=PROVENANCE_SCHEMA,
    )  # fmt: skip
    out = tmp_path / "idx"
    build_index(Candidates(table, {"release": {"name": "r", "version": "0", "split": "test"}}), {
        m: "bm25" for m in ("address", "broaden", "specify")
    }, out)  # fmt: skip
    return out


def test_the_role_prior_ranks_the_moves_mined_golds_first_and_can_be_switched_off(tmp_path):
    searcher = Searcher(load_index(_release_like_index(tmp_path)))
    query = "dense retrievers confuse rare technical terms in queries"
    plain = searcher.search(query, k=4)
    assert plain["address"][0]["id"] == "d1" and plain["address"][0]["role"] == "explicit_contrast"
    primed = searcher.search(query, k=4, role_prior=True)
    assert searcher.prior_used(True) and not searcher.prior_used(False)
    for move, gold in (("address", "g1"), ("broaden", "g2"), ("specify", "g3")):
        hits = primed[move]
        assert hits[0]["id"] == gold and hits[0]["role"] == move  # the move's mined gold first
        assert [h["rank"] for h in hits] == list(range(1, len(hits) + 1))
        assert sorted(h["id"] for h in hits) == sorted(h["id"] for h in plain[move])  # the rest follow, once
    assert primed["address"][1]["id"] == "d1"
    info = searcher.describe()
    assert info["role_prior"] is True and "mined as the move's gold" in info["role_prior_note"]


def test_an_index_without_mined_roles_never_uses_the_prior(searcher):
    assert not searcher.has_roles and not searcher.prior_used(True)
    query = "dense retrievers miss rare technical terms"
    assert searcher.search(query, k=3, role_prior=True) == searcher.search(query, k=3)
    assert searcher.describe()["role_prior"] is False


def test_ratio_search_uses_the_prior_only_when_asked_and_says_so(tmp_path):
    from tests.helpers.cli import run_ratio

    index = _release_like_index(tmp_path)
    query = "dense retrievers confuse rare technical terms in queries"
    on = run_ratio("search", query, "--index", index, "--json", "--k", "2", "--role-prior")
    off = run_ratio("search", query, "--index", index, "--json", "--k", "2")  # off unless asked for
    assert on.code == 0 and off.code == 0, on.err + off.err
    on, off = json.loads(on.out), json.loads(off.out)
    assert on["role_prior"] is True and on["results"]["address"][0]["id"] == "g1"
    assert off["role_prior"] is False and off["results"]["address"][0]["id"] == "d1"
    again = run_ratio("search", query, "--index", index, "--json", "--k", "2", "--no-role-prior")
    assert json.loads(again.out) == off
    table = run_ratio("search", query, "--index", index, "--k", "1", "--role-prior")
    assert "role prior" in table.out and "--role-prior" in table.out
    assert "role prior" not in run_ratio("search", query, "--index", index, "--k", "1").out
