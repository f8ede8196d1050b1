"""``ratio judge`` and ``ratio lexicon llm-*`` through the real command line."""

import json

from ratio_bench.cli import main


def judge_args(server, tmp_path):
    return [
        "--base-url",
        server.base_url,
        "--model",
        "fake-judge",
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--quiet",
    ]


def test_prompts_and_estimate(small_release, capsys):
    assert main(["judge", "prompts"]) == 0
    assert "address-silver-split@v1" in capsys.readouterr().out
    assert main(["judge", "estimate", "--dataset", str(small_release), "--pairs", "100", "0", "0"]) == 0
    out = capsys.readouterr().out
    assert "200 requests" in out and "gpt-5.4" in out


def test_calibrate_cli(tmp_path, fake_server, capsys):
    labels = tmp_path / "labels.jsonl"
    rows = [
        {"relation": "broaden", "query": f"specific finding {i}", "marker": "more generally", "gold": f"broad {i}",
         "annotator": a, "label": (i + len(a)) % 3 != 0}
        for i in range(12) for a in ("x", "yy")
    ]  # fmt: skip
    labels.write_text("\n".join(json.dumps(r) for r in rows))
    out_json = tmp_path / "cal.json"
    assert (
        main(
            [
                "judge",
                "calibrate",
                "--labels",
                str(labels),
                "--out",
                str(out_json),
                *judge_args(fake_server, tmp_path),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "| broaden | human annotators |" in out and "broaden: keep" in out
    report = json.loads(out_json.read_text())
    assert len(report["broaden"]["ranking"]) == 2 and report["judge"]["model"] == "fake-judge"


def test_lexicon_llm_commands(tmp_path, fake_server, capsys):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("more generally\nmore broadly\n")
    review = tmp_path / "r.tsv"
    common = judge_args(fake_server, tmp_path)
    assert (
        main(
            [
                "lexicon",
                "llm-expand",
                "--relation",
                "broaden",
                "--seeds",
                str(seeds),
                "--out",
                str(review),
                *common,
            ]
        )
        == 0
    )
    assert main(["lexicon", "llm-classify", str(review), *common]) == 0
    out = capsys.readouterr().out
    assert "strong-true" in out and "requests sent" in out
    header = review.read_text().splitlines()[0].split("\t")
    assert header[-3:] == ["llm_label", "llm_confidence", "llm_reason"]


def test_judge_errors_are_reported_without_a_traceback(fake_server, tmp_path, capsys, monkeypatch):
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        json.dumps({"relation": "address", "query": "q", "gold": "g", "annotator": "a", "label": True}) + "\n"
    )
    fake_server.state.require_key = "sk-right"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    assert main(["judge", "calibrate", "--labels", str(labels), *judge_args(fake_server, tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ratio judge calibrate: error: ") and "Traceback" not in err
    assert "refused the credentials" in err and "sk-wrong" not in err
