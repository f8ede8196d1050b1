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
