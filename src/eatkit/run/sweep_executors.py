"""A sweep's cells run (:mod:`eatkit.run.sweep`): one cell (:func:`run_cell`), and the executors that run many,
in local worker processes (:func:`local_cells`) or on a Ray cluster (:func:`ray_cells`: an actor per model, a
task per cell)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import as_completed
from dataclasses import dataclass
from typing import Any

from eatkit.errors import EatkitError, one_line
from eatkit.io import require
from eatkit.run.runner import build_source
from eatkit.run.sweep_file import Cell
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stimuli.types import StimulusSet

#: seconds to wait for a Ray cluster to answer
RAY_CONNECT_TIMEOUT = 10.0


@dataclass(frozen=True)
class CellOutcome:
    """What running one cell gave: ``run`` (a :class:`RunResult`) or the one-line ``error``."""

    cell: Cell
    run: Any = None
    error: str | None = None
    seconds: float = 0.0
    saved: bool = False  # the cell's folder is written already (by a SLURM task)


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


def local_cells(cells: list[Cell], jobs: int) -> Iterator[CellOutcome]:
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


def ray_cells(cells: list[Cell], address: str | None) -> Iterator[CellOutcome]:
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
