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
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eatkit.command_options import command_option, option_warnings
from eatkit.errors import EatkitError
from eatkit.io import read_json
from eatkit.progress import progress
from eatkit.run.runner import build_source
from eatkit.run.sweep_executors import CellOutcome, connect_ray, local_cells, ray_cells, run_cell
from eatkit.run.sweep_file import (EXECUTORS, METADATA_KEYS, MODEL_KEYS, SOURCE_KEYS, SUITE_KEYS, TOP_KEYS, Cell, Sweep,
                                   check_sweep_schema, folder_name, load_sweep, model_modalities, parse_sweep, test_needs)

#: the sweep's API: the driver, and what the sweep file (:mod:`eatkit.run.sweep_file`) and the cells'
#: executors (:mod:`eatkit.run.sweep_executors`) hold, importable from here
__all__ = ["run_sweep", "SweepResult", "pin_revisions", "slurm_task", "load_sweep", "parse_sweep",
           "check_sweep_schema", "test_needs", "model_modalities", "Cell", "Sweep", "CellOutcome", "run_cell",
           "connect_ray", "EXECUTORS", "METADATA_KEYS", "MODEL_KEYS", "SOURCE_KEYS", "SUITE_KEYS", "TOP_KEYS"]


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
                state = read_json(self.out / "cells" / cell / "cell.json", "cell state")
            except (OSError, ValueError):  # (an EatkitError too: missing, no regular file, no JSON)
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
    out = _checked_run(sweep, out_dir, executor, jobs, cluster)
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
    for outcome in map(_sweep_wording, progress(outcomes, total=len(todo), desc="sweep", unit="cells")):
        statuses[outcome.cell.id] = _write_cell(out, outcome)
        if outcome.error is not None:
            errors[outcome.cell.id] = outcome.error
    statuses = {c.id: statuses[c.id] for c in sweep.cells}
    _write_index(out, sweep, statuses, errors, option_warnings("sweep", {"jobs": jobs}))
    from eatkit.run.sweep_tables import write_tables

    write_tables(out)
    return SweepResult(out, statuses, errors, [c.id for c in todo])


def _checked_run(sweep: Sweep, out_dir: str | os.PathLike[str] | None, executor: str, jobs: int,
                 cluster: str) -> Path:
    """The output folder of a sweep run, its executor, jobs and cluster checked first."""
    if executor not in EXECUTORS:
        raise EatkitError(f"unknown executor '{executor}' (known: {', '.join(EXECUTORS)})")
    command_option("sweep", "jobs", jobs)
    if executor == "slurm":
        from eatkit.run.slurm import check_cluster

        check_cluster(cluster)
    out = Path(out_dir) if out_dir is not None else sweep.output
    if out is None:
        raise EatkitError(f"no output folder: give one (eatkit sweep -o DIR) or set 'output' in {sweep.source}")
    return out


def _sweep_wording(outcome: CellOutcome) -> CellOutcome:
    """A cell's error with the fix a sweep file takes (its key) instead of the command line's flag."""
    from eatkit.encoders.device import DEVICE_FIX, SWEEP_DEVICE_FIX

    if outcome.error is None or DEVICE_FIX not in outcome.error:
        return outcome
    return dataclasses.replace(outcome, error=outcome.error.replace(DEVICE_FIX, SWEEP_DEVICE_FIX))


#: the hub commits a sweep resolved its models' revisions to, once (its output folder)
REVISIONS_FILE = "revisions.json"


def pin_revisions(cells: list[Cell], out: Path) -> list[Cell]:
    """Resolve the hub revision of each model of ``cells`` once for the whole sweep and record it in
    ``<out>/revisions.json``; return the cells with ``revision`` set to that commit, so that every cell and
    every resume loads the same weights. A model whose branch moved since the sweep recorded it keeps the
    recorded commit, with a warning naming both commits. Models that take no ``revision`` (word vectors,
    packaged weights) are left as they are; a model that cannot be built is left to its cells to report."""
    from eatkit.progress import warn

    path = out / REVISIONS_FILE
    try:
        recorded = read_json(path, "revisions file") if path.exists() else {}
    except (OSError, ValueError):  # (an EatkitError too: no regular file, no JSON)
        recorded = {}
    pins: dict[str, dict[str, str]] = {}
    for cell in cells:
        label = cell.model["label"]
        hub = None if label in pins else _hub(cell)
        if hub is None:
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


def _hub(cell: Cell) -> dict[str, str] | None:
    """The hub repository, revision and commit of a cell's model (None: a model that takes no revision, has
    no commit, or cannot be built: its cells report that)."""
    from eatkit.registry import get_model
    from eatkit.stimuli.loader import load_suite

    if "name" not in cell.model:
        return None
    try:
        if "revision" not in (get_model(cell.model["name"]).option_names() or ()):
            return None
        hub = build_source(cell.model, load_suite(cell.suite["suite"])).manifest().get("hub")
    except Exception:  # noqa: BLE001 -- the cell reports its model's failure when it runs
        return None
    return None if not hub or hub.get("commit") in (None, "unknown") else hub


def _executor(executor: str, todo: list[Cell], jobs: int, address: str | None, out: Path,
              cluster: str) -> Iterator[CellOutcome]:
    if executor == "slurm":
        from eatkit.run.slurm import run_slurm

        return (CellOutcome(cell, error=error, seconds=seconds, saved=saved)
                for cell, error, seconds, saved in run_slurm(todo, out, slurm_task, cluster, max(jobs, 1)))
    return local_cells(todo, jobs) if executor == "local" else ray_cells(todo, address)


def slurm_task(out: Path, cells: list[Cell]) -> list[tuple[str, str | None, float]]:
    """What a SLURM task runs (:class:`eatkit.run.slurm.ModelJob`): the cells of one model, in this process
    (the model built once; its images decoded once for all its cells, the record in
    ``slurm/decoding-<model>.json``), each written to its folder; the cells finished before (a task requeued
    after some were written) are skipped. Returns ``(cell id, error, seconds)`` of each cell run."""
    todo = [cell for cell in cells if not _finished(out, cell)]
    if todo:
        from eatkit.run.decode import predecode_sweep

        predecode_sweep(todo, out, f"slurm/decoding-{folder_name(todo[0].model['label'])}.json")
    ran = []
    for cell in todo:
        outcome = run_cell(cell)
        _write_cell(out, outcome)
        ran.append((cell.id, outcome.error, outcome.seconds))
    return ran


def _finished(out: Path, cell: Cell) -> bool:
    try:
        state = read_json(out / "cells" / cell.id / "cell.json", "cell state")
    except (OSError, ValueError):  # (an EatkitError too: missing, no regular file, no JSON)
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
