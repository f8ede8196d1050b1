"""Ratio: retrieval across typed ideation operations (Address, Broaden, Specify)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ratio-bench")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
