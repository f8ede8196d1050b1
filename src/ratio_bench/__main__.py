"""``python -m ratio_bench``: the ``ratio`` command, for environments whose scripts folder is not on PATH."""

from ratio_bench.cli import run

run()
