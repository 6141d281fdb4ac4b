"""One run as a request: what ``eatkit run`` does, as the call a notebook makes.

The command line parses its flags into a model mapping and options, has :func:`build_request` make a
:class:`RunRequest` and calls :func:`run_request`; the orchestration lives here, once: the metrics added to
the selected EAT tests (:func:`expand_metrics`, also used by sweeps and ``eatkit debias``), the geometry
tests' compare models (:func:`geometry_params`), the sources to run (:func:`request_points`: one model, an
ordered series of word-vector files or HistWords decades, or one model per prompt), the post-processing
fitted on the stimuli of the tests run, and one run or a series (several sources, or ``series`` set).

>>> request = build_request("weat", {"name": "glove-6b-50d"}, compare_prompts=["", "a {x}"])  # doctest: +SKIP
>>> run_request(request, "out/prompts").series                                               # doctest: +SKIP
'prompts'

>>> from eatkit.stimuli.loader import load_suite
>>> suite, tests = expand_metrics(load_suite("weat"), "rnd", ["weat1"])
>>> tests
['weat1', 'weat1:rnd']
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eatkit.analyses.base import RunOptions, checked_options
from eatkit.errors import EatkitError
from eatkit.flags import option_name
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


#: names an option in an error as its caller gave it (the command line passes its flags)
Flag = Callable[[str], str]


def build_request(suite: Suite | str | os.PathLike[str], model: Mapping[str, Any], options: RunOptions | None = None,
                  *, tests: Sequence[str] | None = None, metrics: str | Sequence[str] | None = None,
                  series: Sequence[str | os.PathLike[str]] | None = None, decades: str | None = None,
                  compare_prompts: Sequence[str] | None = None, postprocess: str | None = None,
                  command: str | None = None, warnings: Sequence[str] = (), flag: Flag = option_name) -> RunRequest:
    """The request of one run, a series or a prompt comparison: ``suite`` (a :class:`Suite`, bundled id or
    file) with ``metrics`` added (:func:`expand_metrics`), ``options`` (default :class:`RunOptions`) checked
    against the selected ``tests`` with the geometry tests' compare models (:func:`geometry_params`), and the
    sources :func:`request_points` builds from ``model`` (the keys of :func:`eatkit.run.runner.build_source`),
    ``series``, ``decades`` and ``compare_prompts``; every option is checked before any model is built.
    ``flag`` names an option in errors (the command line: its flag).

    >>> build_request("weat", {"name": "glove-6b-50d"}, decades="1810-1990")
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: 'decades' applies to 'series' only
    """
    from eatkit.run.runner import select_tests

    if isinstance(suite, (str, os.PathLike)):
        from eatkit.stimuli.loader import load_suite

        suite = load_suite(suite)
    suite, tests = expand_metrics(suite, metrics, tests)
    selected = select_tests(suite, tests)
    options = options or RunOptions()
    params = {**options.params, **geometry_params(model, selected, flag)}
    options = checked_options(selected, dataclasses.replace(options, params=params).validated())
    refuse_answerer_params(model, options.params, flag)
    points = request_points(suite, model, series=series, decades=decades, compare_prompts=compare_prompts, flag=flag)
    kind = "prompts" if compare_prompts is not None else "series" if series is not None else None
    return RunRequest(suite, points, options, tests, postprocess, kind, command, warnings)


def refuse_answerer_params(model: Mapping[str, Any], params: Mapping[str, Any], flag: Flag = option_name) -> None:
    """A parameter declared for a local model's answering (``Param.answerer``: how it answers, e.g.
    ``answer_mode``) given with recorded answers (``model["answers"]``) is an error, not silently ignored.

    >>> refuse_answerer_params({"answers": "a.jsonl"}, {"answer_mode": "generate"})
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: 'answer_mode' applies to a local model ('name'), not to recorded answers ('answers')
    """
    from eatkit.kinds import param_owners

    if not model.get("answers"):
        return
    for name in params:
        if param_owners(name)[0].param(name).answerer:
            raise EatkitError(f"{flag(name)} applies to a local model ({flag('name')}), not to recorded answers "
                              f"({flag('answers')})")


def geometry_params(model: Mapping[str, Any], selected: Sequence[Any], flag: Flag = option_name) -> dict[str, Any]:
    """The parameters of geometry tests set by the program (only when ``selected`` has some): the run
    model's label and the model options that the compare models share (image folder, batch size, cache).

    >>> geometry_params({"name": "glove-6b-50d"}, [])
    {}
    """
    if not any(t.kind == "geometry" for t in selected):
        return {}
    if not model.get("name"):
        raise EatkitError(f"geometry tests need {flag('name')} (image features of a model)")
    shared = {"images": str(model["images"]) if model.get("images") else None, "batch_size": model.get("batch_size"),
              "cache": model.get("cache")}
    label = model["name"] + (f"@{model['checkpoint']}" if model.get("checkpoint") else "")
    return {"label": label, "compare_options": {k: v for k, v in shared.items() if v is not None}}


def request_points(suite: Suite, model: Mapping[str, Any], *, series: Sequence[str | os.PathLike[str]] | None = None,
                   decades: str | None = None, compare_prompts: Sequence[str] | None = None,
                   flag: Flag = option_name) -> list[tuple[str, EmbeddingSource]]:
    """The sources to run, as ``(label, source)``: the one ``model`` names (:func:`eatkit.run.runner.build_source`),
    the points of ``series`` (a HistWords folder's ``decades``, or word-vector files in order) or one source
    per prompt of ``compare_prompts`` ('' the bare word)."""
    model = {k: v for k, v in model.items() if v is not None}
    if compare_prompts is not None and not model.get("name"):
        raise EatkitError(f"{flag('compare_prompts')} applies to {flag('name')} only")
    if decades is not None and series is None:
        raise EatkitError(f"{flag('decades')} applies to {flag('series')} only")
    if series is not None:
        return _series_points(suite, model, [Path(p) for p in series], decades, flag)
    if compare_prompts is None:
        return [("", _source(suite, model, flag))]
    return _prompt_points(suite, model, list(compare_prompts), flag)


def _series_points(suite: Suite, model: dict[str, Any], series: list[Path], decades: str | None,
                   flag: Flag) -> list[tuple[str, EmbeddingSource]]:
    """The points of a series: a HistWords folder's decades, or word-vector files in order."""
    from eatkit.run.runner import MODEL_OPTIONS, refuse_model_options

    refuse_model_options({k: v for k, v in model.items() if k in MODEL_OPTIONS}, ("oov",), flag("series"), flag)
    twice = [str(p) for k, p in enumerate(series) if p.resolve() in {q.resolve() for q in series[:k]}]
    if twice:  # the same input twice: a series of a point with itself
        raise EatkitError(f"{flag('series')} names {twice[0]} more than once: give each file once")
    if model.get("embeddings_model"):
        raise EatkitError(f"{flag('embeddings_model')} does not apply to {flag('series')}")
    if len(series) == 1:
        return _histwords_points(series[0], model, decades, flag)
    return _vector_file_points(suite, model, series, decades, flag)


def _vector_file_points(suite: Suite, model: dict[str, Any], series: list[Path], decades: str | None,
                        flag: Flag) -> list[tuple[str, EmbeddingSource]]:
    """The word-vector files of a series, in order (checkpoints)."""
    from eatkit.sources.vectors import load_word_vectors

    if decades is not None:
        raise EatkitError(f"{flag('decades')} applies to a HistWords folder ({flag('series')} DIR), not to "
                          "word-vector files")
    words = {w for t in suite.tests for s in t.sets().values() for w in s.items}
    return [(path.stem, load_word_vectors(path, cased=not model.get("lowercase"), oov=model.get("oov", "error"),
                                          words=words)) for path in series]


def _histwords_points(folder: Path, model: dict[str, Any], decades: str | None,
                      flag: Flag) -> list[tuple[str, EmbeddingSource]]:
    """The decades of a HistWords folder."""
    from eatkit.run.series import histwords_sources, parse_decades

    if model.get("lowercase"):
        raise EatkitError(f"{flag('lowercase')} applies to a series of word-vector files (HistWords is lower-case)")
    parsed = parse_decades(decades) if decades is not None else None
    return histwords_sources(folder, oov=model.get("oov", "error"), decades=parsed)


def _prompt_points(suite: Suite, model: dict[str, Any], prompts: list[str],
                   flag: Flag) -> list[tuple[str, EmbeddingSource]]:
    """One source per prompt, every prompt checked before any model is built."""
    if model.get("prompt") is not None:
        raise EatkitError(f"give the prompts either with {flag('prompt')} or with {flag('compare_prompts')}, not both")
    if len(prompts) < 2 or len(set(prompts)) < len(prompts):
        raise EatkitError(f"{flag('compare_prompts')} needs 2 or more different prompts, got {prompts}")
    from eatkit.encoders.text import check_prompt
    from eatkit.registry import get_model

    for prompt in filter(None, prompts):
        check_prompt(prompt)
    get_model(model["name"]).refuse_options(["prompt"], lambda _: f"{flag('compare_prompts')} (it has no prompt)")
    return [(prompt, _source(suite, model, flag, prompt=prompt or None)) for prompt in prompts]


def _source(suite: Suite, model: dict[str, Any], flag: Flag, **overrides: Any) -> EmbeddingSource:
    """The source ``model`` names (:func:`eatkit.run.runner.build_source`; ``overrides``: model options)."""
    from eatkit.run.runner import build_source

    return build_source(model, suite, overrides, flag=flag)
