"""Ratio's trainer against the plain SentenceTransformerTrainer: pairs/s, peak RSS and validation MRR@10.

Both train the same backbone on the same seeded sample of train pairs of one relation with the same loss
(MultipleNegativesRankingLoss, scale 20), batch size, learning rate, seed and one epoch (the same number of
steps), then are scored by the same evaluator (validation MRR@10 over the full shared validation corpus).
Both train first (timed; RSS sampled) and validate the final model afterwards.
Plain = SentenceTransformerTrainer with its no-duplicates batch sampler and default collator (tokenising
every batch, padding to the model's 256/384-token limit at most); ratio = ``ratio_bench.training`` (length-grouped
no-shared-text batches, texts tokenised once, a maximum length from the data). Each runs in its own
subprocess so peak RSS is per run. Usage:

    python benchmarks/training.py --dataset ratio [--model all-MiniLM-L6-v2] [--pairs 2000] [--batch-size 32]

On the 2-core dev machine a MiniLM run takes ~15 min, most of it the two validation encodings (37,597 texts).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml


def _config(args: argparse.Namespace, folder: Path) -> Path:
    path = folder / f"{args.model}-generic-{args.relation}.yaml"
    trial = {"epochs": 1, "batch_size": args.batch_size, "learning_rate": args.lr}
    raw = {
        "backbone": args.model,
        "setup": "generic",
        "relation": args.relation,
        "seed": args.seed,
        "max_train_pairs": args.pairs,
        "trials": [trial],
    }
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


class PeakRss:
    """Peak resident memory while the block runs (sampled every 50 ms from /proc), in MB."""

    def __enter__(self) -> PeakRss:
        self.peak, self._stop = 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._stop.wait(0.05):
            with open("/proc/self/statm") as fh:
                self.peak = max(self.peak, int(fh.read().split()[1]) * page)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _ratio_trainer(args: argparse.Namespace, tmp: Path):
    from ratio_bench.training.config import load_config
    from ratio_bench.training.trial import build_trainer, prepare

    prep = prepare(load_config(_config(args, tmp)), args.dataset, show_progress=False)
    trainer, _ = build_trainer(prep, 0, tmp / "checkpoints", validate=False)
    extra = {"max_seq_length": prep.length.as_dict()}
    return trainer, prep.evaluator, len(prep.pairs), extra


def _plain_trainer(args: argparse.Namespace, tmp: Path):
    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.base.sampler import BatchSamplers
    from transformers import set_seed

    from ratio_bench.training.backbone import load_backbone
    from ratio_bench.training.config import load_config
    from ratio_bench.training.data import load_train_pairs, load_validation
    from ratio_bench.training.evaluator import RetrievalEvaluator
    from ratio_bench.training.loss import build_loss

    config = load_config(_config(args, tmp))
    set_seed(args.seed)
    model, _ = load_backbone(config)
    pairs = load_train_pairs(args.dataset, args.relation, args.pairs, args.seed)
    trainer = SentenceTransformerTrainer(
        model=model,
        args=SentenceTransformerTrainingArguments(
            output_dir=str(tmp / "plain"),
            num_train_epochs=1,
            per_device_train_batch_size=args.batch_size,
            learning_rate=args.lr,
            seed=args.seed,
            batch_sampler=BatchSamplers.NO_DUPLICATES,
            prompts=dict(model.prompts),
            save_strategy="no",
            report_to="none",
            disable_tqdm=True,
            dataloader_pin_memory=False,
        ),
        train_dataset=Dataset.from_dict({"query": pairs.queries, "document": pairs.golds}),
        loss=build_loss(model),
    )
    val = load_validation(args.dataset, args.relation)
    evaluator = RetrievalEvaluator(
        val.corpus_ids, val.corpus_texts, val.queries, dict(model.prompts), show_progress_bar=False
    )
    return trainer, evaluator, len(pairs), {}


def run_worker(args: argparse.Namespace) -> dict:
    """Train one epoch (timed, memory sampled), then validate the final model (unless --speed-only)."""
    with tempfile.TemporaryDirectory() as tmp:
        make = _plain_trainer if args.worker == "plain" else _ratio_trainer
        trainer, evaluator, n_pairs, row = make(args, Path(tmp))
        with PeakRss() as rss:
            start = time.perf_counter()
            trainer.train()
            seconds = time.perf_counter() - start
        row.update(
            steps=trainer.state.global_step,
            train_seconds=round(seconds, 1),
            pairs_per_second=round(n_pairs / seconds, 2),
            train_rss_mb=round(rss.peak / 2**20, 1),
        )
        if not args.speed_only:
            scores = evaluator(trainer.model)
            row.update(
                mrr_at_10=scores["validation_mrr_at_10"], recall_at_10=scores["validation_recall_at_10"]
            )
    row["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", type=Path, default=Path("ratio"))
    ap.add_argument("--model", default="all-MiniLM-L6-v2")
    ap.add_argument("--relation", default="address")
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument(
        "--speed-only", action="store_true", help="skip the validation pass (pairs/s and RSS only)"
    )
    ap.add_argument("--worker", choices=("plain", "ratio"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print("RESULT " + json.dumps(run_worker(args)))
        return
    rows = {}
    for worker in ("plain", "ratio"):
        cmd = [sys.executable, __file__, "--worker", worker, *sys.argv[1:]]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        if proc.returncode or not lines:
            sys.exit(f"{worker} run failed:\n{proc.stderr[-3000:]}")
        rows[worker] = json.loads(lines[-1][len("RESULT ") :])
    validated = not args.speed_only
    print(
        f"{args.model}, {args.relation}, {args.pairs} train pairs, batch {args.batch_size}, lr {args.lr}, one epoch"
        + ("; validation MRR@10 / R@10 (%) over the full validation corpus" if validated else "")
    )
    header = (
        f"{'trainer':8} {'steps':>6} {'train s':>8} {'pairs/s':>8} {'RSS train MB':>13} {'RSS run MB':>11}"
    )
    print(header + (f" {'MRR@10':>7} {'R@10':>6}" if validated else ""))
    for name, r in rows.items():
        line = (
            f"{name:8} {r['steps']:>6} {r['train_seconds']:>8} {r['pairs_per_second']:>8} "
            f"{r['train_rss_mb']:>13} {r['peak_rss_mb']:>11}"
        )
        if validated:
            line += f" {100 * r['mrr_at_10']:>7.2f} {100 * r['recall_at_10']:>6.2f}"
        print(line)
    outcome = f"speed-up {rows['ratio']['pairs_per_second'] / rows['plain']['pairs_per_second']:.2f}x"
    if validated:
        outcome += f"; MRR@10 difference {100 * (rows['ratio']['mrr_at_10'] - rows['plain']['mrr_at_10']):+.2f} points"
    print(f"{outcome}; training max_seq_length {rows['ratio']['max_seq_length']}")


if __name__ == "__main__":
    main()
