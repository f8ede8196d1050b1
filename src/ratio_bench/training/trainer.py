"""sentence-transformers' trainer with Ratio's batch sampler (no text twice in a batch, length-grouped)."""

from __future__ import annotations

import numpy as np
from sentence_transformers import SentenceTransformerTrainer

from ratio_bench.training.sampler import NoSharedTextBatchSampler


class RatioTrainer(SentenceTransformerTrainer):
    """``SentenceTransformerTrainer`` whose train batches come from :class:`NoSharedTextBatchSampler`.

    ``texts`` holds one integer id per text of each train row (see ``sampler.text_ids``); ``lengths`` the
    row's token count, or None to batch without length grouping; ``relations`` each row's relation number,
    to draw every batch from one relation (unified models, ``negatives: within``).
    """

    def __init__(
        self,
        *args,
        texts: np.ndarray,
        lengths: np.ndarray | None = None,
        relations: np.ndarray | None = None,
        **kwargs,
    ):
        self.texts, self.lengths, self.relations = texts, lengths, relations
        super().__init__(*args, **kwargs)

    def get_batch_sampler(
        self, dataset, batch_size, drop_last, valid_label_columns=None, generator=None, seed=0
    ):
        sampler, extra = NoSharedTextBatchSampler, {}
        if self.relations is not None:  # a unified model, negatives within one relation
            from ratio_bench.training.unified import RelationBatchSampler

            sampler, extra = RelationBatchSampler, {"relations": self.relations}
        return sampler(
            dataset,
            batch_size=batch_size,
            drop_last=drop_last,
            texts=self.texts,
            lengths=self.lengths,
            valid_label_columns=valid_label_columns,
            generator=generator,
            seed=seed,
            **extra,
        )
