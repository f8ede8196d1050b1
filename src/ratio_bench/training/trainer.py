"""sentence-transformers' trainer with Ratio's batch sampler (no text twice in a batch, length-grouped), and
its output as our progress bar and summary lines instead of transformers' raw log dicts."""

from __future__ import annotations

import numpy as np
from sentence_transformers import SentenceTransformerTrainer
from tqdm import tqdm
from transformers import PrinterCallback, ProgressCallback, TrainerCallback

from ratio_bench.training.sampler import NoSharedTextBatchSampler
from ratio_bench.training.unified import RelationBatchSampler


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


class TrainingReport(TrainerCallback):
    """One labelled bar over the training steps (with its ETA) and one line per validation and at the end,
    in place of transformers' ``ProgressCallback``/``PrinterCallback``, which print every log as a dict (the
    figures stay in the checkpoints' ``trainer_state.json``)."""

    def __init__(self, label: str, metric_prefix: str, progress: bool = True):
        self.label, self.prefix, self.progress = label, metric_prefix, progress
        self.bar: tqdm | None = None

    @staticmethod
    def install(trainer, report: TrainingReport) -> None:
        trainer.remove_callback(PrinterCallback)
        trainer.remove_callback(ProgressCallback)
        trainer.add_callback(report)

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero and self.progress:
            self.bar = tqdm(
                total=state.max_steps, initial=state.global_step, desc=f"{self.label}: training", unit=" step"
            )

    def on_step_end(self, args, state, control, **kwargs):
        if self.bar is not None:
            self.bar.update(state.global_step - self.bar.n)

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if state.is_world_process_zero and metrics:
            m = {k.removeprefix(self.prefix): v for k, v in metrics.items()}
            self._say(
                f"{self.label}: epoch {round(state.epoch or 0)}: validation MRR@10 {m.get('mrr_at_10', 0):.4f}, "
                f"R@10 {m.get('recall_at_10', 0):.4f}"
            )

    def on_log(self, args, state, control, logs=None, **kwargs):
        if state.is_world_process_zero and logs and "train_runtime" in logs:
            self._say(
                f"{self.label}: trained {state.global_step} steps in {logs['train_runtime']:.1f} s "
                f"(mean loss {logs.get('train_loss', float('nan')):.4f})"
            )

    def on_train_end(self, args, state, control, **kwargs):
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def _say(self, line: str) -> None:
        tqdm.write(line) if self.bar is not None else print(line, flush=True)
