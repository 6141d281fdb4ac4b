"""The JSON Schema of sweep files, generated from the sweep's key tables, shipped as ``sweep.schema.json``.

Editors check a sweep file as it is written against it (e.g. a ``#:schema`` comment line for TOML editors
that read one, ``yaml-language-server: $schema=`` for YAML); :func:`eatkit.run.sweep.parse_sweep` checks
every sweep file against it after its own checks (with jsonschema installed). ``tests/test_json_schemas.py``
checks that the shipped file is what :func:`sweep_json_schema` generates.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SCHEMA_FILE = "sweep.schema.json"


def param_schema(param: Any) -> dict[str, Any]:
    """The JSON Schema of one parameter (:meth:`eatkit.params.Param.json_schema`: type, choices, range, list).

    >>> from eatkit.params import Param
    >>> param_schema(Param("iterations", int, 1000, low=1))
    {'type': 'integer', 'minimum': 1}
    """
    return param.json_schema()


def _setting_properties() -> dict[str, Any]:
    """The typed run options of a setting: each declared once (:data:`eatkit.stats.options.OPTIONS`,
    ``alternative`` also ``observed``) and ``params``, every kind's parameters (:mod:`eatkit.kinds`)."""
    import dataclasses

    from eatkit.kinds import KINDS, get_kind
    from eatkit.run.runner import RunOptions
    from eatkit.stats.options import OBSERVED, OPTIONS

    params: dict[str, Any] = {}
    for kind in KINDS:
        for param in get_kind(kind).params:
            params.setdefault(param.name, param_schema(param))
    typed = {name: param_schema(param) for name, param in OPTIONS.items()}
    typed["alternative"] = {"enum": [*OPTIONS["alternative"].choices, OBSERVED]}
    typed["params"] = {"type": "object", "properties": params, "additionalProperties": False}
    return {f.name: typed.get(f.name, {}) for f in dataclasses.fields(RunOptions)}


def _slurm_properties() -> dict[str, Any]:
    from eatkit.run.slurm import RESOURCE_KEYS

    name = {"type": "string", "minLength": 1}
    typed = {"partition": name, "account": name, "qos": name, "constraint": name,
             "gpus": {"type": "integer", "minimum": 0}, "cpus": {"type": "integer", "minimum": 1},
             "max_parallel": {"type": "integer", "minimum": 1},
             "mem": {"anyOf": [{"type": "number", "exclusiveMinimum": 0},
                               {"type": "string", "pattern": "^\\s*\\d+(\\.\\d+)?\\s*[MGTmgt][Bb]?\\s*$"}]},
             "time": {"anyOf": [{"type": "integer", "minimum": 1},
                                {"type": "string", "pattern": "^\\s*(\\d+-)?\\d+:\\d\\d:\\d\\d\\s*$"}]},
             "extra": {"type": "object", "propertyNames": {"pattern": "^[a-z][a-z0-9-]*$"},
                       "additionalProperties": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"const": True}]}},
             "setup": {"type": "array", "items": {"type": "string", "pattern": "^[^\\n]*$"}}}
    return {k: {**typed.get(k, {}), "description": meaning} for k, meaning in RESOURCE_KEYS.items()}


def _suite_tests() -> list[dict[str, Any]]:
    """For each bundled suite, the test ids a suite entry naming it may select (checked when read)."""
    from eatkit.stimuli.loader import list_suites

    return [{"if": {"properties": {"suite": {"const": suite.id}}, "required": ["suite"]},
             "then": {"properties": {"tests": {"items": {"enum": [t.id for t in suite.tests]}}}}}
            for suite in list_suites()]


def sweep_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of sweep files (``docs/scale.md``): their top-level, model, suite,
    setting and ``slurm`` keys, from :mod:`eatkit.run.sweep`, :class:`eatkit.run.runner.RunOptions` and
    :data:`eatkit.run.slurm.RESOURCE_KEYS`.

    >>> sorted(sweep_json_schema()["$defs"])
    ['model', 'setting', 'slurm', 'suite']
    """
    from eatkit.command_options import COMMAND_OPTIONS
    from eatkit.sources.vectors import OOV_POLICIES
    from eatkit.run.sweep_file import METADATA_KEYS, MODEL_KEYS, SOURCE_KEYS, SUITE_KEYS, TOP_KEYS
    from eatkit.specs import METRICS

    text = {"type": "string", "minLength": 1}
    slurm = {"type": "object", "additionalProperties": False, "properties": _slurm_properties()}
    model_properties: dict[str, Any] = {k: {} for k in MODEL_KEYS}
    model_properties.update({"label": text, "name": text, "vectors": text, "embeddings": text, "answers": text,
                             "answer_field": text, "answer_format": text,
                             "embeddings_model": text, "images": text, "checkpoint": text, "revision": text,
                             "device": text, "prompt": {"type": "string"}, "cache": {"type": "boolean"},
                             "lowercase": {"type": "boolean"}, "oov": {"enum": list(OOV_POLICIES)},
                             "slurm": {"$ref": "#/$defs/slurm"}, **{k: {"description": "report metadata"}
                                                                    for k in METADATA_KEYS}})
    # the model options eatkit run declares (batch size, layer, workers): typed by their declarations
    model_properties.update({k: param_schema(p) for k, p in COMMAND_OPTIONS["run"].items() if k in MODEL_KEYS})
    model = {"oneOf": [text, {"type": "object", "properties": model_properties, "additionalProperties": False,
                              "oneOf": [{"required": [k]} for k in SOURCE_KEYS]}]}
    suite = {"oneOf": [text, {"type": "object", "required": ["suite"], "additionalProperties": False,
                              "properties": {**{k: {} for k in SUITE_KEYS}, "label": text, "suite": text,
                                             "tests": {"type": "array", "items": text},
                                             "metrics": {"type": "array", "items": {
                                                 **text, "examples": list(METRICS.names()),
                                                 "description": "a member of the metrics family (a registered "
                                                 "one is known without regenerating this file)"}}},
                              "allOf": _suite_tests()}]}
    setting = {"type": "object", "additionalProperties": False,
               "properties": {"label": text, **_setting_properties()}}
    top: dict[str, Any] = {k: {} for k in TOP_KEYS}
    top.update({"output": text, "models": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/model"}},
                "suites": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/suite"}},
                "settings": {"type": "array", "items": {"$ref": "#/$defs/setting"}},
                "slurm": {"$ref": "#/$defs/slurm"}})
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://eatkit.invalid/schemas/sweep.schema.json",
            "title": "eatkit sweep file",
            "description": "Generated by eatkit.run.schemas.sweep_json_schema(); see docs/scale.md.",
            "type": "object", "required": ["models", "suites"], "properties": top, "additionalProperties": False,
            "$defs": {"model": model, "suite": suite, "setting": setting, "slurm": slurm}}


def write_schemas(folder: Path | None = None) -> list[Path]:
    """Regenerate the shipped JSON Schemas from the declarations (the kinds registered in
    :data:`eatkit.kinds.KINDS`, their parameters, the sweep keys): ``src/eatkit/stimuli/suite.schema.json``
    and ``src/eatkit/run/sweep.schema.json``; run ``python -m eatkit.run.schemas`` after adding a kind or a
    parameter (``tests/test_json_schemas.py`` fails until the files are the generated ones). ``folder``:
    write both there instead."""
    import json
    from importlib import resources

    from eatkit.io import atomic_write_bytes
    from eatkit.stimuli.schema import suite_json_schema

    written = []
    for package, name, schema in (("eatkit.stimuli", "suite.schema.json", suite_json_schema()),
                                  ("eatkit.run", "sweep.schema.json", sweep_json_schema())):
        path = folder / name if folder is not None else Path(str(resources.files(package).joinpath(name)))
        atomic_write_bytes(path, (json.dumps(schema, indent=1) + "\n").encode("utf-8"))
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write_schemas():
        print(f"wrote {path}")
