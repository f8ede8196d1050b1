"""The names of the files in the leaderboard's repositories that modules on several floors look for: the results
repository's listing of trusted worker keys (written by the maintainers, read by the board, the workers and the
queue's own check that it is no results repository). At the bottom of ``leaderboard/``, so that the queue's ledger
and the provenance checks can both name it without importing each other."""

TRUSTED_WORKERS = "trusted_workers.json"
TRUSTED_SCHEMA = "ratio-trusted-workers/1"
