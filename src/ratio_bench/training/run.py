"""``ratio train`` and ``ratio train-all``: every trial of a setup, the best one kept, a summary written.

Layout of one setup's output folder::

    ratio-training.json     what it was made from (config and dataset identity; see outputs.py)
    trials/<k>/result.json  one finished trial (settings, per-epoch validation metrics, throughput, memory)
    trials/<k>/model/       that trial's best epoch
    best/                   the chosen trial's model (a sentence-transformers folder, prompts saved)
    summary.json            every finished trial, the chosen one and why

The best trial is chosen on validation MRR@10 (ties: the lower trial number); the test split is never read.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ratio_bench import __version__
from ratio_bench.core.cutoffs import tuned
from ratio_bench.core.errors import UsageError
from ratio_bench.core.io import write_json
from ratio_bench.retrieval.registry import TRAINING_SCHEMA as SCHEMA  # shared with scoring (tuned names)
from ratio_bench.retrieval.registry import TRAINING_SUMMARY as SUMMARY
from ratio_bench.retrieval.registry import backbone_cutoff
from ratio_bench.training.backbone import backbone_path
from ratio_bench.training.config import TrainingConfig, config_files, load_config
from ratio_bench.training.data import DatasetInfo, dataset_info, train_partition_cutoff
from ratio_bench.training.outputs import is_main_process, prepare_output
from ratio_bench.training.trial import RESULT, prepare, run_trial


def identity(config: TrainingConfig, info: DatasetInfo) -> dict[str, Any]:
    return {
        "kind": "ratio-training",
        "config": config.name,
        "config_sha256": config.sha256(),
        "dataset_manifest_sha256": info.manifest_sha256,
    }


def training_cutoff(config: TrainingConfig, dataset_dir: str | Path) -> dict[str, Any]:
    """The summary's cut-off keys: the tuned model knows what its backbone knew and what the train partition
    taught it, so its cut-off is the later of the two (both recorded under ``training_data_cutoffs``)."""
    partition = train_partition_cutoff(dataset_dir, config.relations or [config.relation])
    backbone = backbone_cutoff(config.backbone)
    return {
        **tuned(backbone, partition).fields(),
        "training_data_cutoffs": {"backbone": backbone.fields(), "train_partition": partition.fields()},
    }


def finished_trials(out: Path) -> list[dict[str, Any]]:
    results = [json.loads(p.read_text(encoding="utf-8")) for p in (out / "trials").glob(f"*/{RESULT}")]
    return sorted(results, key=lambda r: r["trial"])


def choose(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The trial with the highest validation MRR@10 of its best epoch; the lower number wins a tie."""
    best = max(results, key=lambda r: (r["best_mrr_at_10"], -r["trial"]))
    others = ", ".join(f"trial {r['trial']} {r['best_mrr_at_10']:.4f}" for r in results if r is not best)
    return {
        "trial": best["trial"],
        "mrr_at_10": best["best_mrr_at_10"],
        "epoch": best["best_epoch"],
        "reason": (
            f"highest validation MRR@10 ({best['best_mrr_at_10']:.4f}, epoch {best['best_epoch']:g}) "
            f"of {len(results)} finished trial(s)" + (f"; others: {others}" if others else "")
        ),
    }


def _copy_best(out: Path, trial: int) -> None:
    staging = out / ".best.copying"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(out / "trials" / str(trial) / "model", staging)
    if (out / "best").exists():
        shutil.rmtree(out / "best")
    os.replace(staging, out / "best")


def train(
    config: TrainingConfig,
    dataset_dir: str | Path,
    out: str | Path,
    trial: int | None = None,
    trust_remote_code: bool = False,
    callbacks: list | None = None,
    show_progress: bool = True,
) -> dict[str, Any]:
    """Run the config's trials (or only ``trial``) into ``out``; return the summary written there."""
    if trial is not None and not 0 <= trial < len(config.trials):
        raise UsageError(f"--trial {trial}: {config.path} has trials 0..{len(config.trials) - 1}")
    info = dataset_info(dataset_dir)
    cutoff = training_cutoff(config, dataset_dir)  # a damaged manifest is refused before any training
    out = prepare_output(out, identity(config, info))
    prep = prepare(config, dataset_dir, trust_remote_code, show_progress)
    todo = range(len(config.trials)) if trial is None else [trial]
    for k in tqdm(todo, desc=f"{config.name}: trials", unit="trial", disable=not show_progress):
        run_trial(prep, k, out / "trials" / str(k), callbacks)
    if not is_main_process():
        return {}
    results = finished_trials(out)
    chosen = choose(results)
    _copy_best(out, chosen["trial"])
    summary = {
        "schema": SCHEMA,
        "code_version": __version__,
        "config": {"file": str(config.path), "sha256": config.sha256(), "content": config.raw},
        "backbone": {
            "name": config.backbone,
            "path": str(backbone_path(config)),
            "fingerprint": prep.backbone_fingerprint,
        },
        "setup": config.setup,
        "relation": config.relation,
        **(
            {
                "unified": {
                    "relations": list(config.relations),
                    "instructions": config.instructions,
                    "temperature": config.temperature,
                    "negatives": config.negatives,
                    "selection": "validation MRR@10, mean over the relations",
                }
            }
            if config.unified
            else {}
        ),
        "prompts": prep.prompts,
        "dataset": info.as_dict(),
        **cutoff,
        "data": {
            "train_pairs_available": prep.pairs.available,
            "train_pairs_used": len(prep.pairs),
            "max_train_pairs": config.max_train_pairs,
            "hard_negatives": config.hard_negatives,
            "hard_negative_random_fallbacks": prep.hard_negative_fallbacks,
            "max_seq_length": prep.length.as_dict(),
            "validation_queries": len(prep.evaluator.query_ids),
            "validation_candidates": len(prep.evaluator.corpus_ids),
            "validation_sample": config.validation_sample,  # set: a smoke run, not a reportable selection
        },
        "trials": results,
        "trials_configured": len(config.trials),
        "chosen": chosen,
        "test_split_read": False,
    }
    write_json(out / SUMMARY, summary)
    return summary


def _complete(out: Path, config: TrainingConfig) -> bool:
    summary = out / SUMMARY
    if not summary.is_file():
        return False
    done = json.loads(summary.read_text(encoding="utf-8"))
    return done["config"]["sha256"] == config.sha256() and len(done["trials"]) == len(config.trials)


def train_all(
    folder: str | Path,
    dataset_dir: str | Path,
    out: str | Path,
    trust_remote_code: bool = False,
    show_progress: bool = True,
) -> list[dict[str, Any]]:
    """Every config of ``folder`` into ``out/<config name>/``; finished setups and trials are skipped."""
    configs = [load_config(p) for p in config_files(folder)]  # every file checked before any training
    info = dataset_info(dataset_dir)
    out = prepare_output(out, {"kind": "ratio-training-all", "dataset_manifest_sha256": info.manifest_sha256})
    summaries = []
    for config in tqdm(configs, desc="setups", unit="setup", disable=not show_progress):
        target = out / config.name
        if _complete(target, config):
            summaries.append(json.loads((target / SUMMARY).read_text(encoding="utf-8")))
            continue
        summaries.append(
            train(
                config, dataset_dir, target, trust_remote_code=trust_remote_code, show_progress=show_progress
            )
        )
    return summaries
