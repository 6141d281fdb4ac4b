"""A run folder (``results.json``, ``manifest.json``, ``similarities.npz``) as the report reads it.

The CLI, the tables, the plots and the HTML report share this one reader (on the run layer's
:func:`eatkit.run.folder.read_run`), so a malformed folder fails the same way everywhere: with an
:class:`~eatkit.errors.EatkitError` naming the folder, file, test or key.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.analyses.eat import PAIRS, EATRecord
from eatkit.errors import EatkitError
from eatkit.kinds import get_kind
from eatkit.records import Record
from eatkit.run.folder import read_run

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

    @property
    def headlined(self) -> tuple[tuple[Record, str], ...]:
        """The records whose kind declares a headline field (:class:`eatkit.kinds.Presentation`), each with
        that field's name: what the multi-run heatmap shows."""
        fields = {kind: get_kind(kind).presentation.headline for kind in self.by_kind()}
        return tuple((r, fields[r.kind]) for r in self.records if fields[r.kind])

    def to_frame(self) -> Any:
        """The records as a pandas DataFrame with the columns of the folder's ``results.csv`` (one row per
        record, one column per value; ``estimate``: each kind's headline value)."""
        from eatkit.run.folder import records_frame

        return records_frame(self.records)

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


def load_run(run_dir: str | Path) -> Run:
    """Read a run folder written by ``eatkit run ... --output DIR`` (:func:`eatkit.run.folder.read_run`).

    ``similarities.npz`` is optional (``Run.similarities`` is then ``None``); ``results.json`` and
    ``manifest.json`` are required; the EAT figures need each EAT test's level-3 arrays.

    >>> run = load_run("out/weat")                                # doctest: +SKIP
    >>> run.model, [r.pattern for r in run.records][:2]           # doctest: +SKIP
    ('glove.840B.300d', ['AB-Divergent', 'AB-Divergent'])
    """
    run_dir = Path(run_dir)
    records, manifest, similarities = read_run(run_dir)
    for record in records if similarities is not None else ():
        if isinstance(record, EATRecord):
            missing = [f"{record.test}/{pair}" for pair in PAIRS if pair not in similarities.get(record.test, {})]
            if missing:
                raise EatkitError(f"{run_dir / 'similarities.npz'} lacks the arrays {', '.join(missing)}")
    return Run(run_dir, records, manifest, similarities)


def run_labels(runs: Sequence[Run]) -> list[str]:
    """One label per run: its model id, with the folder name added where two runs share a model.

    >>> run_labels([Run(Path("a"), (), {"source": {"model": "m"}}), Run(Path("b"), (), {})])
    ['m', 'b']
    """
    counts = Counter(run.model for run in runs)
    return [run.model if counts[run.model] == 1 else f"{run.model} ({run.path.name})" for run in runs]
