"""Cost estimate of a judge run before sending anything: rendered prompt sizes times the price table.

Input tokens are measured on the real rendered messages (characters / 4, OpenAI's rule of thumb for English;
the chat template adds a few tokens per message). Output tokens cannot be measured before the run: with a
reasoning model they are mostly hidden reasoning tokens, so they are an explicit assumption of the estimate.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ratio_bench.dataset.release import Release
from ratio_bench.dataset.silver import silver_input
from ratio_bench.errors import RatioError
from ratio_bench.judge.pricing import PriceTable
from ratio_bench.judge.prompts import get_prompt

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4


def prompt_tokens(messages: list[dict[str, str]]) -> int:
    return sum(len(m["content"]) // CHARS_PER_TOKEN + MESSAGE_OVERHEAD_TOKENS for m in messages)


@dataclass(frozen=True)
class Estimate:
    relation: str
    pairs: int
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
