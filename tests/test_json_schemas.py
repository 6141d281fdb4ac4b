"""The JSON Schemas of suite files and sweep files: shipped as generated (from the kinds of tests and the key
tables, so they follow a refactor), every bundled suite and documented sweep file valid, bad files refused,
and the loaders' one-line errors for what only the schema catches."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from eatkit.cli import main
from eatkit.run.schemas import sweep_json_schema
from eatkit.stimuli.loader import list_suites
from eatkit.stimuli.schema import suite_json_schema
from eatkit.kinds import KINDS

from conftest import lazy_module
jsonschema = lazy_module("jsonschema")


def _shipped(package: str, name: str) -> dict:
    return json.loads(resources.files(package).joinpath(name).read_text(encoding="utf-8"))


def test_the_shipped_schemas_are_the_generated_ones():
    """Regenerate both with: python -m eatkit.run.schemas (docs/architecture.md)."""
    assert _shipped("eatkit.stimuli", "suite.schema.json") == suite_json_schema()
    assert _shipped("eatkit.run", "sweep.schema.json") == sweep_json_schema()


def test_the_regeneration_command_writes_the_shipped_bytes(tmp_path):
    from eatkit.run.schemas import write_schemas

    for path, package in zip(write_schemas(tmp_path), ("eatkit.stimuli", "eatkit.run")):
        assert path.read_bytes() == resources.files(package).joinpath(path.name).read_bytes()
    for schema in (suite_json_schema(), sweep_json_schema()):
        jsonschema.Draft202012Validator.check_schema(schema)
    assert suite_json_schema()["$defs"]["test"]["properties"]["kind"]["enum"] == list(KINDS)


def test_every_bundled_suite_is_valid():
    validator = jsonschema.Draft202012Validator(suite_json_schema())
    for suite in list_suites():
        data = json.loads(resources.files("eatkit.stimuli").joinpath("suites", f"{suite.id}.json").read_text("utf-8"))
        assert list(validator.iter_errors(data)) == [], suite.id


WORD = {"name": "w", "modality": "word", "items": ["a"]}
GOOD = {"schema": "eatkit.suite/1", "id": "s", "title": "S",
        "tests": [{"id": "t", "title": "T", "X": WORD, "Y": WORD, "A": WORD, "B": WORD}]}


def _test(**changes):
    test = {**GOOD["tests"][0], **changes}
    return {**GOOD, "tests": [{k: v for k, v in test.items() if v is not None}]}


@pytest.mark.parametrize("data", [
    _test(B=None),                                                     # a role of eat missing
    _test(T=WORD),                                                     # a role eat does not take
    _test(kind="sc-eat"),                                              # sc-eat takes T, A, B
    _test(kind="nope"),
    _test(X={"name": "x", "modality": "word", "items": []}),                       # no items
    _test(X={"name": "x", "modality": "image", "items": ["a"]}),                   # image sets take a category
    _test(X={"name": "x", "modality": "smell", "items": ["a"]}),
    _test(id="has space"),
    {**GOOD, "schema": "eatkit.suite/2"},
    {**GOOD, "tests": []},
])
def test_the_suite_schema_refuses_what_the_loader_refuses(data, tmp_path, capsys):
    assert list(jsonschema.Draft202012Validator(suite_json_schema()).iter_errors(data))
    (tmp_path / "bad.json").write_text(json.dumps(data))
    assert main(["list", "tests", str(tmp_path / "bad.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("eatkit: error: suite file ") and err.count("\n") == 1


def test_the_suite_schema_accepts_the_good_ones_of_every_kind():
    validator = jsonschema.Draft202012Validator(suite_json_schema())
    assert not list(validator.iter_errors({**GOOD, "$schema": "./suite.schema.json", "sets": {"w": WORD}}))
    assert not list(validator.iter_errors(_test(kind="sc-eat", X=None, Y=None, T="w") | {"sets": {"w": WORD}}))
    image = {"name": "Cars", "modality": "image", "category": "c/car"}
    assert not list(validator.iter_errors(_test(kind="geometry", X=None, Y=None, A=None, B=None, Car=image,
                                                 Man={**image, "category": "c/man"})))


def test_a_sweep_file_that_only_the_schema_refuses_is_one_line(tmp_path, capsys):
    (tmp_path / "s.toml").write_text('models = [{ name = "glove-6b-50d", label = "" }]\nsuites = ["weat"]\n')
    assert main(["sweep", str(tmp_path / "s.toml"), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("eatkit: error: sweep file ") and "(models/0/label)" in err and err.count("\n") == 1


def test_the_documented_sweep_files_are_valid():
    import tomllib
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[1] / "docs" / "scale.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in docs.split("```toml\n")[1:]]
    validator = jsonschema.Draft202012Validator(sweep_json_schema())
    assert len(blocks) >= 2
    for block in blocks:
        assert list(validator.iter_errors(tomllib.loads(block))) == []


@pytest.mark.parametrize("text, message", [
    ('settings = [{ alternative = "sideways" }]\n', "(settings/0/alternative) 'sideways' is not one of"),
    ('settings = [{ ddof = -1 }]\n', "(settings/0/ddof) -1 is less than the minimum of 0"),
    ('settings = [{ params = { iterations = 0 } }]\n', "(settings/0/params/iterations) 0 is less than the minimum of 1"),
    ('slurm = { gpus = -1 }\n', "(slurm/gpus) -1 is less than the minimum of 0"),
    ('models = [{ name = "glove-6b-50d", batch_size = 0 }]\n', "(models/0/batch_size) 0 is less than the minimum"),
    ('suites = [{ suite = "weat", tests = ["weat99"] }]\n', "(suites/0/tests/0) 'weat99' is not one of ['weat1',"),
])
def test_a_bad_setting_resource_option_or_test_id_fails_schema_and_loader_with_one_message(tmp_path, capsys, text,
                                                                                           message):
    """The loader checks every typed value with the schema: the same message as a schema check of the file."""
    import tomllib

    from eatkit.run.sweep import check_sweep_schema

    base = {"models": 'models = ["glove-6b-50d"]\n', "suites": 'suites = ["weat"]\n'}
    key = text.split(" ", 1)[0]
    body = "".join(v for k, v in base.items() if k != key) + text
    (tmp_path / "s.toml").write_text(body)
    with pytest.raises(Exception) as schema_error:
        check_sweep_schema(tomllib.loads(body), "here")
    errors = list(jsonschema.Draft202012Validator(sweep_json_schema()).iter_errors(tomllib.loads(body)))
    assert errors, "the schema accepts the file"
    assert main(["sweep", str(tmp_path / "s.toml"), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert err.rstrip("\n").split(": ", 3)[-1] == str(schema_error.value).split(": ", 1)[1]  # the same message


def test_metrics_all_is_a_valid_sweep_suite_entry():
    data = {"models": ["glove-6b-50d"], "suites": [{"suite": "weat", "tests": ["weat1"], "metrics": ["all"]}]}
    assert list(jsonschema.Draft202012Validator(sweep_json_schema()).iter_errors(data)) == []
    from eatkit.run.sweep import parse_sweep

    [cell] = parse_sweep(data).cells
    assert cell.tests[0] == "weat1" and "weat1:direct-bias" in cell.tests
