"""The retriever kinds by name and whether each has vectors.

A light table beside ``retriever.RETRIEVERS`` (the kinds' classes, which import the encoder and with it torch):
a training config's validation asks whether its backbone embeds and must answer in a fraction of a second.
Each class in ``retriever.py`` reads its ``embeds`` flag from here, so the fact is written once.
"""

from __future__ import annotations

# "hybrid" (dense vectors fused with BM25) has vectors, but no path that reads vectors alone (mteb's dense
# evaluation, move sensitivity from vectors, a training backbone) may take it for a dense model: False here.
EMBEDS: dict[str, bool] = {"bm25": False, "dense": True, "hybrid": False}


def embeds(kind: str) -> bool:
    """Whether a model of this kind (a setup's, a registry entry's or an index manifest's) has vectors."""
    return EMBEDS[kind]
