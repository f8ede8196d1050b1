import numpy as np
import pytest

from ratio_bench.retrieval.search import exact_search


def random_vectors(n_corpus: int, n_queries: int, dim: int = 16, seed: int = 0):
    rng = np.random.default_rng(seed)
    corpus = rng.normal(size=(n_corpus, dim)).astype(np.float32)
    queries = rng.normal(size=(n_queries, dim)).astype(np.float32)
    return corpus, queries


@pytest.mark.parametrize("backend", ["faiss", "torch"])
def test_exact_search_is_exact_and_stable(backend):
    if backend == "torch":
        pytest.importorskip("torch")
    corpus, queries = random_vectors(500, 7)
    scores, ids = exact_search(corpus, queries, k=5, chunk=3, backend=backend, device="cpu")
    brute = queries @ corpus.T
    assert (ids == np.argsort(-brute, axis=1, kind="stable")[:, :5]).all()
    assert np.allclose(scores, np.take_along_axis(brute, ids, axis=1), atol=1e-4)


@pytest.mark.parametrize("max_bytes", [None, 4 * (32 + 64) * 150])  # whole corpus, or blocks of 150 rows
def test_torch_path_matches_faiss(max_bytes):
    pytest.importorskip("torch")
    corpus, queries = random_vectors(1000, 200, dim=32, seed=1)
    corpus /= np.linalg.norm(corpus, axis=1, keepdims=True)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    f_scores, f_ids = exact_search(corpus, queries, k=20, backend="faiss")
    t_scores, t_ids = exact_search(
        corpus, queries, k=20, chunk=64, backend="torch", device="cpu", max_bytes=max_bytes
    )
    assert (t_ids == f_ids).all()
    assert np.abs(t_scores - f_scores).max() < 1e-5


@pytest.mark.parametrize("max_bytes", [None, 4 * (4 + 2) * 5])  # one block, or blocks of 5 rows
def test_torch_path_breaks_ties_by_the_lower_corpus_index(max_bytes):
    pytest.importorskip("torch")
    e = np.eye(4, dtype=np.float32)
    corpus = np.stack([e[0], e[1], e[2], e[3], e[0] / 2, e[1] / 2, e[2] / 2, e[3], e[1], e[3] / 2])
    queries = np.array([[0.1, 0.6, 0, 1.0], [0.2, 1.0, 0.1, 0.3]], dtype=np.float32)
    f_scores, f_ids = exact_search(corpus, queries, k=5, backend="faiss")
    t_scores, t_ids = exact_search(corpus, queries, k=5, backend="torch", device="cpu", max_bytes=max_bytes)
    # rows 3 and 7, and rows 1 and 8, are the same vector (in different blocks of 5)
    assert f_ids.tolist() == [[3, 7, 1, 8, 9], [1, 8, 5, 3, 7]]
    assert (t_ids == f_ids).all() and np.allclose(t_scores, f_scores)


def test_more_neighbours_than_candidates_and_no_queries():
    corpus, queries = random_vectors(3, 2)
    scores, ids = exact_search(corpus, queries, k=10)
    assert ids.shape == scores.shape == (2, 3) and sorted(ids[0]) == [0, 1, 2]
    scores, ids = exact_search(corpus, queries[:0], k=10, backend="torch", device="cpu")
    assert ids.shape == (0, 3)


def test_auto_uses_torch_on_cuda_when_faiss_is_not_installed(monkeypatch):
    """A CUDA machine without faiss (faiss-gpu not installed, say) searches with torch instead of failing."""
    pytest.importorskip("torch")
    from ratio_bench.retrieval import search

    monkeypatch.setattr(search, "faiss", None)  # as when faiss is not installed
    monkeypatch.setattr(search, "_torch_has_cuda", lambda: True)
    calls = []
    real = search._torch_search

    def torch_search_on_cpu(corpus, queries, k, chunk, device, max_bytes):
        calls.append(k)
        return real(corpus, queries, k, chunk, "cpu", max_bytes)

    monkeypatch.setattr(search, "_torch_search", torch_search_on_cpu)
    corpus, queries = random_vectors(50, 3)
    scores, ids = exact_search(corpus, queries, k=4)
    assert calls == [4]
    assert (ids == np.argsort(-(queries @ corpus.T), axis=1, kind="stable")[:, :4]).all()
    # no CUDA either: the faiss path is the only one left, and its import error surfaces
    monkeypatch.setattr(search, "_torch_has_cuda", lambda: False)
    with pytest.raises(ImportError):
        exact_search(corpus, queries, k=4)
