import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ratio_bench.retrieval.cache import EmbeddingCache


def fake_encode(log):
    def encode(texts):
        log.append(len(texts))
        return np.array([[len(t), ord(t[0])] for t in texts], dtype=np.float32)

    return encode


def test_long_lists_are_encoded_in_resumable_chunks(tmp_path):
    texts = [f"text number {i}" for i in range(10)]
    log: list[int] = []
    cache = EmbeddingCache(tmp_path, chunk_texts=4, progress=False)

    def dies_on_third_chunk(batch):
        if len(log) == 2:
            raise KeyboardInterrupt
        return fake_encode(log)(batch)

    with pytest.raises(KeyboardInterrupt):
        cache.get_or_encode("m", "p", texts, dies_on_third_chunk)
    assert log == [4, 4]
    resumed = EmbeddingCache(tmp_path, chunk_texts=4, progress=False)
    vectors = resumed.get_or_encode("m", "p", texts, fake_encode(log))
    assert log == [4, 4, 2] and resumed.texts_encoded == 2  # only the missing chunk was encoded
    assert np.array_equal(vectors, fake_encode([])(texts))
    again = EmbeddingCache(tmp_path, chunk_texts=4, progress=False)
    assert np.array_equal(again.get_or_encode("m", "p", texts, fake_encode(log)), vectors)
    assert again.hits == 1 and log == [4, 4, 2]


def test_vectors_are_cached_per_text_whatever_list_they_arrive_in(tmp_path):
    """A snapshot pool sharing texts with the test pool, a re-ordered or appended list: only new texts encode."""
    log: list[int] = []
    cache = EmbeddingCache(tmp_path, progress=False)
    first = cache.get_or_encode("m", "p", ["alpha", "beta", "gamma"], fake_encode(log))
    grown = cache.get_or_encode("m", "p", ["gamma", "delta", "alpha", "delta"], fake_encode(log))
    assert log == [3, 1]  # only "delta", once although listed twice
    assert np.array_equal(grown[0], first[2]) and np.array_equal(grown[1], grown[3])
    assert np.array_equal(grown, fake_encode([])(["gamma", "delta", "alpha", "delta"]))
    cache.get_or_encode("m", "other prompt", ["alpha"], fake_encode(log))
    cache.get_or_encode("other model", "p", ["alpha"], fake_encode(log))
    assert log == [3, 1, 1, 1]  # the key is (model, prompt, text): each new pair encodes
    assert (cache.texts_encoded, cache.texts_cached) == (6, 3)


def _writer(root: str, start: int, ready) -> None:
    """A second process appending vectors of its own texts (and some shared ones) to the same cache."""
    cache = EmbeddingCache(Path(root), chunk_texts=7, progress=False)
    ready.wait()
    for n in range(5):
        texts = [f"text {i}" for i in range(start + 20 * n, start + 20 * n + 20)] + ["shared"]
        cache.get_or_encode("m", "p", texts, fake_encode([]))


def test_two_processes_writing_at_once_leave_every_vector_readable(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), s, ready)) for s in (0, 1000)]
    for p in procs:
        p.start()
    ready.set()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    texts = [f"text {i}" for s in (0, 1000) for i in range(s, s + 100)] + ["shared"]
    log: list[int] = []
    reader = EmbeddingCache(tmp_path, progress=False)
    assert np.array_equal(reader.get_or_encode("m", "p", texts, fake_encode(log)), fake_encode([])(texts))
    assert log == [] and reader.info().vectors == 201


KILLED_WRITER = """
import sys, numpy as np
from pathlib import Path
from ratio_bench.retrieval import cache as c

def encode(texts):
    return np.array([[len(t), ord(t[0])] for t in texts], dtype=np.float32)

store = c.EmbeddingCache(Path(sys.argv[1]), chunk_texts=3, progress=False)
store.get_or_encode("m", "p", ["a1", "a2", "a3"], encode)  # committed
real_write = c.os.fsync
def torn(fd):  # the next chunk's rows are written; the process dies before its records are
    import os, signal
    os.kill(os.getpid(), signal.SIGKILL)
c.os.fsync = torn
store.get_or_encode("m", "p", ["b1", "b2", "b3"], encode)
"""


def test_a_writer_killed_mid_append_leaves_a_readable_cache(tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(KILLED_WRITER)
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "c")], env=_env(), timeout=60)
    assert done.returncode == -signal.SIGKILL
    with open(tmp_path / "c" / "index-0.bin", "ab") as fh:
        fh.write(b"\x01" * 30)  # and a torn record at the index's tail
    log: list[int] = []
    cache = EmbeddingCache(tmp_path / "c", progress=False)
    texts = ["a1", "a2", "a3", "b1", "b2", "b3"]
    assert np.array_equal(cache.get_or_encode("m", "p", texts, fake_encode(log)), fake_encode([])(texts))
    assert log == [3]  # the committed chunk was read; the torn one encoded again, its orphan rows skipped
    again = EmbeddingCache(tmp_path / "c", progress=False)
    assert np.array_equal(again.get_or_encode("m", "p", texts, fake_encode(log)), fake_encode([])(texts))
    assert log == [3]


def test_prune_compacts_keeps_the_newest_within_a_size_and_drops_old_files(tmp_path):
    cache = EmbeddingCache(tmp_path, progress=False)
    (tmp_path / "ab").mkdir()
    (tmp_path / "ab" / "old-list.npy").write_bytes(b"x" * 100)  # the old per-list cache's layout
    cache.get_or_encode("m", "p", ["old one", "old two"], fake_encode([]))
    cache.get_or_encode("m", "p", ["new one"], fake_encode([]))
    reader = EmbeddingCache(tmp_path, progress=False)  # a reader opened before the prune
    reader.refresh()
    before, after = cache.prune(max_bytes=8)  # room for one 2-d float32 vector: the newest
    assert (
        (before.vectors, after.vectors) == (3, 1) and before.legacy_bytes == 100 and after.legacy_bytes == 0
    )
    assert after.total_bytes < before.total_bytes and not (tmp_path / "ab").exists()
    log: list[int] = []
    assert np.array_equal(
        reader.get_or_encode("m", "p", ["new one"], fake_encode(log)), fake_encode([])(["new one"])
    )
    assert log == []  # the reader followed the swap to the new generation
    assert np.array_equal(
        reader.get_or_encode("m", "p", ["old one"], fake_encode(log)), fake_encode([])(["old one"])
    )
    assert log == [1]
    tag = next(iter(cache.info().per_model))
    assert cache.prune(drop_models=[tag])[1].vectors == 0


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


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


def test_cache_info_and_prune_commands_report_sizes(tmp_path):
    from tests.helpers.cli import assert_user_error, run_ratio

    cache = EmbeddingCache(tmp_path, progress=False)
    cache.get_or_encode("m", "p", ["one", "two", "three"], fake_encode([]))
    info = run_ratio("cache", "info", "--cache-dir", tmp_path)
    assert info.code == 0 and "3 vectors (3 index records)" in info.out
    pruned = run_ratio("cache", "prune", "--cache-dir", tmp_path, "--max-size", "16")
    assert pruned.code == 0 and "after:  " in pruned.out and "2 vectors" in pruned.out.split("after:")[1]
    assert_user_error(
        run_ratio("cache", "prune", "--cache-dir", tmp_path, "--max-size", "lots"), "--max-size", code=2
    )


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
    texts = [f"text {i}" for i in range(7)]
    vectors = cache.get_or_encode("m", "p", texts, per_batch, "corpus", reports_progress=True)
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


def test_a_vector_file_overwritten_with_noise_is_encoded_again_not_used(tmp_path, capsys):
    """Issue 43: the index's checksum covered its records, not the vectors; noise in a shard was used silently."""
    texts = [f"text number {i}" for i in range(6)]
    log: list[int] = []
    EmbeddingCache(tmp_path, progress=False).get_or_encode("m", "p", texts, fake_encode(log))
    (shard,) = (tmp_path / "shards").rglob("*.f32")
    noise = np.random.default_rng(0).standard_normal(shard.stat().st_size // 4).astype(np.float32)
    data = bytearray(shard.read_bytes())
    data[8:16] = noise.tobytes()[8:16]  # rows 1 (bytes 8-15 of 2-float rows) damaged, the others intact
    shard.write_bytes(bytes(data))
    cache = EmbeddingCache(tmp_path, progress=False)
    vectors = cache.get_or_encode("m", "p", texts, fake_encode(log))
    assert np.array_equal(vectors, fake_encode([])(texts))  # the true vectors, not the noise
    assert log == [6, 1] and cache.rows_failed == 1  # only the damaged row was encoded again
    assert "1 vectors failed their checksum and were encoded again" in capsys.readouterr().err
    again = EmbeddingCache(tmp_path, progress=False)  # the fresh row was stored: nothing to encode now
    assert np.array_equal(again.get_or_encode("m", "p", texts, fake_encode(log)), vectors) and log == [6, 1]
