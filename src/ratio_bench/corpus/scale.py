"""A synthetic corpus N times the size of a real one, for measuring how each stage scales (benchmarks/scale.py).

Copying a corpus N times would measure nothing past the first copy: papers, pairs and pool candidates are
de-duplicated by text, so N copies collapse to one. Each copy here is a new, distinct paper made from a base
paper: a new id (``<id>~s<seed>c<copy>``), a date drawn from the base papers' dates (so copies spread over the
same months, and the split policy puts them in the same partitions in the same proportions), a title of its own
(assembly groups papers into works by title, and a copy that kept its base's title, or the title heading of its
text, would be routed with every other copy to the earliest partition), and a new text. The text keeps the base paper's layout (headings, tables, math and captions verbatim, so cleaning and
section filtering see what they see in a real paper) and the order of its sentences; each prose sentence of two
words or more past its first clause is recombined: its own head (at least up to its first comma, so a
sentence-initial discourse marker such as "To address this limitation," stays whole) joined to the tail of
another sentence of the same paper. Adjacent sentences stay adjacent, so a marker sentence still follows the
sentence before it and mining finds a pair there, with a query and gold that occur in no other copy.

Deterministic: the same base, factor and seed give byte-identical files.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ratio_bench.core.io import atomic_path
from ratio_bench.corpus.segmentation import split_sentences
from ratio_bench.corpus.sources import corpus_files

_BLOCK_SPLIT = re.compile(r"\n\s*\n")
_VERBATIM = re.compile(r"^\s*(?:#|\||\$\$|\\\[|\\begin|!\[|<|```|[-*+] |\d+\. )")
MIN_WORDS = 6  # shorter sentences are kept as they are
MIN_TAIL_WORDS = 4  # a tail joined to another sentence's head: long enough to be a clause, ending a sentence


@dataclass(frozen=True)
class ScaleSpec:
    factor: int
    seed: int = 0
    papers_per_file: int = 1000  # 1: one paper per file (a folder of parsed PDFs)
    row_group_papers: int = 100
    dates: tuple[str, ...] | None = None  # draw dates from these instead of the base's (e.g. one new month)


def base_sample(paths: list[str | Path], n: int, seed: int = 0, kind: str = "fulltext") -> pa.Table:
    """``n`` papers of ``kind`` from the shared-schema Parquet files under ``paths``, picked by a seeded hash
    of their id (so the sample is stable and spread over every file and date), in id-hash order."""
    tables = []
    for f in corpus_files(paths):
        if f.suffix != ".parquet":
            continue
        t = pq.read_table(f)
        if "kind" in t.column_names:
            t = t.filter(pa.compute.equal(t["kind"], kind))
        tables.append(t)
    table = pa.concat_tables(tables, promote_options="default") if tables else pa.table({})
    if table.num_rows == 0:
        raise ValueError(f"no {kind} papers under {', '.join(map(str, paths))}")
    order = sorted(range(table.num_rows), key=lambda i: _hash(f"{seed}:{table['id'][i].as_py()}"))
    return table.take(order[:n])


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _split_at(sentence: str) -> tuple[str, str]:
    """(head, tail) of a sentence at a word boundary: the head is its first clause (up to a comma in its first
    half, so a sentence-initial marker stays whole) and about half of the words after it."""
    words = sentence.split(" ")
    comma = next((i + 1 for i, w in enumerate(words[: len(words) // 2 + 1]) if w.endswith(",")), 0)
    cut = comma + max(1, (len(words) - comma) // 2)
    return " ".join(words[:cut]), " ".join(words[cut:])


def _usable_tail(tail: str) -> bool:
    return len(tail) >= 25 and len(tail.split(" ")) >= MIN_TAIL_WORDS and tail[-1] in ".?!"


def recombine(text: str, rng: random.Random) -> str:
    """A new text of the same layout and sentence order (see the module docstring)."""
    blocks = _BLOCK_SPLIT.split(text)
    prose = [i for i, b in enumerate(blocks) if b.strip() and not _VERBATIM.match(b)]
    sentences = {i: split_sentences(" ".join(blocks[i].split())) for i in prose}
    tails = [t for ss in sentences.values() for s in ss for t in [_split_at(s)[1]] if _usable_tail(t)]
    if not tails:
        return text
    for i in prose:
        out = []
        for s in sentences[i]:
            head, tail = _split_at(s)
            out.append(f"{head} {rng.choice(tails)}" if len(s.split(" ")) >= MIN_WORDS and tail else s)
        blocks[i] = " ".join(out)
    return "\n\n".join(blocks)


def scaled_rows(base: pa.Table, spec: ScaleSpec) -> Iterator[dict]:
    """The scaled corpus's records, copy by copy, base order within a copy."""
    rows = base.to_pylist()
    dates = list(spec.dates) if spec.dates else [r.get("date") for r in rows]
    for copy in range(spec.factor):
        for r in rows:
            rng = random.Random(f"{spec.seed}:{copy}:{r['id']}")  # str seeds are hashed stably (sha512)
            yield {
                **r,
                "id": f"{r['id']}~s{spec.seed}c{copy}",
                "title": f"{r.get('title') or r['id']} (scale copy s{spec.seed}c{copy})",
                "date": rng.choice(dates),
                "text": recombine(r.get("text") or "", rng),
            }


def write_scaled(base: pa.Table, spec: ScaleSpec, out_dir: str | Path) -> list[Path]:
    """Write the scaled corpus into ``out_dir`` as ``part-00000.parquet``, ... (each file atomically, in the
    base's schema); returns the files. A folder that already holds files is refused (nothing is overwritten)."""
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty; choose another --out or remove it")
    out.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([pa.field(f.name, pa.string()) for f in base.schema])
    files: list[Path] = []
    batch: list[dict] = []

    def flush() -> None:
        path = out / f"part-{len(files):05d}.parquet"
        with atomic_path(path) as tmp:
            pq.write_table(
                pa.Table.from_pylist(batch, schema=schema),
                tmp,
                row_group_size=spec.row_group_papers,
                compression="zstd",
            )
        files.append(path)
        batch.clear()

    for row in scaled_rows(base, spec):
        batch.append(row)
        if len(batch) >= spec.papers_per_file:
            flush()
    if batch:
        flush()
    return files
