"""Read a run folder (``results.json``, ``manifest.json``, ``similarities.npz``) for the report.

The CLI, the tables, the plots and the HTML report share this one reader, so a malformed folder fails
the same way everywhere: with an :class:`~eatkit.errors.EatkitError` naming the folder, file, test or key.
"""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.analyses import record_from_json
from eatkit.analyses.eat import PAIRS, EATRecord
from eatkit.errors import EatkitError
from eatkit.records import Record

#: manifest ``source`` keys that may hold the model id, in order of preference (``id``: eatkit's model id)
MODEL_KEYS: tuple[str, ...] = ("id", "model", "model_id", "name")

__all__ = ["MODEL_KEYS", "PAIRS", "Run", "check_record", "load_run", "run_labels"]


def check_record(record: Any) -> EATRecord:
    """``record`` if it is an :class:`~eatkit.analyses.eat.EATRecord` (EAT figures draw only those).

    >>> check_record({"test": "weat1"})
    Traceback (most recent call last):
    ...
    TypeError: an EAT record (eatkit.analyses.eat.EATRecord) is needed, got dict
    """
    if not isinstance(record, EATRecord):
        raise TypeError(f"an EAT record (eatkit.analyses.eat.EATRecord) is needed, got {type(record).__name__}")
    return record


@dataclass(frozen=True)
class Run:
    """One run folder: its records (suite order), manifest, and level-3 similarities (or ``None``)."""

    path: Path
    records: tuple[Record, ...]
    manifest: dict[str, Any]
    similarities: dict[str, dict[str, np.ndarray]] | None = field(default=None, repr=False)

    @property
    def eat_records(self) -> tuple[EATRecord, ...]:
        """The EAT records of the run (kind ``"eat"``)."""
        return tuple(r for r in self.records if isinstance(r, EATRecord))

    def by_kind(self) -> dict[str, list[Record]]:
        """The records grouped by kind, kinds in order of first appearance."""
        groups: dict[str, list[Record]] = {}
        for record in self.records:
            groups.setdefault(record.kind, []).append(record)
        return groups

    @property
    def model(self) -> str:
        """The model id recorded in the manifest's ``source`` (its first key of :data:`MODEL_KEYS`), else the
        folder name."""
        source = self.manifest.get("source")
        if isinstance(source, Mapping):
            for key in MODEL_KEYS:
                if isinstance(source.get(key), str) and source[key]:
                    return source[key]
        return self.path.name

    @property
    def suite_title(self) -> str:
        """The suite's title (or id) from the manifest, else the records' suite id."""
        suite = self.manifest.get("suite")
        if isinstance(suite, Mapping) and (suite.get("title") or suite.get("id")):
            return str(suite.get("title") or suite.get("id"))
        return self.records[0].suite if self.records else ""


def _read_json(path: Path, run_dir: Path) -> Any:
    if not path.is_file():
        raise EatkitError(f"run folder {run_dir} has no {path.name} (is it an eatkit run folder?)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EatkitError(f"{path} is not valid JSON: {exc}") from exc


def _read_similarities(path: Path, records: Sequence[Record]) -> dict[str, dict[str, np.ndarray]]:
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {key: np.asarray(npz[key], dtype=float).ravel() for key in npz.files}
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise EatkitError(f"{path} is not a readable .npz file: {exc}") from exc
    out: dict[str, dict[str, np.ndarray]] = {}
    for key, array in arrays.items():
        test, _, name = key.rpartition("/")
        out.setdefault(test, {})[name] = array
    for record in records:
        if isinstance(record, EATRecord):
            missing = [f"{record.test}/{pair}" for pair in PAIRS if pair not in out.get(record.test, {})]
            if missing:
                raise EatkitError(f"{path} lacks the arrays {', '.join(missing)}")
    return out


def load_run(run_dir: str | Path) -> Run:
    """Read a run folder written by ``eatkit run ... --output DIR``.

    ``similarities.npz`` is optional (``Run.similarities`` is then ``None``); ``results.json`` and
    ``manifest.json`` are required.

    >>> run = load_run("out/weat")                                # doctest: +SKIP
    >>> run.model, [r.pattern for r in run.records][:2]           # doctest: +SKIP
    ('glove.840B.300d', ['AB-Divergent', 'AB-Divergent'])
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise EatkitError(f"run folder {run_dir} does not exist or is not a folder")
    records = _read_json(run_dir / "results.json", run_dir)
    manifest = _read_json(run_dir / "manifest.json", run_dir)
    where = str(run_dir / "results.json")
    if not isinstance(records, list) or not records:
        raise EatkitError(f"{where} must be a non-empty JSON list of results")
    if not isinstance(manifest, dict):
        raise EatkitError(f"{run_dir / 'manifest.json'} must be a JSON object")
    typed = tuple(record_from_json(record, where) for record in records)
    repeated = [key for key, count in Counter(r.key() for r in typed).items() if count > 1]
    if repeated:
        what = ", ".join(map(str, repeated[0][2:]))
        raise EatkitError(f"{where} holds test {repeated[0][1]!r}{f' ({what})' if what else ''} more than once")
    npz = run_dir / "similarities.npz"
    similarities = _read_similarities(npz, typed) if npz.exists() else None
    return Run(run_dir, typed, manifest, similarities)


def run_labels(runs: Sequence[Run]) -> list[str]:
    """One label per run: its model id, with the folder name added where two runs share a model.

    >>> run_labels([Run(Path("a"), (), {"source": {"model": "m"}}), Run(Path("b"), (), {})])
    ['m', 'b']
    """
    counts = Counter(run.model for run in runs)
    return [run.model if counts[run.model] == 1 else f"{run.model} ({run.path.name})" for run in runs]
