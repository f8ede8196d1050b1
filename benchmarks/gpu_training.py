"""Training throughput of the spec's three backbone architectures on a GPU, and the spec's study projected from it.

The spec trained 15 setups (Table 7's trials on 2,605,515 Specify, 195,605 Address and 13,687 Broaden train pairs)
in 1,800 GPU hours on NVIDIA L40S. Its weights cannot be downloaded here, and throughput does not depend on them,
so each architecture is built from its published config with random weights. Three steps, so that only the
middle one needs the GPU machine (which has torch, transformers and sentence-transformers but not this package's
data dependencies):

    python benchmarks/gpu_training.py plan --dataset ratio --out PLAN.json          # here: configs and lengths
    python benchmarks/gpu_training.py measure PLAN.json --out MEASURED.json         # on the GPU
    python benchmarks/gpu_training.py project MEASURED.json [--markdown FILE]

``plan`` reads every spec config (``training/*.yaml``) and the token counts, prompt included, of the dev
release's train pairs per relation and prompt setup (all-mpnet-base-v2's tokenizer for all three backbones: the
others' tokenizers are not available offline), and puts a copy of that tokenizer beside the plan: the GPU step
feeds token ids, but a sentence-transformers folder needs one. ``measure`` runs the training step of
``ratio train`` (this package's loss, freeze and no-shared-text length-grouped batch sampler; bf16 autocast and
TF32 as the spec configs ask; AdamW; gradient clipping) for every distinct (architecture, lengths, batch size,
freeze ratio) of the trials, plus random (ungrouped) batches once per architecture for comparison, and bf16
encoding throughput for the per-epoch validation pass. ``project`` turns this into GPU hours per setup:
epochs x train pairs / pairs per second per GPU (under DDP each GPU runs its own batch, so GPU time does not depend
on the number of GPUs), plus one validation pass over the 361,172 validation candidates and the relation's
queries per epoch (held by every GPU of the run while rank 0 encodes).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SPEC_TRAIN_PAIRS = {"specify": 2_605_515, "address": 195_605, "broaden": 13_687}  # Table 1
SPEC_VALIDATION_QUERIES = {"specify": 79_583, "address": 13_082, "broaden": 495}  # Table 1
SPEC_VALIDATION_CANDIDATES = 361_172  # Table 1
SPEC_GPUS = {"specify": 4, "address": 4, "broaden": 1}  # section 5.1
SPEC_GPU_HOURS = 1_800  # section 5.1, L40S
# Peak dense bf16 tensor throughput (vendor datasheets): the crude factor from H200 hours to L40S hours.
PEAK_BF16_TFLOPS = {"H200": 989.0, "L40S": 362.0}
LENGTH_SAMPLE = 4_096  # pairs per (relation, prompts): enough for the distribution, small enough to carry

# Published configs of the spec backbones (their Hub config.json); all-mpnet-base-v2's comes from its package.
ARCHITECTURES = {
    "modernbert-embed-large": {  # answerdotai/ModernBERT-large, the base of lightonai/modernbert-embed-large
        "model_type": "modernbert",
        "vocab_size": 50368,
        "hidden_size": 1024,
        "intermediate_size": 2624,
        "num_hidden_layers": 28,
        "num_attention_heads": 16,
        "max_position_embeddings": 8192,
        "global_attn_every_n_layers": 3,
        "local_attention": 128,
        "pad_token_id": 50283,
        "bos_token_id": 50281,
        "eos_token_id": 50282,
        "cls_token_id": 50281,
        "sep_token_id": 50282,
    },
    "stella-en-1.5b-v5": {  # NovaSearch/stella_en_1.5B_v5 (Qwen2); mean pooling, then Dense 1536 -> 1024
        "model_type": "qwen2",
        "vocab_size": 151646,
        "hidden_size": 1536,
        "intermediate_size": 8960,
        "num_hidden_layers": 28,
        "num_attention_heads": 12,
        "num_key_value_heads": 2,
        "max_position_embeddings": 131072,
        "rope_theta": 1000000.0,
        "rms_norm_eps": 1e-6,
        "tie_word_embeddings": False,
    },
}
DENSE_OUT = {"stella-en-1.5b-v5": 1024}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


# ---------------------------------------------------------------- plan (here, with the package installed)


def _lengths_key(
    relation: str, prompts: dict[str, str], setting: int | str, percentile: float, cap: int | None
) -> str:
    """Identity of one length distribution: what the texts are and how ``ratio train`` would cut them."""
    return json.dumps([relation, prompts["query"], prompts["document"], setting, percentile, cap])


def plan(args: argparse.Namespace) -> None:
    from sentence_transformers import SentenceTransformer

    from ratio_bench.retrieval.registry import REGISTRY, locate
    from ratio_bench.training.backbone import training_prompts
    from ratio_bench.training.config import config_files, load_config
    from ratio_bench.training.data import dataset_info, load_train_pairs
    from ratio_bench.training.tokens import choose_max_length, token_counts

    mpnet_dir = locate(REGISTRY["all-mpnet-base-v2"])
    tokenizer_model = SentenceTransformer(str(mpnet_dir), device="cpu")
    hf_dir = next(p.parent for p in mpnet_dir.rglob("config.json") if (p.parent / "vocab.txt").exists())
    architectures = {"all-mpnet-base-v2": json.loads((hf_dir / "config.json").read_text()), **ARCHITECTURES}

    out = Path(args.out)
    tok_dir = out.parent / "tokenizer"
    tok_dir.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:  # any tokenizer will do for a folder the benchmark feeds token ids to
        shutil.copy(hf_dir / name, tok_dir / name)

    lengths: dict[str, dict] = {}
    jobs = []
    pairs_cache = {}
    for path in config_files(args.configs):
        config = load_config(path)
        if config.unified:
            continue
        prompts = training_prompts(config)
        # the model's own limit caps the length, as in ratio train: all-mpnet-base-v2's is in its package; the
        # other two allow more than the data's 99.9th percentile (ModernBERT-embed-large 8192, Stella 512)
        cap = tokenizer_model.max_seq_length if config.backbone == "all-mpnet-base-v2" else None
        key = _lengths_key(config.relation, prompts, config.max_seq_length, config.length_percentile, cap)
        if key not in lengths:
            if config.relation not in pairs_cache:
                pairs_cache[config.relation] = load_train_pairs(
                    args.dataset, config.relation, LENGTH_SAMPLE, 13
                )
            pairs = pairs_cache[config.relation]
            q = token_counts(tokenizer_model, pairs.queries, prompts["query"])
            d = token_counts(tokenizer_model, pairs.golds, prompts["document"])
            choice = choose_max_length(
                np.concatenate([q, d]), config.max_seq_length, config.length_percentile, cap
            )
            lengths[key] = {
                "relation": config.relation,
                "prompts": prompts,
                "query": q.tolist(),
                "document": d.tolist(),
                "max_seq_length": choice.as_dict(),
            }
        for k, trial in enumerate(config.trials):
            jobs.append(
                {
                    "config": config.name,
                    "backbone": config.backbone,
                    "setup": config.setup,
                    "relation": config.relation,
                    "trial": k,
                    "epochs": trial.epochs,
                    "batch_size": trial.batch_size,
                    "freeze_ratio": trial.freeze_ratio,
                    "mini_batch_size": trial.mini_batch_size,
                    "lengths": key,
                }
            )
    document = {
        "release": dataset_info(args.dataset).as_dict(),
        "tokenizer": "all-mpnet-base-v2 (WordPiece), for all three backbones",
        "architectures": architectures,
        "lengths": lengths,
        "jobs": jobs,
    }
    out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    for entry in lengths.values():
        q, d = np.array(entry["query"]), np.array(entry["document"])
        print(
            f"{entry['relation']:8} q-prompt {entry['prompts']['query'][:24]!r:28} query mean {q.mean():5.1f} "
            f"p99 {np.percentile(q, 99):4.0f} | document mean {d.mean():5.1f} p99 {np.percentile(d, 99):4.0f} "
            f"| max_seq_length {entry['max_seq_length']['value']}"
        )
    print(f"{len(jobs)} trials in {len({j['config'] for j in jobs})} configs -> {out}")


# ---------------------------------------------------------------- measure (on the GPU machine)


def _build(name: str, spec: dict, tokenizer: Path, tmp: Path, device: str, tiny: bool):
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Dense, Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling
    from transformers import AutoConfig, AutoModel

    fields = {
        k: v for k, v in spec.items() if not k.startswith("_") and k not in ("architectures", "model_type")
    }
    if tiny:  # a CPU rehearsal of the GPU run: same code, toy sizes
        fields.update(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2)
        if "num_key_value_heads" in fields:
            fields["num_key_value_heads"] = 1
    config = AutoConfig.for_model(spec["model_type"], **fields)
    torch.manual_seed(0)
    folder = tmp / name
    with torch.device(device):
        AutoModel.from_config(config).save_pretrained(folder)
    for file in TOKENIZER_FILES:
        shutil.copy(tokenizer / file, folder / file)
    transformer = Transformer(str(folder), max_seq_length=512, model_kwargs={"dtype": torch.float32})
    modules = [transformer, Pooling(config.hidden_size, "mean")]
    if name in DENSE_OUT:
        out = 16 if tiny else DENSE_OUT[name]
        modules.append(Dense(config.hidden_size, out, activation_function=torch.nn.Identity()))
    return SentenceTransformer(modules=modules, device=device), config


def _features(lengths, rng: np.random.Generator, vocab: int, device: str) -> dict:
    """Random token ids of the given lengths, padded to the longest, as a tokenizer's batch would be."""
    import torch

    lengths = np.array(lengths)  # a copy: sliced or reversed views have strides torch refuses
    width = int(lengths.max())
    ids = torch.from_numpy(rng.integers(1000, min(vocab, 30000), size=(len(lengths), width))).to(device)
    mask = torch.arange(width).unsqueeze(0) < torch.from_numpy(lengths).unsqueeze(1)
    return {"input_ids": ids, "attention_mask": mask.long().to(device)}


def _batches(q: np.ndarray, d: np.ndarray, batch_size: int, grouped: bool, seed: int) -> list[list[int]]:
    """The batches ``ratio train`` would form from pairs of these lengths (grouped) or the plain random ones."""
    from ratio_bench.training.sampler import NoSharedTextBatchSampler

    n = len(q)
    texts = np.arange(2 * n).reshape(n, 2)  # distinct texts: batches are what the sampler makes of lengths
    longest = np.maximum(q, d) if grouped else None
    sampler = NoSharedTextBatchSampler(range(n), batch_size, True, texts=texts, lengths=longest, seed=seed)
    return list(sampler)


class Trainer:
    """One job's training step as ``ratio train`` runs it (loss, freeze, clipping, bf16 autocast), on synthetic
    token ids of the job's real lengths. The shapes of one backbone share its model and one AdamW (frozen
    parameters get no gradient, so AdamW skips them): one optimizer state per shape would not fit for Stella."""

    def __init__(
        self, model, optimizer, config, lengths: dict, job: dict, grouped: bool, device: str
    ) -> None:
        from ratio_bench.training.loss import build_loss

        self.model, self.optimizer, self.vocab = model, optimizer, config.vocab_size
        self.device, self.cuda = device, device.startswith("cuda")
        self.freeze_ratio = job["freeze_ratio"]
        self.params: list = []
        self.loss = build_loss(model, job.get("mini_batch_size"), gather_across_devices=False)
        cap = lengths["max_seq_length"]["value"]
        self.q = np.minimum(np.array(lengths["query"]), cap)
        self.d = np.minimum(np.array(lengths["document"]), cap)
        self.batch_size = job["batch_size"]
        self.batches = _batches(self.q, self.d, self.batch_size, grouped, seed=13)
        self.next = 0

    def activate(self) -> None:
        """Give the shared model this job's frozen set (the shapes of a backbone differ in freeze ratio)."""
        from ratio_bench.training.backbone import freeze

        self.optimizer.zero_grad(set_to_none=True)
        for p in self.model.parameters():
            p.requires_grad_(True)
        freeze(self.model, self.freeze_ratio)
        self.params = [p for p in self.model.parameters() if p.requires_grad]

    def sync(self) -> None:
        import torch

        if self.cuda:
            torch.cuda.synchronize()

    def step(self, rng: np.random.Generator) -> tuple[int, int]:
        """One optimizer step; returns (real, padded) tokens of its batch."""
        import torch

        batch = self.batches[self.next % len(self.batches)]
        self.next += 1
        feats = [_features(col[batch], rng, self.vocab, self.device) for col in (self.q, self.d)]
        self.model.train()
        with torch.autocast(self.device.split(":")[0], dtype=torch.bfloat16, enabled=self.cuda):
            loss = self.loss(feats, None)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.params, 1.0)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return int(self.q[batch].sum() + self.d[batch].sum()), sum(int(f["input_ids"].numel()) for f in feats)

    def timed(self, steps: int, rng: np.random.Generator) -> dict[str, Any]:
        """``steps`` timed steps: pairs/s, ms per step, padded/real tokens, peak GPU memory."""
        import torch

        if self.cuda:
            torch.cuda.reset_peak_memory_stats()
        self.sync()
        start = time.perf_counter()
        tokens = [self.step(rng) for _ in range(steps)]
        self.sync()
        seconds = time.perf_counter() - start
        return {
            "pairs_per_second": steps * self.batch_size / seconds,
            "step_ms": 1000 * seconds / steps,
            "padding_overhead": round(sum(p for _, p in tokens) / sum(r for r, _ in tokens), 3),
            "peak_gib": round(torch.cuda.max_memory_allocated() / 2**30, 1) if self.cuda else None,
        }

    def profiled(self, steps: int, rng: np.random.Generator) -> dict[str, Any]:
        """Where a step's time goes: GPU kernel time and kernel launches per step against wall time."""
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.cuda else [])
        with profile(activities=activities) as prof:
            self.sync()
            start = time.perf_counter()
            for _ in range(steps):
                self.step(rng)
            self.sync()
            wall = time.perf_counter() - start
        events = prof.key_averages()
        kernel_us = sum(getattr(e, "self_device_time_total", 0) for e in events)
        launches = sum(e.count for e in events if e.key in ("cudaLaunchKernel", "cuLaunchKernelEx"))
        return {
            "wall_ms_per_step": round(1000 * wall / steps, 1),
            "kernel_ms_per_step": round(kernel_us / 1000 / steps, 1),
            "launches_per_step": round(launches / steps),
        }


def _encode_rate(
    model, config, job_lengths: dict, device: str, rng, texts: int = 8192, batch_size: int = 256
):
    """Inference texts/s as a validation pass runs it: bf16, length-sorted batches of the documents."""
    import torch

    cap = job_lengths["max_seq_length"]["value"]
    lengths = np.sort(np.minimum(np.resize(np.array(job_lengths["document"]), texts), cap))[::-1]
    model.eval()
    cuda = device.startswith("cuda")
    with torch.inference_mode(), torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=cuda):
        model(_features(lengths[:batch_size], rng, config.vocab_size, device))  # warm-up
        if cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        for i in range(0, texts, batch_size):
            model(_features(lengths[i : i + batch_size], rng, config.vocab_size, device))
        if cuda:
            torch.cuda.synchronize()
    return round(texts / (time.perf_counter() - start), 1)


def _shape(job: dict) -> tuple:
    """What sets a trial's step time: backbone, lengths, batch size, freeze ratio, chunked loss (jobs and rows)."""
    return (
        job["backbone"],
        job["lengths"],
        job["batch_size"],
        job["freeze_ratio"],
        job.get("mini_batch_size"),
    )


def _biggest(jobs: list[dict]) -> dict:
    """The largest-batch Specify trial: the one timed with random batches too, and whose lengths encoding uses."""
    return max(jobs, key=lambda j: (j["relation"] == "specify", j["batch_size"]))


def _rows(jobs: list[dict]) -> list[tuple[dict, bool]]:
    """Distinct shapes of a backbone's trials, plus random batches for the largest Specify one (the plain
    trainer's batches, side by side)."""
    seen, rows = set(), []
    for job, grouped in [(j, True) for j in jobs] + [(_biggest(jobs), False)]:
        key = (*_shape(job), grouped)
        if key not in seen:
            seen.add(key)
            rows.append((job, grouped))
    return rows


def measure(args: argparse.Namespace) -> None:
    """Time every shape of the plan on this machine's GPU (the CPU with --tiny) and write MEASURED.json.

    Each shape is warmed up first (all shapes, so allocator and clocks settle before any timing), then timed
    ``--repeats`` times in a freshly shuffled order: the median is reported with its spread, so a row measured
    early or late in the run is not favoured. ``--profile`` adds kernel time and launches per step for the
    largest shape of each backbone."""
    import torch

    from ratio_bench.training.precision import effective_precision

    if args.steps < 1 or args.repeats < 1:
        raise SystemExit("--steps and --repeats must be at least 1")
    document = json.loads(Path(args.plan).read_text())
    device = "cuda" if torch.cuda.is_available() else "cpu"
    precision = effective_precision(True, True)
    torch.backends.cuda.matmul.allow_tf32 = precision.tf32
    torch.backends.cudnn.allow_tf32 = precision.tf32
    rng, order_rng = np.random.default_rng(0), random.Random(13)
    tokenizer = Path(args.plan).parent / "tokenizer"
    out = Path(args.out)
    result = _measured(document, args, device, precision)
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        for name in args.backbones or list(document["architectures"]):
            jobs = [j for j in document["jobs"] if j["backbone"] == name]
            if not jobs:
                continue
            t0 = time.perf_counter()
            spec = document["architectures"][name]
            model, config = _build(name, spec, tokenizer, Path(tmp), device, args.tiny)
            params = sum(p.numel() for p in model.parameters())
            print(
                f"{name}: {params / 1e6:.0f}M parameters, built in {time.perf_counter() - t0:.1f} s",
                flush=True,
            )
            shapes = _rows(jobs)
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=device == "cuda")
            trainers = [
                Trainer(model, optimizer, config, document["lengths"][j["lengths"]], j, grouped, device)
                for j, grouped in shapes
            ]
            samples: list[list[dict]] = [[] for _ in shapes]
            for i in range(len(shapes)):  # warm-up of every shape, then the timed rounds
                trainers[i].activate()
                for _ in range(args.warmup):
                    trainers[i].step(rng)
            for _ in range(args.repeats):
                order = list(range(len(shapes)))
                order_rng.shuffle(order)
                for i in order:
                    trainers[i].activate()
                    trainers[i].step(rng)  # one untimed step after switching shape
                    samples[i].append(trainers[i].timed(args.steps, rng))
            for (job, grouped), runs in zip(shapes, samples, strict=True):
                row = _row(name, job, grouped, document, params, runs)
                result["train"].append(row)
                print(json.dumps(row), flush=True)
            if args.profile:
                i = max(
                    range(len(shapes)),
                    key=lambda k: (
                        shapes[k][1],
                        shapes[k][0]["relation"] == "specify",
                        shapes[k][0]["batch_size"],
                    ),
                )
                trainers[i].activate()
                result["profile"][name] = {"batch_size": shapes[i][0]["batch_size"], "relation": shapes[i][0][
                    "relation"], **trainers[i].profiled(3, rng)}  # fmt: skip
                print(f"{name}: profile {result['profile'][name]}", flush=True)
            biggest = _biggest(jobs)
            result["encode_texts_per_second"][name] = _encode_rate(
                model, config, document["lengths"][biggest["lengths"]], device, rng
            )
            print(f"{name}: encode {result['encode_texts_per_second'][name]} texts/s", flush=True)
            del model, trainers, optimizer
            if device == "cuda":
                torch.cuda.empty_cache()
            shutil.rmtree(Path(tmp) / name, ignore_errors=True)
            out.write_text(json.dumps(result, indent=1) + "\n")  # what is done survives a killed run
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"-> {out}")


def _row(
    name: str, job: dict, grouped: bool, document: dict, params: int, runs: list[dict]
) -> dict[str, Any]:
    rates = sorted(r["pairs_per_second"] for r in runs)
    steps = sorted(r["step_ms"] for r in runs)
    return {
        "backbone": name,
        "relation": job["relation"],
        "setup": job["setup"],
        "lengths": job["lengths"],
        "batch_size": job["batch_size"],
        "freeze_ratio": job["freeze_ratio"],
        "mini_batch_size": job.get("mini_batch_size"),
        "batches": "length-grouped" if grouped else "random",
        "max_seq_length": document["lengths"][job["lengths"]]["max_seq_length"]["value"],
        "parameters_m": round(params / 1e6, 1),
        "pairs_per_second": round(statistics.median(rates), 1),
        "pairs_per_second_range": [round(rates[0], 1), round(rates[-1], 1)],
        "step_ms": round(statistics.median(steps), 1),
        "padding_overhead": runs[-1]["padding_overhead"],
        "peak_gib": max((r["peak_gib"] for r in runs if r["peak_gib"] is not None), default=None),
    }


def _measured(document: dict, args: argparse.Namespace, device: str, precision) -> dict[str, Any]:
    """The result's header: what ran where and how (the jobs travel with it, so ``project`` needs no plan)."""
    import platform

    import sentence_transformers
    import torch
    import transformers

    return {
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "host_cpu": _cpu_model() or platform.processor(),
        "bf16": precision.bf16,
        "tf32": precision.tf32,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "sentence_transformers": sentence_transformers.__version__,
        "attention": "sdpa (flash-attn not installed: padded batches)",
        "protocol": f"every shape warmed up ({args.warmup} steps), then {args.repeats} rounds in shuffled order "
        f"of 1 untimed + {args.steps} timed steps per shape; median and range over rounds",
        "release": document["release"],
        "tokenizer": document["tokenizer"],
        "jobs": document["jobs"],
        "train": [],
        "profile": {},
        "encode_texts_per_second": {},
    }


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


# ---------------------------------------------------------------- project (here)


def project(args: argparse.Namespace) -> None:
    """GPU hours of every setup's trials from MEASURED.json (which carries the plan's jobs)."""
    measured = json.loads(Path(args.measured).read_text())
    jobs = measured.get("jobs") or json.loads(Path(args.plan).read_text())["jobs"]
    rate = {_shape(r): r["pairs_per_second"] for r in measured["train"] if r["batches"] == "length-grouped"}
    missing = [
        f"{j['config']} trial {j['trial']}"
        for j in jobs
        if _shape(j) not in rate or j["backbone"] not in measured["encode_texts_per_second"]
    ]
    if missing:
        raise SystemExit(
            f"{args.measured}: no measurement for {len(missing)} trials ({', '.join(missing[:5])} ...)"
        )
    setups: dict[str, dict] = {}
    for job in jobs:
        pps = rate[_shape(job)]
        rel = job["relation"]
        train_h = job["epochs"] * SPEC_TRAIN_PAIRS[rel] / pps / 3600
        texts = SPEC_VALIDATION_CANDIDATES + SPEC_VALIDATION_QUERIES[rel]
        encode = measured["encode_texts_per_second"][job["backbone"]]
        val_h = job["epochs"] * texts / encode / 3600 * SPEC_GPUS[rel]
        s = setups.setdefault(
            job["config"],
            {"backbone": job["backbone"], "relation": rel, "trials": 0, "train_h": 0.0, "val_h": 0.0},
        )
        s["trials"] += 1
        s["train_h"] += train_h
        s["val_h"] += val_h
    total_train = sum(s["train_h"] for s in setups.values())
    total_val = sum(s["val_h"] for s in setups.values())
    factor = PEAK_BF16_TFLOPS["H200"] / PEAK_BF16_TFLOPS["L40S"]
    lines = [
        f"Measured on {measured['device']} (bf16 {measured['bf16']}, TF32 {measured['tf32']}, "
        f"torch {measured['torch']}, {measured['attention']}; host CPU {measured.get('host_cpu', 'not recorded')}).",
        f"Protocol: {measured.get('protocol', 'not recorded')}.",
        "Not in the projection: DDP all-reduce and cross-device gathering (4-GPU Address and Specify), the "
        "trainer's own overhead, checkpointing, and Stella's own modelling code (stock Qwen2 here).",
        "",
        "| setup | trials | train GPU-h | validation GPU-h | total GPU-h |",
        "|---|---|---|---|---|",
    ]
    for name, s in sorted(setups.items()):
        lines.append(
            f"| {name} | {s['trials']} | {s['train_h']:.1f} | {s['val_h']:.1f} | {s['train_h'] + s['val_h']:.1f} |"
        )
    total = total_train + total_val
    lines += [
        f"| **all {len(setups)} setups** | {sum(s['trials'] for s in setups.values())} | {total_train:.0f} | "
        f"{total_val:.0f} | {total:.0f} |",
        "",
        f"Spec: {SPEC_GPU_HOURS:,} GPU hours on L40S. Projected: {total:.0f} H200 GPU hours; x{factor:.2f} "
        f"(peak dense bf16, {PEAK_BF16_TFLOPS['H200']:.0f} vs {PEAK_BF16_TFLOPS['L40S']:.0f} TFLOP/s) "
        f"= ~{total * factor:.0f} L40S GPU hours.",
        "",
        "| backbone | relation | setup | batch | freeze | batches | max len | pairs/s | step ms | pad x | peak GiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in measured["train"]:
        lines.append(
            f"| {r['backbone']} | {r['relation']} | {r['setup']} | {r['batch_size']} | {r['freeze_ratio']} | "
            f"{r['batches']} | {r['max_seq_length']} | {r['pairs_per_second']} | {r['step_ms']} | "
            f"{r['padding_overhead']} | {r['peak_gib']} |"
        )
    for name, p in measured.get("profile", {}).items():
        lines.append(
            f"Profile, {name} {p['relation']} batch {p['batch_size']}: {p['kernel_ms_per_step']} ms of GPU kernels "
            f"and {p['launches_per_step']:,} launches per step, {p['wall_ms_per_step']} ms wall."
        )
    lines += [
        "",
        "Encoding (bf16, batch 256, length-sorted): "
        + ", ".join(f"{k} {v:,.0f} texts/s" for k, v in measured["encode_texts_per_second"].items()),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    """Three steps: plan (here), measure (on the GPU), project (here)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("plan", help="configs and token lengths (needs the package and a release)")
    p.add_argument("--dataset", required=True)
    p.add_argument("--configs", default=str(ROOT / "training"))
    p.add_argument("--out", required=True)
    m = sub.add_parser("measure", help="training and encoding throughput (on the GPU)")
    m.add_argument("plan")
    m.add_argument("--out", required=True)
    m.add_argument("--backbones", nargs="*")
    m.add_argument("--steps", type=int, default=20, help="timed steps per shape and round")
    m.add_argument("--warmup", type=int, default=5, help="untimed steps per shape before any timing")
    m.add_argument(
        "--repeats", type=int, default=3, help="rounds, each in a new shuffled order; median reported"
    )
    m.add_argument(
        "--profile", action="store_true", help="kernel time and launches of each backbone's largest shape"
    )
    m.add_argument("--tmp", default=None, help="where the random-weight models are saved and loaded")
    m.add_argument("--tiny", action="store_true", help="toy sizes: rehearse the GPU run on a CPU")
    j = sub.add_parser("project", help="GPU hours of the spec's study from the measurements")
    j.add_argument("measured")
    j.add_argument("--plan", help="the plan, for a MEASURED.json written before the jobs travelled with it")
    j.add_argument("--markdown")
    args = parser.parse_args(argv)
    {"plan": plan, "measure": measure, "project": project}[args.step](args)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))  # the GPU machine runs it from a checkout, without installing
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
