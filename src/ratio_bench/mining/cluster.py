"""Connecting ``ratio mine run --executor ray`` to a Ray cluster, or starting one on this machine.

datatrove's ``RayPipelineExecutor`` expects ``ray.init()`` to have been called. Where: ``--executor-option
address=HOST:PORT`` (or ``auto``, or the ``RAY_ADDRESS`` variable Ray itself reads) joins a running cluster,
e.g. one started with ``ray start --head``; with neither, Ray starts a private cluster for this run, bounded to
``--workers`` CPUs and a small object store (the step ships only the plan, never documents, through it), and
shuts it down at the end. A cluster we joined is left running. Its workers must import this same
``ratio_bench`` (install it on every node, or start the cluster from this environment).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from ratio_bench.core import extras
from ratio_bench.core.extras import require

OBJECT_STORE_BYTES = 128 << 20  # a private cluster's shared-memory store: the executor and plan, a few MB


def pop_address(options: dict[str, Any]) -> str | None:
    """The cluster address from ``--executor-option address=...`` (removed from the executor's options, which
    datatrove would refuse), else ``RAY_ADDRESS``, else None (start a private cluster)."""
    address = options.pop("address", None)
    return str(address) if address else os.environ.get("RAY_ADDRESS") or None


@contextlib.contextmanager
def ray_session(address: str | None, cpus: int, verbose: bool = False) -> Iterator[dict[str, Any]]:
    """Ray initialised for the run: joined at ``address``, or a private local cluster of ``cpus`` CPUs.
    Yields what the run used (``address`` and whether the cluster was started here)."""
    require("cluster")
    ray = extras.load("ray")

    if ray.is_initialized():  # a caller (a notebook, a test) already chose the cluster
        yield {"address": "initialised by the caller", "started": False}
        return
    if address:
        ray.init(address=address, log_to_driver=verbose, configure_logging=verbose)
    else:
        ray.init(
            num_cpus=cpus,
            object_store_memory=OBJECT_STORE_BYTES,
            include_dashboard=False,
            log_to_driver=verbose,
            configure_logging=verbose,
        )
    try:
        yield {"address": address or "local", "started": not address}
    finally:
        ray.shutdown()
