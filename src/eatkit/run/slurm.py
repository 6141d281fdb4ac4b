"""The SLURM executor of a sweep, through submitit: one task per model, running all of its cells.

Each task (:class:`ModelJob`) runs the cells of one model in one process: the model is built once, its
images are decoded once for all its cells (:func:`eatkit.run.decode.predecode_sweep`), each cell is run
with :func:`eatkit.run.sweep_executors.run_cell` and written by the task itself (the output folder must be on a file
system the nodes share), ``cell.json`` last. Tasks that ask for the same resources go into one job array
(``sbatch --array``). The driver (``eatkit sweep``) records the tasks' job ids (``slurm/jobs.json``) and
may be interrupted and run again: finished cells are skipped, as with the other executors, and cells held
by a task still queued or running are waited for, not submitted again. A task preempted or timed out is
requeued by submitit (:meth:`ModelJob.checkpoint`); the requeued task skips the cells written meanwhile.
On submitit's ``local`` cluster at most ``--jobs`` tasks run at once.

Resources come from the sweep file: a top-level ``slurm`` table of defaults and a ``slurm`` table in a
model entry that overrides them for that model's cells (:data:`RESOURCE_KEYS`)::

    slurm = { partition = "gpu", cpus = 8, mem = "32G", time = "1:00:00" }
    models = [{ name = "open_clip:ViT-L-14/openai", slurm = { gpus = 1, mem = "64G" } }, "glove-6b-50d"]

They are not part of a cell's configuration hash: moving a sweep to another partition keeps its finished
cells. submitit's ``local`` cluster runs the same jobs as processes of this machine (``--cluster local``),
``debug`` in this process.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from eatkit.errors import EatkitError, one_line
from eatkit.io import read_input, read_json, read_text, require

#: the keys of a ``slurm`` table and their meaning (``sbatch`` option)
RESOURCE_KEYS: dict[str, str] = {
    "partition": "the partition (--partition)",
    "gpus": "GPUs per task (--gpus-per-node)",
    "cpus": "CPU cores per task (--cpus-per-task)",
    "mem": "memory per task: GB as a number, or a string such as '32G' or '500M' (--mem)",
    "time": "time limit per task: minutes as a number, or 'HH:MM:SS', 'D-HH:MM:SS' (--time)",
    "account": "the account to charge (--account)",
    "qos": "the quality of service (--qos)",
    "constraint": "node features (--constraint)",
    "max_parallel": "tasks of one array running at once (--array=...%N)",
    "extra": "other sbatch options, a table of option = value without the dashes (e.g. { gres = 'gpu:a100:1', "
             "exclude = 'node[01-02]' }); true for an option without a value",
    "setup": "shell lines run before the task (e.g. ['module load cuda/12.1', 'source venv/bin/activate'])",
}
CLUSTERS: tuple[str, ...] = ("slurm", "local", "debug")
#: seconds between two looks at the jobs' states
POLL_S = {"slurm": 15.0, "local": 0.5, "debug": 0.1}
_DEFAULT_TIME_MIN = 60
_STRINGS = ("partition", "account", "qos", "constraint")


def parse_resources(value: Any, where: str) -> dict[str, Any]:
    """Validate a ``slurm`` table of a sweep file; return it with ``mem`` in GB and ``time`` in minutes.

    >>> parse_resources({"mem": "500M", "time": "1-02:00:00", "gpus": 1}, "sweep")
    {'mem': 0.5, 'time': 1560, 'gpus': 1}
    >>> parse_resources({"gpu": 1}, "sweep")
    Traceback (most recent call last):
    eatkit.errors.EatkitError: sweep: slurm: unknown key 'gpu' (known: partition, gpus, cpus, mem, time, account, qos, constraint, max_parallel, extra, setup)
    """
    where = f"{where}: slurm"
    if not isinstance(value, dict):
        raise EatkitError(f"{where}: expected a table of {', '.join(RESOURCE_KEYS)}")
    unknown = sorted(set(value) - set(RESOURCE_KEYS))
    if unknown:
        raise EatkitError(f"{where}: unknown key '{unknown[0]}' (known: {', '.join(RESOURCE_KEYS)})")
    return {key: _resource(key, given, where) for key, given in value.items()}


def _resource(key: str, given: Any, where: str) -> Any:
    """One value of a ``slurm`` table, checked (``mem`` in GB, ``time`` in minutes)."""
    checks = {"extra": _extra, "setup": _setup, "mem": _gigabytes, "time": _minutes}
    if key in checks:
        return checks[key](given, where)
    if key in _STRINGS:
        if not isinstance(given, str) or not given:
            raise EatkitError(f"{where}: '{key}' must be a name, got {given!r}")
        return given
    if isinstance(given, bool) or not isinstance(given, int) or given < (0 if key == "gpus" else 1):
        raise EatkitError(f"{where}: '{key}' must be a whole number {'>= 0' if key == 'gpus' else '>= 1'}, "
                          f"got {given!r}")
    return given


def _extra(given: Any, where: str) -> dict[str, Any]:
    """sbatch's own options: lower-case names and text, whole-number or ``true`` values."""
    if not isinstance(given, dict) or not all(
            isinstance(k, str) and re.fullmatch(r"[a-z][a-z0-9-]*", k)
            and (isinstance(v, (str, int)) and not isinstance(v, bool) or v is True)
            for k, v in given.items()):
        raise EatkitError(f"{where}: 'extra' must be a table of sbatch options (lower-case names without "
                          f"dashes) and their values (text, a whole number, or true), got {given!r}")
    return dict(given)


def _setup(given: Any, where: str) -> list[str]:
    """Shell lines run before a task."""
    if not isinstance(given, list) or not all(isinstance(line, str) and "\n" not in line for line in given):
        raise EatkitError(f"{where}: 'setup' must be a list of shell lines, got {given!r}")
    return list(given)


def _gigabytes(value: Any, where: str) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([MGT])B?", value.strip(), re.IGNORECASE) if isinstance(value, str) else None
    if match is None:
        raise EatkitError(f"{where}: 'mem' must be GB (a number) or a size such as '32G' or '500M', got {value!r}")
    return float(match[1]) * {"M": 1e-3, "G": 1.0, "T": 1e3}[match[2].upper()]


def _minutes(value: Any, where: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    match = re.fullmatch(r"(?:(\d+)-)?(\d+):(\d\d):(\d\d)", value.strip()) if isinstance(value, str) else None
    if match is None:
        raise EatkitError(f"{where}: 'time' must be minutes (a number) or 'HH:MM:SS' or 'D-HH:MM:SS', got {value!r}")
    days, hours, minutes, seconds = (int(g or 0) for g in match.groups())
    return max(1, days * 1440 + hours * 60 + minutes + (seconds > 0))


def submitit_parameters(resources: Mapping[str, Any]) -> dict[str, Any]:
    """submitit's ``AutoExecutor`` parameters for a cell's resources (the ``slurm_`` ones apply on SLURM only).

    >>> submitit_parameters({"partition": "gpu", "gpus": 1, "mem": 32.0, "time": 90})
    {'timeout_min': 90, 'gpus_per_node': 1, 'slurm_partition': 'gpu', 'mem_gb': 32.0}
    >>> submitit_parameters({"extra": {"gres": "gpu:a100:1", "exclusive": True}, "setup": ["module load cuda"]})
    {'timeout_min': 60, 'gpus_per_node': 0, 'slurm_additional_parameters': {'gres': 'gpu:a100:1', 'exclusive': True}, 'slurm_setup': ['module load cuda']}
    """
    params: dict[str, Any] = {"timeout_min": resources.get("time", _DEFAULT_TIME_MIN),
                              "gpus_per_node": resources.get("gpus", 0)}
    for key in _STRINGS:
        if key in resources:
            params[f"slurm_{key}"] = resources[key]
    if "cpus" in resources:
        params["cpus_per_task"] = resources["cpus"]
    if "mem" in resources:
        params["mem_gb"] = resources["mem"]
    if "max_parallel" in resources:
        params["slurm_array_parallelism"] = resources["max_parallel"]
    if "extra" in resources:  # sbatch's own options, e.g. --gres=gpu:a100:1 (a flag: true)
        params["slurm_additional_parameters"] = dict(resources["extra"])
    if "setup" in resources:
        params["slurm_setup"] = list(resources["setup"])
    return params


def check_cluster(cluster: str) -> None:
    """Refuse an unknown submitit cluster, and ``slurm`` where ``sbatch`` is not on the PATH."""
    if cluster not in CLUSTERS:
        raise EatkitError(f"unknown cluster '{cluster}' (known: {', '.join(CLUSTERS)})")
    if cluster == "slurm":
        for command in ("sbatch", "srun", "sacct"):  # submitit submits with sbatch, starts with srun, polls sacct
            if shutil.which(command) is None:
                raise EatkitError(f"no SLURM here: {command} is not on the PATH (run eatkit sweep on a login node "
                                  "of the cluster, or try the sweep on this machine with --cluster local)")


class ModelJob:
    """A SLURM task: ``work(out, cells)`` runs the cells of one model in one process (the model loads once,
    its images are decoded once) and writes their folders, returning ``(cell id, error, seconds)`` of each
    cell it ran; requeued by submitit when preempted or timed out (the cells written stay written)."""

    def __init__(self, work: Callable[[Path, Any], list[tuple[str, str | None, float]]], out: Path,
                 cells: list[Any]) -> None:
        self.work, self.out, self.cells = work, out, cells

    def __call__(self) -> list[tuple[str, str | None, float]]:
        return self.work(self.out, self.cells)

    def checkpoint(self) -> Any:
        """Requeue this task as it is (submitit calls it on preemption or timeout; its cells are resumable)."""
        import submitit

        return submitit.helpers.DelayedSubmission(self)


#: the record of the submitted tasks, so that a restarted driver waits for them instead of submitting again
JOBS_FILE = "jobs.json"
_ALIVE = {"RUNNING", "PENDING", "REQUEUED", "CONFIGURING", "COMPLETING", "RESIZING", "SUSPENDED"}


def _alive(cluster: str, folder: Path, job_id: str) -> bool:
    """Whether a recorded task is still queued or running (``local``: its process lives and has no result)."""
    import submitit

    if cluster == "debug":
        return False
    if cluster == "local":
        job = submitit.local.local.LocalJob(folder, job_id)
        return not job.paths.result_pickle.exists() and _task_process(job_id)
    state = submitit.SlurmJob(folder, job_id).state
    return state.split(" ")[0].upper() in _ALIVE


def _task_process(pid: str) -> bool:
    """Whether process ``pid`` lives (not a zombie) and is a submitit task (its id may have been reused)."""
    proc = Path("/proc") / pid
    if proc.is_dir():
        try:  # (eatkit's one reader: /proc's files are regular ones; a process gone is an EatkitError)
            stat = read_input(proc / "stat", "process status").decode("utf-8", "replace")  # (any process name)
            state = stat.rsplit(")", 1)[1].split()[0]
            command = read_input(proc / "cmdline", "process command line")
        except (OSError, IndexError, EatkitError):
            return False
        return state not in ("Z", "X") and b"submitit" in command
    try:
        os.kill(int(pid), 0)
    except (OSError, ValueError):
        return False
    return True


class _Attached:
    """A task submitted by an earlier driver: done once it no longer runs; its result read from its folder."""

    def __init__(self, cluster: str, folder: Path, job_id: str) -> None:
        import submitit

        self.cluster, self.folder, self.job_id = cluster, folder, job_id
        self.job = (submitit.local.local.LocalJob if cluster == "local" else submitit.SlurmJob)(folder, job_id)

    def done(self) -> bool:
        return not _alive(self.cluster, self.folder, self.job_id)

    def result(self) -> Any:
        if not self.job.paths.result_pickle.exists():
            raise EatkitError("it ended without a result")
        return self.job.result()


@contextlib.contextmanager
def _quiet_controllers(cluster: str) -> Iterator[None]:
    """Start submitit's local controllers (and through them their tasks) ignoring Ctrl-C: a terminal's
    SIGINT reaches the whole process group, and each controller would print its own traceback after
    eatkit's one line; the driver stops them itself (:func:`_kill_trees`)."""
    import signal
    import threading

    if cluster != "local" or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _kill_trees(pids: list[int]) -> None:
    """SIGKILL each process of ``pids`` and all its descendants (children first found, then killed, so
    that none is re-parented away before it is seen). Each cell folder is written whole or not at all."""
    import signal

    def tree(pid: int) -> list[int]:
        try:
            children = read_text(f"/proc/{pid}/task/{pid}/children", "process children").split()
        except (OSError, EatkitError):  # (the process is gone)
            children = []
        return [pid] + [d for c in children for d in tree(int(c))]

    for pid in [d for p in pids for d in tree(p)]:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:  # already gone
            pass


def _done(job: Any) -> bool:
    try:
        return bool(job.done())
    except Exception:  # noqa: BLE001 -- the debug cluster runs the task here: its failure comes with result()
        return True


def run_slurm(cells: list[Any], out: Path, work: Callable[[Path, Any], list[tuple[str, str | None, float]]],
              cluster: str = "slurm", parallel: int = 1) -> Iterator[tuple[Any, str | None, float, bool]]:
    """Run ``cells`` as one task per model (:class:`ModelJob` of ``work``; tasks that ask for the same
    resources in one job array on SLURM, at most ``parallel`` at once on the ``local`` and ``debug``
    clusters) and yield ``(cell, error, seconds, saved)`` as the tasks end; ``saved``: the task wrote the
    cell (a task that died did not). The tasks' ids are recorded in ``slurm/jobs.json``: a driver started
    again while tasks of an earlier one still run waits for those and submits only the cells no task holds."""
    check_cluster(cluster)
    submitit = require("submitit", "the slurm executor", "slurm")
    folder = out / "slurm" / "%j"
    record_path = out / "slurm" / JOBS_FILE
    recorded = _recorded(record_path)
    pending = _attached(recorded, {cell.id: cell for cell in cells}, cluster, folder)  # (job, its cells)
    tasks = _model_tasks(cells, {c.id for _, group in pending for c in group})
    executor = submitit.AutoExecutor(folder=folder, cluster=cluster)
    _drop_pattern_folder(folder)
    record = {job.job_id: recorded[job.job_id] for job, _ in pending}

    def submit(groups: list[list[Any]]) -> None:
        jobs = _submit(executor, groups, ModelJob, work, out, cluster)
        for job, group in zip(jobs, groups):
            pending.append((job, group))
            record[job.job_id] = {"cells": [c.id for c in group], "cluster": cluster}
        _write_record(record_path, record)

    queue = list(tasks.values())
    if cluster == "slurm":  # one job array per distinct resources
        for groups in _by_resources(queue):
            submit(groups)
        queue = []
    try:
        yield from _poll(pending, queue, submit, cluster, parallel)
    except (KeyboardInterrupt, GeneratorExit):
        if cluster == "local":  # Ctrl-C: its tasks ignore it (see _quiet_controllers) and stop here
            _kill_trees([int(job.job_id) for job, _ in pending])
        raise
    finally:
        _drop_pattern_folder(folder)


def _model_tasks(cells: list[Any], held_ids: set[str]) -> dict[str, list[Any]]:
    """The cells no task of an earlier driver holds, grouped by model (one task each)."""
    tasks: dict[str, list[Any]] = {}
    for cell in cells:
        if cell.id not in held_ids:
            tasks.setdefault(cell.model["label"], []).append(cell)
    return tasks


def _by_resources(queue: list[list[Any]]) -> list[list[list[Any]]]:
    """The tasks grouped by the resources they ask for (one job array each)."""
    arrays: dict[str, list[list[Any]]] = {}
    for group in queue:
        arrays.setdefault(repr(sorted(group[0].model.get("slurm", {}).items())), []).append(group)
    return list(arrays.values())


def _recorded(record_path: Path) -> dict[str, Any]:
    """The tasks an earlier driver recorded (``slurm/jobs.json``; none when absent or unreadable)."""
    try:
        return read_json(record_path, "task record") if record_path.exists() else {}
    except (OSError, ValueError):  # (an EatkitError too: no regular file, no JSON)
        return {}


def _attached(recorded: dict[str, Any], by_id: dict[str, Any], cluster: str,
              folder: Path) -> list[tuple[Any, list[Any]]]:
    """The recorded tasks of ``cluster`` still alive that hold some of the cells ``by_id``, with those cells."""
    pending = []
    for job_id, entry in recorded.items():
        held = [by_id[c] for c in entry.get("cells", []) if c in by_id]
        job_folder = Path(str(folder).replace("%j", job_id))
        if held and entry.get("cluster") == cluster and _alive(cluster, job_folder, job_id):
            pending.append((_Attached(cluster, job_folder, job_id), held))
    return pending


def _submit(executor: Any, groups: list[list[Any]], job: Any, work: Any, out: Path, cluster: str) -> list[Any]:
    """One task per group of cells (``job(work, out, group)``), a job array for several; sbatch's errors in
    one line."""
    resources = groups[0][0].model.get("slurm", {})
    executor.update_parameters(name="eatkit-sweep", **submitit_parameters(resources))
    try:
        with _quiet_controllers(cluster):
            if len(groups) > 1:
                with executor.batch():
                    return [executor.submit(job(work, out, group)) for group in groups]
            return [executor.submit(job(work, out, groups[0]))]
    except Exception as exc:  # noqa: BLE001 -- sbatch errors (bad partition, ...) come in many types
        raise EatkitError(f"cannot submit the sweep's jobs: {one_line(exc)}") from None


def _write_record(record_path: Path, record: dict[str, Any]) -> None:
    """``slurm/jobs.json``: each task's cells and cluster, replaced in one step."""
    record_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = record_path.with_name(JOBS_FILE + ".tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, record_path)


def _drop_pattern_folder(folder: Path) -> None:
    """Remove the empty folder literally named ``%j`` that submitit (its executor, each local controller)
    creates from the folder pattern; each job writes into its own ``<job id>`` folder."""
    try:
        folder.rmdir()
    except OSError:  # absent, or (never seen) not empty: left as it is
        pass


def _poll(pending: list[tuple[Any, list[Any]]], queue: list[list[Any]], submit: Callable[[list[list[Any]]], None],
          cluster: str, parallel: int) -> Iterator[tuple[Any, str | None, float, bool]]:
    """:func:`run_slurm`'s loop: submit the queued tasks, at most ``parallel`` at once, and yield the cells
    of each task as it ends."""
    while pending or queue:
        while queue and len(pending) < max(1, parallel):
            submit([queue.pop(0)])
        finished = [(job, group) for job, group in pending if _done(job)]
        if not finished:
            time.sleep(POLL_S[cluster])
            continue
        for job, group in finished:
            pending.remove((job, group))
            yield from _job_cells(job, group)


def _job_cells(job: Any, group: list[Any]) -> Iterator[tuple[Any, str | None, float, bool]]:
    """The cells of a finished task: each with its error and time, or all failed with the task's error."""
    try:
        ran = {cell_id: (error, seconds) for cell_id, error, seconds in job.result()}
    except Exception as exc:  # noqa: BLE001 -- killed, out of memory, node lost: its cells failed
        for cell in group:
            yield cell, f"the SLURM job {job.job_id} failed: {one_line(exc)}", 0.0, False
        return
    for cell in group:
        error, seconds = ran.get(cell.id, (None, 0.0))  # not run: finished before the task reached it
        yield cell, error, seconds, True
