"""The Ratio MTEB tasks: plain module-level mteb tasks read by mteb's stock loader, per-move prompts included."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

pytest.importorskip("mteb")

from mteb.abstasks.retrieval_dataset_loaders import RetrievalDatasetLoader  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402
from tests.helpers.training import build_tiny  # noqa: E402

from ratio_bench.core.relations import RELATIONS  # noqa: E402
from ratio_bench.evaluation.scoring import mteb_tasks
from ratio_bench.evaluation.scoring.evaluate import load_split, score  # noqa: E402
from ratio_bench.retrieval.cache import EmbeddingCache  # noqa: E402
from ratio_bench.retrieval.registry import ModelSetup  # noqa: E402

TASK_FILE = Path(__file__).resolve().parents[3] / "eval" / "mteb" / "ratio_retrieval.py"


def test_tasks_are_module_level_classes_pointing_at_the_published_release(small_release):
    for relation, cls in mteb_tasks.TASKS.items():
        assert cls is getattr(mteb_tasks, cls.__qualname__) and cls.__qualname__ == cls.metadata.name
        assert cls.metadata.dataset == mteb_tasks.HUB_DATASET and cls.metadata.hf_subsets == [relation]
    [task] = mteb_tasks.ratio_tasks(["broaden"], small_release, ["validation"], revision="v2")
    assert task.metadata.dataset == {"path": str(small_release), "revision": "v2"}
    assert task.metadata.eval_splits == ["validation"]
    assert mteb_tasks.RatioBroaden.metadata.dataset == mteb_tasks.HUB_DATASET  # the class is left alone


def test_a_local_folder_must_be_a_release_whose_card_stays_inside_it(small_release, tmp_path):
    from ratio_bench.dataset.release import DatasetError, NotAReleaseError

    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "README.md").write_text("---\nconfigs: []\n---\n")
    with pytest.raises(NotAReleaseError, match="not a Ratio release folder"):
        mteb_tasks.ratio_tasks(["address"], tmp_path / "notes")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.parquet").write_bytes(b"PAR1")
    card = (small_release / "README.md").read_text()
    pattern = "data/address/test-*.parquet"
    assert pattern in card
    for i, (target, make) in enumerate(
        [
            ("../outside/*.parquet", None),
            (str(outside / "*.parquet"), None),
            ("hf://datasets/org/other/*.parquet", None),
            ("data/linked/*.parquet", lambda root: (root / "data" / "linked").symlink_to(outside)),
            (
                "data/address/escape.parquet",
                lambda root: (root / "data/address/escape.parquet").symlink_to(outside / "secret.parquet"),
            ),
        ]
    ):
        root = tmp_path / f"release{i}"
        shutil.copytree(small_release, root)
        (root / "README.md").write_text(card.replace(pattern, target, 1))
        if make:
            make(root)
        with pytest.raises(DatasetError, match=r"README.md: configs\[\d+\]\.data_files\[\d+\]: .*own files"):
            mteb_tasks.ratio_tasks(["address"], root)


def test_the_contributed_task_file_is_the_package_tasks():
    spec = importlib.util.spec_from_file_location("ratio_retrieval", TASK_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for cls in mteb_tasks.TASKS.values():
        theirs = getattr(module, cls.__qualname__)
        assert theirs.metadata.model_dump() == cls.metadata.model_dump()


def test_the_stock_loader_reads_a_release_without_a_second_corpus(small_release):
    ours = load_split(small_release, "test", ["address"])
    data = RetrievalDatasetLoader(str(small_release), "local", split="test", config="address").load()
    qids, texts, golds = ours.queries["address"]
    assert list(data["queries"]["id"]) == qids and list(data["queries"]["text"]) == texts
    assert data["corpus"].column_names == ["id", "text"]
    assert list(data["corpus"]["id"]) == ours.corpus_ids and list(data["corpus"]["text"]) == ours.corpus_texts
    assert data["relevant_docs"] == {q: {g: 1} for q, g in zip(qids, golds, strict=True)}
    assert not (small_release / "data" / "address-corpus").exists()  # the card points at data/corpus


def test_a_unified_models_move_instructions_reach_mteb(small_release, tmp_path, monkeypatch):
    monkeypatch.setenv("RATIO_CACHE", str(tmp_path / "cache"))
    model = build_tiny("bert", tmp_path)
    instructions = {"address": "Find a fix: ", "specify": "Find an example: "}
    setup = ModelSetup(
        "tiny unified",
        "dense",
        str(model),
        "saved",
        "query: ",
        "document: ",
        query_prompts=tuple(instructions.items()),
    )
    assert mteb_tasks.model_prompts(setup, RELATIONS) == {
        "query": "query: ",
        "document": "document: ",
        "RatioAddress-query": "Find a fix: ",
        "RatioSpecify-query": "Find an example: ",
    }
    seen = []
    encode = SentenceTransformer.encode

    def spy(self, sentences, *args, **kwargs):  # mteb's encode calls reach the model through the cache
        seen.append(kwargs.get("prompt"))
        return encode(self, sentences, *args, **kwargs)

    monkeypatch.setattr(SentenceTransformer, "encode", spy)
    relations = ["address", "specify"]  # the train split has queries of both
    theirs = mteb_tasks.score_with_mteb(setup, small_release, "train", relations)
    assert sorted(seen) == sorted(["document: ", *instructions.values()])  # the shared corpus once
    ours = score(setup, load_split(small_release, "train", relations), EmbeddingCache(tmp_path / "c"))
    for relation in relations:  # mteb rounds nDCG, MAP, recall and precision to 5 decimals (not MRR)
        for key in ("mrr_at_10", "ndcg_at_10", "recall_at_1"):
            mine, mteb_value = ours.metrics[relation][key], theirs.metrics[relation][key]
            assert min(abs(mteb_value - mine), abs(mteb_value - round(mine, 5))) <= 1e-6, key


def test_snapshot_tasks_read_each_snapshot_through_the_stock_loader(tmp_path):
    from tests.helpers.dataset import build_snapshots, snapshot_records

    root = tmp_path / "ratio"
    build_snapshots(tmp_path, snapshot_records(), root)
    tasks = mteb_tasks.snapshot_tasks(root)
    assert [(t.metadata.hf_subsets, t.metadata.eval_splits) for t in tasks] == [
        (["address"], ["test_2022_01", "test_2022_02"]),
        (["specify"], ["test_2022_01"]),
    ]
    ours = load_split(root, "test_2022_02", ["address"])
    data = RetrievalDatasetLoader(str(root), "local", split="test_2022_02", config="address").load()
    assert list(data["queries"]["id"]) == ours.queries["address"].ids
    assert sorted(data["corpus"]["id"]) == sorted(ours.corpus_ids) and len(ours.corpus_ids) == 8


def test_mini_tasks_read_the_releases_mini_split(small_release):
    for relation, cls in mteb_tasks.MINI_TASKS.items():
        assert cls is getattr(mteb_tasks, cls.__qualname__) and cls.__qualname__ == f"{cls.metadata.name}"
        assert cls.metadata.name == mteb_tasks.TASKS[relation].metadata.name + "Mini"
        assert cls.metadata.eval_splits == ["mini"] and cls.metadata.hf_subsets == [relation]
    [task] = mteb_tasks.ratio_tasks(["address"], small_release, ["mini"])
    assert type(task).__name__ == "RatioAddressMini" and task.metadata.eval_splits == ["mini"]


def test_the_stock_loader_resolves_a_local_release_once_per_run_and_reads_the_same_rows(
    small_release, tmp_path
):
    """mteb's loader asks ``datasets`` to resolve the release folder for every config and split name; inside
    ``release_resolved_once`` that happens once per form of the call (two), the rows read are those read without it, and afterwards
    ``datasets`` is as it was."""
    import datasets.inspect
    import datasets.load

    real = datasets.load.dataset_module_factory
    calls: list[str] = []

    def counting(path, *args, **kwargs):
        calls.append(str(path))
        return real(path, *args, **kwargs)

    def load_all() -> list:
        tasks = mteb_tasks.ratio_tasks(list(RELATIONS), small_release, ["test"])
        return [
            (len(data["corpus"]), data["queries"]["id"], sorted(data["relevant_docs"]))
            for task in tasks
            for data in [
                RetrievalDatasetLoader(
                    str(small_release), "local", split="test", config=task.metadata.hf_subsets[0]
                ).load()
            ]
        ]

    datasets.load.dataset_module_factory = datasets.inspect.dataset_module_factory = counting
    try:
        plain = load_all()
        resolved_plain, calls[:] = len(calls), []
        with mteb_tasks.release_resolved_once(small_release):
            once = load_all()
        assert datasets.load.dataset_module_factory is counting  # put back as found
    finally:
        datasets.load.dataset_module_factory = datasets.inspect.dataset_module_factory = real
    assert once == plain
    assert resolved_plain >= 3 * len(RELATIONS) and len(calls) == 2  # config names; builders
