"""Talking to an OpenAI-compatible model: the client with its endpoint breaker, reply cache, Batch API and price
table, the versioned prompt files, the shared command-line options, and the :class:`~ratio_bench.llm.job.JudgeJob`
driver every LLM job (lexicon expansion, silver, candidates, pairwise) runs through.

It depends on ``core`` only, so the lexicon, the dataset builder and the judge can all use it.
"""
