"""The price table is a user's file: a bad one is one error naming --prices; the spend never decreases."""

import pytest

from ratio_bench.core.errors import RatioError
from ratio_bench.llm.pricing import CostMeter, PriceTable, token_count


@pytest.mark.parametrize(
    ("text", "culprit"),
    [
        ("models: {m: {input: -1.0, output: 2.0}}", "models.m.input"),
        ("models: {m: {input: 1.0, output: .nan}}", "models.m.output"),
        ("models: {m: {input: 1.0}}", "models.m.output"),
        ("models: [m]", "models:"),
        ("batch_discount: 2\\nmodels: {}", "batch_discount"),
    ],
)
def test_a_bad_price_table_is_one_error_naming_the_field(tmp_path, text, culprit):
    path = tmp_path / "p.yaml"
    path.write_text(text.replace("\\n", "\n"))
    with pytest.raises(RatioError, match=f"--prices {path}: .*{culprit}"):
        PriceTable.load(path)


@pytest.mark.parametrize(("value", "ok"), [(0, True), (12, True), (-5, False), (2.5, False), ("9", False),
                                           (True, False), (None, False), (10**12, False)])  # fmt: skip
def test_token_counts_from_a_server_must_be_plausible(value, ok):
    assert token_count(value) == (value if ok else None)


def test_the_packaged_table_loads_and_charges():
    meter = CostMeter("gpt-5.4", PriceTable.load())
    meter.add(1_000_000, 0)
    assert meter.usd == pytest.approx(1.25)
