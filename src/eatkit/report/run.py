"""Read a run folder (``results.json``, ``manifest.json``, ``similarities.npz``) for the report.

The CLI, the tables, the plots and the HTML report share this one reader, so a malformed folder fails
the same way everywhere: with an :class:`~eatkit.errors.EatkitError` naming the folder, file, test or key.
"""

from __future__ import annotations

import json
import math
import zipfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats.multilevel import PATTERNS

#: the four level-3 similarity distributions of ML-EAT: target x attribute
PAIRS: tuple[str, ...] = ("xa", "xb", "ya", "yb")

#: keys every results.json record must hold for the report to draw it
REQUIRED_KEYS: tuple[str, ...] = (
    "test", "title", "x_name", "y_name", "a_name", "b_name", "n_x", "n_y", "n_a", "n_b",
    "effect_size", "p_value", "p_value_exact", "p_method", "n_permutations", "alternative", "q_value",
    "level2_x_effect_size", "level2_x_p_value", "level2_x_p_exact", "level2_x_alternative",
    "level2_y_effect_size", "level2_y_p_value", "level2_y_p_exact", "level2_y_alternative",
    "pattern", "level2_x_association", "level2_y_association",
)
#: p-value methods the report knows how to label (a sampled permutation p is marked, Welch's is not)
P_METHODS: tuple[str, ...] = ("permutation", "welch")

#: manifest ``source`` keys that may hold the model id, in order of preference (``id``: eatkit's model id)
MODEL_KEYS: tuple[str, ...] = ("id", "model", "model_id", "name")


def check_record(record: Mapping[str, Any], where: str = "record") -> None:
    """Raise :class:`EatkitError` unless ``record`` has every key the report reads and its level-2 result
    agrees with itself: an association with A needs a level-2 d > 0 (with B, d < 0), each level-2 p is
    one-sided towards the sign of its d, and the pattern is the one the two associations make
    (:data:`eatkit.stats.multilevel.PATTERNS`).

    >>> check_record(["weat1"], "results.json")
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: results.json: every result must be a JSON object, got list
    """
    if not isinstance(record, Mapping):
        raise EatkitError(f"{where}: every result must be a JSON object, got {type(record).__name__}")
    name = f"test {record['test']!r}" if "test" in record else "a result"
    missing = [key for key in REQUIRED_KEYS if key not in record]
    if missing:
        raise EatkitError(f"{where}: {name} lacks {', '.join(repr(k) for k in missing)}")
    if record["p_method"] not in P_METHODS:
        raise EatkitError(f"{where}: {name} has p_method={record['p_method']!r}; expected 'permutation' or 'welch'")
    for target in ("x", "y"):
        _check_level2(record, target, f"{where}: {name}")
    associations = (record["level2_x_association"], record["level2_y_association"])
    if record["pattern"] != PATTERNS[associations]:
        raise EatkitError(
            f"{where}: {name} has pattern={record['pattern']!r}, but its level-2 associations "
            f"(X: {associations[0]!r}, Y: {associations[1]!r}) make {PATTERNS[associations]!r}"
        )


def _check_level2(record: Mapping[str, Any], target: str, who: str) -> None:
    key, d = f"level2_{target}", record[f"level2_{target}_effect_size"]
    association, alternative = record[f"{key}_association"], record[f"{key}_alternative"]
    if association not in ("A", "B", None):
        raise EatkitError(f"{who} has {key}_association={association!r}; expected 'A', 'B' or null")
    finite = isinstance(d, (int, float)) and math.isfinite(d)
    if association is not None and not (finite and (d > 0 if association == "A" else d < 0)):
        raise EatkitError(f"{who} has {key}_association={association!r} but {key}_effect_size={d!r} "
                          "(an association with A needs d > 0, with B d < 0)")
    expected = ("greater" if d >= 0 else "less") if finite else alternative
    if alternative not in ("greater", "less") or alternative != expected:
        raise EatkitError(f"{who} has {key}_alternative={alternative!r} with {key}_effect_size={d!r} "
                          "(expected 'greater' when d >= 0, 'less' when d < 0)")


@dataclass(frozen=True)
class Run:
    """One run folder: its records (suite order), manifest, and level-3 similarities (or ``None``)."""

    path: Path
    records: tuple[dict[str, Any], ...]
    manifest: dict[str, Any]
    similarities: dict[str, dict[str, np.ndarray]] | None = field(default=None, repr=False)

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
        return str(self.records[0].get("suite", "")) if self.records else ""


def _read_json(path: Path, run_dir: Path) -> Any:
    if not path.is_file():
        raise EatkitError(f"run folder {run_dir} has no {path.name} (is it an eatkit run folder?)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EatkitError(f"{path} is not valid JSON: {exc}") from exc


def _read_similarities(path: Path, tests: Sequence[str]) -> dict[str, dict[str, np.ndarray]]:
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {key: np.asarray(npz[key], dtype=float).ravel() for key in npz.files}
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise EatkitError(f"{path} is not a readable .npz file: {exc}") from exc
    out: dict[str, dict[str, np.ndarray]] = {}
    for test in tests:
        missing = [f"{test}/{pair}" for pair in PAIRS if f"{test}/{pair}" not in arrays]
        if missing:
            raise EatkitError(f"{path} lacks the arrays {', '.join(missing)}")
        out[test] = {pair: arrays[f"{test}/{pair}"] for pair in PAIRS}
    return out


def load_run(run_dir: str | Path) -> Run:
    """Read a run folder written by ``eatkit run ... --output DIR``.

    ``similarities.npz`` is optional (``Run.similarities`` is then ``None``); ``results.json`` and
    ``manifest.json`` are required.

    >>> run = load_run("out/weat")                                # doctest: +SKIP
    >>> run.model, [r["pattern"] for r in run.records][:2]        # doctest: +SKIP
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
    for record in records:
        check_record(record, where)
    repeated = [test for test, count in Counter(r["test"] for r in records).items() if count > 1]
    if repeated:
        raise EatkitError(f"{where} holds test {repeated[0]!r} more than once")
    npz = run_dir / "similarities.npz"
    similarities = _read_similarities(npz, [r["test"] for r in records]) if npz.exists() else None
    return Run(run_dir, tuple(records), manifest, similarities)


def run_labels(runs: Sequence[Run]) -> list[str]:
    """One label per run: its model id, with the folder name added where two runs share a model.

    >>> run_labels([Run(Path("a"), (), {"source": {"model": "m"}}), Run(Path("b"), (), {})])
    ['m', 'b']
    """
    counts = Counter(run.model for run in runs)
    return [run.model if counts[run.model] == 1 else f"{run.model} ({run.path.name})" for run in runs]
