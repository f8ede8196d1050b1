import json
from pathlib import Path

import numpy as np
import pytest

from ratio_bench.evaluation.scoring.evaluate import load_split, score
from ratio_bench.retrieval.cache import EmbeddingCache
from ratio_bench.retrieval.encoder import DenseEncoder
from ratio_bench.retrieval.registry import ModelUnavailableError, fingerprint, resolve

TEXTS = ["Graph networks oversmooth when they are deep.", "A gated residual connection helps.", "Short."]


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("sentence_transformers")
    try:
        setup = resolve("all-MiniLM-L6-v2")
    except ModelUnavailableError as e:
        pytest.skip(str(e))
    return setup, DenseEncoder.load(setup, batch_size=2)


def tuned_copy(src: str, dest: Path, **config) -> Path:
    """MiniLM's files linked into a folder whose sentence-transformers config says ``config``."""
    dest.mkdir()
    for f in Path(src).iterdir():
        if f.name != "config_sentence_transformers.json":
            (dest / f.name).symlink_to(f)
    (dest / "config_sentence_transformers.json").write_text(json.dumps(config), encoding="utf-8")
    return dest


def test_a_loaded_model_is_wrapped_with_the_callers_fingerprint(minilm):
    setup, loaded = minilm
    wrapped = DenseEncoder(loaded.model, fingerprint="run-7/step-300", batch_size=3)
    assert loaded.fingerprint == fingerprint(setup.path) and wrapped.fingerprint == "run-7/step-300"
    vectors = wrapped.encode(TEXTS, "query: ")
    assert vectors.dtype == np.float32 and vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    # batches are length-sorted inside sentence-transformers; the order of the input is kept
    singly = np.stack([loaded.encode([t], "query: ")[0] for t in TEXTS])
    assert np.allclose(vectors, singly, atol=1e-5)


def test_an_empty_prompt_ignores_the_models_default_prompt(minilm, tmp_path):
    setup, plain = minilm
    folder = tuned_copy(
        setup.path,
        tmp_path / "tuned",
        prompts={"query": "find: ", "document": ""},
        default_prompt_name="query",
    )
    tuned = DenseEncoder.load(resolve(str(folder)))
    assert np.allclose(tuned.encode(TEXTS, ""), plain.encode(TEXTS, ""), atol=1e-5)
    assert np.allclose(
        tuned.encode(TEXTS, "find: "), plain.encode(["find: " + t for t in TEXTS], ""), atol=1e-5
    )


def test_a_tuned_folder_scores_with_its_saved_prompts(minilm, small_release, tmp_path):
    setup, _ = minilm
    folder = tuned_copy(setup.path, tmp_path / "tuned", prompts={"query": "find: ", "document": "doc: "})
    data = load_split(small_release, "test")
    cache = EmbeddingCache(tmp_path / "cache", progress=False)
    saved = score(resolve(str(folder)), data, cache=cache)
    fp = fingerprint(folder)
    assert saved.model == "tuned:saved" and fp != fingerprint(setup.path)
    queries = {t for q in data.queries.values() for t in q.texts}
    assert cache.holds(fp, "doc: ", data.corpus_texts) and cache.holds(fp, "find: ", sorted(queries))
    assert not cache.holds(fp, "", data.corpus_texts[:1])  # encoded with the prompts it was saved with
    assert cache.info().vectors == len(set(data.corpus_texts)) + len(queries)
