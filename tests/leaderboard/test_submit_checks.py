"""``submit`` loads each model's config and tokenizer with the stock classes, so a repo that can only fail later
is refused before it is queued, with its reason; a Router (asymmetric) model is taken, its weights counted in
each route's folder. In-process against the loopback Hub."""

from __future__ import annotations

import pytest
from tests.helpers.models import make_router, write_unloadable_models

from ratio_bench.leaderboard.hub import LeaderboardError


@pytest.fixture(scope="module")
def unloadable(tiny_models, tmp_path_factory):
    return write_unloadable_models(tmp_path_factory.mktemp("unloadable"), tiny_models["good"])


@pytest.mark.parametrize(
    ("defect", "setup", "reason"),
    [
        ("vocab-400m", "none", "vocab_size 400,000,000 is outside 1 to 1,000,000"),
        ("bad-tokenizer", "none", "the tokenizer cannot be loaded"),
        ("unknown-model-type", "none", "config.json: transformers cannot read it"),
        ("module-type", "none", "module type 'sentence_transformers.evil.NoSuchModule' is not a sentence-tr"),
        ("long-prompt", "saved", "a saved prompt of 5,000 characters; at most 2,000"),
    ],
)
def test_a_repo_that_can_only_fail_is_refused_at_submit(hub_env, unloadable, defect, setup, reason):
    from ratio_bench.leaderboard.submit import inspect_model

    sha = hub_env.publish(f"org/{defect}", unloadable[defect])
    with pytest.raises(LeaderboardError, match=reason) as refused:
        inspect_model(f"org/{defect}", None, setup)
    assert f"org/{defect}@{sha[:12]}" in str(refused.value) and "/tmp" not in str(refused.value)


def test_a_router_model_is_taken_with_the_parameters_of_both_routes(hub_env, tiny_models, tmp_path):
    from ratio_bench.leaderboard.submit import inspect_model

    hub_env.publish("org/tiny", tiny_models["good"])
    single = inspect_model("org/tiny", None, "none")
    hub_env.publish("org/router", make_router(tiny_models["good"], tmp_path / "router"))
    routed = inspect_model("org/router", None, "none")
    assert routed.parameters == 2 * single.parameters
