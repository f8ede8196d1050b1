"""A hybrid model's BM25 weights chosen on validation (training/lexical.py): the figures by hand, the rule on
scores built to have one answer, the config section, and the shipped model's weights against its summary."""

import json
from pathlib import Path

import numpy as np
import pytest
from tests.helpers.training import write_release
from tests.training.test_adapters import typed_encode

from ratio_bench.core.config import Checker
from ratio_bench.core.relations import RELATIONS
from ratio_bench.dataset.release import Release
from ratio_bench.retrieval.registry import REGISTRY
from ratio_bench.training import adapters, lexical
from ratio_bench.training.adapters import AdapterConfigError

REPO = Path(__file__).resolve().parents[2]


def test_evaluate_gives_the_mrr_and_the_move_accuracy_worked_by_hand():
    """Two Specify queries, a pool of three, two moves. Query 0's gold (row 0) ranks 2nd under Specify and 1st
    under Address: a wrong move wins. BM25 (1.0 on the gold, 0 elsewhere) at weight 0.2 lifts it to 1st under
    Specify, a tie with Address: half a right answer. Query 1's gold (row 1) ties row 2 under Specify, which goes
    the gold's way (a rank counts strictly higher scores only), and ranks 3rd under Address."""
    specify = np.array([[0.5, 0.1, 0.6], [0.2, 0.7, 0.7]])
    address = np.array([[0.9, 0.1, 0.2], [0.8, 0.1, 0.9]])
    cosines = {"specify": {"address": address, "specify": specify}}
    words = {"specify": np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])}
    golds = {"specify": np.array([0, 1])}
    mrr, accuracy = lexical.evaluate(cosines, words, golds, {})
    assert mrr == {"specify": 0.75} and accuracy == {"specify": 0.5}  # ranks 2 and 1; wins 0 and 1
    mrr, accuracy = lexical.evaluate(cosines, words, golds, {"specify": 0.2})
    assert mrr == {"specify": 1.0} and accuracy == {"specify": 0.75}  # ranks 1 and 1; a tie (0.5) and a win


def _two_moves(n: int = 40, seed: int = 0):
    """Specify's golds sit mid-pool under both moves and BM25 finds them; Address's gold ranks a little better
    under Address than under Specify, and BM25 finds it too, so a Specify weight lifts Specify's figures and,
    past some weight, makes Address's golds rank best under Specify: Address's move accuracy falls."""
    rng = np.random.default_rng(seed)
    pool = 2 * n + 40
    golds = {"address": np.arange(n), "specify": np.arange(n, 2 * n)}
    cosines, words = {}, {}
    for rel, lead in (("address", 0.06), ("specify", 0.0)):
        noise = rng.uniform(0.0, 0.6, size=(n, pool))
        rows = np.arange(n)
        own, other = noise.copy(), noise.copy()
        own[rows, golds[rel]] = 0.45 + lead
        other[rows, golds[rel]] = 0.45
        by_move = {
            "address": own if rel == "address" else other,
            "specify": own if rel == "specify" else other,
        }
        cosines[rel] = by_move
        w = rng.uniform(0.0, 0.5, size=(n, pool))
        w[rows, golds[rel]] = 1.0
        words[rel] = w
    return cosines, words, golds


GRID = (0.0, 0.02, 0.05, 0.1, 0.2, 0.4)


def test_the_rule_takes_the_best_weight_the_other_moves_floors_allow():
    cosines, words, golds = _two_moves()
    free = lexical.LexicalConfig(("specify",), GRID)
    chosen, points = lexical.choose(free, cosines, words, golds)
    objective = {p.weight: p.mrr_at_10["specify"] + p.move_accuracy["specify"] for p in points}
    assert list(objective.values()) == sorted(objective.values())  # rises with the weight, as built
    assert chosen == {"specify": 0.4} and all(p.allowed for p in points)
    address = {p.weight: p.move_accuracy["address"] for p in points}
    assert address[0.4] < address[0.0] - 0.2  # the cost the floor is there for
    floor = (address[0.05] + address[0.1]) / 2  # between what 0.05 and 0.1 leave Address
    assert address[0.05] > floor > address[0.1]
    floored = lexical.LexicalConfig(("specify",), GRID, floors={"address": floor})
    chosen, points = lexical.choose(floored, cosines, words, golds)
    assert chosen == {"specify": 0.05}
    assert [p.weight for p in points if not p.allowed] == [w for w in GRID if address[w] < floor]


def test_a_weight_is_kept_only_when_it_helps_and_a_move_already_below_its_floor_stays_where_it_was():
    cosines, words, golds = _two_moves()
    nothing = {rel: np.zeros_like(w) for rel, w in words.items()}  # no query word in the pool
    chosen, points = lexical.choose(lexical.LexicalConfig(("specify",), GRID), cosines, nothing, golds)
    assert chosen == {} and len(points) == len(GRID)  # every weight ties no weight: the smaller is kept
    at_zero = next(p for p in points if p.weight == 0.0).move_accuracy["address"]
    cosines, words, golds = _two_moves()
    high = lexical.LexicalConfig(("specify",), GRID, floors={"address": 0.99})  # above it even at 0
    chosen, points = lexical.choose(high, cosines, words, golds)
    assert all(p.allowed == (p.move_accuracy["address"] >= min(0.99, at_zero)) for p in points)
    assert chosen.get("specify", 0.0) in [p.weight for p in points if p.allowed]


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("lexical: {weights: [0.1]}", "lexical.moves: missing field"),
        ("lexical: {moves: [specfy], weights: [0.1]}", "lexical.moves: must be one of"),
        ("lexical: {moves: [specify], weights: []}", "lexical.weights: must list at least one weight"),
        ("lexical: {moves: [specify], weights: [-1]}", "lexical.weights[0]: must be a number from 0"),
        ("lexical: {moves: [specify], weights: [0.1], floors: {adress: 0.6}}", "did you mean 'address'?"),
        ("lexical: {moves: [specify], weigths: [0.1]}", "lexical.weigths: unknown field"),
    ],
)
def test_a_mistake_in_the_lexical_section_is_one_line_naming_the_field(tmp_path, section, message):
    path = tmp_path / "c.yaml"
    path.write_text(f"base: all-MiniLM-L6-v2\nname: x\n{section}\n", encoding="utf-8")
    with pytest.raises(AdapterConfigError, match=r"/c\.yaml: ") as caught:
        adapters.load_config(path)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_parse_sorts_the_grid_and_always_tries_no_weight():
    spec = lexical.parse(Checker("c.yaml"), {"moves": ["specify", "specify"], "weights": [0.3, 0.1, 0.1]})
    assert spec == lexical.LexicalConfig(("specify",), (0.0, 0.1, 0.3))


def test_training_with_a_lexical_section_records_the_grid_and_the_choice_and_reruns_byte_identical(tmp_path):
    release = Release.open(write_release(tmp_path / "rel", n_train=96, n_val=24, relations=RELATIONS, seed=3))
    cfg = tmp_path / "typed.yaml"
    cfg.write_text(
        "base: all-MiniLM-L6-v2\nname: typed-moves\nepochs: 4\nbatch_size: 32\nlr: 0.01\nmix_moves: true\n"
        "move_loss: 1.0\nvalidation_distractors: 20\n"
        "lexical: {moves: [specify, address], weights: [0.05, 0.5], validation_distractors: 30, "
        "floors: {broaden: 0.2}}\n",
        encoding="utf-8",
    )
    config = adapters.load_config(cfg)
    outs = []
    for name in ("a", "b"):
        trained, choices = adapters.train_adapters(config, release, typed_encode)
        choice = adapters.choose_lexical(config, release, typed_encode, trained)
        adapters.write_outputs(tmp_path / name, config, release, trained, choices, choice)
        outs.append((tmp_path / name / "summary.json").read_bytes())
    assert outs[0] == outs[1]
    summary = json.loads(outs[0])
    grid = summary["lexical"]["points"]
    assert [(p["move"], p["weight"]) for p in grid] == [
        (m, w) for m in ("specify", "address") for w in (0, 0.05, 0.5)
    ]
    assert summary["lexical"]["pool"] == 3 * 24 + 30  # every validation gold once, 30 distractors
    chosen = summary["lexical"]["weights"]
    assert chosen  # the texts share each pair's number, so BM25 finds golds and some weight helps
    for move, weight in chosen.items():  # each chosen weight is its move's best allowed
        mine = [p for p in grid if p["move"] == move and p["allowed"]]
        best = max(mine, key=lambda p: (p["mrr_at_10"][move] + p["move_accuracy"][move], -p["weight"]))
        assert best["weight"] == weight > 0
    assert any(
        line.startswith("BM25 weights (validation pool of 102)")
        for line in adapters.describe(choices, choice)
    )


def test_the_shipped_hybrid_uses_the_weights_its_config_chose_on_validation():
    """The registry's weights are the ones ``ratio train adapters`` wrote to the shipped summary from the shipped
    config (rerunning that one command reproduces both files: training/adapters/README.md)."""
    summary = json.loads((REPO / "training/adapters/all-MiniLM-L6-v2-moves.summary.json").read_text())
    config = adapters.load_config(REPO / "training/adapters/all-MiniLM-L6-v2.yaml")
    entry = REGISTRY["all-MiniLM-L6-v2-moves-lex"]
    assert dict(entry.lexical_weights) == summary["lexical"]["weights"] and entry.lexical_weights
    assert summary["config"]["lexical"]["moves"] == list(config.lexical.moves)
    assert summary["weights_sha256"] == "055feb7b8639fcc81f0b1e9262a855b3054ede336797c5e64100f2203da847cf"
