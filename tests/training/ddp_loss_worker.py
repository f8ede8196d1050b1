"""Run under ``torchrun --nproc_per_node 2``: the loss of 2 x B pairs with cross-device negatives.

Each process embeds its own B pairs; the training loss (``ratio_bench.training.loss.build_loss`` with
``gather_across_devices``) sees all 2B documents. The mean over processes (what DDP's gradient averaging
optimises) is written next to the single-process loss on the same 2B pairs.
"""

from __future__ import annotations

import json
import sys

import torch
import torch.distributed as dist
from sentence_transformers import SentenceTransformer

from ratio_bench.training.loss import build_loss


def main(model_path: str, out: str, batch: int) -> None:
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    model = SentenceTransformer(model_path, device="cpu").eval()  # no dropout: both runs see the same weights
    queries = [f"query number {i} about topic {i % 5}" for i in range(batch * world)]
    docs = [f"document {i} answering topic {i % 5} in {i} words" for i in range(batch * world)]

    def features(texts: list[str], prompt: str):
        return model.preprocess(texts, prompt=prompt)

    mine = slice(rank * batch, (rank + 1) * batch)
    loss = build_loss(model, gather_across_devices=True)
    local = loss([features(queries[mine], "query: "), features(docs[mine], "document: ")], None)
    alone = build_loss(model, gather_across_devices=False)(
        [features(queries[mine], "query: "), features(docs[mine], "document: ")], None
    )
    mean, mean_alone = local.detach().clone(), alone.detach().clone()
    for value in (mean, mean_alone):
        dist.all_reduce(value)
        value /= world
    if rank == 0:
        single = build_loss(model, gather_across_devices=False)(
            [features(queries, "query: "), features(docs, "document: ")], None
        )
        with open(out, "w", encoding="utf-8") as fh:
            json.dump({"ddp": mean.item(), "single": single.item(), "without_gather": mean_alone.item()}, fh)
    dist.destroy_process_group()


if __name__ == "__main__":
    torch.manual_seed(0)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
