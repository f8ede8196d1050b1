"""The one error path of the ``ratio`` command.

Every mistake a user can fix (a missing file, a bad config key, an unknown model, a refused endpoint) raises a
:class:`RatioError` whose message names the file, field or flag and says what to do. ``ratio`` prints it as one
line, ``ratio <command>: error: <message>``, and exits 1 (2 for :class:`UsageError`); a traceback is shown only
with ``--debug`` or ``RATIO_DEBUG=1``. Stage-specific errors (``ConfigError``, ``DatasetError``, ...) subclass
it so library callers can still catch them by their own name.
"""

from __future__ import annotations

from typing import Any


class RatioError(Exception):
    """A problem the user can fix; its message is shown as is, without a traceback.

    ``value`` is the user's value (a path, a name) the message starts with, when there is one: library code
    names values and fields, never flags, and the command line puts the option that gave the value in front
    (``--out runs/x: ...``; see ``ratio_bench.cli``).
    """

    exit_code = 1

    def __init__(self, *args: object, value: object = None):
        super().__init__(*args)
        self.value = value


class UsageError(RatioError):
    """A command line that does not make sense (the same exit code as argparse's own usage errors)."""

    exit_code = 2


def shown(value: Any, limit: int = 60) -> str:
    """A value from an untrusted file as a message quotes it: its repr (one line, control characters escaped),
    shortened, so a hostile value cannot flood or split the error line."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def field_name(key: Any) -> str:
    """A key from an untrusted file as a dotted field path shows it: as written when short and printable, else
    quoted and shortened like :func:`shown`."""
    text = str(key)
    return text if text.isprintable() and len(text) <= 60 else shown(text)
