"""Numeric precision of a training run: bf16 autocast and TF32 matmuls on CUDA GPUs, fp32 anywhere else.

The spec-scale configs ask for bf16 and TF32, which is how their backbones are trained on current GPUs. The
same file must still run on a CPU (tests, a dry run, the dev machine), where bf16 autocast is slower than fp32
and TF32 does not exist, so a request is applied only where the hardware supports it and the precision
actually used is recorded with each trial: a summary never claims bf16 for a run that trained in fp32.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Precision:
    bf16: bool
    tf32: bool


def effective_precision(bf16: bool, tf32: bool) -> Precision:
    """What a run asking for ``bf16``/``tf32`` gets here: bf16 needs a bf16-capable GPU, TF32 an Ampere or newer."""

    if not torch.cuda.is_available():
        return Precision(bf16=False, tf32=False)
    ampere = torch.cuda.get_device_capability()[0] >= 8
    return Precision(bf16=bf16 and torch.cuda.is_bf16_supported(), tf32=tf32 and ampere)
