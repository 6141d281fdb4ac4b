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

Output: ``<output>/cells/<model>__<suite>__<setting>/`` holds one run folder per cell (``results.json``,
``manifest.json``, ...) and ``cell.json`` (its status and the hash of its configuration); ``results.csv``
combines every finished cell's table (columns ``model``, ``suite``, ``setting`` first); ``cells.csv``
lists every cell's status; with two or more models, ``rankings.csv`` ranks them by each measure (the EAT's
|d|, each metric's bias magnitude, averaged over tests) and overall, and ``ranking-correlations.csv`` gives
Spearman's rho between the measures' rankings (:func:`write_rankings`). ``eatkit sweep`` then writes ``report.html``, the HTML report of the finished
cells (:attr:`SweepResult.finished`; a models x tests heatmap when there are several).

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
job-array task per cell through submitit (:mod:`eatkit.run.slurm`; resources from the sweep file's
``slurm`` tables); each task writes its own cell.

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
from eatkit.errors import EatkitError, one_line
from eatkit.io import check_depth, check_json_schema, read_text, require, shipped_json
from eatkit.progress import progress
from eatkit.run.meta_analysis import write_meta_analysis
from eatkit.run.runner import MODEL_OPTIONS, build_source
from eatkit.run.slurm import parse_resources
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stimuli.types import StimulusSet

#: optional descriptive keys of a model entry, shown as columns of the sweep report
METADATA_KEYS: tuple[str, ...] = ("architecture", "parameters", "training_data")
#: the keys of a model entry (see :func:`eatkit.run.runner.build_source`; ``slurm``: :mod:`eatkit.run.slurm`)
MODEL_KEYS: tuple[str, ...] = ("label", "name", "vectors", "embeddings", "embeddings_model", "lowercase",
                               *MODEL_OPTIONS, "slurm", *METADATA_KEYS)
#: keys of a model entry that do not change its results, left out of a cell's configuration hash
UNHASHED_KEYS: tuple[str, ...] = ("slurm", *METADATA_KEYS)
SUITE_KEYS: tuple[str, ...] = ("label", "suite", "tests", "metrics")
TOP_KEYS: tuple[str, ...] = ("output", "models", "suites", "settings", "slurm")
EXECUTORS: tuple[str, ...] = ("local", "ray", "slurm")
#: seconds to wait for a Ray cluster to answer
RAY_CONNECT_TIMEOUT = 10.0
_PATH_KEYS = ("vectors", "embeddings", "images")


@dataclass(frozen=True)
class Cell:
    """One model x suite x setting combination of a sweep."""

    id: str
    model: dict[str, Any]
    suite: dict[str, Any]
    settings: dict[str, Any]
    hash: str

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
    """The cells of a sweep and their statuses (``done``, ``finished before`` (by an earlier run of the sweep, not run again), ``failed``)."""

    out: Path
    statuses: dict[str, str]
    errors: dict[str, str]
    computed: list[str]

    @property
    def failed(self) -> list[str]:
        return [c for c, s in self.statuses.items() if s == "failed"]

    @property
    def finished(self) -> list[Path]:
        """The run folders of the cells that did not fail, in the sweep's order."""
        return [self.out / "cells" / c for c, s in self.statuses.items() if s != "failed"]


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
    if not isinstance(data, dict):
        raise EatkitError(f"{where}: expected a table of {', '.join(TOP_KEYS)}")
    _check_keys(data, TOP_KEYS, where)
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
    cells = tuple(_cell(m, s, o) for m in models for s in suites for o in settings)
    output = data.get("output")
    if output is not None and not isinstance(output, str):
        raise EatkitError(f"{where}: 'output' must be a folder name")
    # the shipped JSON Schema (eatkit.run.schemas) too, after the checks above (their messages are precise)
    check_json_schema(data, shipped_json("eatkit.run", "sweep.schema.json"), where)
    return Sweep(cells, (base / output) if output else None, source)


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
    given = [k for k in ("name", "vectors", "embeddings") if k in entry]
    if len(given) != 1:
        raise EatkitError(f"{where}: a model needs exactly one of name, vectors, embeddings (got {entry})")
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


def _cell(model: dict[str, Any], suite: dict[str, Any], settings: dict[str, Any]) -> Cell:
    from eatkit.run.manifest import suite_sha256
    from eatkit.stimuli.loader import load_suite

    content = suite_sha256(load_suite(suite["suite"]))
    identity = {k: v for k, v in model.items() if k not in UNHASHED_KEYS}
    payload = json.dumps({"model": identity, "suite": suite, "suite_sha256": content, "settings": settings,
                          "eatkit": __version__}, sort_keys=True)
    ident = "__".join(_safe(label) for label in (model["label"], suite["label"], settings["label"]))
    return Cell(ident, model, suite, settings, hashlib.sha256(payload.encode()).hexdigest())


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
        run = run_suite(suite, source, tests=tests, options=options,
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
    connect_ray(ray, address)
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
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        cell = pending.pop(done[0])
        try:
            yield ray.get(done[0])
        except Exception as err:  # noqa: BLE001 -- a worker lost (node down, out of memory)
            yield CellOutcome(cell, error=f"the Ray task failed: {one_line(err)}")
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
    if not isinstance(jobs, int) or jobs < 0:
        raise EatkitError(f"jobs must be 0 (in this process) or more, got {jobs!r}")
    if executor == "slurm":
        from eatkit.run.slurm import check_cluster

        check_cluster(cluster)
    out = Path(out_dir) if out_dir is not None else sweep.output
    if out is None:
        raise EatkitError(f"no output folder: give one (eatkit sweep -o DIR) or set 'output' in {sweep.source}")
    from eatkit.run.folder import claim_output, prepare_output

    prepare_output(out, "sweep", inputs=[sweep.source if Path(sweep.source).exists() else None])
    statuses = {c.id: "finished before" for c in sweep.cells if _finished(out, c)}
    todo = [c for c in sweep.cells if c.id not in statuses]
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
    _write_tables(out, sweep, statuses, errors)
    return SweepResult(out, statuses, errors, [c.id for c in todo])


def _executor(executor: str, todo: list[Cell], jobs: int, address: str | None, out: Path,
              cluster: str) -> Iterator[CellOutcome]:
    if executor == "slurm":
        from eatkit.run.slurm import run_slurm

        return (CellOutcome(cell, error=error, seconds=seconds, saved=saved)
                for cell, error, seconds, saved in run_slurm(todo, out, slurm_task, cluster))
    return _local(todo, jobs) if executor == "local" else _ray(todo, address)


def slurm_task(out: Path, cell: Cell) -> tuple[str | None, float]:
    """What a SLURM task runs (:class:`eatkit.run.slurm.CellJob`): one cell, written to its folder; nothing
    when the cell finished before (a task requeued after its cell was written). Returns (error, seconds)."""
    if _finished(out, cell):
        return None, 0.0
    outcome = run_cell(cell)
    _write_cell(out, outcome)
    return outcome.error, outcome.seconds


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
             "error": outcome.error, "seconds": round(outcome.seconds, 3)}
    tmp = folder / "cell.json.tmp"
    tmp.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, folder / "cell.json")
    return status


def _write_tables(out: Path, sweep: Sweep, statuses: dict[str, str], errors: dict[str, str]) -> None:
    import pandas as pd

    frames, rows = [], []
    for cell in sweep.cells:
        model, suite, setting = cell.labels
        rows.append({"cell": cell.id, "model": model, "suite": suite, "setting": setting,
                     "status": statuses[cell.id], "error": errors.get(cell.id)})
        if statuses[cell.id] != "failed":
            table = pd.read_csv(out / "cells" / cell.id / "results.csv")
            frames.append(table.assign(model=model, suite=suite, setting=setting))
    pd.DataFrame(rows).to_csv(out / "cells.csv", index=False)
    if frames:
        combined = pd.concat(frames, ignore_index=True)
        first = ["model", "suite", "setting"]
        combined[first + [c for c in combined.columns if c not in first]].to_csv(out / "results.csv", index=False)
        write_rankings(out, combined)
        write_meta_analysis(out, combined)


def model_measures(results: Any) -> Any:
    """The bias magnitude (:func:`eatkit.stats.metrics.bias_magnitude`) of every model and measure: the EAT's
    |d| and each metric kind's, averaged over the tests (and suites and settings) of a combined results
    table; a models x measures DataFrame, models and measures in order of first appearance."""
    import pandas as pd

    from eatkit.kinds import ranked_kinds
    from eatkit.stats.metrics import bias_magnitude

    rows, measures = [], []
    for spec in ranked_kinds():  # the kinds that declare how they rank models (eatkit.kinds.Ranking)
        kind, (headline, rule, measure) = spec.name, (spec.ranking.headline, spec.ranking.magnitude,
                                                      spec.ranking.measure)
        measures.append(measure)
        if "kind" not in results or headline not in results:
            continue
        part = results[results["kind"] == kind]
        if "bias_type" in part:  # the language-model kinds: their overall record, not each bias type's
            part = part[part["bias_type"].isna() | (part["bias_type"] == "all")]
        magnitudes = pd.Series(bias_magnitude(rule, part[headline]), index=part.index)
        per_model = magnitudes.groupby(part["model"], sort=False).agg(spec.ranking.aggregation)  # declared
        rows += [{"model": m, "measure": measure, "magnitude": float(v)} for m, v in per_model.items()]
    frame = pd.DataFrame(rows, columns=["model", "measure", "magnitude"])
    table = frame.pivot_table(index="model", columns="measure", values="magnitude", aggfunc="mean", sort=False)
    return table[[m for m in measures if m in table.columns]]


def write_rankings(out: Path, results: Any) -> Path | None:
    """``rankings.csv`` (each model's rank by each measure, its mean rank and overall rank; 1: least biased),
    ``ranking-correlations.csv`` (Spearman's rho between the measures' rankings, with p and a Fisher-z CI,
    :func:`eatkit.stats.agreement.spearman_ci`) and ``measure-agreement.csv`` (the ICC(3,1) of the models x
    measures ranks with three or more models, :func:`eatkit.stats.agreement.icc`; Du et al. 2021), from a combined
    results table with at least two models; ``None`` (nothing written) otherwise."""
    import pandas as pd

    from eatkit.stats.agreement import icc, spearman_ci
    from eatkit.stats.metrics import rank_models

    table = model_measures(results).dropna(axis=1)
    if len(table) < 2 or table.shape[1] == 0:
        return None
    ranking = rank_models(table.to_numpy())
    ranks = pd.DataFrame(ranking.ranks, index=table.index, columns=[f"rank_{m}" for m in table.columns])
    ranks["mean_rank"], ranks["overall_rank"] = ranking.mean_rank, ranking.overall
    pd.concat([table, ranks], axis=1).reset_index().to_csv(out / "rankings.csv", index=False)
    pairs = [{"measure_1": a, "measure_2": b, "spearman": ranking.spearman[i, j], "p_value": ranking.spearman_p[i, j],
              **dict(zip(("ci_low", "ci_high"), spearman_ci(float(ranking.spearman[i, j]), len(table))))}
             for i, a in enumerate(table.columns) for j, b in enumerate(table.columns) if i < j]
    pd.DataFrame(pairs, columns=["measure_1", "measure_2", "spearman", "p_value", "ci_low", "ci_high"]).to_csv(
        out / "ranking-correlations.csv", index=False)
    if table.shape[1] >= 2 and len(table) >= 3:  # do the measures rank the models alike? ICC(3,1) of the ranks
        agreement = icc(ranking.ranks, "3,1")
        pd.DataFrame([{"form": agreement.form, "icc": agreement.icc, "ci_low": agreement.ci[0],
                       "ci_high": agreement.ci[1], "f": agreement.f, "df1": agreement.df1, "df2": agreement.df2,
                       "p_value": agreement.p_value, "models": agreement.n, "measures": agreement.k}]).to_csv(
            out / "measure-agreement.csv", index=False)
    return out / "rankings.csv"
