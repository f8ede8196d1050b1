"""The files written from ``core/relations.py``: the committed bytes are their render (so nothing drifts from the
relation records), a stale copy is found and rewritten, and a fourth relation reaches every relation list of the
schema and a task, a Mini task and the benchmark of the mteb file."""

from __future__ import annotations

import copy
import dataclasses
import json
import shutil
import types
from pathlib import Path

import jsonschema
import pytest

from ratio_bench.core.relations import BY_NAME, RELATION_SPECS, RELATIONS
from ratio_bench.evaluation import generated
from ratio_bench.evaluation.entry.record import published_schema
from ratio_bench.evaluation.entry.schema import RELATION_KEYED, SchemaTemplateError, render_schema
from ratio_bench.evaluation.scoring.mteb_file import render_task_file

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "eval" / "submission.schema.json"
TASK_FILE = ROOT / "eval" / "mteb" / "ratio_retrieval.py"
CONTRAST = dataclasses.replace(
    BY_NAME["broaden"],
    name="contrast",
    task_name="RatioContrast",
    description="Given a scientific statement, retrieve a sentence that argues against it.",
    move_phrase="contradicts it",
)


def test_the_committed_files_are_their_render_byte_for_byte():
    assert render_schema(SCHEMA.read_text(encoding="utf-8")).encode("utf-8") == SCHEMA.read_bytes()
    assert render_task_file().encode("utf-8") == TASK_FILE.read_bytes()
    assert generated.stale(ROOT) == {}
    assert generated.main(["--check"]) == 0


def test_every_relation_list_of_the_schema_is_the_relations():
    schema = published_schema()
    for where in RELATION_KEYED:
        node = schema
        for part in where.split("/"):
            node = node["properties"][part]
        assert node["propertyNames"]["enum"] == list(RELATIONS), where
    assert schema["properties"]["tuned_for"]["enum"] == [*RELATIONS, "all"]


def test_a_stale_copy_is_named_by_check_and_rewritten(tmp_path, capsys):
    for name in generated.GENERATED:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, tmp_path / name)
    schema = tmp_path / "eval" / "submission.schema.json"
    schema.write_text(schema.read_text().replace('"broaden", "specify"]}', '"broaden"]}', 1))
    (tmp_path / "eval" / "mteb" / "ratio_retrieval.py").write_text("# edited by hand\n")
    assert sorted(generated.stale(tmp_path)) == sorted(generated.GENERATED)
    assert generated.write(tmp_path) == sorted(generated.GENERATED)
    for name in generated.GENERATED:
        assert (tmp_path / name).read_bytes() == (ROOT / name).read_bytes(), name
    assert generated.write(tmp_path) == []  # nothing rewritten when nothing changed


def test_a_fourth_relation_reaches_every_relation_list_of_the_schema():
    relations = (*RELATIONS, "contrast")
    schema = json.loads(render_schema(SCHEMA.read_text(encoding="utf-8"), relations))
    jsonschema.Draft202012Validator.check_schema(schema)
    entry = json.loads(next((ROOT / "eval" / "results").rglob("*.json")).read_bytes())
    entry = copy.deepcopy(entry) | {"tuned_for": "contrast"}
    entry["results"]["contrast"] = next(iter(entry["results"].values()))
    jsonschema.validate(entry, schema)
    with pytest.raises(jsonschema.ValidationError, match="contrast"):
        jsonschema.validate(entry, published_schema())


def test_an_enum_of_another_kind_under_property_names_stops_the_render():
    text = SCHEMA.read_text(encoding="utf-8").replace(
        '"code_version": {"type": "string", "maxLength": 50},',
        '"code_version": {"type": "object", "propertyNames": {"enum": ["git", "pypi"]}},',
    )
    with pytest.raises(SchemaTemplateError, match="code_version"):
        render_schema(text)


def test_a_fourth_relation_gets_its_task_and_mini_task_in_the_mteb_file():
    text = render_task_file((*RELATION_SPECS, CONTRAST))
    assert "four scientific-retrieval tasks" in text
    pytest.importorskip("mteb")
    module = types.ModuleType("ratio_retrieval_contrast")
    exec(compile(text, "ratio_retrieval_contrast.py", "exec"), module.__dict__)
    names = [t.metadata.name for t in module.RATIO.tasks]
    assert {"RatioContrast", "RatioContrastMini"} <= set(names)
    assert "RatioContrastLatest" not in names  # no published snapshot yet: no Latest task
    assert module.RatioContrast.metadata.hf_subsets == ["contrast"]
    assert module.RatioContrastMini.metadata.eval_splits == ["mini"]
    assert module.RatioContrast.metadata.description == CONTRAST.description
    assert (
        "broadens it, specifies it or contradicts it. Four tasks on the test split"
        in module.RATIO.description
    )
