"""Cost estimate of a judge run before sending anything: rendered prompt sizes times the price table.

Input tokens are measured on the real rendered messages (characters / 4, OpenAI's rule of thumb for English;
the chat template adds a few tokens per message). Output tokens cannot be measured before the run: with a
reasoning model they are mostly hidden reasoning tokens, so they are an explicit assumption of the estimate.

Three runs can be priced at any scale from a release: the silver build (each pair by the relation's prompts),
candidate judging (each query's top-k candidates of each system by the relation's prompts in ``candidate``
mode) and pairwise list judging (each query twice, the two top-k lists in both orders). Runs do not exist yet
when a spec-scale run is priced, so candidate lists are stood in for by the release's own test-corpus
sentences (consecutive rows, which are in content-hash order: golds and distractors alike), rendered with the
real prompt templates around real test queries. Candidate counts are an upper bound: a candidate both systems
retrieve is one request in practice.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from ratio_bench.core.errors import RatioError
from ratio_bench.dataset.release import Release
from ratio_bench.judge.pairwise import PROMPT_ID, numbered
from ratio_bench.judge.silver import silver_input
from ratio_bench.llm.client import JudgeRequest
from ratio_bench.llm.pricing import PriceTable, prompt_tokens
from ratio_bench.llm.prompts import get_prompt


@dataclass(frozen=True)
class Estimate:
    relation: str
    items: int  # pairs (silver) or queries (candidates, pairwise)
    requests: int
    input_tokens: int
    output_tokens: int
    usd: float


def estimate_silver(
    release: Path,
    pairs: dict[str, int],
    prompts: dict[str, list[str]],
    model: str,
    prices: PriceTable,
    output_tokens: int,
    batch: bool,
    sample: int = 500,
) -> list[Estimate]:
    """Per relation: ``pairs[rel]`` pairs judged by each of its prompts, sized on the release's test pairs."""
    found = Release.open(release)
    out = []
    for rel, n in pairs.items():
        rows = found.queries(rel, "test", ["query", "marker", "gold"]).slice(0, sample).to_pylist()
        if not rows:
            raise RatioError(
                f"--dataset {release}: the {rel} test split is empty or missing (data/{rel}/test-*.parquet), "
                f"so there is no prompt to size; pass --pairs with 0 for {rel}"
            )
        tokens_in = 0
        for pid in prompts[rel]:
            p = get_prompt(pid)
            mean_in = sum(prompt_tokens(p.messages("silver", **silver_input(**r))) for r in rows) / len(rows)
            tokens_in += round(mean_in * n)
        requests = n * len(prompts[rel])
        tokens_out = requests * output_tokens
        out.append(
            Estimate(
                rel, n, requests, tokens_in, tokens_out, prices.cost(model, tokens_in, tokens_out, batch)
            )
        )
    return out


def estimate_requests(
    relation: str, items: int, requests: list[JudgeRequest], model: str, prices: PriceTable,
    output_tokens: int, batch: bool,
) -> Estimate:  # fmt: skip
    """The cost of sending exactly ``requests`` (e.g. the uncached part of a planned run)."""
    tokens_in = sum(prompt_tokens(r.messages) for r in requests)
    tokens_out = len(requests) * output_tokens
    return Estimate(
        relation,
        items,
        len(requests),
        tokens_in,
        tokens_out,
        prices.cost(model, tokens_in, tokens_out, batch),
    )


def _first_rows(release: Path, config: str, columns: list[str], n: int) -> list[dict]:
    """Up to ``n`` rows of a release's test split, read batch by batch (a spec-scale corpus is large)."""
    found = Release.open(release)
    files = found.shards(config, "test")
    if not files:
        raise RatioError(
            f"{found.shown}: no {config} test split (data/{config}/test-*.parquet); rebuild it with `ratio dataset build`",
            value=found.root,
        )
    rows: list[dict] = []
    for f in files:
        for batch in pq.ParquetFile(f).iter_batches(batch_size=min(n, 4096), columns=columns):
            rows += batch.to_pylist()[: n - len(rows)]
            if len(rows) >= n:
                return rows
    return rows


def _sample_lists(release: Path, relation: str, k: int, lists: int, sample: int) -> list[tuple[str, list]]:
    """Real test queries, each with ``lists`` disjoint windows of ``k`` real test-corpus sentences."""
    queries = [r["query"] for r in _first_rows(release, relation, ["query"], sample)]
    if not queries:
        raise RatioError(
            f"--dataset {release}: the {relation} test split is empty, so there is no prompt to size; "
            f"pass --queries with 0 for {relation}"
        )
    texts = [r["text"] for r in _first_rows(release, "corpus", ["text"], len(queries) * k * lists)]
    if not texts:
        raise RatioError(f"--dataset {release}: the test corpus is empty, so there is no candidate to size")
    window = len(queries) * k
    return [
        (q, [[texts[(j * window + i * k + c) % len(texts)] for c in range(k)] for j in range(lists)])
        for i, q in enumerate(queries)
    ]


def _scaled(relation: str, n: int, per_query: int, sample_requests: list[JudgeRequest], model: str,
            prices: PriceTable, output_tokens: int, batch: bool) -> Estimate:  # fmt: skip
    """Scale the mean input tokens of a sample's requests to ``n`` queries of ``per_query`` requests each."""
    mean_in = sum(prompt_tokens(r.messages) for r in sample_requests) / len(sample_requests)
    requests = n * per_query
    tokens_in, tokens_out = round(mean_in * requests), requests * output_tokens
    return Estimate(
        relation, n, requests, tokens_in, tokens_out, prices.cost(model, tokens_in, tokens_out, batch)
    )


def estimate_candidates(
    release: Path, queries: dict[str, int], k: int, systems: int, prompts: dict[str, list[str]], model: str,
    prices: PriceTable, output_tokens: int, batch: bool, sample: int = 200,
) -> list[Estimate]:  # fmt: skip
    """Per relation: ``queries[rel]`` queries x ``k`` candidates x ``systems`` x the relation's prompts."""
    out = []
    for rel, n in queries.items():
        lists = _sample_lists(release, rel, k, 1, sample)
        reqs = [
            JudgeRequest(get_prompt(pid).messages("candidate", query=q, candidate=c))
            for pid in prompts[rel]
            for q, (top,) in lists
            for c in top
        ]
        per_query = k * systems * len(prompts[rel])
        out.append(_scaled(rel, n, per_query, reqs, model, prices, output_tokens, batch))
    return out


def estimate_pairwise(
    release: Path, queries: dict[str, int], k: int, model: str, prices: PriceTable, output_tokens: int,
    batch: bool, sample: int = 200,
) -> list[Estimate]:  # fmt: skip
    """Per relation: ``queries[rel]`` queries, each judged twice (both list orders) on two top-``k`` lists."""

    prompt = get_prompt(PROMPT_ID)
    out = []
    for rel, n in queries.items():
        lists = _sample_lists(release, rel, k, 2, sample)
        reqs = [
            JudgeRequest(prompt.messages(rel, query=q, list_a=numbered(a), list_b=numbered(b)), prompt.output)
            for q, (first, second) in lists
            for a, b in ((first, second), (second, first))
        ]
        out.append(_scaled(rel, n, 2, reqs, model, prices, output_tokens, batch))
    return out
