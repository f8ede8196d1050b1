import contextlib
import itertools
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from tests.helpers.cli import run_ratio
from tests.helpers.dataset import SYNTHETIC
from tests.helpers.openai_server import expected_decision

import ratio_bench
from ratio_bench.cli import main
from ratio_bench.dataset.build import file_checksums
from ratio_bench.dataset.config import SilverError, SilverSettings
from ratio_bench.dataset.release import Release
from ratio_bench.evaluation.scoring.evaluate import load_split
from ratio_bench.judge.silver import (
    equal_allocation,
    plan_silver,
    run_silver,
    stratified_sample,
)


def settings(**sample) -> SilverSettings:
    return SilverSettings.from_config({"seed": 5, "silver": {"sample": sample}})


def test_equal_allocation_caps_small_strata_and_redistributes():
    alloc = equal_allocation({"a": 100, "b": 5, "c": 30}, 60, seed=1)
    assert sum(alloc.values()) == 60 and alloc["b"] == 5 and abs(alloc["a"] - alloc["c"]) <= 1
    assert equal_allocation({"a": 3, "b": 2}, None, 1) == {"a": 3, "b": 2}
    assert equal_allocation({"a": 3, "b": 2}, 99, 1) == {"a": 3, "b": 2}
    assert sum(equal_allocation({m: 1 for m in "abcdefg"}, 3, 1).values()) == 3


def test_stratified_sample_is_seeded_and_sorted():
    ids = [f"q{i:03d}" for i in range(200)]
    strata = ["big"] * 150 + ["small"] * 10 + ["mid"] * 40
    one = stratified_sample(ids, strata, 60, seed=3)
    assert one == stratified_sample(ids, strata, 60, seed=3) == sorted(one)
    assert one != stratified_sample(ids, strata, 60, seed=4)
    assert sum(1 for i in one if int(i[1:]) in range(150, 160)) == 10  # every pair of the small marker


def test_a_larger_sample_contains_the_smaller_one():
    """What lets a judged pool grow: re-judging with a larger --sample keeps every verdict already stored."""
    ids = [f"q{i:03d}" for i in range(300)]
    strata = ["big"] * 170 + ["small"] * 3 + ["mid"] * 40 + ["tiny"] * 1 + ["rest"] * 86
    for seed in (0, 13):
        samples = [set(stratified_sample(ids, strata, n, seed)) for n in range(0, 302)]
        for n, (smaller, larger) in enumerate(itertools.pairwise(samples)):
            assert smaller <= larger and len(larger) == min(n + 1, 300)


def test_settings_validate_prompts_and_relations():
    with pytest.raises(SilverError, match="exactly two"):
        SilverSettings.from_config({"silver": {"prompts": {"address": ["address-silver-split"]}}})
    with pytest.raises(SilverError, match="not a silver prompt for address"):
        SilverSettings.from_config(
            {"silver": {"prompts": {"address": ["specify-silver-compact", "address-silver-split"]}}}
        )
    with pytest.raises(SilverError, match="unknown relations"):
        SilverSettings.from_config({"silver": {"sample": {"adress": 3}}})
    assert SilverSettings.from_config({}).sample == {"address": None, "broaden": None, "specify": 10_000}


def expected_kept(root: Path, s: SilverSettings) -> dict[str, list[str]]:
    out = {}
    for plan in plan_silver(root, s):
        reqs = plan.requests()
        n = plan.table.num_rows
        ids = plan.table.column("query_id").to_pylist()
        out[plan.relation] = [
            q for i, q in enumerate(ids) if all(expected_decision(reqs[j * n + i].messages) for j in range(2))
        ]
    return out


def test_silver_split_keeps_pairs_both_prompts_accept(silver_release, fake_server, make_judge):
    s = settings(address=24, specify=None)
    report = run_silver(silver_release, s, make_judge(fake_server))
    assert report["complete"]
    sizes = report["sizes"]
    assert {r: v["sampled"] for r, v in sizes.items()} == {"address": 24, "broaden": 9, "specify": 28}
    want = expected_kept(silver_release, s)
    for rel in ("address", "broaden", "specify"):
        kept = pq.read_table(silver_release / "data" / rel / "silver-00000-of-00001.parquet")
        assert kept.column("query_id").to_pylist() == want[rel] and sizes[rel]["kept"] == len(want[rel])
        verdicts = pq.read_table(silver_release / "judgments" / f"silver-{rel}.parquet")
        assert verdicts.num_rows == 2 * sizes[rel]["sampled"]
        assert set(verdicts.column("prompt").to_pylist()) == set(sizes[rel]["accepted_by_prompt"])
    # every marker of address contributes 8 (the 6-pair marker gives all 6, the other two 9)
    addr = (
        pq.read_table(silver_release / "judgments" / "silver-address.parquet").column("query_id").to_pylist()
    )
    assert sum(1 for q in set(addr) if "-to_ove-" in q) == 6
    manifest = json.loads((silver_release / "manifest.json").read_text())
    assert manifest["files"] == file_checksums(silver_release)
    assert manifest["rows"]["address"]["silver"] == len(want["address"])
    assert manifest["silver"]["judge"]["model"] == "fake-judge"
    assert all(len(p["sha256"]) == 64 for p in manifest["silver"]["prompts"].values())
    card = (silver_release / "README.md").read_text()
    assert "path: data/address/silver-*.parquet" in card and "## Silver test set" in card
    assert card.count("<!-- silver -->") == 1 and "Not built for this release yet" not in card
    # the silver split is scorable and loads with `datasets`; it retrieves from the test corpus
    split = load_split(silver_release, "silver")
    assert split.queries["address"][0] == want["address"]
    assert split.corpus_ids == load_split(silver_release, "test").corpus_ids
    from datasets import load_dataset

    ds = load_dataset(str(silver_release), "specify", split="silver")
    assert ds.num_rows == len(want["specify"])


def test_a_run_with_unrecovered_failures_writes_nothing(silver_release, fake_server, make_judge):
    fake_server.state.script = ["500"] * 50
    report = run_silver(
        silver_release, settings(address=4), make_judge(fake_server, max_retries=1, workers=1)
    )
    assert not report["complete"] and report["requests_by_status"]["error"] > 0
    assert not list(silver_release.glob("data/*/silver-*")) and not (silver_release / "judgments").exists()


def _cli(root: Path, server, cache: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "ratio_bench.cli", "silver", "--dataset", str(root), "--base-url", server.base_url,
        "--model", "fake-judge", "--cache", str(cache), "--workers", "1", "--quiet", *extra,
    ]  # fmt: skip


@pytest.mark.slow  # ~16 s (SIGKILL and resume of a judge run); make test-all runs it
def test_killed_cli_run_resumes_without_resending(silver_release, fake_server, tmp_path):
    cache = tmp_path / "replies.sqlite"
    fake_server.state.delay_s = 0.03
    env = os.environ | {"PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    proc = subprocess.Popen(_cli(silver_release, fake_server, cache), env=env, stdout=subprocess.PIPE)
    deadline = time.time() + 60
    while time.time() < deadline:
        if cache.exists():
            with (
                sqlite3.connect(cache) as con,
                contextlib.suppress(sqlite3.OperationalError),
            ):  # table not yet made
                if con.execute("SELECT count(*) FROM replies").fetchone()[0] >= 20:
                    break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    total = 2 * sum(n for _, _, n in SYNTHETIC)
    with sqlite3.connect(cache) as con:
        cached = con.execute("SELECT count(*) FROM replies").fetchone()[0]
    assert 20 <= cached < total  # killed part-way
    done = subprocess.run(_cli(silver_release, fake_server, cache), env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"cache hits {cached}" in done.stdout and "kept" in done.stdout
    # only the one request in flight at the kill (one worker) can have been sent twice
    resent = sum(n - 1 for n in fake_server.state.chat_keys.values())
    assert resent <= 1 and sum(fake_server.state.chat_keys.values()) == total + resent


def test_silver_through_the_batch_api_with_failing_items(silver_release, fake_server, tmp_path, capsys):
    fake_server.state.batch_fail_every = 5
    fake_server.state.script = ["429", "500"]  # hits the synchronous re-sends of failed items
    args = [
        "silver",
        "--dataset",
        str(silver_release),
        "--batch",
        "--poll-seconds",
        "0.01",
        "--sample",
        "address=12",
    ]
    assert (
        main(
            args
            + [
                "--base-url",
                fake_server.base_url,
                "--model",
                "fake-judge",
                "--cache",
                str(tmp_path / "c.sqlite"),
                "--quiet",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "batches 1" in out and "retries 2" in out and "kept" in out
    manifest = json.loads((silver_release / "manifest.json").read_text())
    assert manifest["silver"]["sizes"]["address"]["sampled"] == 12
    assert len(fake_server.state.batches) == 1


def test_all_invalid_replies_give_an_empty_but_valid_split(silver_release, fake_server, make_judge):
    fake_server.state.malformed_if = "query"  # every pair
    report = run_silver(silver_release, settings(address=3, broaden=2, specify=2), make_judge(fake_server))
    assert report["complete"] and all(
        s["kept"] == 0 and s["invalid"] == 2 * s["sampled"] for s in report["sizes"].values()
    )
    verdicts = pq.read_table(silver_release / "judgments" / "silver-address.parquet")
    assert verdicts.schema.field("decision").type == "bool" and verdicts.column("decision").null_count == 6


KILLED_AT_MANIFEST = """
import os, sys
from ratio_bench.judge import silver
write_json = silver.write_json
def killed(path, obj):  # SIGKILL's effect: the process is gone, nothing is cleaned up
    if path.name == "manifest.json":
        os._exit(137)
    write_json(path, obj)
silver.write_json = killed
from ratio_bench.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_run_killed_before_its_manifest_update_leaves_the_release_as_it_was(
    silver_release, fake_server, tmp_path
):
    cache = tmp_path / "replies.sqlite"
    env = os.environ | {"PYTHONPATH": str(Path(ratio_bench.__file__).parents[1])}  # the code under test
    before = file_checksums(silver_release)
    small = [f"--sample={rel}=2" for rel in ("address", "broaden", "specify")]
    argv = _cli(silver_release, fake_server, cache, *small)[3:]  # without "python -m ratio_bench.cli"
    killed = subprocess.run([sys.executable, "-c", KILLED_AT_MANIFEST, *argv], env=env, capture_output=True)
    assert killed.returncode == 137, killed.stderr
    release = Release.open(silver_release)
    assert file_checksums(silver_release) == before and "silver" not in release.splits("address")
    score = run_ratio("score", "--model", "bm25", "--dataset", silver_release, "--split", "silver")
    assert score.code == 1 and "silver" in score.err and "internal error" not in score.err, score.err
    staging = list(silver_release.parent.glob(".release.*.building"))
    assert len(staging) == 1  # the killed run's, with its new silver shards
    done = subprocess.run(
        _cli(silver_release, fake_server, cache, *small), env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert f"removed 1 staging folder(s) of killed runs: {staging[0].name}" in done.stderr
    assert not staging[0].exists() and "silver" in Release.open(silver_release).splits("address")


def test_a_silver_dry_run_prices_the_sample_and_changes_nothing(
    silver_release, fake_server, tmp_path, capsys
):
    before = file_checksums(silver_release)
    args = _cli(silver_release, fake_server, tmp_path / "c.sqlite", "--sample", "address=3", "--dry-run")[3:]
    assert main(["judge", *args]) == 0
    out = capsys.readouterr().out
    assert "address: 3 of 50 test pairs x 2 prompts" in out and "--dry-run: nothing sent" in out
    assert re.search(r"estimate for the \d+ to send: [\d,]+ input tokens", out)
    assert not fake_server.state.chat_keys and file_checksums(silver_release) == before


def test_a_silver_run_with_failures_is_one_error_saying_to_rerun(
    silver_release, fake_server, tmp_path, capsys
):
    fake_server.state.script = ["500"]
    args = _cli(
        silver_release, fake_server, tmp_path / "c.sqlite", "--sample", "address=3", "--max-retries", "0"
    )
    assert main(["judge", *args[3:]]) == 1
    printed = capsys.readouterr()
    assert "silver split NOT written" in printed.out and "requests sent" in printed.out
    assert printed.err.startswith("ratio judge silver: error: of ") and ", 1 failed; re-run" in printed.err
    assert not list(silver_release.glob("data/*/silver-*"))
