import json

import pytest
from tests.helpers.openai_server import expected_decision

from ratio_bench.judge.calibrate import (
    LabelError,
    binary_agreement,
    calibrate,
    krippendorff_alpha,
    read_labels,
    report_table,
)
from ratio_bench.llm.prompts import prompts_for


def test_binary_agreement_on_a_worked_example():
    ref = [True, True, True, False, False, False, True, False]
    pred = [True, True, False, False, True, False, True, False]
    s = binary_agreement(ref, pred)  # tp 3, fp 1, fn 1, tn 3
    assert s["agreement"] == 0.75 and s["precision"] == 0.75 and s["recall"] == 0.75 and s["f1"] == 0.75
    assert s["kappa"] == pytest.approx(0.5)
    assert krippendorff_alpha(ref, ref) == 1.0
    # 16 values, 8 of each; 2 disagreeing units: D_o = 4/16, D_e = 2*8*8/(16*15), alpha = 1 - D_o/D_e
    assert krippendorff_alpha(ref, pred) == pytest.approx(1 - (4 / 16) / (128 / 240))


def test_bad_label_rows_name_their_line(tmp_path):
    f = tmp_path / "labels.jsonl"
    f.write_text(
        '{"relation": "address", "query": "q", "gold": "g", "annotator": "a", "label": true}\n{"query": 1}\n'
    )
    with pytest.raises(LabelError, match=":2:"):
        read_labels(f)
    f.write_text('{"relation": "address", "query": "q", "gold": "g", "annotator": "a", "label": "yes"}\n')
    with pytest.raises(LabelError, match="boolean"):
        read_labels(f)


def test_calibration_ranks_prompts_by_f1_against_the_reference(tmp_path, fake_server, make_judge):
    prompts = prompts_for("specify", "pair-verdict")
    pairs = [(f"general claim {i}", "for example", f"instance {i}") for i in range(30)]
    # annotator "ref" agrees exactly with the fake model under the first prompt; "b" disagrees on 5 pairs
    first = prompts[0]
    truth = [expected_decision(first.messages("silver", query=q, marker=m, gold=g)) for q, m, g in pairs]
    rows = [
        dict(relation="specify", query=q, marker=m, gold=g, annotator="ref", label=t)
        for (q, m, g), t in zip(pairs, truth, strict=True)
    ]
    rows += [
        dict(relation="specify", query=q, marker=m, gold=g, annotator="b", label=t != (i < 5))
        for i, ((q, m, g), t) in enumerate(zip(pairs, truth, strict=True))
    ][:20]
    (tmp_path / "l.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    report = calibrate(read_labels(tmp_path / "l.jsonl"), {"specify": prompts}, make_judge(fake_server))
    r = report["specify"]
    assert r["reference"] == "ref" and r["annotators"] == {"b": 20, "ref": 30}
    assert r["ranking"][0] == first.ref("silver")
    assert r["prompts"][first.ref("silver")]["single"]["f1"] == 1.0
    assert r["human_panel"]["agreement"] == pytest.approx(15 / 20)
    assert set(r["prompts"][first.ref("silver")]["panel"]) == {"agreement", "f1", "alpha"}
    table = report_table(report)
    assert table.count("| specify |") == 1 + len(prompts)
