"""One run as a request: what ``eatkit run`` does, as the call a notebook makes.

The command line parses its flags into a :class:`RunRequest` and calls :func:`run_request`; the
orchestration lives here, once: the metrics added to the selected EAT tests (:func:`expand_metrics`, also
used by sweeps and ``eatkit debias``), the post-processing fitted on the stimuli of the tests run, and one run
or a series (several sources, or ``series`` set).

>>> from eatkit.stimuli.loader import load_suite
>>> suite, tests = expand_metrics(load_suite("weat"), "rnd", ["weat1"])
>>> tests
['weat1', 'weat1:rnd']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eatkit.analyses.base import RunOptions
from eatkit.records import Record
from eatkit.sources.base import EmbeddingSource
from eatkit.stimuli.types import Suite


def expand_metrics(suite: Suite, metrics: str | Sequence[str] | None,
                   tests: Sequence[str] | None = None) -> tuple[Suite, list[str] | None]:
    """``suite`` with each selected EAT test also run as each of ``metrics`` (a comma-separated list,
    ``"all"``, or names of members of :data:`eatkit.specs.METRICS`; ``None`` or empty: none), and the
    selection extended by them (:func:`eatkit.analyses.metrics.with_metrics`); the selection is checked
    first, the names are checked by the family."""
    from eatkit.analyses.metrics import parse_metrics, with_metrics
    from eatkit.run.runner import select_tests

    tests = None if tests is None else list(tests)
    if metrics is None or (not isinstance(metrics, str) and not metrics):
        return suite, tests
    select_tests(suite, tests)
    names = parse_metrics(metrics if isinstance(metrics, str) else ",".join(metrics) or "''")
    return with_metrics(suite, names, tests)


@dataclass(frozen=True)
class RunRequest:
    """A run: ``suite`` (metrics already added), the ``points`` to run it on (``(label, source)``; one
    label ``""`` for a single run), the selected ``tests``, validated ``options``, ``postprocess``
    (``center`` or ``abtt:D``, fitted on the stimuli of the selected tests), ``series`` (the kind of a
    series, ``"series"`` or ``"prompts"``; ``None``: a series only when there are several points) and the
    ``command`` recorded in the manifest, with ``warnings`` (settings outside their useful range beside
    the options, e.g. a model option's)."""

    suite: Suite
    points: Sequence[tuple[str, EmbeddingSource]]
    options: RunOptions
    tests: Sequence[str] | None = None
    postprocess: str | None = None
    series: str | None = None
    command: str | None = None
    warnings: Sequence[str] = ()


@dataclass(frozen=True)
class RunDone:
    """What :func:`run_request` wrote: the folder ``out``, the records of every run (in order), whether
    it is a series (``series``: its kind) and the run folders' results."""

    out: Path
    records: list[Record]
    series: str | None
    runs: list[Any] = field(default_factory=list)


def run_request(request: RunRequest, out: str | Path) -> RunDone:
    """Run ``request`` and write it to ``out``: one run folder, or a series (``series.json`` and one run
    folder per point)."""
    from eatkit.run.runner import run_suite, select_tests

    points = list(request.points)
    if request.postprocess is not None:
        from eatkit.sources.postprocess import Postprocessing, PostprocessedSource

        postprocess = Postprocessing.parse(request.postprocess)
        sets = [s for t in select_tests(request.suite, request.tests) for s in t.sets().values()]
        points = [(label, PostprocessedSource(source, postprocess).fit(sets)) for label, source in points]
    if len(points) > 1 or request.series is not None:
        from eatkit.run.series import run_series

        kind = request.series or "series"
        result = run_series(request.suite, points, kind=kind, tests=request.tests, options=request.options,
                            command=request.command, warnings=request.warnings)
        return RunDone(result.save(out), [r for run in result.runs for r in run.records], kind, list(result.runs))
    run = run_suite(request.suite, points[0][1], tests=request.tests, options=request.options,
                    command=request.command, warnings=request.warnings)
    return RunDone(run.save(out), list(run.records), None, [run])
