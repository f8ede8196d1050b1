"""Training throughput of the spec's three backbone architectures on a GPU, and the spec's study projected from it.

The spec trained 15 setups (Table 7's trials on 2,605,515 Specify, 195,605 Address and 13,687 Broaden train pairs)
in 1,800 GPU hours on NVIDIA L40S. Its weights cannot be downloaded here, and throughput does not depend on them,
so each architecture is built from its published config with random weights. Three steps, so that only the
middle one needs the GPU machine (which has torch, transformers and sentence-transformers but not this package's
data dependencies):

    python benchmarks/gpu_training.py plan --dataset ratio --out PLAN.json          # here: configs and lengths
    python benchmarks/gpu_training.py measure PLAN.json --out MEASURED.json         # on the GPU
    python benchmarks/gpu_training.py project PLAN.json MEASURED.json [--markdown FILE]

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
import shutil
import sys
import tempfile
import time
from pathlib import Path

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


def _lengths_key(relation: str, query_prompt: str, document_prompt: str) -> str:
    return json.dumps([relation, query_prompt, document_prompt])


def plan(args: argparse.Namespace) -> None:
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from ratio_bench.retrieval.registry import REGISTRY, locate
    from ratio_bench.training.backbone import prompts_for
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
        prompts = prompts_for(config)
        key = _lengths_key(config.relation, prompts["query"], prompts["document"])
        if key not in lengths:
            if config.relation not in pairs_cache:
                pairs_cache[config.relation] = load_train_pairs(
                    args.dataset, config.relation, LENGTH_SAMPLE, 13
                )
            pairs = pairs_cache[config.relation]
            q = token_counts(tokenizer_model, pairs.queries, prompts["query"])
            d = token_counts(tokenizer_model, pairs.golds, prompts["document"])
            choice = choose_max_length(np.concatenate([q, d]), "auto", config.length_percentile, 512)
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
        "dense_out": DENSE_OUT,
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


def _features(lengths, rng, vocab: int, device: str):
    import numpy as np
    import torch

    lengths = np.array(lengths)  # a copy: sliced or reversed views have strides torch refuses
    width = int(lengths.max())
    ids = torch.from_numpy(rng.integers(1000, min(vocab, 30000), size=(len(lengths), width))).to(device)
    mask = torch.arange(width).unsqueeze(0) < torch.from_numpy(lengths).unsqueeze(1)
    return {"input_ids": ids, "attention_mask": mask.long().to(device)}


def _batches(q, d, batch_size: int, grouped: bool, seed: int):
    import numpy as np

    from ratio_bench.training.sampler import NoSharedTextBatchSampler

    n = len(q)
    texts = np.arange(2 * n).reshape(n, 2)  # distinct texts: batches are what the sampler makes of lengths
    longest = np.maximum(q, d) if grouped else None
    sampler = NoSharedTextBatchSampler(range(n), batch_size, True, texts=texts, lengths=longest, seed=seed)
    return list(sampler)


def _train_rate(model, config, job_lengths, batch_size, freeze_ratio, grouped, steps, warmup, device, rng):
    import numpy as np
    import torch

    from ratio_bench.training.backbone import freeze
    from ratio_bench.training.loss import build_loss

    for p in model.parameters():
        p.requires_grad_(True)
    freeze(model, freeze_ratio)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-5, fused=device.startswith("cuda"))
    loss_fn = build_loss(model, None, gather_across_devices=False)
    cap = job_lengths["max_seq_length"]["value"]
    q = np.minimum(np.array(job_lengths["query"]), cap)
    d = np.minimum(np.array(job_lengths["document"]), cap)
    batches = _batches(q, d, batch_size, grouped, seed=13)
    model.train()
    real = padded = 0
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    for step in range(warmup + steps):
        if step == warmup:
            sync()
            start = time.perf_counter()
        batch = batches[step % len(batches)]
        feats = [_features(col[batch], rng, config.vocab_size, device) for col in (q, d)]
        if step >= warmup:
            real += int(q[batch].sum() + d[batch].sum())
            padded += sum(int(f["input_ids"].numel()) for f in feats)
        with torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=device.startswith("cuda")):
            loss = loss_fn(feats, None)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    sync()
    seconds = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated() / 2**30 if device.startswith("cuda") else None
    del optimizer, loss_fn
    return {
        "pairs_per_second": round(steps * batch_size / seconds, 1),
        "step_ms": round(1000 * seconds / steps, 1),
        "padding_overhead": round(padded / real, 3),
        "peak_gib": None if peak is None else round(peak, 1),
        "steps": steps,
    }


def _encode_rate(model, config, job_lengths, device, rng, texts: int = 8192, batch_size: int = 256):
    """Inference texts/s as a validation pass runs it: bf16, length-sorted batches of the documents."""
    import numpy as np
    import torch

    cap = job_lengths["max_seq_length"]["value"]
    lengths = np.sort(np.minimum(np.resize(np.array(job_lengths["document"]), texts), cap))[::-1]
    model.eval()
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    with (
        torch.inference_mode(),
        torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=device != "cpu"),
    ):
        model(_features(lengths[:batch_size], rng, config.vocab_size, device))  # warm-up
        sync()
        start = time.perf_counter()
        for i in range(0, texts, batch_size):
            model(_features(lengths[i : i + batch_size], rng, config.vocab_size, device))
        sync()
    return round(texts / (time.perf_counter() - start), 1)


def measure(args: argparse.Namespace) -> None:
    import numpy as np
    import torch

    from ratio_bench.training.precision import effective_precision

    document = json.loads(Path(args.plan).read_text())
    device = "cuda" if torch.cuda.is_available() else "cpu"
    precision = effective_precision(True, True)
    torch.backends.cuda.matmul.allow_tf32 = precision.tf32
    torch.backends.cudnn.allow_tf32 = precision.tf32
    rng = np.random.default_rng(0)
    tokenizer = Path(args.plan).parent / "tokenizer"
    rows, encode = [], {}
    done = set()
    out = Path(args.out)
    backbones = args.backbones or list(document["architectures"])
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        for name in backbones:
            jobs = [j for j in document["jobs"] if j["backbone"] == name]
            if not jobs:
                continue
            t0 = time.perf_counter()
            model, config = _build(
                name, document["architectures"][name], tokenizer, Path(tmp), device, args.tiny
            )
            build_s = round(time.perf_counter() - t0, 1)
            params = sum(p.numel() for p in model.parameters())
            print(f"{name}: {params / 1e6:.0f}M parameters, built in {build_s} s", flush=True)
            biggest = max(jobs, key=lambda j: (j["relation"] == "specify", j["batch_size"]))
            plan_rows = [(j, True) for j in jobs] + [(biggest, False)]
            for job, grouped in plan_rows:
                key = (name, job["lengths"], job["batch_size"], job["freeze_ratio"], grouped)
                if key in done:
                    continue
                done.add(key)
                lengths = document["lengths"][job["lengths"]]
                row = {
                    "backbone": name,
                    "relation": job["relation"],
                    "setup": job["setup"],
                    "lengths": job["lengths"],
                    "batch_size": job["batch_size"],
                    "freeze_ratio": job["freeze_ratio"],
                    "batches": "length-grouped" if grouped else "random",
                    "max_seq_length": lengths["max_seq_length"]["value"],
                    "parameters_m": round(params / 1e6, 1),
                }
                row.update(
                    _train_rate(
                        model,
                        config,
                        lengths,
                        job["batch_size"],
                        job["freeze_ratio"],
                        grouped,
                        args.steps,
                        args.warmup,
                        device,
                        rng,
                    )
                )
                rows.append(row)
                print(json.dumps(row), flush=True)
            spec_lengths = document["lengths"][biggest["lengths"]]
            encode[name] = _encode_rate(model, config, spec_lengths, device, rng)
            print(f"{name}: encode {encode[name]} texts/s", flush=True)
            del model
            if device == "cuda":
                torch.cuda.empty_cache()
            shutil.rmtree(Path(tmp) / name, ignore_errors=True)
            out.write_text(json.dumps(_measured(rows, encode, device, precision), indent=1) + "\n")
    out.write_text(json.dumps(_measured(rows, encode, device, precision), indent=1) + "\n")
    print(f"-> {out}")


def _measured(rows, encode, device, precision) -> dict:
    import sentence_transformers
    import torch
    import transformers

    gpu = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    return {
        "device": gpu,
        "bf16": precision.bf16,
        "tf32": precision.tf32,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "sentence_transformers": sentence_transformers.__version__,
        "attention": "sdpa (flash-attn not installed: padded batches)",
        "train": rows,
        "encode_texts_per_second": encode,
    }


# ---------------------------------------------------------------- project (here)


def project(args: argparse.Namespace) -> None:
    document = json.loads(Path(args.plan).read_text())
    measured = json.loads(Path(args.measured).read_text())
    rate = {
        (r["backbone"], r["lengths"], r["batch_size"], r["freeze_ratio"]): r["pairs_per_second"]
        for r in measured["train"]
        if r["batches"] == "length-grouped"
    }
    setups: dict[str, dict] = {}
    for job in document["jobs"]:
        pps = rate.get((job["backbone"], job["lengths"], job["batch_size"], job["freeze_ratio"]))
        if pps is None:
            continue
        rel = job["relation"]
        train_h = job["epochs"] * SPEC_TRAIN_PAIRS[rel] / pps / 3600
        texts = SPEC_VALIDATION_CANDIDATES + SPEC_VALIDATION_QUERIES[rel]
        val_h = (
            job["epochs"]
            * texts
            / measured["encode_texts_per_second"][job["backbone"]]
            / 3600
            * SPEC_GPUS[rel]
        )
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
        f"torch {measured['torch']}, {measured['attention']}).",
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
    m.add_argument("--steps", type=int, default=10)
    m.add_argument("--warmup", type=int, default=3)
    m.add_argument("--tmp", default=None, help="where the random-weight models are saved and loaded")
    m.add_argument("--tiny", action="store_true", help="toy sizes: rehearse the GPU run on a CPU")
    j = sub.add_parser("project", help="GPU hours of the spec's study from the measurements")
    j.add_argument("plan")
    j.add_argument("measured")
    j.add_argument("--markdown")
    args = parser.parse_args(argv)
    {"plan": plan, "measure": measure, "project": project}[args.step](args)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))  # the GPU machine runs it from a checkout, without installing
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
