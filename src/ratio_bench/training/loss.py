"""The spec's objective: Multiple Negatives Ranking Loss with in-batch negatives, scale 20 (tau = .05).

A trial whose batch does not fit in memory sets ``mini_batch_size``: CachedMultipleNegativesRankingLoss
(GradCache) then computes the same loss over the same batch in chunks of that size. Under DDP the documents
of every process are gathered (``gather_across_devices``), so the negatives are batch size x world size, as in
the spec's four-GPU Address and Specify runs.
"""

from __future__ import annotations

import os

from sentence_transformers.sentence_transformer.losses import (
    CachedMultipleNegativesRankingLoss,
    MultipleNegativesRankingLoss,
)
from torch import nn

SCALE = 20.0


def build_loss(model, mini_batch_size: int | None = None, gather_across_devices: bool = True) -> nn.Module:

    # gathering needs a process group; on one device it would only warn that there is none (torchrun sets
    # WORLD_SIZE for every process before the model is built)
    gather_across_devices = gather_across_devices and int(os.environ.get("WORLD_SIZE", "1")) > 1
    if mini_batch_size:
        return CachedMultipleNegativesRankingLoss(
            model, scale=SCALE, mini_batch_size=mini_batch_size, gather_across_devices=gather_across_devices
        )
    return MultipleNegativesRankingLoss(model, scale=SCALE, gather_across_devices=gather_across_devices)
