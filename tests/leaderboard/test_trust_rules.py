"""The trust rules as data (``leaderboard/trust.py``): every rule names a stage and a test that exists, names are
unique, and every stage's place really asks the list: a rule added to ``trust.RULES`` that always fails makes
submit, admission (review and merge), the key loader, the job, the board and ``verify`` refuse with its message.
Plus the tests of the rules that had none. On the loopback Hub, in process, as test_trust_chain.py."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.leaderboard.conftest import REQUESTS, RESULTS
from tests.leaderboard.test_provenance import (
    SHA,
    as_keeper,  # noqa: F401 - the autouse fixture: this process writes the queue as the maintainers do
    marks,
    publish,
    queue,
    release_entry,
    request,
)
from tests.leaderboard.test_trust_chain import FOLDER, ROW, _resign, _verified_row

from ratio_bench.leaderboard import hub, trust
from ratio_bench.leaderboard.admission import admit
from ratio_bench.leaderboard.board import verify
from ratio_bench.leaderboard.hub import LeaderboardError, RepoRef
from ratio_bench.leaderboard.job import run_job
from ratio_bench.leaderboard.provenance import ProvenanceError, generate_key, load_key
from ratio_bench.leaderboard.requests import Request, now_utc, request_path, stamp
from ratio_bench.leaderboard.submit import MAX_PARAMETERS, inspect_model, submit
from ratio_bench.leaderboard.trust import RULES, Stage, TrustRule

ROOT = Path(__file__).resolve().parents[2]
REFUSAL = "refused by the test's rule"


def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return {
        node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }


def test_every_rule_names_a_test_that_exists():
    missing = []
    for rule in RULES:
        file, _, name = rule.test.partition("::")
        if not (ROOT / file).is_file() or name not in _test_functions(ROOT / file):
            missing.append(f"{rule.name}: {rule.test}")
    assert missing == []


def test_every_rule_applies_somewhere_names_are_unique_and_every_stage_has_rules():
    assert all(rule.applies and rule.applies <= set(Stage) for rule in RULES)
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names)), names
    assert {stage for rule in RULES for stage in rule.applies} == set(Stage)


def test_a_stage_is_asked_with_its_own_context_only():
    with pytest.raises(TypeError, match="KEY rules read a KeyFile"):
        trust.check(Stage.KEY, trust.Merging("a" * 40, "a" * 40))
    assert trust.check(Stage.MERGE, trust.Merging("a" * 40, "a" * 40)) is None
    assert "changed after it was reviewed" in trust.check(Stage.MERGE, trust.Merging("a" * 40, "b" * 40))


# --- every place asks the list ---------------------------------------------------------------------------------


def _request_for(model: str, sha: str, **prompts: str) -> Request:
    """A request for the generic setup with the model's own prompts (or ``prompts`` instead)."""
    checked = inspect_model(model, sha, "generic")
    query, document = (
        prompts.get("query", checked.query_prompt),
        prompts.get("document", checked.document_prompt),
    )
    return Request(model, "main", sha, "generic", query, document, "float32", "alice", stamp(now_utc()))


def _run_job(env, req: Request, release: Path, tmp: Path) -> None:
    (tmp / "request.json").write_bytes(req.to_json())
    run_job(tmp / "request.json", req.path, release, tmp / "out", max_params=MAX_PARAMETERS)


def _submit(env, models, release, tmp, refuse) -> str:
    env.publish("org/tiny", models["good"])
    refuse()
    with pytest.raises(LeaderboardError) as e:
        submit("org/tiny", None, "generic", REQUESTS)
    return str(e.value)


def _admit(env, models, release, tmp, refuse) -> str:
    env.publish("org/tiny", models["good"])
    submit("org/tiny", None, "generic", REQUESTS)
    refuse()
    (verdict,) = admit(REQUESTS, MAX_PARAMETERS, lambda line: None)
    assert not verdict.admitted and env.requests() == {}
    return verdict.reason


def _key(env, models, release, tmp, refuse) -> str:
    generate_key(tmp / "mine.key")
    load_key(tmp / "mine.key")
    refuse()
    with pytest.raises(ProvenanceError) as e:
        load_key(tmp / "mine.key")
    return str(e.value)


def _job(env, models, release, tmp, refuse) -> str:
    req = _request_for("org/tiny", env.publish("org/tiny", models["good"]))
    refuse()
    with pytest.raises(LeaderboardError) as e:
        _run_job(env, req, release, tmp)
    return str(e.value)


def _board(env, models, release, tmp, refuse) -> str:
    _verified_row(env, release)
    refuse()
    status, why = marks()[ROW]
    (report,) = verify(ROW, RepoRef(RESULTS, None, "--results"), REQUESTS)
    assert status == "self-reported" and not report.verified
    assert REFUSAL in "\n".join(report.lines())
    return why


PLACES: dict[Stage, Callable[..., str]] = {
    Stage.SUBMIT: _submit,
    Stage.ADMIT: _admit,
    Stage.MERGE: _admit,
    Stage.KEY: _key,
    Stage.JOB: _job,
    Stage.BOARD: _board,
    Stage.VERIFY: _board,
}


@pytest.mark.parametrize("stage", list(Stage), ids=lambda s: s.value)
def test_every_stage_s_place_asks_the_rules(
    stage, hub_env, tiny_models, small_release, tmp_path, monkeypatch
):
    """A rule that always fails, added at ``stage`` only, refuses there with its message."""
    here = "tests/leaderboard/test_trust_rules.py::test_every_stage_s_place_asks_the_rules"
    rule = TrustRule("the test's refusal", frozenset({stage}), lambda context: REFUSAL, here)

    def refuse() -> None:
        monkeypatch.setattr(trust, "RULES", (rule, *trust.RULES))

    said = PLACES[stage](hub_env, tiny_models, small_release, tmp_path, refuse)
    assert REFUSAL in said, said


# --- the rules no earlier test showed -------------------------------------------------------------------------


def test_a_job_whose_request_prompts_are_not_the_setups_is_refused(
    hub_env, tiny_models, small_release, tmp_path
):
    req = _request_for("org/tiny", hub_env.publish("org/tiny", tiny_models["good"]), query="anything: ")
    with pytest.raises(LeaderboardError, match="the request's prompts are not those of the generic setup"):
        _run_job(hub_env, req, small_release, tmp_path)
    assert not (tmp_path / "out").exists()


def test_a_record_signed_for_another_queue_or_model_is_refused(hub_env, small_release):
    _verified_row(hub_env, small_release)
    signed = json.loads(hub_env.files(RESULTS)[f"{FOLDER}/provenance.json"])["request"]
    elsewhere = _resign(hub_env, FOLDER, hub_env.key, request={**signed, "repo": "other/requests"})
    hub.commit(RESULTS, "dataset", elsewhere, "signed for another queue")
    status, why = marks()[ROW]
    assert (
        status == "self-reported" and f"signed for requests repository other/requests, not {REQUESTS}" in why
    )
    other = request("org/other", SHA)
    queue(other)
    publish(hub_env, small_release, other, release_entry("org/other:generic", small_release))
    theirs = {**signed, "path": request_path("org/other", SHA, "generic")}
    hub.commit(
        RESULTS, "dataset", _resign(hub_env, FOLDER, hub_env.key, request=theirs), "another model's run"
    )
    status, why = marks()[ROW]
    assert status == "self-reported" and f"is a request for org/other@{SHA[:12]}:generic" in why, why
    assert marks()["org/other:generic"][0] == "verified"
