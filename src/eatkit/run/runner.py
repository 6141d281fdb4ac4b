"""Run a suite of tests on an embedding source: the Python API behind ``eatkit run``.

>>> import eatkit                                                           # doctest: +SKIP
>>> run = eatkit.run_suite("weat", eatkit.build_model("glove-6b-50d", oov="drop"), seed=0)  # doctest: +SKIP
>>> run.table()[["test", "effect_size", "p_value", "pattern"]]             # doctest: +SKIP
>>> run.save("results/")                                                   # doctest: +SKIP

Data flows one way: suite -> source (embeddings) -> the analysis of each test's kind
(:mod:`eatkit.analyses`, which calls :mod:`eatkit.stats`) -> typed records -> files. Nothing here
computes a statistic itself but the run's Benjamini-Hochberg q-values.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.analyses import get_analysis
from eatkit.analyses.base import Outcome, RunOptions, check_inputs, checked_options, options_by_test
from eatkit.encoders.cache import cache_dir
from eatkit.errors import EatkitError
from eatkit.flags import option_name
from eatkit.io import checked_path, text_sha256
from eatkit.kinds import get_kind
from eatkit.progress import activity, enabled
from eatkit.progress import progress as progressing
from eatkit.records import Record
from eatkit.run.folder import records_frame, results_json, set_entry, write_run
from eatkit.run.manifest import build_manifest
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stats.degeneracy import collected, p_floor_warning
from eatkit.stats import adjust_p_values
from eatkit.stats import derived_seed, resolve_rng
from eatkit.stats.options import OBSERVED
from eatkit.stats.permutation import count_store
from eatkit.stimuli.types import AssociationTest, StimulusSet, Suite

__all__ = ["RunOptions", "RunResult", "run_suite", "select_tests", "build_source"]


@dataclass
class RunResult:
    """The outcome of a run: one :class:`~eatkit.analyses.base.Outcome` (record, arrays, statistics
    result) per test, and the manifest."""

    suite: Suite
    outcomes: list[Outcome]
    manifest: dict[str, Any]
    #: test id -> the one-line error of a test that failed alone (``run_suite(..., isolate=True)``)
    failed: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def records(self) -> list[Record]:
        """The typed records, in suite order."""
        return [o.record for o in self.outcomes]

    @property
    def results(self) -> dict[str, Any]:
        """Test id -> the statistics result object (e.g. :class:`~eatkit.stats.MLEATResult`)."""
        return {o.record.test: o.result for o in self.outcomes}

    @property
    def similarities(self) -> dict[str, dict[str, np.ndarray]]:
        """Test id -> the arrays saved in ``similarities.npz`` (e.g. level-3 cosines ``xa``...)."""
        return {o.record.test: o.arrays for o in self.outcomes}

    def table(self) -> Any:
        """The records as a pandas DataFrame: ``results.csv``'s rows and columns (:func:`to_frame`)."""
        return self.to_frame()

    def to_frame(self) -> Any:
        """The records as a pandas DataFrame, one row per record and one column per value, as ``results.csv``
        (``estimate``: each kind's headline value; panels such as ``validity`` are in ``tables/*.csv``)."""
        return records_frame(self.records)

    def to_json(self) -> str:
        """``results.json``: the records as a JSON list."""
        return results_json(self.records)

    @cached_property
    def files(self) -> dict[str, bytes]:
        """The files the kinds of the run add to its folder (:meth:`~eatkit.analyses.base.Analysis.files`)."""
        by_kind: dict[str, list[Outcome]] = {}
        for outcome in self.outcomes:
            by_kind.setdefault(outcome.record.kind, []).append(outcome)
        return {name: data for kind, group in by_kind.items() for name, data in get_analysis(kind).files(group).items()}

    def save(self, out_dir: str | Path) -> Path:
        """Write the run folder (:func:`eatkit.run.folder.write_run`): ``results.json``, ``results.csv``,
        ``similarities.npz``, ``manifest.json`` and the files of its kinds (e.g. ``captions.csv``)."""
        arrays = {f"{o.record.test}/{k}": v for o in self.outcomes for k, v in o.arrays.items()}
        return write_run(out_dir, self.records, arrays, self.manifest, self.files)


def run_suite(
    suite: Suite | str | Path,
    source: EmbeddingSource | str,
    *,
    tests: Sequence[str] | None = None,
    options: RunOptions | None = None,
    command: str | None = None,
    isolate: bool = False,
    progress: bool | None = None,
    warnings: Sequence[str] = (),
    **option_values: Any,
) -> RunResult:
    """Run ``tests`` (default: all) of ``suite`` on ``source`` and collect records and a manifest.

    ``suite`` is a :class:`Suite` or a bundled suite id or suite file; ``source`` an embedding source or
    a registered model name (built with its defaults). Options are keywords (``seed=``,
    ``permutations=``, ``alternative=``, ``sd=``, ``ddof=``, ``p_method=``, ``n_bootstrap=``, ... the
    fields of :class:`RunOptions`) or one ``options`` object. Each test gets its own seed derived from
    the run seed and the test id, so a test's Monte Carlo p-value does not depend on which other tests
    ran. A set shared by several tests is embedded once. ``progress`` shows (True) or silences (False) the
    progress of embedding and long statistics on stderr (None: as set for the process, e.g. ``--quiet``; a
    line every few seconds where stderr is not a terminal, as in a notebook or a log).

    ``isolate=True`` (a sweep's cells): a test whose check, embedding or statistics fail is left out with
    its one-line error in :attr:`RunResult.failed` (and the manifest's ``failed_tests``), the other tests
    go on; only when every test fails is the run an error. ``warnings``: settings outside their useful
    range beside the options (e.g. ``eatkit run --batch-size 4096``), recorded with the options' own.
    """
    with enabled(progress):
        return _run_suite(suite, source, tests, options, command, option_values, isolate, warnings)


def _run_suite(suite: Any, source: Any, tests: Sequence[str] | None, options: RunOptions | None,
               command: str | None, option_values: dict[str, Any], isolate: bool = False,
               extra_warnings: Sequence[str] = ()) -> RunResult:
    """:func:`run_suite` with progress set, in stages: resolve, embed, analyse, correct, record."""
    suite, source = _resolve(suite, source)
    selected = select_tests(suite, tests)
    options = _run_options(suite, selected, options, option_values)
    analyses = {test.id: get_analysis(test.kind) for test in selected}
    _refuse_kind_options(selected, options, analyses)
    stage = _Stage(analyses, options_by_test(selected, options), isolate)  # each test's parameters, validated once
    selected = stage.each(selected, lambda t: analyses[t.id].check(t, stage.given[t.id]))
    with collected() as found:  # findings of the inputs (an image far smaller than the model's): the run's warnings
        selected, embedded = _embed_tests(stage, source, selected)
    extra_warnings = [*extra_warnings, *found]
    outcomes, selected = _analyse(stage, suite, selected, embedded, options.seed)
    outcomes = _correct(outcomes, options, extra_warnings)
    manifest = _record(suite, source, selected, embedded, options, command, stage.failed,
                       [*extra_warnings, *options.warnings()])
    return RunResult(suite, outcomes, manifest, stage.failed)


def _run_options(suite: Suite, selected: list[AssociationTest], options: RunOptions | None,
                 option_values: dict[str, Any]) -> RunOptions:
    """The run's options (``options`` or keywords), checked against its tests, with the run seed resolved (what
    an analysis draws before compute uses it too)."""
    if options is not None and option_values:
        raise TypeError("run_suite takes either options= or option keywords, not both")
    if options is None:
        names = {f.name for f in dataclasses.fields(RunOptions)}
        unknown = sorted(set(option_values) - names)
        if unknown:
            raise TypeError(f"run_suite got an unknown option {unknown[0]!r} (options: {', '.join(sorted(names))})")
        options = RunOptions(**option_values)
    elif not isinstance(options, RunOptions):
        raise TypeError(f"options must be a RunOptions, got {type(options).__name__}")
    options = checked_options(selected, options.validated().for_suite(suite.alternative))
    return dataclasses.replace(options, seed=resolve_run_seed(options.seed))


def _kinds_with(flag: str) -> str:
    """The registered kinds whose analysis sets the class flag ``flag`` (e.g. ``takes_validity``), quoted."""
    from eatkit.kinds import KINDS

    return ", ".join(repr(kind) for kind in KINDS if getattr(get_analysis(kind), flag))


def _refuse_kind_options(selected: list[AssociationTest], options: RunOptions, analyses: dict[str, Any]) -> None:
    """An error for a run option that applies to kinds of test none (or not all) of the selected tests is: the
    alternative 'observed' and validity, the kinds named from their analyses' declarations."""
    refused = [t for t in selected if options.alternative == OBSERVED and not analyses[t.id].observed_alternative]
    if refused:
        raise EatkitError(f"test '{refused[0].id}' ({refused[0].kind}): the alternative 'observed' applies to tests "
                          f"of kinds {_kinds_with('observed_alternative')} only")
    if options.validity and not any(a.takes_validity for a in analyses.values()):
        raise EatkitError(f"validity applies to tests of kinds {_kinds_with('takes_validity')}; none of the "
                          "selected tests is one")


class _Stage:
    """Runs one step per test, each test's error named; isolated (``isolate``), a failing test is recorded in
    :attr:`failed` with its one-line error and left out of the next stages."""

    def __init__(self, analyses: dict[str, Any], given: dict[str, dict[str, Any]], isolate: bool) -> None:
        self.analyses, self.given, self.isolate = analyses, given, isolate
        self.failed: dict[str, str] = {}

    def attempt(self, test: AssociationTest, step: Any, named: bool = False) -> Any:
        """``step()``; its error names the test (``named``: the step's errors do not), or, isolated, is
        recorded and ``None`` returned."""
        try:
            return step()
        except EatkitError as err:
            if not self.isolate and not named:
                raise
            message = f"test '{test.id}': {err}" if named or not str(err).startswith(f"test '{test.id}'") else str(err)
            if not self.isolate:
                raise EatkitError(message) from None
            self.failed[test.id] = message
            return None

    def each(self, tests: list[AssociationTest], step: Any) -> list[AssociationTest]:
        """``step(test)`` for each test; the tests that did not fail."""
        for test in tests:
            self.attempt(test, lambda t=test: step(t))
        return self.alive(tests)

    def alive(self, tests: list[AssociationTest]) -> list[AssociationTest]:
        """The tests that have not failed."""
        return [t for t in tests if t.id not in self.failed]


def _embed_tests(stage: _Stage, source: EmbeddingSource, selected: list[AssociationTest]
                 ) -> tuple[list[AssociationTest], dict[str, dict[str, Embedded]]]:
    """Every test's sets embedded (a set shared by tests once), then each test's precheck: a problem with any
    stimulus or an infeasible test is reported before minutes of statistics."""
    analyses, given = stage.analyses, stage.given
    sets = [s for test in selected for s in analyses[test.id].stimulus_sets(test, given[test.id]).values()]
    with activity(f"embedding {len(sets)} stimulus sets"):
        memo = _embed_all(source, sets)
    embedded: dict[str, dict[str, Embedded]] = {}
    for test in progressing(selected, desc="embedding", unit="tests"):
        embedded[test.id] = stage.attempt(test, lambda t=test: analyses[t.id].embed(
            t, lambda s: _embed(source, s, memo, t), given[t.id]))
    selected = stage.each(stage.alive(selected), lambda t: analyses[t.id].precheck(t, embedded[t.id], given[t.id]))
    return selected, embedded


def _analyse(stage: _Stage, suite: Suite, selected: list[AssociationTest], embedded: dict[str, dict[str, Embedded]],
             run_seed: int) -> tuple[list[Outcome], list[AssociationTest]]:
    """Each test's statistics, with its own seed (:func:`eatkit.stats.derived_seed`); the outcomes and the tests that gave
    them. When every test failed (isolated), the first error."""
    outcomes: list[Outcome] = []
    # counts made by an earlier run on the same values are read, not made again (same integers)
    with count_store(cache_dir() / "counts"):
        for test in progressing(selected, desc=suite.id, unit="tests"):
            outcomes += stage.attempt(test, lambda t=test: _with_findings(lambda: _compute(
                stage.analyses[t.id], t, embedded[t.id], stage.given[t.id], suite.id, derived_seed(run_seed, t.id))),
                named=True) or []
    selected, failed = stage.alive(selected), stage.failed
    if failed and not selected:
        raise EatkitError(next(iter(failed.values())) + (f" (and {len(failed) - 1} other test(s) failed)"
                                                          if len(failed) > 1 else ""))
    return outcomes, selected


def _compute(analysis: Any, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, suite: str,
             seed: int) -> list[Outcome]:
    """One test's outcomes: its kind's declared degeneracy rules on its sets (:func:`check_inputs`, the one
    place), then its analysis' statistics."""
    check_inputs(get_kind(analysis.kind), embedded)
    return analysis.compute(test, embedded, options, suite=suite, seed=seed)


def _correct(outcomes: list[Outcome], options: RunOptions, extra_warnings: Sequence[str]) -> list[Outcome]:
    """The outcomes with their q-values (:func:`_with_q_values`) and warnings: the run's settings' and each
    record's p-value floor."""
    outcomes = _with_q_values(outcomes, options.correction_family)
    warnings = [*extra_warnings, *options.warnings()]
    return [dataclasses.replace(o, record=dataclasses.replace(o.record, warnings=[
        *o.record.warnings, *warnings, *filter(None, [p_floor_warning(o.record, options.alpha)])])) for o in outcomes]


def _record(suite: Suite, source: EmbeddingSource, selected: list[AssociationTest],
            embedded: dict[str, dict[str, Embedded]], options: RunOptions, command: str | None,
            failed: dict[str, str], warnings: list[str]) -> dict[str, Any]:
    """The run's manifest: options, seed and warnings, every stimulus' checksum, the tests' suite-file
    parameters and the tests that failed."""
    stimuli = {test.id: _stimulus_checksums(test, embedded[test.id]) for test in selected}
    statistics = options.manifest() | {"seed": options.seed, "warnings": warnings}
    manifest = build_manifest(suite, source, statistics, stimuli, command)
    params = {test.id: dict(test.params) for test in selected if test.params}
    if params:  # what each test's suite file set (e.g. a seed-sets test's catalogue and its SHA-256)
        manifest["test_params"] = params
    if failed:
        manifest["failed_tests"] = failed
    return manifest


def _with_findings(compute: Callable[[], list[Outcome]]) -> list[Outcome]:
    """``compute()``'s outcomes, each record's ``warnings`` extended by the degeneracy warnings
    (:class:`eatkit.stats.degeneracy.DegeneracyWarning`: e.g. sets sharing vectors) its statistics issued."""
    with collected() as found:
        outcomes = compute()
    return [dataclasses.replace(o, record=dataclasses.replace(o.record, warnings=[*o.record.warnings, *found]))
            for o in outcomes] if found else outcomes


def _resolve(suite: Any, source: Any) -> tuple[Suite, EmbeddingSource]:
    """The suite and source of :func:`run_suite`, loaded or built from names."""
    if isinstance(suite, (str, Path)):
        from eatkit.stimuli.loader import load_suite

        suite = load_suite(suite)
    elif not isinstance(suite, Suite):
        raise TypeError(f"suite must be a Suite, a bundled suite id or a suite file, got {type(suite).__name__}")
    if isinstance(source, str):
        from eatkit.registry import build_model

        source = build_model(source)
    elif not isinstance(source, EmbeddingSource):
        raise TypeError(f"source must be an EmbeddingSource or a registered model name, got {type(source).__name__}")
    return suite, source


#: the options of a model (given with ``name``): keywords of its factory (``eatkit run`` flags, named by
#: :func:`eatkit.cli.run.model_flag`)
MODEL_OPTIONS: tuple[str, ...] = ("images", "layer", "pooling", "prompt", "batch_size", "device", "precision",
                                  "workers", "cache", "oov", "regions", "missing", "checkpoint", "revision",
                                  "embedder", "generation", "preprocess", "crop", "interpolation", "alpha")


def _answers_source(options: Mapping[str, Any], model_options: Mapping[str, Any],
                    flag: Callable[[str], str]) -> EmbeddingSource:
    """Recorded answers (``answers`` FILE, with ``answer_field`` and ``answer_format``)."""
    from eatkit.sources.answers import RecordedAnswers, parse_fields

    if "answers" not in options:
        raise EatkitError(f"{flag('answer_field' if 'answer_field' in options else 'answer_format')} applies to "
                          f"{flag('answers')} only")
    refuse_model_options(dict(model_options), (), flag("answers"))
    return RecordedAnswers(checked_path(options["answers"], flag("answers")), options.get("answer_format"),
                           parse_fields(options.get("answer_field")))


def build_source(
    given: Mapping[str, Any], suite: Suite, overrides: Mapping[str, Any] | None = None,
    flag: Callable[[str], str] = option_name,
) -> EmbeddingSource:
    """The embedding source that ``eatkit run`` flags or a sweep file's model entry name: exactly one of
    ``name`` (a registered model, with the options of :data:`MODEL_OPTIONS` it takes), ``vectors`` (a
    word-vector file, read for ``suite``'s words only; ``oov``, ``lowercase``) or ``embeddings`` (a folder
    or file of precomputed embeddings; ``embeddings_model``). ``None`` values are not given; ``overrides``
    are passed to the model's factory as they are (``None`` included). ``flag`` names an option in errors
    (default: its keyword; the command line passes its flags).

    >>> build_source({"name": "glove-6b-50d", "layer": 3}, None)
    Traceback (most recent call last):
    eatkit.errors.EatkitError: model 'glove-6b-50d' does not take the option 'layer'
    """
    options = _source_options(given, flag)
    model_options = {k: options[k] for k in MODEL_OPTIONS if k in options}
    if {"answers", "answer_field", "answer_format"} & set(options):
        return _answers_source(options, model_options, flag)
    if "vectors" in options:
        return _vectors_source(options, model_options, suite, flag)
    _refuse_unless(options, "lowercase", "vectors", flag)
    if "embeddings" in options:
        return _embeddings_source(options, model_options, flag)
    _refuse_unless(options, "embeddings_model", "embeddings", flag)
    from eatkit.registry import get_model

    spec = get_model(options["name"])
    spec.refuse_options(model_options, flag)
    return spec.build(**model_options, **(overrides or {}))


def _source_options(given: Mapping[str, Any], flag: Callable[[str], str]) -> dict[str, Any]:
    """The options given (not ``None``), their paths checked, naming exactly one source."""
    options = {k: v for k, v in given.items() if v is not None}
    for key in ("vectors", "embeddings", "images", "checkpoint"):  # paths no file system can hold: one line
        if isinstance(options.get(key), (str, os.PathLike)):
            checked_path(options[key], flag(key))
    models = [k for k in ("name", "vectors", "embeddings", "answers") if k in options]
    if len(models) != 1:
        raise EatkitError(f"give exactly one of a model name, vectors, embeddings or answers (got "
                          f"{', '.join(models) or 'none'})")
    return options


def _refuse_unless(options: Mapping[str, Any], key: str, source: str, flag: Callable[[str], str]) -> None:
    """An error for the option ``key`` (given true) of a source other than ``source``."""
    if options.get(key):
        raise EatkitError(f"{flag(key)} applies to {flag(source)} only")


def _vectors_source(options: Mapping[str, Any], model_options: Mapping[str, Any], suite: Suite,
                    flag: Callable[[str], str]) -> EmbeddingSource:
    """A word-vector file read for ``suite``'s words only."""
    from eatkit.sources.vectors import load_word_vectors

    refuse_model_options(model_options, ("oov",), flag("vectors"), flag)
    words = {w for t in suite.tests for s in t.sets().values() for w in s.items}
    return load_word_vectors(options["vectors"], cased=not options.get("lowercase", False),
                             oov=options.get("oov", "error"), words=words)


def _embeddings_source(options: Mapping[str, Any], model_options: Mapping[str, Any],
                       flag: Callable[[str], str]) -> EmbeddingSource:
    """Precomputed embeddings: a folder or file, or a model of an iEAT-layout folder."""
    from eatkit.sources.precomputed import IEATEmbeddings, PrecomputedEmbeddings

    refuse_model_options(model_options, (), flag("embeddings"), flag)
    if options.get("embeddings_model"):
        return IEATEmbeddings(options["embeddings"], options["embeddings_model"])
    return PrecomputedEmbeddings(options["embeddings"])


def refuse_model_options(given: Mapping[str, Any], allowed: tuple[str, ...], source: str,
                         flag: Callable[[str], str] = option_name) -> None:
    """An error for a model option (a key of :data:`MODEL_OPTIONS`) given with a source that is not a model."""
    extra = [key for key in given if key not in allowed]
    if extra:
        raise EatkitError(f"{flag(extra[0])} applies to {flag('name')}, not to {source}")


#: the run seed when none is given, so that the same command gives the same digits (``seed="random"`` draws
#: a fresh one); recorded in the manifest like any seed
DEFAULT_SEED = 0


def resolve_run_seed(seed: int | str | None) -> int:
    """The run seed of ``seed``: ``DEFAULT_SEED`` for None, a fresh seed below 2**53 for ``"random"``.

    >>> resolve_run_seed(None), resolve_run_seed(7), resolve_run_seed("random") < 2**53
    (0, 7, True)
    """
    return resolve_rng(DEFAULT_SEED if seed is None else seed)[1] or 0  # an int or "random" gives a seed


def _with_q_values(outcomes: list[Outcome], family: str = "kind") -> list[Outcome]:
    """Benjamini-Hochberg q-values over each family of tested p-values, set on the records that have one: the
    records of each kind apart (EATs among EATs, each metric among its own) for ``family="kind"``, all of
    the run's for ``"run"``."""
    families: dict[str, list[int]] = {}
    for i, o in enumerate(outcomes):
        if o.record.p_value is not None:
            families.setdefault(o.record.kind if family == "kind" else "", []).append(i)
    out = list(outcomes)
    for tested in families.values():
        q_values = adjust_p_values([outcomes[i].record.p_value for i in tested], method="bh")
        for i, q in zip(tested, q_values):
            out[i] = dataclasses.replace(out[i], record=dataclasses.replace(out[i].record, q_value=float(q)))
    return out


def select_tests(suite: Suite, tests: Sequence[str] | None) -> list[AssociationTest]:
    """The tests to run: all (``tests`` None) or the named ones, each once, in the order given."""
    if tests is None:
        return list(suite.tests)
    if isinstance(tests, str) or not all(isinstance(t, str) for t in tests):
        raise TypeError("tests must be a list of test ids")
    if not tests:
        raise EatkitError("the list of tests to run is empty")
    repeated = sorted({t for t in tests if list(tests).count(t) > 1})
    if repeated:
        raise EatkitError(f"tests listed more than once: {', '.join(repeated)}")
    return [suite.test(t) for t in tests]


def _stimulus_checksums(test: AssociationTest, embedded: dict[str, Embedded]) -> dict[str, Any]:
    """What the manifest records of each set of a test: every stimulus embedded (its id, and the SHA-256 of
    its file's bytes or of its exact string) and one SHA-256 over them, the set's fingerprint."""
    sets = test.sets()
    return {role: _set_checksums(role, sets.get(role), emb) for role, emb in embedded.items()}


def _set_checksums(role: str, stimuli: StimulusSet | None, emb: Embedded) -> dict[str, Any]:
    """The manifest entry of one set of a test (``stimuli`` None: a set an analysis derived)."""
    hashes = emb.checksums or tuple(text_sha256(i) for i in emb.ids)
    items = [[i, h] for i, h in zip(emb.ids, hashes)]
    if stimuli is None:
        return set_entry(role, None, items, emb.dropped)
    entry = set_entry(stimuli.name, stimuli.modality, items, emb.dropped)
    if stimuli.modality == "image" and stimuli.category and not stimuli.items:
        entry["category"] = stimuli.category  # the whole folder: eatkit verify also looks for new files
    return entry


def _embed_all(source: EmbeddingSource, sets: list[StimulusSet]) -> dict[str, Embedded]:
    """The tests' stimulus sets embedded in one stream (:meth:`EmbeddingSource.embed_many`: a model decodes
    the next set's images while it runs the current one), by content hash. A set an analysis derives
    later, or every set after a failure, is embedded by :func:`_embed`, which names the test of a set that
    fails."""
    try:
        unique: dict[str, StimulusSet] = {}
        for stimuli in map(_expanded, sets):
            if stimuli.modality in source.modalities:
                unique.setdefault(stimuli.content_hash(), stimuli)
        return dict(zip(unique, source.embed_many(list(unique.values()))))
    except EatkitError:
        return {}


def _expanded(stimuli: StimulusSet) -> StimulusSet:
    """A set with its templates expanded into sentences."""
    if stimuli.templates:
        from eatkit.stimuli.templates import expand_templates

        return expand_templates(stimuli)
    return stimuli


def _embed(source: EmbeddingSource, stimuli: StimulusSet, memo: dict[str, Embedded], test: AssociationTest) -> Embedded:
    """Embed a set once per run (templates expanded first), naming the test in any error."""
    stimuli = _expanded(stimuli)
    if stimuli.modality not in source.modalities:
        raise EatkitError(
            f"test '{test.id}': set '{stimuli.name}' is {stimuli.modality} stimuli, which "
            f"{source.id} cannot embed (it embeds {', '.join(sorted(source.modalities))})"
        )
    key = stimuli.content_hash()
    if key not in memo:
        try:
            memo[key] = source.embed(stimuli)
        except EatkitError as err:
            raise EatkitError(f"test '{test.id}': {err}") from None
    return memo[key]
