"""The scorer, not the model folder, chooses how weights load; what comes out is checked; a Router model is
encoded by its routes. Tiny in-process models (tests/helpers/models.py), no downloads."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from tests.helpers.models import make_router, with_loading_options, with_weights
from tests.helpers.training import build_tiny

from ratio_bench.retrieval.encoder import PRECISION, DenseEncoder, EncodingError
from ratio_bench.retrieval.registry import resolve

TEXTS = ["Graph networks oversmooth when they are deep.", "A gated residual connection helps.", "Short."]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return build_tiny("bert", tmp_path_factory.mktemp("tiny"))


def _copy(tiny: Path, dest: Path) -> Path:
    shutil.copytree(tiny, dest)
    return dest


def _load(folder: Path) -> DenseEncoder:
    return DenseEncoder.load(resolve(str(folder), "none"), batch_size=2)


def test_a_folders_device_map_and_offload_folder_are_ignored(tiny, tmp_path):
    chosen = tmp_path / "chosen-by-the-repo"
    encoder = _load(with_loading_options(_copy(tiny, tmp_path / "m"), chosen))
    assert not chosen.exists()  # the repo's offload folder was never made
    assert {str(p.device) for p in encoder.model.parameters()} == {"cpu"}
    assert getattr(encoder.model[0].auto_model, "hf_device_map", None) is None


def test_a_folders_bfloat16_is_ignored_and_scores_equal_the_float32_run(tiny, tmp_path):
    plain = _load(tiny)
    asked = _load(with_loading_options(_copy(tiny, tmp_path / "m"), tmp_path / "offload"))
    assert PRECISION == "float32"
    assert (
        {p.dtype for p in asked.model.parameters()}
        == {plain.model[0].auto_model.dtype}
        == {__import__("torch").float32}
    )
    np.testing.assert_array_equal(asked.encode(TEXTS, ""), plain.encode(TEXTS, ""))


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_weights_give_no_vectors(tiny, tmp_path, value):
    encoder = _load(with_weights(_copy(tiny, tmp_path / "m"), value))
    with pytest.raises(EncodingError, match="non-finite embeddings: 3 of 3 document vectors"):
        encoder.encode(TEXTS, "")


def test_weights_that_say_nothing_give_no_vectors(tiny, tmp_path):
    encoder = _load(with_weights(_copy(tiny, tmp_path / "m"), 0.0))
    with pytest.raises(EncodingError, match="constant embeddings"):
        encoder.encode(TEXTS, "")


def test_vectors_of_another_dimension_are_refused(tiny):
    encoder = _load(tiny)
    encoder.dimension = 16  # what a model stating one size and giving another looks like
    with pytest.raises(EncodingError, match="have 32 dimensions; the model states 16"):
        encoder.encode(TEXTS, "", "query")


def test_a_router_model_encodes_queries_and_documents_by_their_routes(tiny, tmp_path):
    """Plain ``encode`` takes a Router's default route (here the document one) for everything."""
    from sentence_transformers import SentenceTransformer

    folder = make_router(tiny, tmp_path / "router")
    encoder = _load(folder)
    assert encoder.routed and encoder.cache_id("query") != encoder.cache_id("document")
    model = SentenceTransformer(str(folder), device="cpu")
    expected_query = model.encode(TEXTS, task="query", normalize_embeddings=True)
    expected_document = model.encode(TEXTS, task="document", normalize_embeddings=True)
    assert not np.allclose(expected_query, expected_document)
    np.testing.assert_allclose(encoder.encode(TEXTS, "", "query"), expected_query, atol=1e-6)
    np.testing.assert_allclose(encoder.encode(TEXTS, "", "document"), expected_document, atol=1e-6)
    plain = _load(tiny)  # the query route is the tiny model itself
    np.testing.assert_allclose(encoder.encode(TEXTS, "", "query"), plain.encode(TEXTS, ""), atol=1e-6)
