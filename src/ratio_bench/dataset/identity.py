"""Who a release says it is: its name and version, checked, and never the official ones for other inputs.

A version is text matching :data:`VERSION_PATTERN` (``1``, ``0.2.0``, ``0.2.0-dev``, ``1.0.0+corpus.3f2a``):
digits and dots, then optional ``-``/``+``/``.`` separated labels of letters and digits, at most 64
characters. It becomes a folder name (``append-<version>``), a Hub tag and a card title, so nothing else is
accepted (no ``/``, no ``..`` on its own, no spaces or control characters). A name follows
:data:`NAME_PATTERN`.

**Official identity.** A build config may declare the corpus it was written for: ``release.corpus_sha256``,
the :func:`corpus_fingerprint` of the official corpus (``dataset_scripts/dev.yaml`` declares the shared dev
corpus's). A build keeps the config's name and version only when its corpus has that fingerprint, or when the
config is the user's own file that declares none (the user named it). Otherwise (a shipped preset built from
other papers, a config whose declared corpus differs) the release gets its own identity: ``--name`` and
``--version`` when given, else ``<name>-custom`` and ``<version>+corpus.<12 hex of the corpus fingerprint>``,
so a build from other papers can never be taken for the official one. The manifest records ``corpus_sha256``
and ``official``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ratio_bench.core.errors import RatioError, shown
from ratio_bench.corpus.sources import corpus_files
from ratio_bench.mining.fingerprint import file_fingerprint

VERSION_PATTERN = re.compile(r"[0-9]+(\.[0-9]+)*([.+-][A-Za-z0-9]+)*")
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}")
MAX_VERSION_CHARS = 64
VERSION_RULE = (
    "digits and dots, then optional -, + or . separated letters and digits (e.g. 0.2.1 or 0.2.1-dev)"
)
NAME_RULE = "letters, digits, '.', '_' and '-' (at most 96, starting with a letter or digit)"


class IdentityError(RatioError, ValueError):
    """A release name or version that is not one; the message names the field or flag."""


def check_version(text: object) -> str:
    """``text`` when it is a version (see the module docstring), else an IdentityError about the value (the
    command line puts the flag that gave it in front; a config names its field)."""
    if not isinstance(text, str) or len(text) > MAX_VERSION_CHARS or not VERSION_PATTERN.fullmatch(text):
        raise IdentityError(f"{shown(text)}: not a version; a version is {VERSION_RULE}", value=text)
    return text


def check_name(text: object) -> str:
    """``text`` when it is a release name, else an IdentityError about the value (as :func:`check_version`)."""
    if not isinstance(text, str) or not NAME_PATTERN.fullmatch(text):
        raise IdentityError(f"{shown(text)}: not a release name; a name is {NAME_RULE}", value=text)
    return text


def corpus_fingerprint(paths: Iterable[str | Path]) -> str:
    """SHA-256 over the corpus files a build reads (name, size and sampled content digest of each, by name):
    the same corpus copied elsewhere has the same fingerprint, another file set or an edited file does not.
    Uses the miner's sampled digest (:mod:`ratio_bench.mining.fingerprint`), so it costs a few reads per file."""
    rows = []
    for f in corpus_files(paths):
        fp = file_fingerprint(f)
        rows.append(f"{f.name}\t{fp['size']}\t{fp['digest']}\n")
    return hashlib.sha256("".join(sorted(rows)).encode()).hexdigest()


@dataclass(frozen=True)
class Identity:
    """The name and version a build writes, and why (``official``: the config's own for its declared corpus)."""

    name: str
    version: str
    corpus_sha256: str
    official: bool
    reason: str


def release_identity(
    name: str,
    version: str,
    declared: str | None,
    corpus_sha256: str,
    own_config: bool,
    given_name: str | None = None,
    given_version: str | None = None,
) -> Identity:
    """The identity of a build of config ``name``/``version`` (``declared``: its ``release.corpus_sha256``)
    from a corpus with ``corpus_sha256``; ``own_config``: the config is the user's file, not a shipped preset."""
    if given_name is not None:
        check_name(given_name)
    if given_version is not None:
        check_version(given_version)
    if declared is not None:
        official = declared == corpus_sha256
        why = "the corpus is the one the config declares" if official else "the corpus is not the config's"
    else:
        official = own_config
        why = "the config is your own file" if official else "a shipped preset built from your corpus"
    if official and given_name is None and given_version is None:
        return Identity(name, version, corpus_sha256, True, why)
    return Identity(
        given_name or (name if official else f"{name}-custom"),
        given_version or (version if official else f"{version}+corpus.{corpus_sha256[:12]}"),
        corpus_sha256,
        False,
        "named by --name/--version" if official else why,
    )
