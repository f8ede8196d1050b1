"""Custody: the newest snapshot withheld from the public release, checked, and released after its embargo."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.corpus import SHARED_CORPUS, write_jsonl
from tests.helpers.custody import corpus_sample, sample_config
from tests.helpers.dataset import SNAPSHOTS, dated_paper, snapshot_records, write_config

from ratio_bench.dataset.check import check_release
from ratio_bench.dataset.contract import file_checksums, split_sha256
from ratio_bench.dataset.custody import Custody, check_custody, custody_path, leak_scan, public_haystack
from ratio_bench.dataset.release import Release

WITHHELD = "test_2025_09"


@pytest.fixture(scope="module")
def sampled(tmp_path_factory) -> Path:
    """A release built by the CLI with ``--withhold newest`` from a six-month sample of ../shared/corpus."""
    if not SHARED_CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {SHARED_CORPUS} (set RATIO_SHARED_CORPUS)")
    shared = SHARED_CORPUS
    root = tmp_path_factory.mktemp("custody")
    corpus_sample(shared, root / "corpus" / "sample.parquet")
    run = run_ratio(
        "dataset", "build", "--config", sample_config(root, root / "corpus"), "--out", root / "ratio",
        "--withhold", "newest", "--quiet",
    )  # fmt: skip
    assert run.code == 0, run.err
    assert f"withheld {WITHHELD} -> {root / 'ratio.custody'}" in run.out
    return root / "ratio"


@pytest.fixture
def copy(sampled: Path, tmp_path: Path) -> Path:
    shutil.copytree(sampled, tmp_path / "ratio")
    shutil.copytree(custody_path(sampled), tmp_path / "ratio.custody")
    return tmp_path / "ratio"


def test_public_release_keeps_the_name_sizes_and_dates_and_nothing_else(sampled):
    release = Release.open(sampled)
    manifest = release.manifest
    record = manifest["withheld"][WITHHELD]
    assert (record["period"], record["start"], record["end"]) == ("2025-09", "2025-09-01", "2025-09-30")
    assert record["embargo_until"] == "2025-10-30" and record["candidates"] == 120
    assert WITHHELD not in manifest["snapshots"] and all(WITHHELD not in s for s in manifest["rows"].values())
    assert not [f for f in manifest["files"] if WITHHELD in f]
    assert not list(sampled.rglob(f"*{WITHHELD}*"))
    assert WITHHELD not in release.all_splits and list(release.snapshots) == ["test_2025_07", "test_2025_08"]
    card = (sampled / "README.md").read_text()
    assert f"`{WITHHELD}` (withheld until 2025-10-30)" in card and f"split: {WITHHELD}" not in card
    custody = Custody.open(custody_path(sampled))
    assert custody.withheld == manifest["withheld"]
    assert record["sha256"] == split_sha256(custody.manifest["files"], WITHHELD)
    held = pq.read_table(custody.root / f"data/corpus/{WITHHELD}-00000-of-00001.parquet")
    assert held.num_rows == 120
    # the public test split lost the withheld month's rows (it held every test-period pair before)
    test = Release.open(sampled).queries("address", "test", ["work_date_start"]).column(0).to_pylist()
    assert test and max(test).isoformat() < "2025-09-01"


def test_no_withheld_text_in_any_public_file(sampled):
    """Every public file (bytes, Parquet values decompressed, card, manifest, reports) x every withheld text."""
    custody = Custody.open(custody_path(sampled))
    texts, ids = custody.texts()
    public = sorted(p for p in sampled.rglob("*") if p.is_file())
    hits = [(p.name, t[:30]) for p in public for hay in [public_haystack(p)] for t in texts | ids if t in hay]
    print(
        f"leak test: {len(public)} public files x {len(texts)} withheld texts + {len(ids - texts)} ids: {len(hits)} hits"
    )
    assert len(public) > 30 and len(texts) > 100 and hits == []
    assert {p.suffix for p in public} >= {".parquet", ".json", ".md"}
    scan = leak_scan(sampled, custody)
    assert (scan.files, scan.texts, scan.hits) == (len(public), len(texts), [])


def test_check_names_the_custody_checks_and_catches_a_leak_and_a_foreign_custody(copy, tmp_path):
    run = run_ratio("dataset", "check", copy)
    assert run.code == 0, run.out
    for name in ("custody: goes with the release", "custody: checksums", "custody: merged golds in their corpus",
                 "custody: no withheld text in a public file"):  # fmt: skip
        assert name in run.out
    custody = Custody.open(custody_path(copy))
    text = sorted(custody.texts()[0])[0]
    report = copy / "reports" / "assembly.json"
    report.write_text(report.read_text() + "\n" + text)  # a withheld sentence planted in a public file
    results = {c.name: c for c in check_custody(copy)}
    leak = results["custody: no withheld text in a public file"]
    assert not leak.passed and "1 hits, e.g. reports/assembly.json" in leak.detail
    # a custody folder that is not this release's
    other = tmp_path / "other.custody"
    shutil.copytree(custody_path(copy), other)
    manifest = json.loads((other / "manifest.json").read_text())
    manifest["withheld"]["test_2025_08"] = manifest["withheld"][WITHHELD]
    (other / "manifest.json").write_text(json.dumps(manifest))
    checks = {c.name: c for c in check_custody(copy, other)}
    assert not checks["custody: goes with the release"].passed
    assert "not this release's custody folder" in checks["custody: goes with the release"].detail


def test_release_withheld_refuses_before_the_embargo_then_publishes_the_same_bytes(copy):
    custody_files = {
        f: sha
        for f, sha in Custody.open(custody_path(copy)).manifest["files"].items()
        if f.startswith("data/")
    }
    before = json.loads((copy / "manifest.json").read_text())
    early = run_ratio("dataset", "release-withheld", "--dataset", copy, "--version", "0.0.2-test",
                      "--today", "2025-10-29")  # fmt: skip
    line = assert_user_error(early, "withheld until 2025-10-30", "Run again on or after 2025-10-30")
    assert line.count("\n") == 0 and json.loads((copy / "manifest.json").read_text()) == before
    run = run_ratio("dataset", "release-withheld", "--dataset", copy, "--version", "0.0.2-test",
                    "--today", "2025-10-30")  # fmt: skip
    assert run.code == 0, run.err
    assert f"released {WITHHELD} from custody" in run.out
    after = Release.open(copy)
    assert after.version == "0.0.2-test" and "withheld" not in after.manifest
    assert list(after.snapshots) == ["test_2025_07", "test_2025_08", WITHHELD]
    assert after.snapshots[WITHHELD]["sha256"] == before["withheld"][WITHHELD]["sha256"]
    now = file_checksums(copy)
    assert {f: now[f] for f in custody_files} == custody_files  # the custody files, byte for byte
    kept = {f: s for f, s in before["files"].items() if f != "README.md"}
    assert {f: now[f] for f in kept} == kept
    assert after.manifest["versions"][-1]["released_from_custody"] == [WITHHELD]
    assert all(c.passed for c in check_release(copy))
    assert Custody.open(custody_path(copy)).withheld == {}
    card = (copy / "README.md").read_text()
    assert (
        f"- split: {WITHHELD}\n    path: data/corpus/{WITHHELD}-*.parquet" in card and "(0.0.2-test)" in card
    )


def test_withhold_is_named_when_wrong(tmp_path):
    cfg = write_config(tmp_path / "cfg.yaml", tmp_path, tmp_path / "work", snapshots=SNAPSHOTS)
    run = run_ratio("dataset", "build", "--config", cfg, "--out", tmp_path / "r", "--withhold", "septembre")
    assert_user_error(run, "--withhold septembre", "YYYY-MM", code=2)  # a usage error
    bad = write_config(tmp_path / "bad.yaml", tmp_path, tmp_path / "work", custody={"withhold": "newest"})
    run = run_ratio("dataset", "build", "--config", bad, "--out", tmp_path / "r")
    assert_user_error(run, "custody.withhold", "snapshots:")


def test_append_withholds_its_newest_period_and_keeps_the_withheld_works_out(tmp_path):
    """A base release withholding February; an append withholds May and keeps April public; a copy of the
    withheld February work dated April stays out (the custody folder's works are the release's too)."""
    (tmp_path / "corpus").mkdir()
    write_jsonl(tmp_path / "corpus" / "a.jsonl", snapshot_records())
    cfg = write_config(tmp_path / "cfg.yaml", tmp_path / "corpus", tmp_path / "work", snapshots=SNAPSHOTS,
                       custody={"withhold": "newest", "embargo_days": 30})  # fmt: skip
    assert run_ratio("dataset", "build", "--config", cfg, "--out", tmp_path / "ratio", "--quiet").code == 0
    release = tmp_path / "ratio"
    assert list(Release.open(release).manifest["withheld"]) == ["test_2022_02"]
    new = write_jsonl(tmp_path / "new.jsonl", [
        dated_paper("s/apr", "2022-04-05", {"address": 3, "specify": 2}, 6, "April paper on dense indexes"),
        dated_paper("s/may", "2022-05", {"address": 2}, 6, "May paper on long documents"),
        dated_paper("s/feb-v2", "2022-04-20", {"address": 2}, 1, "February paper on quantised models"),
    ])  # fmt: skip
    run = run_ratio("dataset", "append", "--dataset", release, "--corpus", new, "--version", "0.0.2-test",
                    "--work-dir", tmp_path / "w", "--quiet")  # fmt: skip
    assert run.code == 0, run.err
    manifest = Release.open(release).manifest
    assert list(manifest["snapshots"]) == ["test_2022_01", "test_2022_04"]
    assert list(manifest["withheld"]) == ["test_2022_02", "test_2022_05"]
    assert manifest["versions"][-1]["withheld_added"] == ["test_2022_05"]
    assert manifest["versions"][-1]["excluded"]["known_work"] == 2  # the February work's April copy
    assert Custody.open(custody_path(release)).withheld == manifest["withheld"]
    check = run_ratio("dataset", "check", release)
    assert check.code == 0 and "custody: no withheld text in a public file" in check.out, check.out
    assert not list(release.rglob("*test_2022_05*")) and not list(release.rglob("*test_2022_02*"))
    # without its custody folder an append is refused (it could not keep the withheld works out)
    shutil.move(custody_path(release), tmp_path / "away")
    run = run_ratio("dataset", "append", "--dataset", release, "--corpus", new, "--version", "0.0.3-test",
                    "--work-dir", tmp_path / "w3", "--quiet")  # fmt: skip
    assert_user_error(run, "--custody", "needs its custody folder")


def test_a_stranger_checks_the_public_half_without_the_custody_folder(copy, tmp_path):
    public = tmp_path / "downloaded"
    shutil.copytree(copy, public)  # no public.custody beside it
    run = run_ratio("dataset", "check", public)
    assert run.code == 0, run.out
    assert "custody: withheld split absent from the public half" in run.out and "not here" in run.out
    shutil.copy(
        custody_path(copy) / "data" / "corpus" / f"{WITHHELD}-00000-of-00001.parquet",
        public / "data" / "corpus",
    )
    bad = run_ratio("dataset", "check", public)
    assert bad.code == 1 and "custody: withheld split absent from the public half" in bad.out
