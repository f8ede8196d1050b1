import hashlib
import json
import os
import stat
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.helpers.cli import assert_user_error, run_ratio
from tests.helpers.corpus import write_jsonl
from tests.helpers.dataset import PAIRS, records, write_config

from ratio_bench.core.io import OutputDirError
from ratio_bench.dataset.assemble import AssemblyError, assemble
from ratio_bench.dataset.build import build_release, file_checksums
from ratio_bench.dataset.check import check_release
from ratio_bench.dataset.config import load_config
from ratio_bench.mining.run import run_mining
from ratio_bench.mining.step import MiningSettings


@pytest.fixture
def built(dataset_corpus, tmp_path):
    cfg = load_config(write_config(tmp_path / "cfg.yaml", dataset_corpus, tmp_path / "work"))
    report = build_release(cfg, tmp_path / "ratio", progress=False)
    return cfg, report, tmp_path / "ratio"


def _rows(root, config, split):
    return [
        r
        for f in sorted((root / "data" / config).glob(f"{split}-*.parquet"))
        for r in pq.read_table(f).to_pylist()
    ]


def _gold_text(key):
    return PAIRS[key][1].split(", ", 1)[1].lower()


def test_routing_dedup_and_pools(built):
    _, report, root = built
    rep = report["assembly"]
    # routing reports where papers finally went: s/s1 (2022, inside test by date) went with its preprint to train
    assert rep["routing"] == {
        "inside": {"train": 4, "validation": 2, "test": 2},
        "straddle_drop": {"dropped": 1},
        "unknown_date": {"dropped": 1},
    }
    assert rep["papers_moved_to_keep_same_work_together"] == 1  # s/s1 (2022) joins its 2020 preprint in train
    assert (rep["pairs_mined"], rep["pairs_duplicate_removed"], rep["pairs_unplaced_removed"]) == (11, 3, 1)
    gold_by_split = {
        s: {r["gold"] for rel in ("address", "broaden", "specify") for r in _rows(root, rel, s)}
        for s in ("train", "validation", "test")
    }
    assert gold_by_split["train"] == {_gold_text(k) for k in "ABE"}
    assert gold_by_split["validation"] == {_gold_text(k) for k in "CD"}
    assert gold_by_split["test"] == {_gold_text(k) for k in "GH"}
    # every partition's corpus is its golds plus its distractors, shared by the relations
    for split, n in (("train", 4), ("validation", 3), ("test", 3)):
        corpus = _rows(root, "corpus", split)
        assert len(corpus) == n
        ids = {c["id"] for c in corpus}
        for rel in ("address", "broaden", "specify"):
            assert {r["gold_id"] for r in _rows(root, rel, split)} <= ids
    roles = {c["role"] for c in _rows(root, "corpus", "test")}
    assert roles == {"address", "explicit_contrast"}


def test_the_release_venue_column_holds_clean_strings(built):
    _, _, root = built
    venues = {
        r["venue"]
        for split in ("train", "validation", "test")
        for rel in ("address", "broaden", "specify")
        for r in _rows(root, rel, split)
    }
    assert {"cs.LG, cs.AI", "arXiv cs.CR"} <= venues
    assert not any("[" in v for v in venues if v)


def test_no_paper_in_two_partitions_and_content_ids(built):
    _, _, root = built
    seen = {}
    for split in ("train", "validation", "test"):
        for rel in ("address", "broaden", "specify"):
            for r in _rows(root, rel, split):
                assert seen.setdefault(r["paper_id"], split) == split
                assert r["query_id"].startswith("q") and len(r["query_id"]) == 17
    train_ids = {r["gold"]: r["gold_id"] for r in _rows(root, "specify", "train")}
    for text, gid in train_ids.items():
        assert gid == "c" + hashlib.sha256(text.encode()).hexdigest()[:16]


def test_qrels_match_queries(built):
    _, _, root = built
    for split in ("train", "validation", "test"):
        q = {(r["query_id"], r["gold_id"]) for r in _rows(root, "address", split)}
        qrels = {(r["query-id"], r["corpus-id"]) for r in _rows(root, "address-qrels", split)}
        assert q == qrels and all(r["score"] == 1 for r in _rows(root, "address-qrels", split))


def test_load_dataset_every_config_and_split(built):
    datasets = pytest.importorskip("datasets")
    _, report, root = built
    for config, splits in report["rows"].items():
        ds = datasets.load_dataset(str(root), config, cache_dir=str(root.parent / "hf_cache"))
        assert {s: len(ds[s]) for s in ds} == {s: n for s, n in splits.items() if n}


def test_manifest_card_and_byte_identical_rebuild(built, tmp_path):
    cfg, report, root = built
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["files"] == file_checksums(root)
    assert manifest["rows"] == report["rows"] and manifest["lexicon_sha256"]
    card = (root / "README.md").read_text()
    assert "config_name: address-qrels" in card and "## Temporal split" in card and "**Address**" in card
    again = tmp_path / "elsewhere" / "ratio"
    build_release(cfg, again, progress=False)
    assert file_checksums(again) == file_checksums(root)
    assert (again / "manifest.json").read_bytes() == (root / "manifest.json").read_bytes()


def test_straddle_start_and_cumulative_mode(dataset_corpus, tmp_path):
    cfg = load_config(
        write_config(
            tmp_path / "c.yaml",
            dataset_corpus,
            tmp_path / "w",
            date_policy={"straddle": "start", "unknown": "train"},
            mode="cumulative",
        )
    )
    report = build_release(cfg, tmp_path / "r", progress=False)
    rep = report["assembly"]
    assert rep["routing"]["straddle_start"] == {"train": 1} and rep["routing"]["unknown_date"] == {"train": 1}
    # cumulative pools: each partition also holds the earlier partitions' candidates
    rows = report["rows"]["corpus"]
    assert rows["train"] < rows["validation"] < rows["test"]


def test_sampling_caps_queries_and_keeps_the_ratio(dataset_corpus, tmp_path):
    cfg = load_config(
        write_config(
            tmp_path / "c.yaml",
            dataset_corpus,
            tmp_path / "w",
            sampling={"test": {"max_queries": {"address": 1}, "distractors_per_gold": 0}},
        )
    )
    report = build_release(cfg, tmp_path / "r", progress=False)
    assert report["rows"]["address"]["test"] == 1 and report["rows"]["corpus"]["test"] == 1


def test_empty_partition_is_an_error(dataset_corpus, tmp_path):
    cfg = load_config(
        write_config(
            tmp_path / "c.yaml",
            dataset_corpus,
            tmp_path / "w",
            splits={
                "train": {"end": "2020-12-31"},
                "validation": {"start": "2021-01-01", "end": "2021-12-31"},
                "test": {"start": "2030-01-01"},
            },
        )
    )
    with pytest.raises(AssemblyError, match=r"partition\(s\) \['test'\] received no query"):
        build_release(cfg, tmp_path / "r", progress=False)


def test_bad_mining_shards_name_file_and_field(dataset_corpus, tmp_path):
    cfg = load_config(write_config(tmp_path / "c.yaml", dataset_corpus, tmp_path / "w"))
    mined = tmp_path / "w" / "mined"
    run_mining(cfg.corpus, mined, MiningSettings(progress=False))
    shard = sorted((mined / "pairs").glob("*.parquet"))[0]
    table = pq.read_table(shard)
    pq.write_table(table.drop(["marker"]), shard)
    with pytest.raises(AssemblyError, match=r"00000\.parquet: missing column\(s\) \['marker'\]"):
        assemble(cfg, mined, tmp_path / "tmp")
    pq.write_table(
        table.set_column(
            table.schema.get_field_index("paragraph_index"),
            "paragraph_index",
            table.column("paragraph_index").cast(pa.int64()),
        ),
        shard,
    )
    with pytest.raises(AssemblyError, match="column 'paragraph_index' has type int64.*mixed schemas"):
        assemble(cfg, mined, tmp_path / "tmp")


def _tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(root.rglob("*"))
    }


def test_build_over_a_folder_that_is_not_a_release_refuses_and_keeps_every_file(dataset_corpus, tmp_path):
    mine = tmp_path / "my work"
    (mine / "sub").mkdir(parents=True)
    (mine / "thesis.txt").write_text("chapter 1\n", encoding="utf-8")
    (mine / "sub" / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    before = _tree_digest(mine)
    cfg = write_config(tmp_path / "cfg.yaml", dataset_corpus, tmp_path / "work")
    run = run_ratio("build", "--config", cfg, "--out", mine, "--quiet", timeout=120)
    assert_user_error(run, "--out", str(mine), "not a Ratio release")
    assert _tree_digest(mine) == before
    assert not (tmp_path / "work").exists()  # refused before mining
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg.yaml", "corpus", "my work"]  # no staging left
    with pytest.raises(OutputDirError, match="not a Ratio release"):  # the library refuses as well
        build_release(load_config(cfg), mine, progress=False)
    assert _tree_digest(mine) == before


def test_build_over_another_kind_of_artefact_or_a_file_refuses(dataset_corpus, tmp_path):
    other = tmp_path / "index"
    other.mkdir()
    (other / "manifest.json").write_text(json.dumps({"kind": "index", "files": {}}), encoding="utf-8")
    cfg = write_config(tmp_path / "cfg.yaml", dataset_corpus, tmp_path / "work")
    assert_user_error(
        run_ratio("build", "--config", cfg, "--out", other, timeout=120), "--out", "a Ratio index"
    )
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    run = run_ratio("build", "--config", cfg, "--out", tmp_path / "notes.txt", timeout=120)
    assert_user_error(run, "--out", "notes.txt", "is a file")
    assert (tmp_path / "notes.txt").read_text() == "x" and (other / "manifest.json").is_file()


def test_build_refuses_the_working_folder_its_parents_and_home(dataset_corpus, tmp_path):
    cwd = tmp_path / "project" / "here"
    cwd.mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    cfg = write_config(tmp_path / "cfg.yaml", dataset_corpus, tmp_path / "work")
    for out in (".", "..", str(tmp_path), str(home), "~", "/"):
        run = run_ratio("build", "--config", cfg, "--out", out, cwd=cwd, env={"HOME": str(home)}, timeout=120)
        line = assert_user_error(run, f"--out {out}")
        assert "working folder" in line or "home folder" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg.yaml", "corpus", "home", "project"]
    assert list(cwd.iterdir()) == [] and list(home.iterdir()) == []


def test_rebuild_replaces_a_previous_release_with_normal_permissions(built, tmp_path):
    cfg, _, root = built
    manifest = json.loads((root / "manifest.json").read_text())
    del manifest["kind"]  # releases built before manifests had a kind are still recognised as releases
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    build_release(cfg, root, progress=False)
    assert json.loads((root / "manifest.json").read_text())["kind"] == "release"
    assert [p.name for p in root.parent.iterdir() if p.name.startswith(".")] == []  # no staging folder left
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((root / "manifest.json").stat().st_mode) == 0o666 & ~umask
    assert stat.S_IMODE(root.stat().st_mode) == 0o777 & ~umask


def test_rebuild_keeps_the_judged_pool_and_refuses_files_that_are_not_the_releases(built, tmp_path):
    cfg, _, root = built
    cfg_path = tmp_path / "cfg.yaml"
    pool = {
        "judgments/pool.json": b'{"kind": "judged-pool"}',
        "judgments/candidates-address.parquet": b"PAR1",
    }
    for rel, data in pool.items():
        (root / rel).parent.mkdir(exist_ok=True)
        (root / rel).write_bytes(data)
    build_release(cfg, root, progress=False)
    assert {rel: (root / rel).read_bytes() for rel in pool} == pool
    assert all(c.passed for c in check_release(root))
    (root / "data" / "mine.parquet").write_bytes(b"the user's")
    (root / ".env").write_text("TOKEN=x\n", encoding="utf-8")
    before = _tree_digest(root)
    run = run_ratio("build", "--config", cfg_path, "--out", root, "--quiet", timeout=120)
    assert_user_error(run, "--out", ".env, data/mine.parquet", "not the release's own", "Move them away")
    with pytest.raises(OutputDirError, match="data/mine.parquet"):
        build_release(cfg, root, progress=False)
    assert _tree_digest(root) == before


def test_rows_carry_the_date_their_work_was_routed_by(dataset_corpus, tmp_path):
    a, b = records()
    later = next(
        r for r in a if r["id"] == "s/s1"
    )  # 2022 copy of a work whose 2020 preprint routes it to train
    later["text"] += " Therefore, the dosage tables in this appendix were checked by two pharmacists."
    write_jsonl(dataset_corpus / "a_source.jsonl", a)
    cfg = load_config(write_config(tmp_path / "cfg.yaml", dataset_corpus, tmp_path / "work"))
    build_release(cfg, tmp_path / "ratio", progress=False)
    corpus = {r["paper_id"]: r for r in _rows(tmp_path / "ratio", "corpus", "train")}
    row = corpus["s/s1"]
    assert (row["date"], row["date_start"].isoformat()) == ("2022-02-01", "2022-02-01")  # its own copy's date
    assert (row["work_date_start"].isoformat(), row["work_date_end"].isoformat()) == (
        "2020-03-01",
        "2020-03-31",
    )
    assert row["work_id"] == corpus["o/s1-preprint"]["work_id"]
    for split in ("train", "validation", "test"):
        bounds = cfg.partition(split)
        for config in ("address", "broaden", "specify", "corpus"):
            for r in _rows(tmp_path / "ratio", config, split):
                assert bounds.contains(r["work_date_start"]) and bounds.contains(r["work_date_end"]), r
    card = (tmp_path / "ratio" / "README.md").read_text()
    assert "`work_date_start`, `work_date_end`" in card and "the date the row was routed by" in card
