"""The loopback Hub of the tests: :mod:`ratio_bench.devhub` (also ``python -m ratio_bench.devhub``)."""

from ratio_bench.devhub.server import HubServer, HubState

__all__ = ["HubServer", "HubState"]
