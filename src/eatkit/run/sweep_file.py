"""The sweep file (:mod:`eatkit.run.sweep`): read, checked and planned into cells, each with the tests its
model can embed (:func:`test_needs`, :func:`model_modalities`) and the hash that tells a finished cell."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eatkit._version import __version__
from eatkit.errors import EatkitError, one_line
from eatkit.io import read_config
from eatkit.run.runner import MODEL_OPTIONS
from eatkit.run.slurm import parse_resources

#: optional descriptive keys of a model entry, shown as columns of the sweep report
METADATA_KEYS: tuple[str, ...] = ("architecture", "parameters", "training_data")
#: the keys of a model entry (see :func:`eatkit.run.runner.build_source`; ``slurm``: :mod:`eatkit.run.slurm`)
MODEL_KEYS: tuple[str, ...] = ("label", "name", "vectors", "embeddings", "embeddings_model", "lowercase", "answers",
                               "answer_field", "answer_format", *MODEL_OPTIONS, "slurm", *METADATA_KEYS)
#: the keys of which a model entry names exactly one (a registered model, word vectors, embeddings, recorded answers)
SOURCE_KEYS: tuple[str, ...] = ("name", "vectors", "embeddings", "answers")
#: keys of a model entry that do not change its results, left out of a cell's configuration hash
UNHASHED_KEYS: tuple[str, ...] = ("slurm", *METADATA_KEYS)
SUITE_KEYS: tuple[str, ...] = ("label", "suite", "tests", "metrics")
TOP_KEYS: tuple[str, ...] = ("output", "models", "suites", "settings", "slurm")
EXECUTORS: tuple[str, ...] = ("local", "ray", "slurm")
_PATH_KEYS = ("vectors", "embeddings", "images", "answers")



@dataclass(frozen=True)
class Cell:
    """One model x suite x setting combination of a sweep."""

    id: str
    model: dict[str, Any]
    suite: dict[str, Any]
    settings: dict[str, Any]
    hash: str
    #: the tests of the cell its model can embed (metric tests ``t:<kind>`` included), in suite order
    tests: tuple[str, ...] = ()
    #: (test id, reason) of each selected test the model cannot embed: not run, not a failure
    inapplicable: tuple[tuple[str, str], ...] = ()

    @property
    def applies(self) -> bool:
        """Whether any of the cell's tests applies to its model (a cell with none is not run)."""
        return bool(self.tests)

    @property
    def labels(self) -> tuple[str, str, str]:
        return self.model["label"], self.suite["label"], self.settings["label"]


@dataclass(frozen=True)
class Sweep:
    """A parsed sweep file: its cells and default output folder."""

    cells: tuple[Cell, ...]
    output: Path | None
    source: str


# -- the sweep file --------------------------------------------------------------------------------


def load_sweep(path: str | os.PathLike[str]) -> Sweep:
    """Read and validate a sweep file (TOML; ``.yaml``/``.yml`` with PyYAML).

    >>> import tempfile, pathlib; p = pathlib.Path(tempfile.mkdtemp()) / "s.toml"
    >>> _ = p.write_text('models = ["glove-6b-50d"]\\nsuites = [{suite = "weat", tests = ["weat1"]}]')
    >>> [c.id for c in load_sweep(p).cells]
    ['glove-6b-50d__weat__default']
    """
    path = Path(path)
    data = read_config(path, "sweep file")  # the one reader: regular files only, bounded, nesting checked
    return parse_sweep(data, base=path.parent, source=str(path))


def parse_sweep(data: Any, *, base: Path = Path("."), source: str = "<sweep>") -> Sweep:
    """Validate a sweep's data (the parsed file) and expand it into cells."""
    where = f"sweep file {source}"
    _check_shape(data, where)
    # then the shipped JSON Schema (eatkit.run.schemas): every typed value (settings, resources, options,
    # bundled suites' test ids) is refused there, with the message a schema check gives; then what types
    # and ranges cannot say
    check_sweep_schema(data, where)
    slurm = parse_resources(data["slurm"], where) if "slurm" in data else {}
    models = [_model_entry(m, base, where, slurm) for m in _list(data, "models", where)]
    suites = [_suite_entry(s, base, where) for s in _list(data, "suites", where)]
    settings = _settings(data, where)
    _check_axes((("models", models), ("suites", suites), ("settings", settings)), where)
    plans = {s["label"]: _suite_plan(s, where) for s in suites}
    cells = tuple(_cell(m, s, o, plans[s["label"]]) for m in models for s in suites for o in settings)
    return Sweep(cells, _output_folder(data.get("output"), base, where), source)


def _output_folder(output: Any, base: Path, where: str) -> Path | None:
    """The sweep's ``output`` folder (relative to the sweep file's folder), if it names one."""
    if output is not None and not isinstance(output, str):
        raise EatkitError(f"{where}: 'output' must be a folder name")
    return (base / output) if output else None


def _settings(data: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """The sweep's settings (default: one, with no options)."""
    given = data.get("settings") or [{}]
    if not isinstance(given, list):
        raise EatkitError(f"{where}: 'settings' must be a list of tables of run options")
    return [_settings_entry(s, i, len(given), where) for i, s in enumerate(given)]


def _check_axes(axes: tuple[tuple[str, list[dict[str, Any]]], ...], where: str) -> None:
    """Every axis' labels: none repeated (every axis checked first), then each a folder name."""
    for check in (_check_repeated, _check_folders):
        for name, entries in axes:
            check(name, [e["label"] for e in entries], where)


def _check_repeated(name: str, labels: list[str], where: str) -> None:
    """An error for a label given twice."""
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise EatkitError(f"{where}: {name} labelled twice: {', '.join(repeated)} (give each a distinct label)")


def _check_folders(name: str, labels: list[str], where: str) -> None:
    """An error for two labels that map to one folder name."""
    folders: dict[str, str] = {}
    for label in labels:
        other = folders.setdefault(folder_name(label).casefold(), label)
        if other != label:
            raise EatkitError(f"{where}: {name} '{other}' and '{label}' map to one folder name "
                              f"'{folder_name(label)}' (give them labels that differ in letters or digits)")


def check_sweep_schema(data: Any, where: str) -> None:
    """Check parsed sweep file ``data`` against the shipped schema (``sweep.schema.json``, :mod:`eatkit.run.schemas`; with jsonschema installed): the best
    match of its problems as one :class:`EatkitError` naming where in the file, what the key means (its
    ``description``) and jsonschema's message. This is the sweep loader's check of every typed value, so
    the loader and an editor's schema check refuse the same files with the same message.

    >>> check_sweep_schema({"models": ["m"], "suites": ["weat"], "slurm": {"gpus": -1}}, "s.toml")
    Traceback (most recent call last):
    eatkit.errors.EatkitError: s.toml: (slurm/gpus) -1 is less than the minimum of 0 (GPUs per task (--gpus-per-node))
    """
    try:
        import jsonschema
    except ImportError:
        return
    from eatkit.io import shipped_json

    schema = shipped_json("eatkit.run", "sweep.schema.json")
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        path = "/".join(str(p) for p in error.absolute_path)
        meaning = _meaning(error)
        message = f"{error.instance!r} is not valid" if error.validator == "pattern" else one_line(error.message)
        raise EatkitError(f"{where}: ({path or 'top level'}) {message}"
                          + (f" ({meaning})" if meaning else ""))


def _meaning(error: Any) -> str | None:
    """The ``description`` of the schema a jsonschema error is about (or of its parent's)."""
    meaning = error.schema.get("description") if isinstance(error.schema, dict) else None
    if meaning is None and error.parent is not None and isinstance(error.parent.schema, dict):
        meaning = error.parent.schema.get("description")
    return meaning


def _check_shape(data: Any, where: str) -> None:
    """The structure of a sweep file (tables, lists, known keys, one model source per entry), with the
    loader's own messages, before its values are checked against the schema."""
    from eatkit.run.slurm import RESOURCE_KEYS

    if not isinstance(data, dict):
        raise EatkitError(f"{where}: expected a table of {', '.join(TOP_KEYS)}")
    _check_keys(data, TOP_KEYS, where)
    slurm_keys = tuple(RESOURCE_KEYS)
    if isinstance(data.get("slurm"), dict):
        _check_keys(data["slurm"], slurm_keys, f"{where}: slurm")
    for entry in _list(data, "models", where):
        if isinstance(entry, dict):
            _check_model_shape(entry, where, slurm_keys)
    for entry in _list(data, "suites", where):
        if isinstance(entry, dict) and isinstance(entry.get("suite"), str):
            _check_keys(entry, SUITE_KEYS, f"{where}, suite {entry['suite']}")
    _check_settings_shape(data.get("settings") or [], where)


def _check_settings_shape(given: Any, where: str) -> None:
    """The settings: a list whose tables have run options' keys (and ``label``)."""
    from eatkit.run.runner import RunOptions

    if not isinstance(given, list):
        raise EatkitError(f"{where}: 'settings' must be a list of tables of run options")
    fields = ("label", *(f.name for f in dataclasses.fields(RunOptions)))
    for index, entry in enumerate(given):
        if isinstance(entry, dict):
            _check_keys(entry, fields, f"{where}, setting {index + 1}")


def _check_model_shape(entry: dict[str, Any], where: str, slurm_keys: tuple[str, ...]) -> None:
    """A model table's keys, its one source and its ``slurm`` table's keys."""
    label = f"{where}, model {entry.get('label') or entry.get('name', '')}".rstrip()
    _check_keys(entry, MODEL_KEYS, label)
    _model_source(entry, where)
    if isinstance(entry.get("slurm"), dict):
        _check_keys(entry["slurm"], slurm_keys, f"{label}: slurm")


def _model_source(entry: Mapping[str, Any], where: str) -> str:
    """The one source key of a model table (:data:`SOURCE_KEYS`)."""
    given = [k for k in SOURCE_KEYS if k in entry]
    if len(given) != 1:
        raise EatkitError(f"{where}: a model needs exactly one of {', '.join(SOURCE_KEYS)} (got {entry})")
    return given[0]


def _check_keys(entry: Mapping[str, Any], known: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(entry) - set(known))
    if unknown:
        raise EatkitError(f"{where}: unknown key '{unknown[0]}' (known: {', '.join(known)})")


def _list(data: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = data.get(key)
    if not isinstance(value, list) or not value:
        raise EatkitError(f"{where}: '{key}' must be a non-empty list")
    return value


def _model_entry(entry: Any, base: Path, where: str, slurm: dict[str, Any]) -> dict[str, Any]:
    entry = {"name": entry} if isinstance(entry, str) else entry
    if not isinstance(entry, dict):
        raise EatkitError(f"{where}: a model must be a name or a table, got {entry!r}")
    _check_keys(entry, MODEL_KEYS, f"{where}, model {entry.get('label') or entry.get('name', '')}".rstrip())
    source = _model_source(entry, where)
    entry = {k: str((base / Path(v).expanduser()).resolve()) if k in _PATH_KEYS and isinstance(v, str) else v
             for k, v in entry.items()}
    label = entry.get("label") or (entry["name"] if "name" in entry else Path(entry[source]).stem)
    resources = {**slurm, **(parse_resources(entry["slurm"], f"{where}, model {label}") if "slurm" in entry else {})}
    return {**entry, "label": str(label), **({"slurm": resources} if resources else {})}


def _suite_entry(entry: Any, base: Path, where: str) -> dict[str, Any]:
    entry = {"suite": entry} if isinstance(entry, str) else entry
    if not isinstance(entry, dict) or not isinstance(entry.get("suite"), str):
        raise EatkitError(f"{where}: a suite must be a suite id, a file, or a table with 'suite', got {entry!r}")
    _check_keys(entry, SUITE_KEYS, f"{where}, suite {entry['suite']}")
    _check_suite_lists(entry, f"{where}, suite {entry['suite']}")
    name = entry["suite"]
    is_file = name.endswith(".json") or "/" in name
    suite = str((base / name).resolve()) if is_file else name
    return {**entry, "suite": suite, "label": str(entry.get("label") or (Path(name).stem if is_file else name))}


def _check_suite_lists(entry: dict[str, Any], where: str) -> None:
    """A suite table's ``tests`` (test ids) and ``metrics`` (metric names, checked by the family)."""
    tests = entry.get("tests")
    if tests is not None and not _strings(tests):
        raise EatkitError(f"{where}: 'tests' must be a list of test ids")
    metrics = entry.get("metrics")
    if metrics is not None:
        from eatkit.analyses.metrics import parse_metrics

        if not _strings(metrics):
            raise EatkitError(f"{where}: 'metrics' must be a list of metric names")
        parse_metrics(",".join(metrics) or "''")


def _strings(value: Any) -> bool:
    """Whether ``value`` is a list of strings."""
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _settings_entry(entry: Any, index: int, count: int, where: str) -> dict[str, Any]:
    from eatkit.kinds import check_params
    from eatkit.run.runner import RunOptions

    if not isinstance(entry, dict):
        raise EatkitError(f"{where}: each setting must be a table of run options, got {entry!r}")
    fields = tuple(f.name for f in dataclasses.fields(RunOptions))
    _check_keys(entry, ("label", *fields), f"{where}, setting {index + 1}")
    try:
        options = RunOptions(**{k: v for k, v in entry.items() if k != "label"}).validated()
        check_params(options.params)  # the kinds' parameters, before any suite is loaded
    except EatkitError as err:
        raise EatkitError(f"{where}, setting {index + 1}: {err}") from None
    label = entry.get("label") or ("default" if count == 1 else f"s{index + 1}")
    return {**entry, "label": str(label)}


def _suite_plan(entry: dict[str, Any], where: str) -> tuple[str, list[tuple[str, frozenset[str]]]]:
    """A suite entry's content hash and its selected tests (metric tests included) with the modalities
    each needs; an unknown test id is an error here, when the sweep file is read."""
    from eatkit.run.manifest import suite_sha256
    from eatkit.run.request import expand_metrics
    from eatkit.run.runner import select_tests
    from eatkit.stimuli.loader import load_suite

    try:
        suite = load_suite(entry["suite"])
        content = suite_sha256(suite)
        select_tests(suite, entry.get("tests"))
        suite, tests = expand_metrics(suite, entry.get("metrics"), entry.get("tests"))
        selected = select_tests(suite, tests)
    except EatkitError as err:
        raise EatkitError(f"{where}, suite {entry['label']}: {err}") from None
    return content, [(t.id, test_needs(t)) for t in selected]


def test_needs(test: Any) -> frozenset[str]:
    """The stimulus modalities a suite test needs its model to embed (a word set with templates: sentences).

    >>> from eatkit.stimuli.loader import load_suite
    >>> sorted(test_needs(load_suite("weat").test("weat1")))
    ['word']
    """
    return frozenset("sentence" if s.templates else s.modality for s in test.sets().values())


def model_modalities(model: Mapping[str, Any]) -> frozenset[str] | None:
    """What a sweep's model entry embeds, as its source declares it (``models.json`` for a registered model
    or a ``responses:`` file; a word-vector file: words; published iEAT embeddings, ``embeddings`` with
    ``embeddings_model`` such as ``igpt_l_32`` or ``simclr_152_3x_sk1``: images); ``None`` when only
    building it would tell (a precomputed embeddings file of any modality, an unknown name).

    >>> sorted(model_modalities({"name": "efficientnet_lite0"})), model_modalities({"embeddings": "e/"})
    (['image'], None)
    >>> sorted(model_modalities({"embeddings": "e/", "embeddings_model": "igpt-logit_l_32"}))
    ['image']
    """
    if "vectors" in model:
        from eatkit.sources.vectors import WordVectors

        return WordVectors.modalities
    if "embeddings" in model:
        from eatkit.sources.precomputed import IEATEmbeddings

        return IEATEmbeddings.modalities if model.get("embeddings_model") else None
    if "name" in model:
        from eatkit.registry import get_model

        try:
            return frozenset(get_model(model["name"]).modalities)
        except EatkitError:
            return None  # the cell reports the unknown name when it runs
    return None


def _cell(model: dict[str, Any], suite: dict[str, Any], settings: dict[str, Any],
          plan: tuple[str, list[tuple[str, frozenset[str]]]]) -> Cell:
    content, needs = plan
    embeds = _embeds(model_modalities(model))
    tests, inapplicable = [], []
    for test, need in needs:
        if embeds is None or need <= embeds:
            tests.append(test)
        else:
            inapplicable.append((test, f"needs {', '.join(sorted(need - embeds))} stimuli; "
                                       f"{model['label']} embeds {', '.join(sorted(embeds)) or 'nothing'}"))
    identity = {k: v for k, v in model.items() if k not in UNHASHED_KEYS}
    payload = json.dumps({"model": identity, "suite": suite, "suite_sha256": content, "settings": settings,
                          "eatkit": __version__}, sort_keys=True)
    ident = "__".join(folder_name(label) for label in (model["label"], suite["label"], settings["label"]))
    return Cell(ident, model, suite, settings, hashlib.sha256(payload.encode()).hexdigest(), tuple(tests),
                tuple(inapplicable))


def _embeds(embeds: frozenset[str] | None) -> frozenset[str] | None:
    """What a model embeds, words included where it takes texts: a word is a short text, so a model of
    sentences or prompts takes it (an LM, a text-to-image model is prompted with it)."""
    if embeds is None or not embeds & {"sentence", "prompt"}:
        return embeds
    return embeds | {"word", "sentence"} if "prompt" in embeds else embeds | {"word"}


def folder_name(label: str) -> str:
    """A label as a folder name: characters other than letters, digits, ``-_.`` become ``-``."""
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in label).strip(".") or "-"
