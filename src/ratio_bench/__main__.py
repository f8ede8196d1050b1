"""``python -m ratio_bench``: the ``ratio`` command, for environments whose scripts folder is not on PATH."""

import sys

from ratio_bench.cli import main

sys.exit(main())
