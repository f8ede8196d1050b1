"""Where a tuned model's train-partition cut-off comes from when the manifest records no partition end."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
from tests.helpers.training import write_release

from ratio_bench.training.data import train_partition_cutoff


def test_without_a_partition_end_the_latest_work_date_of_the_train_queries_bounds_it(tmp_path):
    release = write_release(tmp_path / "release", n_train=4, n_val=2, n_distractors=2)
    assert train_partition_cutoff(release, ["address"]).date is None  # no end, no work dates: unknown
    shard = release / "data" / "address" / "train-00000-of-00001.parquet"
    days = [dt.date(2022, 1, 5), dt.date(2023, 2, 1), dt.date(2021, 7, 9), dt.date(2022, 12, 31)]
    pq.write_table(pq.read_table(shard).append_column("work_date_end", pa.array(days, pa.date32())), shard)
    cutoff = train_partition_cutoff(release, ["address"])
    assert cutoff.date == dt.date(2023, 2, 1) and "work_date_end" in cutoff.source
