"""One suite run over an ordered series of embedding sources: decades, checkpoints, or prompts.

:func:`run_series` runs the same tests, with the same options and run seed, on each point of a series
(a list of ``(label, source)`` pairs) and returns a :class:`SeriesResult`; its :meth:`~SeriesResult.save`
writes every point as an ordinary run folder (``<out>/<k>-<label>/``) and ``series.json``, which names the
points in order, and ``meta-analysis.csv`` (:mod:`eatkit.run.meta_analysis`): per EAT test, the random
effects across the points (a combined d, and whether the points differ more than chance). ``eatkit run SUITE --series DIR`` runs the decades of a HistWords folder
(:func:`histwords_sources`); ``--compare-prompts P1 P2`` runs one model with two prompts
(``kind="prompts"``). The report (:mod:`eatkit.report.series`) draws levels 1 and 2 over the series with
the EAT pattern at each point, and tables the points side by side with sign changes marked.

>>> from eatkit.sources.vectors import WordVectors                              # doctest: +SKIP
>>> series = run_series("weat", [("1900", src_1900), ("1910", src_1910)], seed=0)  # doctest: +SKIP
>>> series.save("out/series")                                                  # doctest: +SKIP
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eatkit.analyses.base import RunOptions
from eatkit.errors import EatkitError, one_line
from eatkit.io import atomic_write_bytes
from eatkit.run.folder import OWNER_FILE, owner_marker, prepare_output
from eatkit.run.meta_analysis import write_meta_analysis
from eatkit.run.runner import RunResult, resolve_run_seed, run_suite
from eatkit.sources.base import EmbeddingSource

#: the format of series.json
SERIES_SCHEMA = "eatkit.series/1"
#: what a series' points are
SERIES_KINDS = ("series", "prompts")


@dataclass
class SeriesResult:
    """The runs of one suite over the points of a series, in order."""

    kind: str
    labels: list[str]
    runs: list[RunResult]

    def save(self, out_dir: str | Path) -> Path:
        """Write each point's run folder and ``series.json`` (schema, kind, points: label and folder)."""
        out = prepare_output(out_dir, "series")
        points = []
        for k, (label, run) in enumerate(zip(self.labels, self.runs), start=1):
            folder = f"{k:02d}-{_slug(label)}"
            run.save(out / folder)
            points.append({"label": label, "folder": folder})
        text = json.dumps({"schema": SERIES_SCHEMA, "kind": self.kind, "points": points}, indent=2)
        try:
            atomic_write_bytes(out / "series.json", (text + "\n").encode("utf-8"))
            atomic_write_bytes(out / OWNER_FILE, owner_marker("series"))
            write_meta_analysis(out, self.effect_sizes())
        except OSError as err:
            raise EatkitError(f"cannot write into {out}: {one_line(err.strerror or err)}") from None
        return out

    def effect_sizes(self) -> Any:
        """Every EAT record's d and set sizes at every point (a DataFrame; the point's label as ``model``),
        for the random effects across the points (``meta-analysis.csv``: do they differ more than chance?)."""
        import pandas as pd

        rows = [{"model": label, "suite": r.suite, "setting": self.kind, "kind": r.kind, "test": r.test,
                 "effect_size": r.effect_size, "n_x": r.n_x, "n_y": r.n_y}
                for label, run in zip(self.labels, self.runs) for r in run.records if r.kind == "eat"]
        return pd.DataFrame(rows, columns=["model", "suite", "setting", "kind", "test", "effect_size", "n_x", "n_y"])


def _slug(label: str) -> str:
    """A folder-name form of a point label: letters, digits, '.', '_' and '-' (at most 40)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-")[:40] or "none"


def run_series(
    suite: Any,
    sources: Sequence[tuple[str, EmbeddingSource]],
    *,
    kind: str = "series",
    tests: Sequence[str] | None = None,
    options: RunOptions | None = None,
    command: str | None = None,
    warnings: Sequence[str] = (),
) -> SeriesResult:
    """Run ``tests`` of ``suite`` on every ``(label, source)`` of ``sources``, in order.

    Every point uses the same options and the same run seed (drawn once when ``options.seed`` is None),
    so a test's Monte Carlo draws are the same at every point; ``warnings`` are recorded in every point's run
    (:func:`eatkit.run.runner.run_suite`).
    """
    if kind not in SERIES_KINDS:
        raise EatkitError(f"unknown series kind {kind!r} (known: {', '.join(SERIES_KINDS)})")
    labels = [label for label, _ in sources]
    if len(labels) < 2:
        raise EatkitError(f"a series needs at least 2 points, got {len(labels)}")
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise EatkitError(f"series points must have distinct labels; repeated: {', '.join(repeated)}")
    options = (options or RunOptions()).validated()
    fixed = RunOptions(**{**options.manifest(), "seed": resolve_run_seed(options.seed)})
    runs = [run_suite(suite, source, tests=tests, options=fixed, command=command,
                      warnings=warnings) for _, source in sources]
    return SeriesResult(kind, labels, runs)


def histwords_sources(folder: str | Path, *, oov: str = "error",
                      decades: tuple[int, int] | None = None) -> list[tuple[str, EmbeddingSource]]:
    """The decades of a HistWords folder as series points ``(year, source)`` (see
    :mod:`eatkit.sources.histwords`; the folder is checked before any decade is loaded). ``decades``
    ``(first, last)`` keeps the decades from ``first`` to ``last`` inclusive (the ML-EAT seed runs
    1810-1990: "we excluded 1800 because many stimuli had zero-norm vectors")."""
    from eatkit.sources.histwords import histwords_series, load_histwords_decade

    series = histwords_series(folder)
    if decades is not None:
        first, last = decades
        kept = [entry for entry in series if first <= entry[0] <= last]
        if not kept:
            found = ", ".join(str(year) for year, _, _ in series)
            raise EatkitError(f"series folder {folder} has no decade from {first} to {last} (it has {found})")
        series = kept
    return [(str(year), load_histwords_decade(matrix, vocab, year=year, oov=oov)) for year, matrix, vocab in series]


def parse_decades(text: str) -> tuple[int, int]:
    """``"1810-1990"`` as ``(1810, 1990)``; one year ``"1900"`` as ``(1900, 1900)``.

    >>> parse_decades("1810-1990"), parse_decades("1900")
    ((1810, 1990), (1900, 1900))
    """
    parts = text.split("-")
    if len(parts) not in (1, 2) or not all(p.strip().isdigit() for p in parts):
        raise EatkitError(f"--decades must be FIRST-LAST years (e.g. 1810-1990) or one year, got {text!r}")
    first, last = int(parts[0]), int(parts[-1])
    if first > last:
        raise EatkitError(f"--decades {text}: the first year is after the last")
    return first, last
