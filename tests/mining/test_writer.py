import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ratio_bench.core.shards import ShardWriter

SCHEMA = pa.schema([("text", pa.string()), ("n", pa.int32())])


def rows(start: int, stop: int) -> list[dict]:
    return [{"text": f"sentence {i}", "n": i} for i in range(start, stop)]


def test_groups_are_written_in_order_and_the_file_appears_on_close(tmp_path):
    path = tmp_path / "shard.parquet"
    w = ShardWriter(path, SCHEMA, rows_per_group=3)
    for a in range(0, 10, 2):
        w.extend(rows(a, a + 2))
    assert not path.exists()
    w.close()
    table = pq.read_table(path)
    assert table.column("n").to_pylist() == list(range(10))
    assert w.count == 10
    # flushed whenever the buffer reaches 3 rows: 4 + 4, then the last 2 on close
    meta = pq.ParquetFile(path).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [4, 4, 2]


def test_background_write_is_byte_identical_to_a_synchronous_one(tmp_path):
    w = ShardWriter(tmp_path / "a.parquet", SCHEMA, rows_per_group=5)
    for a in range(0, 23):
        w.extend(rows(a, a + 1))
    w.close()
    sync = pq.ParquetWriter(tmp_path / "b.parquet", SCHEMA, compression="zstd")
    for a in range(0, 23, 5):
        sync.write_table(pa.Table.from_pylist(rows(a, min(a + 5, 23)), schema=SCHEMA))
    sync.close()
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


def test_a_failed_background_write_is_raised_and_leaves_no_file(tmp_path):
    path = tmp_path / "bad.parquet"
    w = ShardWriter(path, SCHEMA, rows_per_group=2)
    w.extend([{"text": "fine", "n": 1}, {"text": "bad", "n": "not a number"}])
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError)):
        w.extend(rows(0, 2))  # the next flush waits on the failed one
    w.abort()
    assert not path.exists()
    assert not list(tmp_path.iterdir())


def test_a_write_failing_at_close_removes_the_partial_file(tmp_path):
    path = tmp_path / "bad.parquet"
    w = ShardWriter(path, SCHEMA, rows_per_group=100)
    w.extend([{"text": "bad", "n": "not a number"}])
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError)):
        w.close()
    w.abort()  # what a caller's cleanup does next: harmless
    assert not list(tmp_path.iterdir())
