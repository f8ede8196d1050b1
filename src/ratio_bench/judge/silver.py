"""The silver test split (spec 4.3): a stratified sample of test pairs kept only if both judge prompts accept.

Sampling allocates the relation's sample size equally across markers, capped at each marker's size (markers
too small for their share give the rest to the others), and picks pairs within a marker by a seeded hash, so
frequent markers do not dominate and the same seed always draws the same pairs. Each sampled pair is judged by
the relation's two prompts on the input "query. marker, gold"; a pair is kept only if both return
``decision: true``. The split is written next to ``test`` in the release (``data/<relation>/silver-*``, with
qrels), every per-prompt verdict is written to ``judgments/`` for audit, and the card and manifest record the
judge model, its settings and the prompt versions. Nothing is written unless every request was judged or
recorded invalid: a run with failed requests stops and can simply be re-run (cached replies are not re-sent).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ratio_bench.core.io import (
    MANIFEST,
    atomic_path,
    folder_lock,
    link_or_copy,
    prepare_output_dir,
    staged_dir,
    write_json,
)
from ratio_bench.core.relations import RELATIONS
from ratio_bench.dataset.config import SilverSettings
from ratio_bench.dataset.contract import (
    JUDGMENTS,
    KEEP,
    KIND,
    SILVER,
    configs_yaml,
    dataset_info_yaml,
    file_checksums,
)
from ratio_bench.dataset.release import Release
from ratio_bench.judge.job import JobEstimate, JudgeJob, estimate, execute
from ratio_bench.llm.client import Judge, JudgeRequest, JudgeSettings, Outcome
from ratio_bench.llm.prompts import Prompt, get_prompt

if TYPE_CHECKING:
    from ratio_bench.llm.batch import BatchJudge

VERDICT_SCHEMA = pa.schema(
    [
        ("query_id", pa.string()),
        ("prompt", pa.string()),  # <prompt id>@v<version>/silver
        ("status", pa.string()),  # ok | invalid
        ("decision", pa.bool_()),  # null when invalid
        ("confidence", pa.float64()),
        ("reason", pa.string()),
        ("raw_reply", pa.string()),  # the unusable reply, kept for audit
    ]
)
SECTION = re.compile(r"<!-- silver -->.*?<!-- /silver -->", re.DOTALL)


def _rank(seed: int, value: str) -> str:
    return hashlib.md5(f"{seed}:{value}".encode()).hexdigest()


def equal_allocation(sizes: dict[str, int], n: int | None, seed: int) -> dict[str, int]:
    """Per-stratum sample sizes: equal shares capped at each stratum's size, the remainder redistributed."""
    total = sum(sizes.values())
    if n is None or n >= total:
        return dict(sizes)
    alloc = dict.fromkeys(sizes, 0)
    remaining = n
    open_ = sorted(sizes, key=lambda m: _rank(seed, m))
    while remaining > 0 and open_:
        share = remaining // len(open_)
        if share == 0:  # fewer units left than strata: one more each, in seeded order
            for m in open_[:remaining]:
                alloc[m] += 1
            break
        for m in open_:
            take = min(share, sizes[m] - alloc[m])
            alloc[m] += take
            remaining -= take
        open_ = [m for m in open_ if alloc[m] < sizes[m]]
    return alloc


def stratified_sample(ids: list[str], strata: list[str], n: int | None, seed: int) -> list[str]:
    """Ids chosen by equal allocation across strata; within a stratum by seeded hash order. Sorted."""
    by_stratum: dict[str, list[str]] = {}
    for i, s in zip(ids, strata, strict=True):
        by_stratum.setdefault(s, []).append(i)
    alloc = equal_allocation({s: len(v) for s, v in by_stratum.items()}, n, seed)
    chosen = [i for s, v in by_stratum.items() for i in sorted(v, key=lambda x: _rank(seed, x))[: alloc[s]]]
    return sorted(chosen)


def silver_input(query: str, marker: str, gold: str) -> dict[str, str]:
    """Fields of the silver prompts' input "S1. marker, S2" (the query's own final period is not doubled)."""
    return {"query": query.rstrip().rstrip("."), "marker": marker, "gold": gold}


def _write_parquet(table: pa.Table, path: Path) -> None:
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")


@dataclass
class SilverPlan:
    relation: str
    table: pa.Table  # the sampled test rows
    prompts: list[Prompt]
    test_pairs: int  # size of the relation's test split the sample was drawn from

    def requests(self) -> list[JudgeRequest]:
        rows = self.table.select(["query", "marker", "gold"]).to_pylist()
        return [
            JudgeRequest(p.messages("silver", **silver_input(r["query"], r["marker"], r["gold"])), p.output)
            for p in self.prompts
            for r in rows
        ]


def plan_silver(root: Path | Release, settings: SilverSettings) -> list[SilverPlan]:
    release = root if isinstance(root, Release) else Release.open(root)
    plans = []
    for rel in RELATIONS:
        test = release.queries(rel, "test")
        if test.num_rows == 0:
            continue
        ids = test.column("query_id").to_pylist()
        chosen = stratified_sample(
            ids, test.column("marker").to_pylist(), settings.sample[rel], settings.seed
        )
        sampled = test.filter(pc.is_in(test.column("query_id"), pa.array(chosen))).sort_by("query_id")
        plans.append(
            SilverPlan(rel, sampled, [get_prompt(pid) for pid in settings.prompts[rel]], test.num_rows)
        )
    return plans


def _verdict_table(plan: SilverPlan, outcomes: list[Outcome]) -> pa.Table:
    n = plan.table.num_rows
    ids = plan.table.column("query_id").to_pylist()
    rows = []
    for j, prompt in enumerate(plan.prompts):
        for i in range(n):
            o = outcomes[j * n + i]
            v = o.verdict
            rows.append(
                {
                    "query_id": ids[i],
                    "prompt": prompt.ref("silver"),
                    "status": o.status,
                    "decision": v.decision if v else None,
                    "confidence": v.confidence if v else None,
                    "reason": v.reason if v else "",
                    "raw_reply": o.raw if o.status == "invalid" else "",
                }
            )
    return pa.Table.from_pylist(rows, schema=VERDICT_SCHEMA)


class SilverJob(JudgeJob):
    """The silver split of a release: its sampled test pairs, each judged by the relation's two prompts."""

    name, output = "silver", "silver split"

    def __init__(self, root: Path | Release, settings: SilverSettings, judge: JudgeSettings):
        self.release = root if isinstance(root, Release) else Release.open(root)
        prepare_output_dir(self.release.root, KIND, keep=KEEP)  # before paying for a single request
        self.settings, self.judge = settings, judge
        self.plans = plan_silver(self.release, settings)
        self.sizes: dict[str, dict[str, Any]] = {}

    def plan(self) -> list[str]:
        return [
            f"{p.relation}: {p.table.num_rows:,} of {p.test_pairs:,} test pairs x {len(p.prompts)} prompts "
            f"({', '.join(q.ref('silver') for q in p.prompts)})"
            for p in self.plans
        ]

    def requests(self) -> list[JudgeRequest]:
        return [r for p in self.plans for r in p.requests()]

    def write(self, outcomes: list[Outcome], est: JobEstimate) -> list[str]:
        """The silver split, verdicts, card section and manifest, swapped in (in that order)."""
        root, release = self.release.root, self.release
        manifest = json.loads(json.dumps(release.manifest))  # a copy: the release object stays as it was read
        with staged_dir(root, KIND, keep=KEEP) as stage:
            _link_release(root, stage, release.own_files())
            self.sizes = _write_silver(stage, self.plans, outcomes, manifest)
            manifest["silver"] = _provenance(self.judge, self.plans, self.settings, self.sizes)
            _update_card(stage, manifest)
            manifest["files"] = file_checksums(stage)
            write_json(stage / MANIFEST, manifest)
        return [
            f"  {rel:8s} test {s['test_pairs']:,} -> sampled {s['sampled']:,} -> kept {s['kept']:,} "
            f"(accepted per prompt: {', '.join(map(str, s['accepted_by_prompt'].values()))}; "
            f"invalid {s['invalid']})"
            for rel, s in self.sizes.items()
        ] + [f"silver split written to {root}/data/<relation>/silver-*.parquet"]


def run_silver(
    root: Path, settings: SilverSettings, judge: Judge, batch_judge: BatchJudge | None = None
) -> dict[str, Any]:
    """The silver job without the command's messages: the report says whether it was written, and its sizes.
    The release's write lock is held from reading it to the swap (``core.io.folder_lock``)."""
    with folder_lock(root, "ratio judge silver"):
        job = SilverJob(root, settings, judge.settings)
        requests = job.requests()
        result = execute(
            job, requests, estimate(requests, judge, None, batch_judge is not None), judge, batch_judge
        )
    report: dict[str, Any] = {
        "requests_by_status": result.by_status,
        "judge_run": judge.summary(),
        "complete": result.complete,
    }
    return report | ({"sizes": job.sizes} if result.complete else {})


def _provenance(
    judge: JudgeSettings, plans: list[SilverPlan], settings: SilverSettings, sizes: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """The manifest's ``silver`` record: the acceptance rule, the judge, its prompts, the sampling, the sizes."""
    return {
        "rule": "kept only if both prompts accept (decision true); invalid replies count as rejections",
        "judge": judge.describe(),
        "prompts": {
            p.ref("silver"): {"relation": p.relation, "sha256": p.sha256}
            for plan in plans
            for p in plan.prompts
        },
        "sampling": {
            "sample": settings.sample,
            "seed": settings.seed,
            "allocation": "equal across markers, capped",
        },
        "sizes": sizes,
    }


def _link_release(root: Path, stage: Path, files: list[str]) -> None:
    """The release's own files into ``stage`` as hard links (copies where links are impossible): the new
    release shares the unchanged files' bytes, and the old one stays whole until the swap."""
    for rel in files:
        link_or_copy(root / rel, stage / rel, follow_symlinks=False)


def _write_silver(
    stage: Path, plans: list[SilverPlan], outcomes: list[Outcome], manifest: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """Each plan's kept pairs (and qrels) as the silver split and its verdicts in ``judgments/``, into
    ``stage``; updates ``manifest``'s row counts and returns the sizes the card and manifest record."""
    sizes: dict[str, dict[str, Any]] = {}
    offset = 0
    for plan in plans:
        n_req = plan.table.num_rows * len(plan.prompts)
        verdicts = _verdict_table(plan, outcomes[offset : offset + n_req])
        offset += n_req
        ids = verdicts.column("query_id").to_pylist()
        prompt_refs = verdicts.column("prompt").to_pylist()
        accepted = pc.and_(
            pc.equal(verdicts.column("status"), "ok"), pc.fill_null(verdicts.column("decision"), False)
        ).to_pylist()
        votes = Counter(q for q, a in zip(ids, accepted, strict=True) if a)
        kept_ids = {q for q, n in votes.items() if n == len(plan.prompts)}
        kept = plan.table.filter(
            pc.is_in(plan.table.column("query_id"), pa.array(sorted(kept_ids), pa.string()))
        )
        rel = plan.relation
        qrels = pa.table(
            {
                "query-id": kept.column("query_id"),
                "corpus-id": kept.column("gold_id"),
                "score": pa.array([1] * kept.num_rows, pa.int32()),
            }
        )
        queries = kept.select(["query_id", "query"]).rename_columns(["id", "text"])
        for config, table in ((rel, kept), (f"{rel}-qrels", qrels), (f"{rel}-queries", queries)):
            for stale in (stage / "data" / config).glob(f"{SILVER}-*.parquet"):
                stale.unlink()  # the staging folder's link: the release in place keeps its file
            # an empty split is left out, as ``ratio dataset build`` does (datasets cannot load one)
            if table.num_rows:
                _write_parquet(table, stage / "data" / config / f"{SILVER}-00000-of-00001.parquet")
        kept_col = pa.array([q in kept_ids for q in ids])
        _write_parquet(
            verdicts.append_column("pair_kept", kept_col), stage / JUDGMENTS / f"silver-{rel}.parquet"
        )
        per_prompt = Counter(ref for ref, a in zip(prompt_refs, accepted, strict=True) if a)
        sizes[rel] = {
            "test_pairs": plan.test_pairs,
            "sampled": plan.table.num_rows,
            "accepted_by_prompt": {p.ref("silver"): per_prompt[p.ref("silver")] for p in plan.prompts},
            "invalid": verdicts.column("status").to_pylist().count("invalid"),
            "kept": kept.num_rows,
        }
        for config in (rel, f"{rel}-qrels", f"{rel}-queries"):
            manifest["rows"].setdefault(config, {})[SILVER] = kept.num_rows
    return sizes


def _silver_section(info: dict[str, Any]) -> str:
    judge = info["judge"]
    lines = [
        "<!-- silver -->",
        "## Silver test set",
        "",
        "The primary evaluation set (spec 4.3): test pairs sampled with equal allocation across markers, each "
        "judged by two prompts on the input *query. marker, gold*; a pair is kept only if both prompts accept it. "
        "Silver queries retrieve from the `test` corpus. Per-prompt verdicts are in `judgments/`.",
        "",
        f"Judge model: `{judge['model']}`; settings: temperature {judge['temperature']}, max tokens "
        f"{judge['max_tokens']}, JSON mode {judge['json_mode']}, extra {json.dumps(judge['params'], sort_keys=True)}.",
        "",
        "| relation | test pairs | sampled | "
        + " | ".join(["prompt 1 accepts", "prompt 2 accepts"])
        + " | invalid | kept |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for rel, s in info["sizes"].items():
        acc = list(s["accepted_by_prompt"].items())
        lines.append(
            f"| {rel} | {s['test_pairs']:,} | {s['sampled']:,} | "
            + " | ".join(f"{n:,} (`{ref}`)" for ref, n in acc)
            + f" | {s['invalid']:,} | {s['kept']:,} |"
        )
    lines += ["", "<!-- /silver -->"]
    return "\n".join(lines)


def _update_card(root: Path, manifest: dict[str, Any]) -> None:
    card = root / "README.md"
    text = card.read_text(encoding="utf-8")
    head_end = text.index("\n---\n", 4)
    header, body = text[:head_end], text[head_end:]
    header = (
        header[: header.index("configs:\n")]
        + configs_yaml(manifest["rows"])
        + "\n"
        + dataset_info_yaml(root, manifest["rows"])
    )
    section = _silver_section(manifest["silver"])
    body = (
        SECTION.sub(lambda _: section, body)
        if SECTION.search(body)
        else body.rstrip("\n") + "\n\n" + section + "\n"
    )
    with atomic_path(card) as tmp:
        tmp.write_text(header + body, encoding="utf-8")
