import numpy as np
import pytest

from ratio_bench.retrieval.cache import EmbeddingCache


def fake_encode(log):
    def encode(texts):
        log.append(len(texts))
        return np.array([[len(t), ord(t[0])] for t in texts], dtype=np.float32)

    return encode


def test_long_lists_are_encoded_in_resumable_chunks(tmp_path):
    ids = [f"d{i}" for i in range(10)]
    texts = [f"text number {i}" for i in range(10)]
    log: list[int] = []
    cache = EmbeddingCache(tmp_path, chunk_texts=4, progress=False)

    def dies_on_third_chunk(batch):
        if len(log) == 2:
            raise KeyboardInterrupt
        return fake_encode(log)(batch)

    with pytest.raises(KeyboardInterrupt):
        cache.get_or_encode("m", "p", ids, texts, dies_on_third_chunk)
    assert log == [4, 4] and len(list(tmp_path.rglob("*.parts/*.npy"))) == 2
    resumed = EmbeddingCache(tmp_path, chunk_texts=4, progress=False)
    vectors = resumed.get_or_encode("m", "p", ids, texts, fake_encode(log))
    assert log == [4, 4, 2] and resumed.chunks_resumed == 2  # only the missing chunk was encoded
    assert np.array_equal(vectors, fake_encode([])(texts))
    assert not list(tmp_path.rglob("*.parts"))  # joined into one file, parts removed
    again = EmbeddingCache(tmp_path, chunk_texts=4, progress=False)
    assert np.array_equal(again.get_or_encode("m", "p", ids, texts, fake_encode(log)), vectors)
    assert again.hits == 1 and log == [4, 4, 2]


def test_encode_bars_say_whether_they_encode_the_corpus_or_a_moves_queries(tmp_path, monkeypatch):
    from ratio_bench.retrieval import cache as cache_module
    from ratio_bench.retrieval.retriever import DenseRetriever

    bars: list[tuple[str, int, int]] = []  # (label, total, texts counted)
    real = cache_module.tqdm

    class Recording(real):
        def close(self):
            if not self.disable:  # tqdm closes again when collected; a closed bar is disabled
                bars.append((self.desc, self.total, self.n))
            super().close()

    monkeypatch.setattr(cache_module, "tqdm", Recording)

    class Encoder:
        fingerprint = "fp"

        def cache_id(self, role):
            return self.fingerprint

        def encode(self, texts, prompt, role="document", progress=None):
            progress(len(texts))  # one batch
            return fake_encode([])(texts)

    cache = EmbeddingCache(tmp_path, chunk_texts=4, progress=True)
    retriever = DenseRetriever(Encoder(), "m", "d: ", "q: ", {"broaden": "b: "}, cache)
    retriever.index([f"d{i}" for i in range(6)], [f"text {i}" for i in range(6)])
    retriever.search("broaden", ["q1"], ["a query"], 2)
    assert bars == [("encoding corpus (6 candidates)", 6, 6), ("encoding broaden queries (1)", 1, 1)]


def test_the_bar_moves_per_batch_not_per_chunk(tmp_path, monkeypatch):
    """A chunk of 4,096 texts takes minutes on a CPU: the bar must move with each batch the encoder finishes."""
    from ratio_bench.retrieval import cache as cache_module

    updates: list[int] = []
    real = cache_module.tqdm

    class Recording(real):
        def update(self, n=1):
            updates.append(n)
            return super().update(n)

    monkeypatch.setattr(cache_module, "tqdm", Recording)

    def per_batch(texts, progress):
        for start in range(0, len(texts), 2):  # batches of 2
            progress(len(texts[start : start + 2]))
        return fake_encode([])(texts)

    cache = EmbeddingCache(tmp_path, chunk_texts=4, progress=True)
    ids, texts = [f"d{i}" for i in range(7)], [f"text {i}" for i in range(7)]
    vectors = cache.get_or_encode("m", "p", ids, texts, per_batch, "corpus", reports_progress=True)
    assert updates == [2, 2, 2, 1] and np.array_equal(vectors, fake_encode([])(texts))


def test_the_encoder_reports_each_batch_and_keeps_the_input_order():
    from ratio_bench.retrieval.encoder import DenseEncoder

    class Model:
        def get_embedding_dimension(self):
            return 2

        def encode(self, texts, **kwargs):
            assert len(texts) <= 3
            return np.array([[len(t), ord(t[-1])] for t in texts], dtype=np.float32)

    texts = ["a", "bbbbbbb", "cc", "dddd", "eeeee", "f", "ggg"]
    seen: list[int] = []
    vectors = DenseEncoder(Model(), "fp", batch_size=3).encode(texts, "", progress=seen.append)
    assert seen == [3, 3, 1]
    expected = np.array([[len(t), ord(t[-1])] for t in texts], dtype=np.float32)
    assert np.array_equal(vectors, expected)
