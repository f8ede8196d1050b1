"""The service's caps and defaults that its commands also show: ``ratio leaderboard --help`` reads them here, at
the bottom of ``leaderboard/``, without loading the submission checks, the worker or the judging round that use
them (each of those imports its own from here)."""

MAX_PARAMETERS = 2_000_000_000  # the stated cap (a 1.5B model fits; a CPU worker would take days past it)
DEFAULT_LEASE_S = 3 * 3600
POOL_FOLDER = "judged-pool"
DEFAULT_SAMPLE, DEFAULT_SEED = 400, 0  # those of `ratio judge candidates`
