import json

from ratio_bench.judge.labelling import label_pairs

PAIRS = [
    {
        "relation": "address",
        "query_id": f"q{i}",
        "query": f"problem {i}",
        "marker": "to address this",
        "gold": f"fix {i}",
    }
    for i in range(4)
]


def test_answers_are_appended_and_a_second_session_resumes(tmp_path):
    out = tmp_path / "labels.jsonl"
    answers = iter(["y", "what", "n", "q"])
    shown = []
    counts = label_pairs(PAIRS, out, "ann", ask=lambda _: next(answers), show=shown.append)
    assert counts["labelled"] == 2 and counts["left"] == 2
    assert any("please answer" in s for s in shown)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(r["query_id"], r["label"], r["annotator"]) for r in rows] == [
        ("q0", True, "ann"),
        ("q1", False, "ann"),
    ]
    answers = iter(["s", "y"])
    counts = label_pairs(PAIRS, out, "ann", ask=lambda _: next(answers), show=lambda _: None)
    assert counts == {"labelled": 1, "skipped": 1, "already": 2, "left": 0}
    assert [json.loads(x)["query_id"] for x in out.read_text().splitlines()] == ["q0", "q1", "q3"]
    # another annotator sees every pair again
    answers = iter(["q"])
    assert label_pairs(PAIRS, out, "other", ask=lambda _: next(answers), show=lambda _: None)["left"] == 4


def test_ids_only_labels_keep_the_gold_out_and_resume_by_id(tmp_path):
    out = tmp_path / "labels.jsonl"
    pairs = [p | {"gold_id": f"c{i}"} for i, p in enumerate(PAIRS)]
    answers = iter(["y", "n", "q"])
    counts = label_pairs(
        pairs, out, "agent", ask=lambda _: next(answers), show=lambda _: None, store_text=False
    )
    assert counts["labelled"] == 2
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(r["gold_id"], r["label"]) for r in rows] == [("c0", True), ("c1", False)]
    assert all("gold" not in r for r in rows) and "fix 0" not in out.read_text()
    # the same pairs, their text shown again, are matched by id
    answers = iter(["y", "y"])
    assert label_pairs(pairs, out, "agent", ask=lambda _: next(answers), show=lambda _: None)["already"] == 2
    # labels recorded by text still count once the pairs carry ids
    text_only = tmp_path / "text.jsonl"
    answers = iter(["y", "q"])
    label_pairs(PAIRS, text_only, "agent", ask=lambda _: next(answers), show=lambda _: None)
    answers = iter(["q"])
    assert (
        label_pairs(pairs, text_only, "agent", ask=lambda _: next(answers), show=lambda _: None)["left"] == 3
    )
    try:
        label_pairs(PAIRS, out, "agent", ask=lambda _: "q", show=lambda _: None, store_text=False)
    except ValueError as e:
        assert "gold_id" in str(e)
    else:
        raise AssertionError("labels without text need ids")
