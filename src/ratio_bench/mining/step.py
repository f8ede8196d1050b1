"""The mining stage as a datatrove pipeline step, so that the local, Slurm and Ray executors all run it.

Task ``rank`` processes the work units of its range ``tasks[rank]`` (consecutive units grouped up to a size, see
:func:`ratio_bench.mining.units.group_units`; one task per unit without ``tasks``) and writes one shard per output:
``pairs/{rank:05d}.parquet``, ``distractors/{rank:05d}.parquet``, ``rejects/{rank:05d}.jsonl`` and
``stats/{rank:05d}.json``. Every file is written atomically, and datatrove marks the task completed only after
they exist, so a killed run resumes by re-running just the unfinished tasks (which first remove the temporary
files a killed attempt left, see :mod:`ratio_bench.mining.outdir`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from datatrove.pipeline.base import PipelineStep
from loguru import logger
from tqdm import tqdm

from ratio_bench.core.io import RejectLog, write_json
from ratio_bench.core.shards import ShardWriter
from ratio_bench.corpus.cleaning import MIN_SENTENCE_CHARS, Cleaner
from ratio_bench.corpus.readers import PaperReader, ReaderSettings
from ratio_bench.lexicon import Lexicon
from ratio_bench.lexicon.model import default_lexicon_dir
from ratio_bench.mining.extract import MiningCounts, PairMiner
from ratio_bench.mining.outdir import remove_stale_temps, shard_paths
from ratio_bench.mining.schema import DISTRACTOR_SCHEMA, PAIR_SCHEMA
from ratio_bench.mining.units import TASK_BYTES, WorkUnit


@dataclass(frozen=True)
class MiningSettings:
    lexicon_dir: str | None = None
    reader: ReaderSettings = field(default_factory=ReaderSettings)
    lowercase: bool = True
    keep_case: bool = False
    min_chars: int = MIN_SENTENCE_CHARS
    progress: bool = True
    task_bytes: int = TASK_BYTES  # units are grouped into tasks up to this size (mining.units.group_units)


def _lexicon(directory: str | None) -> Lexicon:
    """One load per process while the lexicon's files are unchanged: datatrove runs each work unit as a fresh
    task (and copies the step for it), and a corpus at scale has thousands of units."""
    root = Path(directory) if directory else default_lexicon_dir()
    files = tuple(sorted((f.name, st.st_mtime_ns, st.st_size) for f in root.iterdir() for st in [f.stat()]))
    return _load_lexicon(str(root), files)


@lru_cache(maxsize=4)
def _load_lexicon(root: str, files: tuple) -> Lexicon:
    return Lexicon.load(root)


class MineUnits(PipelineStep):
    name = "ratio-mine"
    type = "Mining"

    def __init__(
        self,
        units: list[WorkUnit],
        out_dir: str | Path,
        settings: MiningSettings,
        tasks: list[tuple[int, int]] | None = None,
    ):
        super().__init__()
        self.units = units
        self.out_dir = Path(out_dir)
        self.settings = settings
        self.tasks = tasks if tasks is not None else [(i, i + 1) for i in range(len(units))]
        self.quiet_logs = False  # set by a local run without --verbose (see __setstate__)

    def __setstate__(self, state: dict) -> None:
        """A local run's worker processes unpickle the step before datatrove logs a task's start; silencing
        datatrove here keeps ``ratio mine run --workers N`` as quiet as one worker (whose process the CLI
        silences itself)."""
        self.__dict__.update(state)
        if state.get("quiet_logs"):
            logger.disable("datatrove")

    def units_of(self, rank: int, world_size: int) -> list[WorkUnit]:
        """The units task ``rank`` mines (of ``world_size`` tasks; several ranges each if there are fewer
        tasks than ranges)."""
        return [u for start, stop in self.tasks[rank::world_size] for u in self.units[start:stop]]

    def run(self, data=None, rank: int = 0, world_size: int = 1):
        start = time.perf_counter()
        s = self.settings
        lexicon = _lexicon(s.lexicon_dir)
        miner = PairMiner(
            lexicon,
            Cleaner(clause_markers=lexicon, lowercase=s.lowercase, min_chars=s.min_chars),
            keep_case=s.keep_case,
        )
        counts = MiningCounts()
        mine = self.units_of(rank, world_size)
        paths = shard_paths(self.out_dir, rank)
        remove_stale_temps(list(paths.values()))  # left by a killed attempt at this task
        pairs_w = ShardWriter(paths["pairs"], PAIR_SCHEMA)
        dist_w = ShardWriter(paths["distractors"], DISTRACTOR_SCHEMA)
        try:
            with RejectLog(paths["rejects"]) as rejects:
                reader = PaperReader(s.reader, rejects=rejects)
                for unit in mine:
                    papers = reader.read_file(Path(unit.path), unit.row_group)
                    bar = tqdm(
                        papers,
                        total=unit.rows,
                        unit=" papers",
                        leave=False,
                        desc=f"task {rank + 1}/{world_size} {unit.label}",
                        disable=not s.progress,
                    )
                    for paper in bar:
                        pairs: list = []
                        distractors: list = []
                        n = miner.mine_paper(paper, pairs, distractors, counts, rejects)
                        reader.report[paper.source_file].sentences += n
                        pairs_w.extend(pairs)
                        dist_w.extend(distractors)
                        self.stat_update("papers")
        except BaseException:
            pairs_w.abort()
            dist_w.abort()
            raise
        pairs_w.close()
        dist_w.close()
        write_json(
            paths["stats"],
            {
                "units": [u.label for u in mine],
                "corpus": reader.report.as_dict(),
                "mining": counts.as_dict(),
                "seconds": round(time.perf_counter() - start, 3),
            },
        )
        self.stat_update("pairs", value=pairs_w.count)
        self.stat_update("distractors", value=dist_w.count)
        return iter(())


def read_task_stats(out_dir: Path) -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted((out_dir / "stats").glob("*.json"))]
