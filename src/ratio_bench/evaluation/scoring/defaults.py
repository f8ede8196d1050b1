"""Defaults that the command line prints in its help and the library uses, in a module that imports nothing heavy:
every ``ratio`` process builds its whole parser, so a constant read from the board or the analyses would load
pyarrow, numpy and the board (about 0.2 s) into ``ratio --version`` and every refused command."""

from pathlib import Path

PLOT_TOP = 15  # bars per panel: the top entries of each relation and split
DRIFT_RESULTS = Path("eval/results/snapshots")  # where `ratio score --split snapshots --out` is told to write
