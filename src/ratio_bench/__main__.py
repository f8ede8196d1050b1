"""``python -m ratio_bench``: with no arguments, check the install on one screen (versions, the torch build,
extras, models, a one-second self-test); with arguments, the ``ratio`` command, for environments whose scripts
folder is not on PATH."""

from __future__ import annotations

import sys

from ratio_bench.cli import install_check, run

if __name__ == "__main__":
    if len(sys.argv) > 1:
        run()
    else:
        sys.exit(install_check())
