"""The synthetic corpus of the dataset tests and the build config that reads it."""

from __future__ import annotations

from pathlib import Path

import yaml
from tests.helpers.corpus import shared_record

PAIRS = {
    "A": (
        "Training deep graph networks collapses all node features together.",
        "To address this issue, we add a gated residual connection to every layer.",
    ),
    "B": (
        "Retrieval models often fail on queries with rare technical terms.",
        "For example, a dense model misses the term spectral clustering entirely.",
    ),
    "C": (
        "Reward models can be exploited by a policy that optimises them too hard.",
        "More generally, any optimiser pressed against an imperfect proxy finds its flaws.",
    ),
    "D": (
        "Crowd-sourced labels are noisy and inconsistent across many annotators.",
        "To mitigate this problem, we reweight examples by agreement with a clean set.",
    ),
    "E": (
        "Large language models produce fluent but unsupported statements in medicine.",
        "For instance, a model may invent a dosage that appears in no clinical guideline.",
    ),
    "F": (
        "Sparse attention patterns reduce the quadratic cost of long sequences.",
        "Specifically, each token attends to a fixed window and a few global tokens.",
    ),
    "G": (
        "Quantisation to four bits loses accuracy on arithmetic reasoning tasks.",
        "To overcome this limitation, we keep the outlier channels in higher precision.",
    ),
    "H": (
        "Federated learning leaks private information through the model updates.",
        "To address this issue, we clip and noise every update before aggregation.",
    ),
}


DISTRACTOR = "Therefore, the remaining experiments use the same hyper-parameters as before."


def text(*keys: str, distractor: str | None = None) -> str:
    parts = [f"{PAIRS[k][0]} {PAIRS[k][1]}" for k in keys]
    if distractor:
        parts.append(distractor)
    return " ".join(parts)


def records() -> tuple[list[dict], list[dict]]:
    a = [
        shared_record(
            "s/t1", text("A"), "2020-05", kind="abstract", title="Gated residual message passing networks"
        ),
        shared_record(
            "s/t2",
            text("B", distractor=DISTRACTOR),
            "2020-07-14",
            kind="abstract",
            title="Rare terms in dense scientific retrieval",
        ),
        shared_record(
            "s/v1",
            text("C", distractor="However, we observe that this effect vanishes at scale quickly."),
            "2021-06",
            kind="abstract",
            title="Proxy optimisation and its discontents",
        ),
        shared_record(
            "s/v2", text("D"), "2021", kind="abstract", title="Agreement-based reweighting for labels"
        ),
        shared_record(
            "s/s1", text("E"), "2022-02-01", kind="abstract", title="Shared Work: Hallucinated Dosages!"
        ),
        shared_record(
            "s/x1",
            text("A", "G"),
            "2022-03",
            kind="abstract",
            title="Outlier-aware four-bit quantisation",
            venue=["cs.LG", "cs.AI"],  # a list venue (arXiv categories): a clean string in the release
        ),
        shared_record(
            "s/r1", text("F"), "2020/2021", kind="abstract", title="Windowed sparse attention revisited"
        ),
        shared_record(
            "s/u1", text("H"), None, kind="abstract", title="Private federated aggregation with noise"
        ),
        shared_record(
            "s/x2",
            text("H", distractor="In contrast, centralised training needs no such protection at all."),
            "2022-05",
            kind="abstract",
            title="Noisy clipping for federated private updates",
            venue="arXiv ['cs.CR']",  # a list printed into the string, as the arXiv dump has it
        ),
    ]
    b = [  # the same work as s/s1 under another source, dated earlier: the work must stay in one partition
        shared_record(
            "o/s1-preprint", text("E"), "2020-03", kind="abstract", title="shared work - hallucinated dosages"
        ),
    ]
    return a, b


def write_config(path: Path, corpus: Path, work: Path, **overrides) -> Path:
    cfg = {
        "release": {"name": "ratio-fixture", "version": "0.0.1-test", "license": "CC BY 4.0"},
        "corpus": {"paths": [str(corpus)]},
        "lexicon": str(Path(__file__).resolve().parents[2] / "lexicon" / "v1"),
        "work_dir": str(work),
        "seed": 7,
        "splits": {
            "train": {"end": "2020-12-31"},
            "validation": {"start": "2021-01-01", "end": "2021-12-31"},
            "test": {"start": "2022-01-01"},
        },
        "date_policy": {"straddle": "drop", "unknown": "drop"},
        "mode": "temporal",
        "sampling": {},
    }
    cfg.update(overrides)
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


# (relation, marker, how many test pairs): uneven marker sizes exercise the equal allocation.
SYNTHETIC = [
    ("address", "to address this issue", 30),
    ("address", "to overcome this limitation", 6),
    ("address", "to mitigate this", 14),
    ("broaden", "more generally", 9),
    ("specify", "for example", 25),
    ("specify", "for instance", 3),
]


MARKERS = {"address": "To address this issue", "broaden": "More generally", "specify": "For example"}
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "sigma",
]


def dated_paper(pid: str, date: str | None, pairs: dict[str, int], distractors: int, title: str) -> dict:
    """A paper of distinct (query, gold) pairs per relation and distinct distractor sentences (``therefore``),
    every sentence unique to ``pid``, so each pair and candidate is counted once and its paper known."""
    tag = pid.replace("/", " ")
    sentences = []
    for rel, n in pairs.items():
        for i in range(n):
            word = WORDS[i % len(WORDS)]
            sentences.append(
                f"The {rel} problem {word} {i} of {tag} stays unsolved in every benchmark we tried."
            )
            sentences.append(
                f"{MARKERS[rel]}, we study the {rel} {word} {i} case of {tag} with a dedicated method."
            )
    sentences += [
        f"Therefore, the {WORDS[i % len(WORDS)]} {i} setting of {tag} reuses the same hyper-parameters."
        for i in range(distractors)
    ]
    return shared_record(pid, " ".join(sentences), date, kind="abstract", title=title)


def snapshot_records() -> list[dict]:
    """Train and validation papers, then test papers over 2022-01..03 and one dated only by its year."""
    return [
        dated_paper(
            "s/train",
            "2020-05",
            {"address": 2, "broaden": 1},
            1,
            "A training paper on gated residual networks",
        ),
        dated_paper("s/valid", "2021-05", {"address": 2}, 1, "A validation paper on noisy crowd labels"),
        dated_paper(
            "s/jan", "2022-01-10", {"address": 3, "specify": 2}, 6, "January paper on sparse retrieval"
        ),
        dated_paper(
            "s/feb", "2022-02", {"address": 3, "specify": 1}, 6, "February paper on quantised models"
        ),
        dated_paper("s/mar", "2022-03-03", {"address": 2}, 1, "March paper with too few distractors"),
        dated_paper("s/year", "2022", {"address": 1}, 1, "A paper dated by its year only, in test"),
    ]


SNAPSHOTS = {
    "period": "month",
    "min_queries": 2,
    "max_queries": {"address": 2, "broaden": None, "specify": None},
    "pool_size": 8,
}


def build_snapshots(root: Path, records: list[dict], out: Path) -> dict:
    """Build ``records`` with the SNAPSHOTS block into the release ``out`` (work files under ``root``)."""
    from tests.helpers.corpus import write_jsonl

    from ratio_bench.dataset.build import build_release
    from ratio_bench.dataset.config import load_config

    (root / "corpus").mkdir(parents=True, exist_ok=True)
    write_jsonl(root / "corpus" / "a.jsonl", records)
    cfg = load_config(write_config(root / "cfg.yaml", root / "corpus", root / "work", snapshots=SNAPSHOTS))
    return build_release(cfg, out, progress=False)
