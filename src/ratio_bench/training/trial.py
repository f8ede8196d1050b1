"""One trial of a setup: fine-tune the backbone, evaluate every epoch, keep the best epoch.

A trial's folder holds ``checkpoints/`` while it runs (one per epoch; a killed trial resumes from the last
one through the Trainer's ``resume_from_checkpoint``), then ``model/`` (the best epoch, restored with
``load_best_model_at_end`` on validation MRR@10) and ``result.json``; a trial with ``result.json`` is done
and skipped. Its checkpoints are removed once the result is written: they are our own intermediate files.
"""

from __future__ import annotations

import gc
import json
import math
import os
import resource
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from datasets import Dataset
from sentence_transformers import SentenceTransformerTrainingArguments
from sentence_transformers.sentence_transformer.data_collator import SentenceTransformerDataCollator
from transformers import set_seed

from ratio_bench.core.io import write_json
from ratio_bench.core.relations import RELATIONS
from ratio_bench.training.backbone import freeze, load_backbone, training_prompts
from ratio_bench.training.config import TrainingConfig
from ratio_bench.training.data import DatasetInfo, TrainPairs, dataset_info, load_train_pairs, load_validation
from ratio_bench.training.evaluator import PRIMARY, RetrievalEvaluator
from ratio_bench.training.loss import build_loss
from ratio_bench.training.negatives import mine
from ratio_bench.training.outputs import is_main_process
from ratio_bench.training.precision import effective_precision
from ratio_bench.training.sampler import text_ids
from ratio_bench.training.tokens import LengthChoice, PretokenizedCollator, choose_max_length, token_counts
from ratio_bench.training.trainer import RatioTrainer, TrainingReport
from ratio_bench.training.unified import load_unified_pairs

RESULT = "result.json"


@dataclass
class Prepared:
    """What every trial of a setup shares: data, prompts, the length choice and the evaluator."""

    config: TrainingConfig
    dataset: DatasetInfo
    pairs: TrainPairs
    columns: dict[str, list[str]]  # query, document (, negative): the train dataset's text columns
    prompts: dict[str, str]
    length: LengthChoice
    lengths: np.ndarray  # tokens of each train row's longest text, after truncation
    texts: np.ndarray
    evaluator: RetrievalEvaluator
    backbone_fingerprint: str
    hard_negative_fallbacks: int = 0
    trust_remote_code: bool = False
    show_progress: bool = True
    relations: np.ndarray | None = None  # unified, negatives within: each row's relation number

    def column_prompts(self) -> dict[str, str]:
        """The trainer's prompt per column (a unified model's queries carry their instruction already)."""
        return {
            c: self.prompts.get("query", "") if c == "query" else self.prompts["document"]
            for c in self.columns
        }


def prepare(
    config: TrainingConfig,
    dataset_dir: str | Path,
    trust_remote_code: bool = False,
    show_progress: bool = True,
) -> Prepared:
    info = dataset_info(dataset_dir)
    labels = None
    if config.unified:
        pairs, labels = load_unified_pairs(dataset_dir, config)
    else:
        pairs = load_train_pairs(dataset_dir, config.relation, config.max_train_pairs, config.seed)
    columns = {"query": pairs.queries, "document": pairs.golds}
    fallbacks = 0
    if config.hard_negatives != "none":
        hard = mine(dataset_dir, pairs, config.hard_negatives, config.seed)
        columns["negative"], fallbacks = hard.texts, hard.random_fallbacks
    prompts = training_prompts(config)
    model, fp = load_backbone(config, trust_remote_code, device="cpu")
    train_prompts = {c: prompts.get("query", "") if c == "query" else prompts["document"] for c in columns}
    per_column = {c: token_counts(model, texts, train_prompts[c]) for c, texts in columns.items()}
    distinct = np.concatenate(
        [
            counts[np.unique(np.array(columns[c], dtype=object), return_index=True)[1]]
            for c, counts in per_column.items()
        ]
    )
    length = choose_max_length(
        distinct, config.max_seq_length, config.length_percentile, model.max_seq_length
    )
    del model  # only its tokenizer was needed; every trial loads a fresh copy
    gc.collect()
    # a pair's length for grouping: its longest text (each column pads to its own longest)
    lengths = np.max([np.minimum(counts, length.value) for counts in per_column.values()], axis=0)
    validated = (
        config.relations if config.unified else config.relation
    )  # unified: every relation, one evaluator
    val = load_validation(dataset_dir, validated, config.validation_sample, config.seed)
    evaluator = RetrievalEvaluator(
        val.corpus_ids,
        val.corpus_texts,
        val.queries,
        prompts,
        config.eval_batch_size,
        show_progress_bar=show_progress,
    )
    return Prepared(
        config,
        info,
        pairs,
        columns,
        prompts,
        length,
        lengths,
        text_ids(list(columns.values())),
        evaluator,
        fp,
        fallbacks,
        trust_remote_code,
        show_progress,
        labels if config.unified and config.negatives == "within" else None,
    )


def save_model(model, dest: Path) -> None:
    """Save a sentence-transformers folder so that ``dest`` appears only complete (staging + rename)."""
    staging = dest.with_name(f".{dest.name}.saving")
    shutil.rmtree(staging, ignore_errors=True)
    model.save(str(staging))
    if dest.exists():  # a model of ours from a run killed before its result was recorded
        shutil.rmtree(dest)
    os.replace(staging, dest)


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _last_checkpoint(folder: Path) -> Path | None:
    found = sorted(folder.glob("checkpoint-*"), key=lambda p: int(p.name.rsplit("-", 1)[1]))
    return found[-1] if found else None


def _epochs(log_history: list[dict[str, Any]], key_prefix: str) -> list[dict[str, Any]]:
    rows = []
    for entry in log_history:
        if f"{key_prefix}{PRIMARY}" in entry:
            rows.append(
                {
                    "epoch": round(float(entry["epoch"]), 4),
                    "step": int(entry["step"]),
                    "mrr_at_10": entry[f"{key_prefix}{PRIMARY}"],
                    "recall_at_10": entry[f"{key_prefix}recall_at_10"],
                    **{  # a unified model: each relation's own validation metrics too
                        key[len(key_prefix) :]: value
                        for key, value in entry.items()
                        if key.startswith(key_prefix) and key[len(key_prefix) :].split("_")[0] in RELATIONS
                    },
                }
            )
    return rows


def build_trainer(
    prep: Prepared, index: int, checkpoints: str | Path, callbacks: list | None = None, validate: bool = True
):
    """The trainer of trial ``index``: fresh backbone, frozen share, loss, batches and collator.

    ``validate`` False (benchmarks only) trains without the per-epoch validation and checkpoints.
    Returns ``(trainer, number of frozen parameters)``.
    """

    config, trial = prep.config, prep.config.trials[index]
    set_seed(config.seed)
    model, _ = load_backbone(config, prep.trust_remote_code)
    frozen = freeze(model, trial.freeze_ratio)
    loss = build_loss(model, trial.mini_batch_size, config.gather_across_devices)
    strategy = "epoch" if validate else "no"
    precision = effective_precision(config.bf16, config.tf32)
    args = SentenceTransformerTrainingArguments(
        output_dir=str(checkpoints),
        num_train_epochs=trial.epochs,
        per_device_train_batch_size=trial.batch_size,
        learning_rate=trial.learning_rate,
        weight_decay=trial.weight_decay,
        warmup_steps=trial.warmup_ratio,  # a float below 1 is a share of the steps (transformers 5)
        max_grad_norm=trial.max_grad_norm,
        seed=config.seed,
        bf16=precision.bf16,
        tf32=precision.tf32 or None,  # None leaves torch's default; False would force TF32 off
        eval_strategy=strategy,
        save_strategy=strategy,
        load_best_model_at_end=validate,
        metric_for_best_model=f"eval_{prep.evaluator.name}_{PRIMARY}",
        greater_is_better=True,
        logging_steps=10,
        report_to="none",
        prompts=prep.column_prompts(),
        dataloader_drop_last=False,
        dataloader_pin_memory=False,
        disable_tqdm=not prep.show_progress,  # the bar shows steps and the ETA
    )
    if config.pretokenize:
        collator = PretokenizedCollator(model, prep.column_prompts(), prep.length.value, prep.columns)
    else:
        collator = SentenceTransformerDataCollator(
            preprocess_fn=model.preprocess, prompts=prep.column_prompts(), max_length=prep.length.value
        )
    trainer = RatioTrainer(
        model=model,
        args=args,
        train_dataset=Dataset.from_dict(prep.columns),
        loss=loss,
        evaluator=prep.evaluator if validate else None,
        data_collator=collator,
        callbacks=callbacks,
        texts=prep.texts,
        lengths=prep.lengths if config.length_grouping else None,
        relations=prep.relations,
    )
    label = f"{config.name} trial {index}"
    TrainingReport.install(trainer, TrainingReport(label, f"eval_{prep.evaluator.name}_", prep.show_progress))
    return trainer, len(frozen)


def run_trial(
    prep: Prepared, index: int, folder: str | Path, callbacks: list | None = None
) -> dict[str, Any]:
    """Train trial ``index`` into ``folder`` (resuming its last checkpoint) unless it is done already."""

    folder = Path(folder)
    if (folder / RESULT).is_file():
        return json.loads((folder / RESULT).read_text(encoding="utf-8"))
    trial = prep.config.trials[index]
    start = time.perf_counter()
    checkpoints = folder / "checkpoints"
    resume = _last_checkpoint(checkpoints)
    trainer, frozen = build_trainer(prep, index, checkpoints, callbacks)
    metric_prefix = f"eval_{prep.evaluator.name}_"
    eval_before = prep.evaluator.seconds
    first_step = 0
    if resume is not None:
        first_step = json.loads((resume / "trainer_state.json").read_text(encoding="utf-8"))["global_step"]
    train_start = time.perf_counter()
    trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    train_seconds = time.perf_counter() - train_start - (prep.evaluator.seconds - eval_before)
    if not is_main_process():  # under torchrun, rank 0 saves and records
        return {}
    epochs = _epochs(trainer.state.log_history, metric_prefix)
    best = max(epochs, key=lambda e: (e["mrr_at_10"], -e["epoch"]))
    save_model(trainer.model, folder / "model")
    steps = trainer.state.global_step - first_step
    pairs_trained = steps / max(1, math.ceil(len(prep.pairs) / trial.batch_size)) * len(prep.pairs)
    result = {
        "trial": index,
        "settings": trial.settings(),
        "frozen_parameters": frozen,
        "precision": {  # what the trainer ran with, not what the config asked for
            "bf16": bool(trainer.args.bf16),
            "tf32": bool(trainer.args.tf32),
            "device": trainer.args.device.type,
        },
        "epochs": epochs,
        "best_epoch": best["epoch"],
        "best_step": best["step"],
        "best_mrr_at_10": best["mrr_at_10"],
        "best_recall_at_10": best["recall_at_10"],
        "wall_seconds": round(time.perf_counter() - start, 1),
        "train_seconds": round(train_seconds, 1),
        "pairs_per_second": round(pairs_trained / train_seconds, 2) if train_seconds > 0 else None,
        "peak_rss_mb": _peak_rss_mb(),
        "resumed_from": resume.name if resume else None,
    }
    write_json(folder / RESULT, result)
    shutil.rmtree(checkpoints, ignore_errors=True)
    return result
