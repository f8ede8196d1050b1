"""Token and cost accounting with an optional spending cap.

Prices come from a small YAML table (``judge/prices.yaml`` or the user's own), per million input and output
tokens, with the Batch API's discount. The cap is checked before every request is sent: once the spend
reaches it, no new request leaves and the run ends cleanly with what it has (in-flight requests, at most one
per worker, still complete and are counted).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from ratio_bench.yamlio import load_yaml

DEFAULT_PRICES = Path(__file__).resolve().parent / "prices.yaml"


class BudgetExhausted(RuntimeError):
    """The spending cap was reached; nothing further is sent."""


@dataclass(frozen=True)
class PriceTable:
    models: dict[str, tuple[float, float]]  # model -> (input, output) USD per 1M tokens
    batch_discount: float = 0.5

    @classmethod
    def load(cls, path: str | Path | None = None) -> PriceTable:
        spec = load_yaml(Path(path or DEFAULT_PRICES).read_text(encoding="utf-8")) or {}
        models = {
            str(m): (float(p["input"]), float(p["output"])) for m, p in (spec.get("models") or {}).items()
        }
        return cls(models, float(spec.get("batch_discount", 0.5)))

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
