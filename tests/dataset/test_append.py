"""``ratio dataset append``: new periods from new corpus files, every earlier file byte-identical."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.corpus import write_jsonl
from tests.helpers.dataset import SNAPSHOTS, build_snapshots, dated_paper, snapshot_records, write_config

from ratio_bench.dataset.build import build_release
from ratio_bench.dataset.check import check_release
from ratio_bench.dataset.config import load_config
from ratio_bench.dataset.contract import file_checksums


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A release with snapshots 2022-01 and 2022-02 (2022-03 left out), built once for the module."""
    root = tmp_path_factory.mktemp("append")
    (root / "corpus").mkdir()
    write_jsonl(root / "corpus" / "a.jsonl", snapshot_records())
    cfg = load_config(write_config(root / "cfg.yaml", root / "corpus", root / "work", snapshots=SNAPSHOTS))
    build_release(cfg, root / "ratio", progress=False)
    new = root / "new.jsonl"
    write_jsonl(
        new,
        [
            dated_paper(
                "s/apr", "2022-04-05", {"address": 3, "specify": 2}, 6, "April paper on dense indexes"
            ),
            dated_paper("s/may", "2022-05", {"address": 2}, 6, "May paper on long documents"),
            dated_paper("s/late", "2022-02-20", {"address": 2}, 1, "A late paper dated into February"),
            # the January paper's work again (same title), now dated April: already in the release
            dated_paper("s/jan-v2", "2022-04-20", {"address": 2}, 1, "January paper on sparse retrieval"),
        ],
    )
    return root


def test_append_adds_new_periods_and_keeps_every_file(base, tmp_path):
    release = tmp_path / "ratio"
    shutil.copytree(base / "ratio", release)
    before = json.loads((release / "manifest.json").read_text())
    run = run_ratio(
        "dataset",
        "append",
        "--dataset",
        release,
        "--corpus",
        base / "new.jsonl",
        "--version",
        "0.0.2-test",
        "--work-dir",
        tmp_path / "w",
        "--quiet",
    )
    assert run.code == 0, run.err
    assert "added test_2022_04, test_2022_05" in run.out
    after = json.loads((release / "manifest.json").read_text())
    now = file_checksums(release)
    kept = {f: sha for f, sha in before["files"].items() if f not in ("README.md",)}
    assert {f: now[f] for f in kept} == kept  # every earlier file byte for byte
    assert list(after["snapshots"]) == ["test_2022_01", "test_2022_02", "test_2022_04", "test_2022_05"]
    for split in ("test_2022_01", "test_2022_02"):
        assert after["snapshots"][split] == before["snapshots"][split]
    apr = after["snapshots"]["test_2022_04"]
    assert (apr["queries"], apr["candidates"], apr["golds"], apr["version"]) == (
        {"address": 2, "specify": 2},
        8,
        4,
        "0.0.2-test",
    )
    assert after["version"] == "0.0.2-test" and after["rows"]["corpus"]["test_2022_05"] == 8
    first, added = after["versions"]
    assert first == {"version": "0.0.1-test", "snapshots_added": ["test_2022_01", "test_2022_02"]}
    assert added["snapshots_added"] == ["test_2022_04", "test_2022_05"]
    assert added["corpus_files"][0]["name"] == "new.jsonl"
    assert {k: n for k, n in added["excluded"].items() if n} == {"known_work": 2, "late_for_closed_period": 2}
    assert all(c.passed for c in check_release(release))
    card = (release / "README.md").read_text()
    assert "- split: test_2022_05\n    path: data/corpus/test_2022_05-*.parquet" in card
    assert "| 2022-04 | `test_2022_04` | 2 | 0 | 2 | 8 | 1.0 |" in card and "(0.0.2-test)" in card
    # nothing new a second time: one line, the release unchanged
    again = run_ratio(
        "dataset",
        "append",
        "--dataset",
        release,
        "--corpus",
        base / "new.jsonl",
        "--version",
        "0.0.3-test",
        "--work-dir",
        tmp_path / "w2",
        "--quiet",
    )
    assert again.code == 0 and "no new period to add" in again.out, again.err
    assert file_checksums(release) == now


def test_check_fails_when_an_appended_snapshot_holds_a_test_paper(base, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    release = tmp_path / "ratio"
    shutil.copytree(base / "ratio", release)
    from ratio_bench.dataset.append import append_release

    append_release(release, [base / "new.jsonl"], "0.0.2-test", tmp_path / "w", progress=False)
    shard = next((release / "data" / "address").glob("test_2022_04-*.parquet"))
    test_row = pq.read_table(next((release / "data" / "address").glob("test-*.parquet"))).slice(0, 1)
    pq.write_table(pa.concat_tables([pq.read_table(shard), test_row]), shard)
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["files"] = file_checksums(release)
    (release / "manifest.json").write_text(json.dumps(manifest))
    failed = {c.name: c.detail for c in check_release(release) if not c.passed}
    assert "is also in test" in failed["snapshots disjoint"]


def test_append_refuses_a_bad_version_and_another_lexicon(base, tmp_path):
    release = tmp_path / "ratio"
    shutil.copytree(base / "ratio", release)
    args = (
        "dataset",
        "append",
        "--dataset",
        release,
        "--corpus",
        base / "new.jsonl",
        "--work-dir",
        tmp_path / "w",
    )
    assert_user_error(run_ratio(*args, "--version", "0.0.1-test"), "--version '0.0.1-test'", "new version")
    assert_user_error(run_ratio(*args, "--version", " "), "--version ' '")
    manifest = json.loads((release / "manifest.json").read_text())
    (release / "manifest.json").write_text(json.dumps(manifest | {"lexicon_sha256": "f" * 64}))
    assert_user_error(run_ratio(*args, "--version", "0.0.2"), "f" * 64, "lexicon")


def test_append_keeps_out_a_work_of_the_base_corpus_that_no_release_row_holds(tmp_path):
    """A work the release's corpus holds but none of its rows do (here a repost of February's text under its own
    title: its pairs and distractors de-duplicate into February's paper) has been public since February; its copy
    in a new file is excluded, as a rebuild would date the work by the earlier copy and keep it out of April."""
    import duckdb
    import pyarrow.parquet as pq

    from ratio_bench.dataset.append import append_release
    from ratio_bench.dataset.release import Release

    feb = next(r for r in snapshot_records() if r["id"] == "s/feb")
    repost = feb | {"id": "s/repost", "title": "A February preprint posted again", "date": "2022-02-20"}
    build_snapshots(tmp_path, [*snapshot_records(), repost], tmp_path / "ratio")
    held = {
        pid
        for config in ("address", "specify", "corpus")
        for split in Release.open(tmp_path / "ratio").splits(config)
        for pid in Release.open(tmp_path / "ratio").read(config, split, ["paper_id"]).column(0).to_pylist()
    }
    assert "s/repost" not in held  # the work is in the corpus, not in the release's rows
    index = pq.read_table(tmp_path / "ratio" / "reports" / "works-000.parquet").column("work_id").to_pylist()
    works = dict(
        duckdb.sql(
            f"SELECT DISTINCT paper_id, work_id FROM read_parquet('{tmp_path}/ratio/data/*/*.parquet', "
            "union_by_name = true) WHERE paper_id IS NOT NULL"
        ).fetchall()
    )
    assert works["s/feb"] in index and works["s/jan"] in index
    assert works["s/mar"] not in index  # March is left out: its period is still open to a later append
    new = tmp_path / "new.jsonl"
    write_jsonl(
        new,
        [
            dated_paper(
                "s/apr", "2022-04-05", {"address": 3, "specify": 2}, 6, "April paper on dense indexes"
            ),
            dated_paper("s/repost-v2", "2022-04-12", {"address": 2}, 1, "A February preprint, posted again"),
        ],
    )
    report = append_release(tmp_path / "ratio", [new], "0.0.2-test", tmp_path / "w", progress=False)
    assert report["snapshots_added"] == ["test_2022_04"]
    assert report["excluded"]["known_work"] == 2
    corpus = Release.open(tmp_path / "ratio").corpus("test_2022_04", ["paper_id"]).column(0).to_pylist()
    assert "s/repost-v2" not in corpus and "s/apr" in corpus


def test_append_refuses_a_release_without_a_works_index(base, tmp_path):
    release = tmp_path / "ratio"
    shutil.copytree(base / "ratio", release)
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["files"] = {f: s for f, s in manifest["files"].items() if not f.startswith("reports/works-")}
    (release / "manifest.json").write_text(json.dumps(manifest))
    run = run_ratio(
        "dataset", "append", "--dataset", release, "--corpus", base / "new.jsonl", "--version", "0.0.2-test"
    )
    assert_user_error(run, "records no works index", "rebuild the release")


@pytest.mark.slow  # ~5 s (two appends); make test-all runs it
def test_through_holds_a_partial_month_back_for_the_next_append(base, tmp_path):
    """The new files reach into May, but are complete only to April's end: May waits, and a later append adds
    it (a period once appended is closed, so a half month must not be)."""
    release = tmp_path / "ratio"
    shutil.copytree(base / "ratio", release)

    def append(version: str, *more) -> dict:
        run = run_ratio(
            "dataset", "append", "--dataset", release, "--corpus", base / "new.jsonl", "--version", version,
            "--work-dir", tmp_path / version, "--quiet", *more,
        )  # fmt: skip
        assert run.code == 0, run.err
        return json.loads((release / "manifest.json").read_text())

    first = append("0.0.2-test", "--through", "2022-04-30")
    assert list(first["snapshots"])[-1] == "test_2022_04"
    second = append("0.0.3-test")
    assert list(second["snapshots"])[-2:] == ["test_2022_04", "test_2022_05"]
    assert second["snapshots"]["test_2022_04"] == first["snapshots"]["test_2022_04"]
    assert second["snapshots"]["test_2022_05"]["version"] == "0.0.3-test"
    too_early = run_ratio(
        "dataset", "append", "--dataset", release, "--corpus", base / "new.jsonl", "--version", "9",
        "--through", "2022-05-15",
    )  # fmt: skip
    assert_user_error(too_early, "--through 2022-05-15", "already run to 2022-05-31")
