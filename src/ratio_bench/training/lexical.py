"""A hybrid model's BM25 weight per move, chosen on validation by a rule the adapter config states in advance.

Why: on the dev release an instance shares the words of the problem it instantiates (BM25 alone nearly matches
the adapters on Specify's test MRR@10), so adding ``w * bm25 / max bm25`` to a move's cosine (the ``hybrid``
retriever kind, ``retrieval/retriever.py``) lifts that move's ranking. The same term raises every score of that
move, so past some weight the other moves' golds start to rank best under it and *their* move accuracy falls.
The rule therefore maximises the move's own validation objective (MRR@10 plus move accuracy, what picks the
adapters' variants) over a grid of weights, subject to a floor on every other move's validation move accuracy,
and a weight is kept only when the objective rises. A tie keeps the smaller weight. Moves are chosen in the
config's order, each given the weights chosen before it.

Everything here works on arrays (cosines per move, normalised BM25 per relation, gold rows), so the rule is
tested on numbers built to have one right answer; ``training/adapters.py`` builds those arrays from a release.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ratio_bench.core.config import Checker
from ratio_bench.core.relations import RELATIONS
from ratio_bench.evaluation.analysis.move_sensitivity import score_ranks, tie_shared_accuracy

FIELDS = ("moves", "weights", "validation_distractors", "floors")


@dataclass(frozen=True)
class LexicalConfig:
    """The ``lexical:`` section of an adapter config."""

    moves: tuple[str, ...]  # the moves that may get a BM25 weight, chosen in this order
    weights: tuple[float, ...]  # the grid tried for each (0, no BM25, is always tried)
    # distractors in the validation pool the weights are chosen on: BM25's normalisation (the best score in the
    # pool searched) depends on the pool, so its make-up should match an evaluation pool (three quarters)
    validation_distractors: int = 0
    # move -> the least validation move accuracy allowed
    floors: dict[str, float] = field(default_factory=dict)


def parse(c: Checker, raw: object) -> LexicalConfig | None:
    """The checked ``lexical:`` section, or None when the config has none."""
    if raw is None:
        return None
    raw = c.mapping(raw, "lexical", FIELDS, null_ok=False)
    moves = c.string_list(c.required(raw, "moves", "lexical"), "lexical.moves")
    for move in moves:
        c.choice(move, "lexical.moves", RELATIONS)
    grid = raw.get("weights")
    if not isinstance(grid, list) or not grid:
        raise c.fail("lexical.weights", "must list at least one weight, e.g. [0.02, 0.05, 0.1]")
    weights = [c.number(w, f"lexical.weights[{i}]", 10.0) for i, w in enumerate(grid)]
    if any(w is None for w in weights):
        raise c.fail("lexical.weights", "must hold numbers only, not null")
    floors = c.mapping(raw.get("floors"), "lexical.floors", RELATIONS)
    return LexicalConfig(
        tuple(dict.fromkeys(moves)),
        tuple(sorted({0.0, *(float(w) for w in weights)})),
        c.count(raw.get("validation_distractors"), "lexical.validation_distractors", 1_000_000) or 0,
        {m: float(c.number(v, f"lexical.floors.{m}", 1.0) or 0.0) for m, v in floors.items()},
    )


@dataclass(frozen=True)
class Point:
    """One weight of the grid tried for one move, with every move's validation figures at it."""

    move: str
    weight: float
    mrr_at_10: dict[str, float]
    move_accuracy: dict[str, float]
    allowed: bool  # every other move's move accuracy at or above its floor


def evaluate(
    cosines: dict[str, dict[str, np.ndarray]],
    words: dict[str, np.ndarray],
    gold_rows: dict[str, np.ndarray],
    weights: dict[str, float],
) -> tuple[dict[str, float], dict[str, float]]:
    """(MRR@10, move accuracy) per relation of ``cosines[relation][move] + weights[move] * words[relation]``:
    ranks and move accuracy as ``ratio analyze move-sensitivity`` counts them (``score_ranks``,
    ``tie_shared_accuracy``)."""
    mrr, accuracy = {}, {}
    for rel, by_move in cosines.items():
        moves = list(by_move)
        table = np.stack(
            [score_ranks(by_move[m] + weights.get(m, 0.0) * words[rel], gold_rows[rel]) for m in moves],
            axis=1,
        )
        own = table[:, moves.index(rel)]
        mrr[rel] = round(float(np.where(own <= 10, 1.0 / own, 0.0).mean()), 6)
        accuracy[rel] = round(tie_shared_accuracy(table, moves.index(rel)), 6)
    return mrr, accuracy


def choose(
    config: LexicalConfig,
    cosines: dict[str, dict[str, np.ndarray]],
    words: dict[str, np.ndarray],
    gold_rows: dict[str, np.ndarray],
) -> tuple[dict[str, float], list[Point]]:
    """The config's rule: per move in order, the grid weight that maximises its MRR@10 plus move accuracy among
    those that keep every other move at or above its floor (or where it already was, if below), a tie keeping
    the smaller weight. Returns the chosen weights (moves given 0 left out) and every point tried."""
    chosen: dict[str, float] = {}
    points: list[Point] = []
    for move in config.moves:
        if move not in cosines:
            continue
        _, start = evaluate(cosines, words, gold_rows, chosen)
        best: tuple[float, float] | None = None
        for weight in config.weights:
            mrr, accuracy = evaluate(cosines, words, gold_rows, chosen | {move: weight})
            allowed = all(
                accuracy[o] >= min(floor, start[o])
                for o, floor in config.floors.items()
                if o != move and o in accuracy
            )
            points.append(Point(move, weight, mrr, accuracy, allowed))
            score = mrr[move] + accuracy[move]
            if allowed and (best is None or score > best[0]):
                best = (score, weight)
        if best is not None and best[1] > 0:
            chosen[move] = best[1]
    return chosen, points
