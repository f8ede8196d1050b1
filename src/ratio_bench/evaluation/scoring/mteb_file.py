"""What the Ratio MTEB tasks say, once, and ``eval/mteb/ratio_retrieval.py`` (the tasks as a pull request to mteb)
rendered from it.

The package's task classes (:mod:`.mteb_tasks`) and the standalone file an mteb user copies (it imports mteb only,
never ratio_bench) are two forms of the same tasks: one :class:`~ratio_bench.core.relations.Relation` per
relation gives a task and its Mini and Latest versions in both. This module holds their shared metadata and
:func:`render_task_file`, which writes the file's text from :data:`RELATION_SPECS`; ``make generate``
(``python -m ratio_bench.evaluation.generated``) writes it and a test keeps the committed file equal to the
render. It imports no mteb, so the file can be regenerated without the ``eval`` extra.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

from ratio_bench.core.relations import RELATION_SPECS, Relation
from ratio_bench.dataset.contract import MINI

# The published release (``ratio dataset publish`` tags it with its version); a task for another release or a local
# folder is made by mteb_tasks.ratio_tasks(dataset_path=..., revision=...).
HUB_DATASET = {"path": "ratio-bench/ratio", "revision": "1.0.0"}
_BIBTEX_LINES = (  # as the file writes it
    "@misc{ratio2026, title = {Ratio: A Benchmark for Retrieval Across Typed Ideation Operations in ",
    "Scientific Literature}, year = {2026}}",
)
BIBTEX = "".join(_BIBTEX_LINES)
REFERENCE = "https://github.com/ratio-bench/ratio"
# Every task's metadata but its name, description and eval_langs (the hf_subset: the relation), in the file's order.
COMMON: dict[str, Any] = {
    "reference": REFERENCE,
    "dataset": HUB_DATASET,
    "type": "Retrieval",
    "category": "t2t",
    "modalities": ["text"],
    "eval_splits": ["test"],
    "main_score": "mrr_at_10",
    "date": ("2015-01-01", "2026-05-05"),
    "domains": ["Academic", "Written"],
    "task_subtypes": [],
    "license": "not specified",
    "annotations_creators": "derived",
    "dialect": [],
    "sample_creation": "found",
    "bibtex_citation": BIBTEX,
}
MINI_NOTE = (
    " Mini: a seeded sample of the test split (up to 200 queries per relation) against a 5,000-candidate pool "
    "drawn from the test pool, for a quick look; not comparable with test figures."
)
LATEST_NOTE = (
    " Latest: the newest dated test snapshot, queries and candidates from papers of one recent month."
)
# The published release's latest test snapshot per relation (set with HUB_DATASET's revision at publishing; a
# relation's snapshots need not end in the same month). A relation not published yet has none, and no Latest task.
# mteb_tasks.ratio_benchmark(release) reads a local release's own.
LATEST_SNAPSHOTS = {"address": "test_2026_06", "broaden": "test_2026_05", "specify": "test_2026_06"}
BENCHMARK_NAME = "Ratio"
_COUNTS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def count_word(n: int) -> str:
    return _COUNTS[n] if n < len(_COUNTS) else str(n)


def benchmark_description(specs: Sequence[Relation] = RELATION_SPECS) -> str:
    """The benchmark's description: each relation's ``move_phrase``, and how many tasks there are."""
    phrases = [s.move_phrase for s in specs]
    moves = ", ".join(phrases[:-1]) + " or " + phrases[-1] if len(phrases) > 1 else phrases[0]
    return (
        "Ratio (Retrieval Across Typed Ideation Operations): given a sentence from a scientific paper, retrieve a "
        f"sentence from other papers that {moves}. {count_word(len(specs)).capitalize()} tasks on the test "
        "split, their mini versions for fast checks, and each task's latest dated test snapshot, whose queries "
        "come from papers newer than most models' training data."
    )


def common_metadata() -> dict[str, Any]:
    """A fresh copy of :data:`COMMON` (each task's metadata owns its lists)."""
    return copy.deepcopy(COMMON)


# --- the standalone file ----------------------------------------------------------------------------------------

WIDTH = 109  # a wrapped string's lines, after their indent (the committed file's wrapping)

_DOCSTRING = '''"""Ratio (Retrieval Across Typed Ideation Operations): {count} scientific-retrieval tasks, one per ideation move.

To contribute: copy this file to mteb/tasks/retrieval/eng/ratio_retrieval.py, import its task classes in that
folder's __init__.py, and set "revision" to the commit of the published release. The release's card declares
the configs mteb's stock RetrievalDatasetLoader reads for hf_subset <relation>: <relation>-queries,
<relation>-corpus (the shared candidate corpus) and <relation>-qrels; no custom loader is needed. Copy
descriptive_stats/Retrieval/*.json beside this file to mteb/descriptive_stats/Retrieval/, and RATIO (the
benchmark) to mteb/benchmarks/benchmarks/. The Latest tasks score each relation's newest dated test snapshot
(set their splits with the revision); the Mini tasks ({first}Mini, ...) score the release's mini split (their
statistics: ratio_bench.evaluation.scoring.mteb_tasks.write_descriptive_stats).
"""

from mteb import Benchmark
from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.abstasks.task_metadata import TaskMetadata
'''


def _py(value: Any) -> str:
    """A literal as the file writes it: double-quoted strings, lists and tuples spelled out."""
    if isinstance(value, tuple):
        return "(" + ", ".join(map(_py, value)) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(map(_py, value)) + "]"
    return json.dumps(value)


def _wrapped(indent: str, prefix: str, text: str, end: str = "") -> list[str]:
    """``text`` as adjacent string literals, words filled up to :data:`WIDTH` characters after ``indent``;
    ``prefix`` opens the first line (``description=``), ``end`` closes the last (``,``)."""
    first, *rest = text.split(" ")
    lines, line = [], first
    for word in rest:
        lead = prefix if not lines else ""
        if line and len(lead + _py(f"{line} {word} ")) > WIDTH:
            lines.append(lead + _py(line + " "))
            line = word
        else:
            line += " " + word
    lines.append((prefix if not lines else "") + _py(line))
    return [indent + text_line for text_line in lines[:-1]] + [indent + lines[-1] + end]


def _constant(name: str, text: str) -> list[str]:
    """``NAME = "text"`` on one line when it fits, else its literals in parentheses."""
    if len(f"{name} = {_py(text)}") <= WIDTH:
        return [f"{name} = {_py(text)}"]
    return [f"{name} = (", *_wrapped("    ", "", text), ")"]


def _task_class(spec: Relation, suffix: str, description: list[str], splits: str | None) -> list[str]:
    common = "**_COMMON," if splits is None else f'**(_COMMON | {{"eval_splits": {_py([splits])}}}),'
    return [
        f"class {spec.task_name}{suffix}(AbsTaskRetrieval):",
        "    metadata = TaskMetadata(",
        f'        name="{spec.task_name}{suffix}",',
        *description,
        f'        eval_langs={{"{spec.name}": ["eng-Latn"]}},',
        f"        {common}",
        "    )",
    ]


def _blocks(*blocks: list[str]) -> list[str]:
    """Top-level blocks two blank lines apart."""
    out: list[str] = []
    for block in blocks:
        out += ([""] * 2 if out else []) + block
    return out


def render_task_file(specs: Sequence[Relation] = RELATION_SPECS) -> str:
    """The text of ``eval/mteb/ratio_retrieval.py`` for ``specs``: a task per relation on the test split, its
    Mini task (the release's mini split) and, where :data:`LATEST_SNAPSHOTS` has it, its Latest task, and the
    benchmark over all of them."""
    head = [
        *_DOCSTRING.format(count=count_word(len(specs)), first=specs[0].task_name).splitlines(),
        "",
        f"_DATASET = {_py(HUB_DATASET)}",
        "_BIBTEX = (",
        *[f"    {_py(line)}" for line in _BIBTEX_LINES],
        ")",
        "_COMMON = dict(",
        *[f"    {key}={_COMMON_NAMES.get(key) or _py(value)}," for key, value in COMMON.items()],
        ")",
    ]
    tasks = [
        _task_class(s, "", _wrapped("        ", "description=", s.description, ","), None) for s in specs
    ]
    minis = [_task_class(s, "Mini", [_derived(s, "_MINI")], MINI) for s in specs]
    latest = [
        _task_class(s, "Latest", [_derived(s, "_LATEST")], LATEST_SNAPSHOTS[s.name])
        for s in specs
        if s.name in LATEST_SNAPSHOTS
    ]
    names = [s.task_name + suffix for suffix in ("", "Mini") for s in specs]
    names += [s.task_name + "Latest" for s in specs if s.name in LATEST_SNAPSHOTS]
    benchmark = [
        "RATIO = Benchmark(",
        f'    name="{BENCHMARK_NAME}",',
        "    tasks=[",
        *[f"        {name}()," for name in names],
        "    ],  # fmt: skip",
        *_wrapped("    ", "description=", benchmark_description(specs), ","),
        f"    reference={_py(REFERENCE)},",
        "    citation=_BIBTEX,",
        f"    benchmark_hf_repo={_py(HUB_DATASET['path'])},",
        ")",
    ]
    body = _blocks(
        head,
        *tasks,
        _constant("_MINI", MINI_NOTE),
        *minis,
        _constant("_LATEST", LATEST_NOTE),
        *latest,
        benchmark,
    )
    return "\n".join(body) + "\n"


_COMMON_NAMES = {"dataset": "_DATASET", "bibtex_citation": "_BIBTEX"}  # written by name in the file


def _derived(spec: Relation, note: str) -> str:
    return f"        description={spec.task_name}.metadata.description + {note},"
