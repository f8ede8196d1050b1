"""Counts, in every Python process started with ``RATIO_COUNTS=FILE`` and this folder on ``PYTHONPATH``, the
sentence-transformers models constructed (model loads), the texts handed to their ``encode`` and the sha256 objects
the model registry makes (weights hashing); at exit it appends one JSON line to FILE.

A benchmark arm often spans processes (the leaderboard worker runs each job in a child process), and the counts
must come from whichever tree is first on ``PYTHONPATH`` (the code before or after a change) without importing
sentence-transformers in processes that never use it: so the patches are applied by an import hook, right after
the modules are first imported, not here.
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.util
import json
import os
import sys
import time

COUNTS = os.environ.get("RATIO_COUNTS")
counts = {"pid": os.getpid(), "model_loads": 0, "texts_encoded": 0, "encode_calls": 0, "sha256": 0}
_start = time.perf_counter()


def _patch_sentence_transformers(module) -> None:
    cls = module.SentenceTransformer
    real_init, real_encode = cls.__init__, cls.encode

    def init(self, *args, **kwargs):
        counts["model_loads"] += 1
        real_init(self, *args, **kwargs)

    def encode(self, *args, **kwargs):  # positional, or by keyword (encode_query passes ``sentences=``)
        texts = args[0] if args else kwargs.get("sentences", kwargs.get("inputs", []))
        counts["encode_calls"] += 1
        counts["texts_encoded"] += 1 if isinstance(texts, str) else len(texts)
        return real_encode(self, *args, **kwargs)

    cls.__init__, cls.encode = init, encode


def _patch_registry(module) -> None:
    real = module.hashlib

    class Hashlib:
        def __getattr__(self, name):
            return getattr(real, name)

        def sha256(self, *args, **kwargs):
            counts["sha256"] += 1
            return real.sha256(*args, **kwargs)

    module.hashlib = Hashlib()


PATCHES = {
    "sentence_transformers": _patch_sentence_transformers,
    "ratio_bench.retrieval.registry": _patch_registry,
}


class _After(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the real loader of a watched module so that its patch runs once it is loaded."""

    def find_spec(self, name, path=None, target=None):
        if name not in PATCHES:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        real_exec = spec.loader.exec_module

        def exec_module(module):
            real_exec(module)
            PATCHES[name](module)

        spec.loader.exec_module = exec_module
        return spec


def _write() -> None:
    counts["seconds"] = round(time.perf_counter() - _start, 1)
    with open(COUNTS, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(counts) + "\n")


if COUNTS:
    sys.meta_path.insert(0, _After())
    atexit.register(_write)
