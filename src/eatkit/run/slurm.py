"""The SLURM executor of a sweep, through submitit: one job-array task per cell.

Cells that ask for the same resources go into one job array (``sbatch --array``); each task runs its cell
with :func:`eatkit.run.sweep.run_cell` and writes the cell's folder itself (the output folder must be on a
file system the nodes share), ``cell.json`` last, so the driver (``eatkit sweep``) may be interrupted and
run again: finished cells are skipped, as with the other executors. A task preempted or timed out is
requeued by submitit (:meth:`CellJob.checkpoint`); the requeued task runs its cell again from the start,
or does nothing when the cell finished in the meantime.

Resources come from the sweep file: a top-level ``slurm`` table of defaults and a ``slurm`` table in a
model entry that overrides them for that model's cells (:data:`RESOURCE_KEYS`)::

    slurm = { partition = "gpu", cpus = 8, mem = "32G", time = "1:00:00" }
    models = [{ name = "open_clip:ViT-L-14/openai", slurm = { gpus = 1, mem = "64G" } }, "glove-6b-50d"]

They are not part of a cell's configuration hash: moving a sweep to another partition keeps its finished
cells. submitit's ``local`` cluster runs the same jobs as processes of this machine (``--cluster local``),
``debug`` in this process.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from eatkit.errors import EatkitError, one_line
from eatkit.io import require

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
    eatkit.errors.EatkitError: sweep: slurm: unknown key 'gpu' (known: partition, gpus, cpus, mem, time, account, qos, constraint, max_parallel)
    """
    where = f"{where}: slurm"
    if not isinstance(value, dict):
        raise EatkitError(f"{where}: expected a table of {', '.join(RESOURCE_KEYS)}")
    unknown = sorted(set(value) - set(RESOURCE_KEYS))
    if unknown:
        raise EatkitError(f"{where}: unknown key '{unknown[0]}' (known: {', '.join(RESOURCE_KEYS)})")
    out: dict[str, Any] = {}
    for key, given in value.items():
        if key in _STRINGS:
            if not isinstance(given, str) or not given:
                raise EatkitError(f"{where}: '{key}' must be a name, got {given!r}")
            out[key] = given
        elif key == "mem":
            out[key] = _gigabytes(given, where)
        elif key == "time":
            out[key] = _minutes(given, where)
        elif isinstance(given, bool) or not isinstance(given, int) or given < (0 if key == "gpus" else 1):
            raise EatkitError(f"{where}: '{key}' must be a whole number {'>= 0' if key == 'gpus' else '>= 1'}, "
                              f"got {given!r}")
        else:
            out[key] = given
    return out


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
    return params


def check_cluster(cluster: str) -> None:
    """Refuse an unknown submitit cluster, and ``slurm`` where ``sbatch`` is not on the PATH."""
    if cluster not in CLUSTERS:
        raise EatkitError(f"unknown cluster '{cluster}' (known: {', '.join(CLUSTERS)})")
    if cluster == "slurm" and shutil.which("sbatch") is None:
        raise EatkitError("no SLURM here: sbatch is not on the PATH (run eatkit sweep on a login node of the "
                          "cluster, or try the sweep on this machine with --cluster local)")


class CellJob:
    """A SLURM task: ``work(out, cell)`` runs one cell and writes its folder, returning its error (``None``
    when it finished) and seconds; requeued by submitit when preempted or timed out."""

    def __init__(self, work: Callable[[Path, Any], tuple[str | None, float]], out: Path, cell: Any) -> None:
        self.work, self.out, self.cell = work, out, cell

    def __call__(self) -> tuple[str | None, float]:
        return self.work(self.out, self.cell)

    def checkpoint(self) -> Any:
        """Requeue this task as it is (submitit calls it on preemption or timeout; the cell is resumable)."""
        import submitit

        return submitit.helpers.DelayedSubmission(self)


def run_slurm(cells: list[Any], out: Path, work: Callable[[Path, Any], tuple[str | None, float]],
              cluster: str = "slurm") -> Iterator[tuple[Any, str | None, float, bool]]:
    """Submit ``cells`` (one job array per distinct ``slurm`` resources, each task a :class:`CellJob` of
    ``work``) and yield ``(cell, error, seconds, saved)`` as the tasks end; ``saved``: the task wrote the
    cell (a task that died did not)."""
    check_cluster(cluster)
    submitit = require("submitit", "the slurm executor", "slurm")
    executor = submitit.AutoExecutor(folder=out / "slurm" / "%j", cluster=cluster)
    try:  # submitit creates the folder pattern itself; each job writes into its own "<job id>" folder
        (out / "slurm" / "%j").rmdir()
    except OSError:
        pass
    groups: dict[str, list[Any]] = {}
    for cell in cells:
        groups.setdefault(repr(sorted(cell.model.get("slurm", {}).items())), []).append(cell)
    jobs: dict[Any, Any] = {}
    for group in groups.values():
        executor.update_parameters(name="eatkit-sweep", **submitit_parameters(group[0].model.get("slurm", {})))
        try:
            with executor.batch():
                submitted = [executor.submit(CellJob(work, out, cell)) for cell in group]
        except Exception as exc:  # noqa: BLE001 -- sbatch errors (bad partition, ...) come in many types
            raise EatkitError(f"cannot submit the sweep's jobs: {one_line(exc)}") from None
        jobs.update(zip(submitted, group))
    for job in submitit.helpers.as_completed(list(jobs), poll_frequency=POLL_S[cluster]):
        try:
            error, seconds = job.result()
        except Exception as exc:  # noqa: BLE001 -- killed, out of memory, node lost: the cell failed
            yield jobs[job], f"the SLURM job {job.job_id} failed: {one_line(exc)}", 0.0, False
            continue
        yield jobs[job], error, seconds, True
