"""Sweeps: many models x suites x settings, resumable, run on local processes or a Ray cluster.

A sweep file (TOML, or YAML when PyYAML is installed) lists the three axes; every combination is a
*cell*, run with the public API (:func:`eatkit.run.runner.run_suite`, :meth:`RunResult.save`)::

    output = "results/sweep"                       # optional (eatkit sweep -o overrides it)
    models = ["glove-6b-50d", { vectors = "my-vectors.txt", label = "mine", oov = "drop" }]
    suites = ["weat", { suite = "my-suite.json", tests = ["t1", "t2"] }]
    settings = [{ seed = 0, n_bootstrap = 0 }]     # optional; each a set of run options

- a **model** is a registered model name or a table with ``name`` (a registered model), ``vectors`` (a
  word-vector file) or ``embeddings`` (+ ``embeddings_model``) and its options, named as the flags of
  ``eatkit run`` (:data:`MODEL_KEYS`, :func:`eatkit.run.runner.build_source`; ``cache = false`` for ``--no-cache``);
- a **suite** is a bundled suite id, a suite file, or a table with ``suite`` and optional ``tests`` and
  ``metrics`` (metric kinds each EAT test also runs as, as ``eatkit run --metrics``; docs/metrics.md);
- a **setting** is a table of :class:`eatkit.run.runner.RunOptions` fields (and an optional ``label``).

Relative paths are read from the sweep file's folder. An unknown key is an error naming it.

**Applicability**: a model declares what it embeds (``modalities`` in ``models.json``; a word-vector file:
words) and each test needs what its stimulus sets are (words, sentences, images, image-caption pairs;
:func:`test_needs`); a cell runs only the tests its model can embed, a cell with none is ``inapplicable``
(planned out: never run, never a failure), and within a cell a test that fails does so alone, with its
error (``run_suite(..., isolate=True)``), the cell's other records standing.

Output: ``<output>/cells/<model>__<suite>__<setting>/`` holds one run folder per cell (``results.json``,
``manifest.json``, ...) and ``cell.json`` (its status, the hash of its configuration, its failed and
inapplicable tests); ``sweep.json`` indexes the cells, and :func:`eatkit.run.sweep_tables.write_tables`
writes ``cells.csv``, ``tests.csv``, ``results.csv``, ``rankings.csv``, ``ranking-correlations.csv`` and
``audit.json`` from them (per setting, models ranked within groups of comparable models on the measures
they share). ``eatkit sweep`` then writes ``audit.html`` (:mod:`eatkit.report.audit`; ``eatkit report
OUTPUT`` writes it again from the folder).

**Resuming**: a cell whose ``cell.json`` says ``done`` under the same configuration hash (the cell's
model, suite and setting, the suite's content, and the eatkit version) is skipped, so an interrupted
sweep run again computes only what did not finish; a failed cell is tried again. A cell that fails
(e.g. its model cannot be loaded) is recorded as failed with its one-line error; the sweep goes on.

**Executors**: ``local`` runs cells in ``jobs`` worker processes (``jobs=0``: in this process); ``ray``
connects to a Ray cluster (``address="auto"``, ``"HOST:PORT"``, or ``None`` to start a local one) and runs
one actor per model that embeds (asking for a GPU, ``num_gpus=1``, when the cluster has GPUs and the
model is a neural encoder; no CPU reserved, so that cell tasks waiting on it cannot starve it) and one
task per cell that computes the statistics, calling its model's actor
for embeddings; the results are gathered to the driver, which writes them. ``slurm`` submits one SLURM
task per model through submitit, running all of the model's cells (:mod:`eatkit.run.slurm`; resources from
the sweep file's ``slurm`` tables; ``jobs``: tasks at once on submitit's local cluster); each task writes
its own cells.

A model entry may also carry descriptive metadata (:data:`METADATA_KEYS`: ``architecture``,
``parameters``, ``training_data``) for the report; these and ``slurm`` are not part of the cell's hash.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eatkit._version import __version__
from eatkit.command_options import command_option, option_warnings
from eatkit.errors import EatkitError, one_line
from eatkit.io import check_depth, read_text, require
from eatkit.progress import progress
from eatkit.run.runner import MODEL_OPTIONS, build_source
from eatkit.run.slurm import parse_resources
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stimuli.types import StimulusSet

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
#: seconds to wait for a Ray cluster to answer
RAY_CONNECT_TIMEOUT = 10.0
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


@dataclass(frozen=True)
class CellOutcome:
    """What running one cell gave: ``run`` (a :class:`RunResult`) or the one-line ``error``."""

    cell: Cell
    run: Any = None
    error: str | None = None
    seconds: float = 0.0
    saved: bool = False  # the cell's folder is written already (by a SLURM task)


@dataclass
class SweepResult:
    """The cells of a sweep and their statuses (``done``, ``finished before`` (by an earlier run of the sweep,
    not run again), ``failed``, ``inapplicable`` (no test of the cell applies to its model: not run))."""

    out: Path
    statuses: dict[str, str]
    errors: dict[str, str]
    computed: list[str]

    @property
    def failed(self) -> list[str]:
        return [c for c, s in self.statuses.items() if s == "failed"]

    @property
    def failed_tests(self) -> dict[str, dict[str, str]]:
        """Cell id -> {test id: error} of the tests that failed alone in the cells computed now."""
        out = {}
        for cell in self.computed:
            try:
                state = json.loads((self.out / "cells" / cell / "cell.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if state.get("failed_tests"):
                out[cell] = state["failed_tests"]
        return out

    @property
    def inapplicable(self) -> list[str]:
        """The cells none of whose tests the model can embed (planned out, never run, not failures)."""
        return [c for c, s in self.statuses.items() if s == "inapplicable"]

    @property
    def finished(self) -> list[Path]:
        """The run folders of the cells that ran and did not fail, in the sweep's order."""
        return [self.out / "cells" / c for c, s in self.statuses.items() if s not in ("failed", "inapplicable")]


# -- the sweep file --------------------------------------------------------------------------------


def load_sweep(path: str | os.PathLike[str]) -> Sweep:
    """Read and validate a sweep file (TOML; ``.yaml``/``.yml`` with PyYAML).

    >>> import tempfile, pathlib; p = pathlib.Path(tempfile.mkdtemp()) / "s.toml"
    >>> _ = p.write_text('models = ["glove-6b-50d"]\\nsuites = [{suite = "weat", tests = ["weat1"]}]')
    >>> [c.id for c in load_sweep(p).cells]
    ['glove-6b-50d__weat__default']
    """
    path = Path(path)
    text = read_text(path, "sweep file")  # the one reader: regular files only, bounded
    if path.suffix.lower() in (".yaml", ".yml"):
        yaml = require("yaml", "a YAML sweep file", "yaml")
        try:
            data = yaml.safe_load(text)
        except (yaml.YAMLError, RecursionError) as exc:
            raise EatkitError(f"sweep file {path}: not valid YAML: {one_line(exc)}") from None
    else:
        import tomllib

        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError) as exc:
            raise EatkitError(f"sweep file {path}: not valid TOML: {one_line(exc)}") from None
    check_depth(data, f"sweep file {path}")
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
    given = data.get("settings") or [{}]
    if not isinstance(given, list):
        raise EatkitError(f"{where}: 'settings' must be a list of tables of run options")
    settings = [_settings_entry(s, i, len(given), where) for i, s in enumerate(given)]
    for name, entries in (("models", models), ("suites", suites), ("settings", settings)):
        labels = [e["label"] for e in entries]
        repeated = sorted({label for label in labels if labels.count(label) > 1})
        if repeated:
            raise EatkitError(f"{where}: {name} labelled twice: {', '.join(repeated)} (give each a distinct label)")
    for name, entries in (("models", models), ("suites", suites), ("settings", settings)):
        folders: dict[str, str] = {}
        for label in (e["label"] for e in entries):
            other = folders.setdefault(_safe(label).casefold(), label)
            if other != label:
                raise EatkitError(f"{where}: {name} '{other}' and '{label}' map to one folder name "
                                  f"'{_safe(label)}' (give them labels that differ in letters or digits)")
    plans = {s["label"]: _suite_plan(s, where) for s in suites}
    cells = tuple(_cell(m, s, o, plans[s["label"]]) for m in models for s in suites for o in settings)
    output = data.get("output")
    if output is not None and not isinstance(output, str):
        raise EatkitError(f"{where}: 'output' must be a folder name")
    return Sweep(cells, (base / output) if output else None, source)


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
        meaning = error.schema.get("description") if isinstance(error.schema, dict) else None
        if meaning is None and error.parent is not None and isinstance(error.parent.schema, dict):
            meaning = error.parent.schema.get("description")
        message = f"{error.instance!r} is not valid" if error.validator == "pattern" else one_line(error.message)
        raise EatkitError(f"{where}: ({path or 'top level'}) {message}"
                          + (f" ({meaning})" if meaning else ""))


def _check_shape(data: Any, where: str) -> None:
    """The structure of a sweep file (tables, lists, known keys, one model source per entry), with the
    loader's own messages, before its values are checked against the schema."""
    from eatkit.run.runner import RunOptions
    from eatkit.run.slurm import RESOURCE_KEYS

    if not isinstance(data, dict):
        raise EatkitError(f"{where}: expected a table of {', '.join(TOP_KEYS)}")
    _check_keys(data, TOP_KEYS, where)
    slurm_keys = tuple(RESOURCE_KEYS)
    if isinstance(data.get("slurm"), dict):
        _check_keys(data["slurm"], slurm_keys, f"{where}: slurm")
    for entry in _list(data, "models", where):
        if isinstance(entry, dict):
            label = f"{where}, model {entry.get('label') or entry.get('name', '')}".rstrip()
            _check_keys(entry, MODEL_KEYS, label)
            if len([k for k in SOURCE_KEYS if k in entry]) != 1:
                raise EatkitError(f"{where}: a model needs exactly one of {', '.join(SOURCE_KEYS)} (got {entry})")
            if isinstance(entry.get("slurm"), dict):
                _check_keys(entry["slurm"], slurm_keys, f"{label}: slurm")
    for entry in _list(data, "suites", where):
        if isinstance(entry, dict) and isinstance(entry.get("suite"), str):
            _check_keys(entry, SUITE_KEYS, f"{where}, suite {entry['suite']}")
    given = data.get("settings") or []
    if not isinstance(given, list):
        raise EatkitError(f"{where}: 'settings' must be a list of tables of run options")
    fields = ("label", *(f.name for f in dataclasses.fields(RunOptions)))
    for index, entry in enumerate(given):
        if isinstance(entry, dict):
            _check_keys(entry, fields, f"{where}, setting {index + 1}")


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
    given = [k for k in SOURCE_KEYS if k in entry]
    if len(given) != 1:
        raise EatkitError(f"{where}: a model needs exactly one of {', '.join(SOURCE_KEYS)} (got {entry})")
    entry = {k: str((base / Path(v).expanduser()).resolve()) if k in _PATH_KEYS and isinstance(v, str) else v
             for k, v in entry.items()}
    label = entry.get("label") or (entry["name"] if "name" in entry else Path(entry[given[0]]).stem)
    resources = {**slurm, **(parse_resources(entry["slurm"], f"{where}, model {label}") if "slurm" in entry else {})}
    return {**entry, "label": str(label), **({"slurm": resources} if resources else {})}


def _suite_entry(entry: Any, base: Path, where: str) -> dict[str, Any]:
    entry = {"suite": entry} if isinstance(entry, str) else entry
    if not isinstance(entry, dict) or not isinstance(entry.get("suite"), str):
        raise EatkitError(f"{where}: a suite must be a suite id, a file, or a table with 'suite', got {entry!r}")
    _check_keys(entry, SUITE_KEYS, f"{where}, suite {entry['suite']}")
    tests = entry.get("tests")
    if tests is not None and not (isinstance(tests, list) and all(isinstance(t, str) for t in tests)):
        raise EatkitError(f"{where}, suite {entry['suite']}: 'tests' must be a list of test ids")
    metrics = entry.get("metrics")
    if metrics is not None:
        from eatkit.analyses.metrics import parse_metrics

        if not (isinstance(metrics, list) and all(isinstance(m, str) for m in metrics)):
            raise EatkitError(f"{where}, suite {entry['suite']}: 'metrics' must be a list of metric names")
        parse_metrics(",".join(metrics) or "''")
    name = entry["suite"]
    is_file = name.endswith(".json") or "/" in name
    suite = str((base / name).resolve()) if is_file else name
    return {**entry, "suite": suite, "label": str(entry.get("label") or (Path(name).stem if is_file else name))}


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
    """What a sweep's model entry embeds, as declared (``models.json`` for a registered model; a word-vector
    file: words); ``None`` when only building it would tell (precomputed embeddings, an unknown name).

    >>> sorted(model_modalities({"name": "efficientnet_lite0"})), model_modalities({"embeddings": "e/"})
    (['image'], None)
    """
    if "vectors" in model:
        return frozenset({"word"})
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
    embeds = model_modalities(model)
    if embeds is not None and embeds & {"sentence", "prompt"}:
        # a word is a short text: a model of sentences or prompts takes it (an LM, a text-to-image model is
        # prompted with it)
        embeds = embeds | {"word", "sentence"} if "prompt" in embeds else embeds | {"word"}
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
    ident = "__".join(_safe(label) for label in (model["label"], suite["label"], settings["label"]))
    return Cell(ident, model, suite, settings, hashlib.sha256(payload.encode()).hexdigest(), tuple(tests),
                tuple(inapplicable))


def _safe(label: str) -> str:
    """A label as a folder name: characters other than letters, digits, ``-_.`` become ``-``."""
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in label).strip(".") or "-"


# -- one cell ---------------------------------------------------------------------------------------


def run_cell(cell: Cell, source: EmbeddingSource | None = None) -> CellOutcome:
    """Run one cell (building its source unless given); any :class:`EatkitError` becomes a failed outcome."""
    from eatkit.run.runner import RunOptions, run_suite
    from eatkit.stimuli.loader import load_suite

    start = time.perf_counter()
    try:
        from eatkit.run.request import expand_metrics

        suite, tests = expand_metrics(load_suite(cell.suite["suite"]), cell.suite.get("metrics"), cell.suite.get("tests"))
        options = RunOptions(**{k: v for k, v in cell.settings.items() if k != "label"}).validated()
        source = source if source is not None else _cached_source(cell, suite)
        planned = list(cell.tests) if cell.inapplicable else tests  # only the tests the model can embed
        run = run_suite(suite, source, tests=planned, options=options, isolate=True,
                        command=f"eatkit sweep (cell {cell.id})")
    except EatkitError as err:
        return CellOutcome(cell, error=str(err), seconds=time.perf_counter() - start)
    except Exception as err:  # noqa: BLE001 -- a model's own failure must not stop the sweep
        return CellOutcome(cell, error=f"{type(err).__name__}: {one_line(err)}", seconds=time.perf_counter() - start)
    return CellOutcome(cell, run=run, seconds=time.perf_counter() - start)


_SOURCES: dict[str, EmbeddingSource] = {}  # per process: a model is built once for all its cells


def _cached_source(cell: Cell, suite: Any) -> EmbeddingSource:
    key = json.dumps([cell.model, cell.suite["suite"] if "vectors" in cell.model else None], sort_keys=True)
    if key not in _SOURCES:
        _SOURCES.clear()  # hold one model at a time
        _SOURCES[key] = build_source(cell.model, suite)
    return _SOURCES[key]


# -- executors --------------------------------------------------------------------------------------


def _local(cells: list[Cell], jobs: int) -> Iterator[CellOutcome]:
    """Cells in ``jobs`` worker processes (``0``: in this process), in completion order (a script that calls
    :func:`run_sweep` with ``jobs >= 1`` needs the usual ``if __name__ == "__main__":`` guard)."""
    if jobs == 0:
        for cell in cells:
            yield run_cell(cell)
        return
    from eatkit.encoders.workers import start_pool, stop_pool, submit

    # spawned, not forked: the statistics may use OpenMP/numba threads, which a forked child cannot use.
    # The workers ignore Ctrl-C; on Ctrl-C (or any error) here they are terminated at once, not waited for
    pool = start_pool(jobs, "spawn")
    finished = False
    try:
        futures = [submit(pool, run_cell, cell) for cell in cells]
        for future in as_completed(futures):
            yield future.result()
        finished = True
    finally:
        if finished:
            pool.shutdown()
        else:
            stop_pool(pool)


def connect_ray(ray: Any, address: str | None, timeout: float = RAY_CONNECT_TIMEOUT) -> None:
    """Connect to the Ray cluster at ``address`` (``"auto"``, ``"HOST:PORT"``; ``None``: the running
    session, or a new local one); an address that does not answer within ``timeout`` seconds is a
    one-line error."""
    if ray.is_initialized():
        return
    if address not in (None, "auto"):
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise EatkitError(f"Ray address '{address}' must be auto or HOST:PORT")
        try:
            socket.create_connection((host, int(port)), timeout=timeout).close()
        except OSError as exc:
            raise EatkitError(f"cannot reach the Ray cluster at {address} within {timeout:g} s: "
                              f"{one_line(exc.strerror or exc)}") from None
    try:
        ray.init(address=address, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    except Exception as exc:  # noqa: BLE001 -- ConnectionError, RuntimeError, ...
        raise EatkitError(f"cannot connect to the Ray cluster at {address or 'a new local instance'}: "
                          f"{one_line(exc)}") from None


class ModelWorker:
    """A Ray actor holding one model: builds it on first use and embeds stimulus sets for cell tasks.
    Errors come back as values (``("error", message)``) so that a task can report them in one line."""

    def __init__(self, model: dict[str, Any], suite: str | None) -> None:
        self.model, self.suite, self.source = model, suite, None

    def _call(self, action: Callable[[EmbeddingSource], Any]) -> tuple[str, Any]:
        try:
            if self.source is None:
                from eatkit.stimuli.loader import load_suite

                self.source = build_source(self.model, load_suite(self.suite) if self.suite else None)
            return "ok", action(self.source)
        except EatkitError as err:
            return "error", str(err)
        except Exception as err:  # noqa: BLE001 -- a model's own failure is the cell's failure
            return "error", f"{type(err).__name__}: {one_line(err)}"

    def describe(self) -> tuple[str, Any]:
        return self._call(lambda s: (s.id, s.modalities))

    def embed(self, stimuli: StimulusSet) -> tuple[str, Any]:
        return self._call(lambda s: s.embed(stimuli))

    def manifest(self) -> tuple[str, Any]:
        return self._call(lambda s: s.manifest())


class ActorSource(EmbeddingSource):
    """An embedding source whose embeddings come from a :class:`ModelWorker` actor."""

    def __init__(self, ray: Any, actor: Any) -> None:
        self._ray, self._actor = ray, actor
        self.id, self.modalities = self._get(actor.describe)

    def _get(self, method: Any, *args: Any) -> Any:
        status, value = self._ray.get(method.remote(*args))
        if status == "error":
            raise EatkitError(value)
        return value

    def embed(self, stimuli: StimulusSet) -> Embedded:
        return self._get(self._actor.embed, stimuli)

    def manifest(self) -> dict[str, Any]:
        return self._get(self._actor.manifest)


def _ray_cell(cell: Cell, actor: Any) -> CellOutcome:
    """A Ray task: the statistics of one cell, with embeddings from its model's actor."""
    import ray

    try:
        source = ActorSource(ray, actor)
    except EatkitError as err:
        return CellOutcome(cell, error=str(err))
    return run_cell(cell, source)


def _is_neural(model: Mapping[str, Any]) -> bool:
    from eatkit.registry import get_model

    return "name" in model and get_model(model["name"]).extra in ("image", "text", "vl")


def _ray(cells: list[Cell], address: str | None) -> Iterator[CellOutcome]:
    ray = require("ray", "the ray executor", "ray")
    started = not ray.is_initialized() and address is None  # a local instance of this sweep's own
    connect_ray(ray, address)
    try:
        yield from _ray_cells(ray, cells)
    finally:  # also on Ctrl-C: a local instance's processes (raylet, agents, workers) go with the sweep
        if started:
            ray.shutdown()


def _ray_cells(ray: Any, cells: list[Cell]) -> Iterator[CellOutcome]:
    """A task per cell, an actor per model; tasks still pending when the sweep stops are cancelled."""
    gpus = ray.cluster_resources().get("GPU", 0)
    worker = ray.remote(ModelWorker)
    task = ray.remote(num_cpus=1)(_ray_cell)
    actors: dict[str, Any] = {}
    pending = {}
    for cell in cells:
        suite = cell.suite["suite"] if "vectors" in cell.model else None
        key = json.dumps([cell.model, suite], sort_keys=True)
        if key not in actors:
            try:
                neural = _is_neural(cell.model)
            except EatkitError:
                neural = False  # an unknown model: its actor reports the error to the cell
            actors[key] = worker.options(num_cpus=0, num_gpus=1 if gpus and neural else 0).remote(cell.model, suite)
        pending[task.remote(cell, actors[key])] = cell
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            cell = pending.pop(done[0])
            try:
                yield ray.get(done[0])
            except Exception as err:  # noqa: BLE001 -- a worker lost (node down, out of memory)
                yield CellOutcome(cell, error=f"the Ray task failed: {one_line(err)}")
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        for actor in actors.values():
            ray.kill(actor)


# -- the driver -------------------------------------------------------------------------------------


def run_sweep(sweep: Sweep | str | os.PathLike[str], out_dir: str | os.PathLike[str] | None = None, *,
              executor: str = "local", jobs: int = 1, address: str | None = None,
              cluster: str = "slurm") -> SweepResult:
    """Run every cell of ``sweep`` not finished before, write each as it completes, then the combined
    ``results.csv`` and ``cells.csv`` (see the module docstring).

    Example::

        result = run_sweep("sweep.toml", "results/sweep", executor="ray", address="auto")
        result.statuses   # {'glove-6b-50d__weat__default': 'done', ...}

    ``cluster`` is submitit's cluster for ``executor="slurm"`` (``slurm``, or ``local``/``debug`` to run the
    same jobs on this machine; :mod:`eatkit.run.slurm`).
    """
    sweep = sweep if isinstance(sweep, Sweep) else load_sweep(sweep)
    if executor not in EXECUTORS:
        raise EatkitError(f"unknown executor '{executor}' (known: {', '.join(EXECUTORS)})")
    command_option("sweep", "jobs", jobs)
    if executor == "slurm":
        from eatkit.run.slurm import check_cluster

        check_cluster(cluster)
    out = Path(out_dir) if out_dir is not None else sweep.output
    if out is None:
        raise EatkitError(f"no output folder: give one (eatkit sweep -o DIR) or set 'output' in {sweep.source}")
    from eatkit.run.folder import claim_output, prepare_output

    prepare_output(out, "sweep", inputs=[sweep.source if Path(sweep.source).exists() else None])
    statuses = {c.id: "inapplicable" for c in sweep.cells if not c.applies}
    statuses |= {c.id: "finished before" for c in sweep.cells if c.applies and _finished(out, c)}
    todo = pin_revisions([c for c in sweep.cells if c.id not in statuses], out)
    errors: dict[str, str] = {}
    if executor == "local" and todo:  # decode each image once for all the models (eatkit.run.decode)
        from eatkit.run.decode import predecode_sweep

        predecode_sweep(todo, out)
    claim_output(out, "sweep")  # the folder is the sweep's (cells written so far are kept on a stop)
    outcomes = _executor(executor, todo, jobs, address, out, cluster)
    for outcome in progress(outcomes, total=len(todo), desc="sweep cells"):
        statuses[outcome.cell.id] = _write_cell(out, outcome)
        if outcome.error is not None:
            errors[outcome.cell.id] = outcome.error
    statuses = {c.id: statuses[c.id] for c in sweep.cells}
    _write_index(out, sweep, statuses, errors, option_warnings("sweep", {"jobs": jobs}))
    from eatkit.run.sweep_tables import write_tables

    write_tables(out)
    return SweepResult(out, statuses, errors, [c.id for c in todo])


#: the hub commits a sweep resolved its models' revisions to, once (its output folder)
REVISIONS_FILE = "revisions.json"


def pin_revisions(cells: list[Cell], out: Path) -> list[Cell]:
    """Resolve the hub revision of each model of ``cells`` once for the whole sweep and record it in
    ``<out>/revisions.json``; return the cells with ``revision`` set to that commit, so that every cell and
    every resume loads the same weights. A model whose branch moved since the sweep recorded it keeps the
    recorded commit, with a warning naming both commits. Models that take no ``revision`` (word vectors,
    packaged weights) are left as they are; a model that cannot be built is left to its cells to report."""
    from eatkit.progress import warn
    from eatkit.registry import get_model
    from eatkit.stimuli.loader import load_suite

    path = out / REVISIONS_FILE
    try:
        recorded = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        recorded = {}
    pins: dict[str, dict[str, str]] = {}
    for cell in cells:
        label = cell.model["label"]
        if label in pins or "name" not in cell.model:
            continue
        try:
            if "revision" not in (get_model(cell.model["name"]).option_names() or ()):
                continue
            hub = build_source(cell.model, load_suite(cell.suite["suite"])).manifest().get("hub")
        except Exception:  # noqa: BLE001 -- the cell reports its model's failure when it runs
            continue
        if not hub or hub.get("commit") in (None, "unknown"):
            continue
        old = recorded.get(label)
        if old and (old["repo"], old["revision"]) == (hub["repo"], hub["revision"]):
            if old["commit"] != hub["commit"]:
                warn(f"model {label}: revision '{hub['revision']}' of {hub['repo']} is now commit {hub['commit']}; "
                     f"this sweep keeps commit {old['commit']}, which it recorded first (in {path}; pin the "
                     f"model's revision, or use a new output folder, to audit the new commit)")
            pins[label] = old
        else:
            pins[label] = hub
    if pins:
        out.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(REVISIONS_FILE + ".tmp")
        tmp.write_text(json.dumps({**recorded, **pins}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    return [dataclasses.replace(c, model={**c.model, "revision": pins[c.model["label"]]["commit"]})
            if c.model["label"] in pins else c for c in cells]


def _executor(executor: str, todo: list[Cell], jobs: int, address: str | None, out: Path,
              cluster: str) -> Iterator[CellOutcome]:
    if executor == "slurm":
        from eatkit.run.slurm import run_slurm

        return (CellOutcome(cell, error=error, seconds=seconds, saved=saved)
                for cell, error, seconds, saved in run_slurm(todo, out, slurm_task, cluster, max(jobs, 1)))
    return _local(todo, jobs) if executor == "local" else _ray(todo, address)


def slurm_task(out: Path, cells: list[Cell]) -> list[tuple[str, str | None, float]]:
    """What a SLURM task runs (:class:`eatkit.run.slurm.ModelJob`): the cells of one model, in this process
    (the model built once; its images decoded once for all its cells, the record in
    ``slurm/decoding-<model>.json``), each written to its folder; the cells finished before (a task requeued
    after some were written) are skipped. Returns ``(cell id, error, seconds)`` of each cell run."""
    todo = [cell for cell in cells if not _finished(out, cell)]
    if todo:
        from eatkit.run.decode import predecode_sweep

        predecode_sweep(todo, out, f"slurm/decoding-{_safe(todo[0].model['label'])}.json")
    ran = []
    for cell in todo:
        outcome = run_cell(cell)
        _write_cell(out, outcome)
        ran.append((cell.id, outcome.error, outcome.seconds))
    return ran


def _finished(out: Path, cell: Cell) -> bool:
    try:
        state = json.loads((out / "cells" / cell.id / "cell.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(state, dict) and state.get("status") == "done" and state.get("hash") == cell.hash


def _write_cell(out: Path, outcome: CellOutcome) -> str:
    """Save a cell's run (``cell.json`` last, atomically: a cell is finished only once all is written)."""
    folder = out / "cells" / outcome.cell.id
    status = "done" if outcome.error is None else "failed"
    if outcome.saved:
        return status
    if outcome.run is not None:
        outcome.run.save(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model, suite, setting = outcome.cell.labels
    state = {"status": status, "hash": outcome.cell.hash, "model": model, "suite": suite, "setting": setting,
             "error": outcome.error, "seconds": round(outcome.seconds, 3),
             "failed_tests": outcome.run.failed if outcome.run is not None else {},
             "inapplicable_tests": dict(outcome.cell.inapplicable)}
    tmp = folder / "cell.json.tmp"
    tmp.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, folder / "cell.json")
    return status


def _write_index(out: Path, sweep: Sweep, statuses: dict[str, str], errors: dict[str, str],
                 warnings: list[str]) -> None:
    """``sweep.json``: the cells (labels, inapplicable tests), statuses, errors, each model's metadata and
    the ``warnings`` of the sweep's options, so that :func:`eatkit.run.sweep_tables.write_tables` needs
    nothing but the output folder."""
    from eatkit.run.sweep_tables import SWEEP_FILE, write_json

    index: dict[str, Any] = {"source": sweep.source, "warnings": warnings, "metadata": {}, "cells": []}
    for cell in sweep.cells:
        model, suite, setting = cell.labels
        index["metadata"][model] = {k: cell.model[k] for k in METADATA_KEYS if k in cell.model}
        index["cells"].append({"id": cell.id, "model": model, "suite": suite, "setting": setting,
                               "status": statuses[cell.id], "error": errors.get(cell.id), "tests": list(cell.tests),
                               "inapplicable_tests": dict(cell.inapplicable)})
    write_json(out / SWEEP_FILE, index)
