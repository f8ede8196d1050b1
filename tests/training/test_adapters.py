"""Per-move query adapters: training on a tiny release (deterministic, learns), the file format, the shipped model."""

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from tests.helpers.cli import run_ratio
from tests.helpers.training import write_release

from ratio_bench.core.relations import RELATIONS
from ratio_bench.dataset.release import Release
from ratio_bench.retrieval.adapters import AdapterError, QueryAdapters
from ratio_bench.serve.manifest import IndexManifest, IndexModel
from ratio_bench.training import adapters

DIM = 16


def fake_encode(ids: list[str], texts: list[str]) -> np.ndarray:
    """Each pair's query and gold share a random vector (by the pair's number); a gold is the query turned by a
    fixed rotation per move, so a linear map per move can learn what the base encoder cannot see."""
    out = []
    for i in ids:
        move = next((r for r in RELATIONS if i.startswith(f"{r}-")), "address")
        number = int(i.rsplit("-", 1)[1][1:])
        split = i.removeprefix(f"{move}-").split("-")[0]
        v = np.random.default_rng([number, len(split)]).normal(size=DIM)
        if "-g" in i:
            rotation = np.linalg.qr(np.random.default_rng(RELATIONS.index(move)).normal(size=(DIM, DIM)))[0]
            v = rotation @ v
        out.append(v / np.linalg.norm(v))
    return np.asarray(out, dtype=np.float32)


@pytest.fixture
def tiny(tmp_path):
    root = write_release(tmp_path / "rel", n_train=96, n_val=24, relations=RELATIONS, seed=3)
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("base: all-MiniLM-L6-v2\nname: tiny-moves\nepochs: 12\nbatch_size: 16\nlr: 0.01\n")
    return Release.open(root), adapters.load_config(cfg)


def test_training_is_deterministic_and_learns_each_moves_map(tiny, tmp_path):
    release, config = tiny
    trained, choices = adapters.train_adapters(config, release, fake_encode)
    for c in choices:  # the train loss falls, and validation prefers a learnt map over the base model
        assert all(c.train_loss_last[v] < 0.8 * c.train_loss_first[v] for v in c.train_loss_first), c
        assert (
            c.variant != "base" and c.validation_mrr_at_10[c.variant] > c.validation_mrr_at_10["base"] + 0.2
        )
    assert set(trained.weights) == set(RELATIONS)
    first = adapters.write_outputs(tmp_path / "a", config, release, trained, choices)
    again = adapters.write_outputs(
        tmp_path / "b", config, release, *adapters.train_adapters(config, release, fake_encode)
    )
    assert first.read_bytes() == again.read_bytes()
    assert (tmp_path / "a" / "summary.json").read_bytes() == (tmp_path / "b" / "summary.json").read_bytes()
    loaded = QueryAdapters.load(first)
    assert loaded.sha256 == hashlib.sha256(first.read_bytes()).hexdigest() and loaded.moves == RELATIONS


def typed_encode(ids: list[str], texts: list[str]) -> np.ndarray:
    """Each move's golds lie towards one direction of that move (what its kind of sentence looks like) from their
    query; distractors are random. A frozen model ranks a gold alike under every move (chance move accuracy);
    maps that learn the moves' directions from across-move negatives rank it best under its own move."""
    directions = np.random.default_rng(99).normal(size=(len(RELATIONS), DIM))
    out = []
    for i in ids:
        move = next((r for r in RELATIONS if i.startswith(f"{r}-")), "address")
        split, name = i.removeprefix(f"{move}-").split("-")
        number = int(name[1:])
        v = np.random.default_rng([number, len(split), RELATIONS.index(move), name[0] == "d"]).normal(
            size=DIM
        )
        if (
            name[0] == "g"
        ):  # near its query, towards its move's direction, and noisy: the base ranks it poorly
            noise = np.random.default_rng([number, len(split), 7]).normal(size=DIM)
            toward = directions[RELATIONS.index(move)]
            v = v / np.linalg.norm(v) + toward / np.linalg.norm(toward) + 0.9 * noise / np.linalg.norm(noise)
        out.append(v / np.linalg.norm(v))
    return np.asarray(out, dtype=np.float32)


def test_across_move_training_makes_the_moves_rank_differently(tiny, tmp_path):
    """mix_moves, move_loss, distractor negatives and a hidden part: every move's gold ranks best under its own
    move's map far above chance on validation, the file holds the hidden parts, and a rerun gives the same bytes."""
    release, _ = tiny
    cfg = tmp_path / "typed.yaml"
    cfg.write_text(
        "base: all-MiniLM-L6-v2\nname: typed-moves\nepochs: 15\nbatch_size: 32\nlr: 0.01\nmix_moves: true\n"
        "move_loss: 1.0\ndistractors: 20\nvalidation_distractors: 20\nhidden: 8\n"
    )
    config = adapters.load_config(cfg)
    assert (config.mix_moves, config.move_loss, config.distractors, config.hidden) == (True, 1.0, 20, 8)
    trained, choices = adapters.train_adapters(config, release, typed_encode)
    frozen = QueryAdapters("m", DIM)  # no maps: every move ranks alike
    valid = {r: adapters.read_pairs(release, r, "validation", None, 13, typed_encode) for r in RELATIONS}
    pool = adapters.validation_pool(valid, np.zeros((0, 0), np.float32))
    assert all(abs(a - 1 / 3) < 1e-6 for a in adapters.move_accuracy(frozen, valid, pool).values())
    for c in choices:
        assert c.variant != "base" and c.validation_move_accuracy > 0.6, c
        assert c.validation_mrr_at_10[c.variant] > c.validation_mrr_at_10["base"], c
    assert set(trained.hidden) == {r for r, c in ((c.relation, c) for c in choices) if c.variant != "base"}
    first = adapters.write_outputs(tmp_path / "a", config, release, trained, choices)
    loaded = QueryAdapters.load(first)
    assert set(loaded.hidden) == set(trained.hidden)
    q = typed_encode(["train-q1"], [""])
    assert np.allclose(loaded.apply("address", q), trained.apply("address", q), atol=1e-6)
    again = adapters.write_outputs(
        tmp_path / "b", config, release, *adapters.train_adapters(config, release, typed_encode)
    )
    assert first.read_bytes() == again.read_bytes()
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert all(m["validation_move_accuracy"] > 0.6 for m in summary["moves"])


def test_a_bad_adapter_file_is_refused_naming_it(tmp_path):
    good = QueryAdapters(
        "m", 4, {"address": np.eye(4, dtype=np.float32)}, {"address": np.zeros(4, np.float32)}
    )
    path = tmp_path / "a.safetensors"
    good.save(path)
    assert np.allclose(QueryAdapters.load(path).apply("broaden", np.eye(4)), np.eye(4))  # no map: unchanged
    bad = QueryAdapters(
        "m", 4, {"address": np.ones((4, 3), np.float32)}, {"address": np.zeros(4, np.float32)}
    )
    bad.save(path)
    with pytest.raises(AdapterError, match="a.safetensors: W.address must be square"):
        QueryAdapters.load(path)
    half = QueryAdapters(
        "m",
        4,
        {"address": np.eye(4, dtype=np.float32)},
        {"address": np.zeros(4, np.float32)},
        hidden={
            "address": (np.zeros((3, 4), np.float32), np.zeros(3, np.float32), np.zeros((3, 4), np.float32))
        },
    )
    half.save(path)  # U must be (d, h)
    with pytest.raises(AdapterError, match="V.address, c.address and U.address must have shapes"):
        QueryAdapters.load(path)
    path.write_bytes(b"not safetensors")
    with pytest.raises(AdapterError, match="a.safetensors: unreadable"):
        QueryAdapters.load(path)


def test_a_config_mistake_is_one_line(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("base: all-MiniLM-L6-v2\nname: x\nepoch: 3\n")
    run = run_ratio("train", "adapters", "--config", cfg, "--dataset", tmp_path, "--out", tmp_path / "o")
    assert run.code == 1 and "cfg.yaml: epoch: unknown field; did you mean 'epochs'?" in run.err
    assert "Traceback" not in run.err


@pytest.fixture(scope="module")
def shipped():
    pytest.importorskip("sentence_transformers")
    from ratio_bench.retrieval.registry import ModelUnavailableError, resolve

    try:
        return resolve("all-MiniLM-L6-v2-moves")
    except ModelUnavailableError as e:
        pytest.skip(str(e))


def test_the_shipped_move_aware_model_loads_from_package_data_and_encodes_queries_by_move(shipped):
    from ratio_bench.core.resources import data_path
    from ratio_bench.retrieval.retriever import DenseRetriever

    assert Path(shipped.adapters) == data_path("training", "adapters", "all-MiniLM-L6-v2-moves.safetensors")
    assert (
        shipped.move_aware
        and shipped.path
        == __import__("ratio_bench.retrieval.registry", fromlist=["resolve"]).resolve("all-MiniLM-L6-v2").path
    )  # documents: the base model's weights
    retriever = DenseRetriever.load(shipped)
    text = ["Deep graph networks oversmooth node features."]
    vectors = {m: retriever.encode_queries(m, ["q"], text)[0] for m in RELATIONS}
    base = retriever.embed("", text)[0]
    adapted = [m for m in RELATIONS if m in retriever.adapters.weights]
    assert len(adapted) >= 2
    for m in adapted:
        assert not np.allclose(vectors[m], base, atol=1e-3)
    assert len({vectors[m].tobytes() for m in RELATIONS}) == len(adapted) + (len(adapted) < len(RELATIONS))
    assert len({retriever.query_variant(m) for m in RELATIONS}) > 1


def test_ratio_models_json_lists_every_entry_with_move_awareness():
    from ratio_bench.retrieval.registry import REGISTRY

    run = run_ratio("models", "--json")
    assert run.code == 0, run.err
    rows = {r["name"]: r for r in json.loads(run.out)}
    assert list(rows) == list(REGISTRY)
    for row in rows.values():
        assert {"name", "kind", "setups", "available", "move_aware"} <= set(row)
        assert isinstance(row["available"], bool) and isinstance(row["setups"], list)
    assert rows["all-MiniLM-L6-v2-moves"]["move_aware"] is True
    assert rows["all-MiniLM-L6-v2"]["move_aware"] is False and rows["bm25"]["move_aware"] is False


def test_an_index_of_one_model_with_adapters_is_move_aware():
    moves = {m: "k" for m in RELATIONS}
    plain = IndexManifest({}, moves, {"k": IndexModel("dense", "k", query_prompt="")})
    assert not plain.move_aware
    adapted = IndexModel("dense", "k", query_prompt="", adapters_sha256="ab" * 32)
    assert IndexManifest({}, moves, {"k": adapted}).move_aware


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("variants: [own, rotate]", "variants: must be one of own, shared, bias, got 'rotate'"),
        ("select: accuracy", "select: must be one of mrr, mrr+move_accuracy"),
        ("mix_moves: 1", "mix_moves: must be true or false"),
        ("hidden: 0", "hidden: must be a positive integer"),
    ],
)
def test_a_mistake_in_the_move_aware_fields_names_the_field(tmp_path, line, message):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"base: all-MiniLM-L6-v2\nname: x\n{line}\n")
    with pytest.raises(adapters.AdapterConfigError) as e:
        adapters.load_config(cfg)
    assert str(e.value).startswith("cfg.yaml: ") or "cfg.yaml" in str(e.value)
    assert message in str(e.value)
