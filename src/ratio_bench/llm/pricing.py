"""Token and cost accounting with an optional spending cap.

Prices come from a small YAML table (``judge/prices.yaml`` or the user's own), per million input and output
tokens, with the Batch API's discount. The cap is checked before every request is sent: once the spend
reaches it, no new request leaves and the run ends cleanly with what it has (in-flight requests, at most one
per worker, still complete and are counted).

Token counts come from the server's ``usage``, which is untrusted: a negative count would drive the spend down
and the cap would never stop the run. A count that is missing, not a whole number, negative or over
``MAX_REPLY_TOKENS`` is replaced by the character estimate (``CHARS_PER_TOKEN``) and counted as a usage anomaly,
so the spend never decreases and the cap still bounds a server that misreports. The reply itself is kept: it was
paid for, and its verdict does not depend on the server's bookkeeping.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ratio_bench.core.errors import RatioError
from ratio_bench.core.yamlio import read_yaml_file

DEFAULT_PRICES = Path(__file__).resolve().parent / "prices.yaml"
CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4
MAX_REPLY_TOKENS = 10_000_000  # more than any model's context window: a larger count is a server bug


def prompt_tokens(messages: list[dict[str, str]]) -> int:
    """Estimated input tokens of a request (characters / 4, plus the chat template's few per message)."""
    return sum(len(m["content"]) // CHARS_PER_TOKEN + MESSAGE_OVERHEAD_TOKENS for m in messages)


def token_count(value: Any) -> int | None:
    """A token count reported by a server, or None when it is not a plausible one."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_REPLY_TOKENS:
        return None
    return value


class BudgetExhausted(RuntimeError):
    """The spending cap was reached; nothing further is sent."""


@dataclass(frozen=True)
class PriceTable:
    models: dict[str, tuple[float, float]]  # model -> (input, output) USD per 1M tokens
    batch_discount: float = 0.5

    @classmethod
    def load(cls, path: str | Path | None = None) -> PriceTable:
        """The table at ``path`` (default: the packaged one); ``RatioError`` naming ``--prices`` when it is bad."""
        path = Path(path or DEFAULT_PRICES)
        try:
            spec = read_yaml_file(path) or {}
        except RatioError as exc:  # this table's messages all say where it came from
            raise RatioError(f"--prices {exc}") from None
        if not isinstance(spec, dict) or not isinstance(spec.get("models") or {}, dict):
            raise RatioError(f"--prices {path}: expected a mapping with models: {{NAME: {{input, output}}}}")
        models = {
            str(m): (
                _price(path, f"models.{m}.input", p, "input"),
                _price(path, f"models.{m}.output", p, "output"),
            )
            for m, p in (spec.get("models") or {}).items()
        }
        discount = _price(path, "batch_discount", spec, "batch_discount", 0.5)
        if discount > 1:
            raise RatioError(f"--prices {path}: batch_discount {discount} must be between 0 and 1")
        return cls(models, discount)

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int, batch: bool = False) -> float:
        price_in, price_out = self.models.get(model, (0.0, 0.0))
        usd = (prompt_tokens * price_in + completion_tokens * price_out) / 1e6
        return usd * (self.batch_discount if batch else 1.0)

    def is_priced(self, model: str) -> bool:
        return model in self.models


@dataclass
class CostMeter:
    model: str
    prices: PriceTable
    cap_usd: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usd: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, prompt_tokens: int, completion_tokens: int, batch: bool = False) -> None:
        """Count validated (non-negative) tokens: the spend only ever grows."""
        with self._lock:
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            self.usd += self.prices.cost(self.model, prompt_tokens, completion_tokens, batch)

    def remaining(self) -> float | None:
        return None if self.cap_usd is None else self.cap_usd - self.usd

    def check(self) -> None:
        """Raise ``BudgetExhausted`` when the cap is reached (called before each request is sent)."""
        if self.cap_usd is not None and self.usd >= self.cap_usd:
            raise BudgetExhausted(f"spending cap of ${self.cap_usd:.2f} reached (spent ${self.usd:.4f})")


def _price(path: Path, where: str, spec: Any, key: str, default: float | None = None) -> float:
    """A non-negative finite number from the price table: a negative price would make spending look free."""
    value = spec.get(key, default) if isinstance(spec, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise RatioError(f"--prices {path}: {where} must be a number of 0 or more, not {value!r}")
    return float(value)
