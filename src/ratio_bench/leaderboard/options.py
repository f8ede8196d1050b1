"""Names the leaderboard's command parsers and its handlers share (``leaderboard/cli.py`` builds the parsers,
``leaderboard/commands.py`` reads the parsed flags). It is light on purpose: ``ratio leaderboard --help`` reads it.
"""

from __future__ import annotations

JUDGE_PREFIX = "judge-"  # the worker's judge options: --judge-model, --judge-base-url, ...
