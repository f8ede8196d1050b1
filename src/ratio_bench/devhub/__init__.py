"""A loopback Hugging Face Hub for development and tests: ``python -m ratio_bench.devhub --port N [--root DIR]``.

Point ``huggingface_hub`` (and everything built on it) at it with ``HF_ENDPOINT=http://127.0.0.1:N`` and
``HF_HUB_DISABLE_XET=1``; see :mod:`ratio_bench.devhub.server` for what it speaks.
"""

from ratio_bench.devhub.server import HubServer, HubState

__all__ = ["HubServer", "HubState"]
