"""Model folders with one defect each, made from the tiny BERT of the training tests (no downloads)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.models import write_broken_models


@pytest.fixture(scope="session")
def broken_models(tmp_path_factory) -> dict[str, Path]:
    return write_broken_models(tmp_path_factory.mktemp("broken-models"))
