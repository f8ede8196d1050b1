"""The one retrieval layer shared by scoring, training and the search service.

``registry`` resolves a model reference to a setup (weights and prompts), ``retriever`` is the one shape every
model is used in (BM25, a dense specialist, a unified model: index a corpus, search a move's queries),
``encoder`` turns texts into normalised vectors, ``cache`` keeps those vectors on disk, ``search`` ranks a corpus
exactly and ``bm25`` is the lexical baseline.
"""
