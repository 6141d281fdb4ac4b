"""Feature-space geometry of a test of kind ``"geometry"`` (seed 004): the roles are classes of images.

For the run's model, and for every model named in the run option ``compare`` (e.g. the same model
fine-tuned: ``"efficientnet_lite0@ft.safetensors"``), the analysis computes

* the intra-class score of every class and the inter-class score of the test's ``pairs``
  (:func:`eatkit.stats.geometry_scores`; the same seed for every model, so that models are scored on the
  same random folds when their classes have the same sizes),
* each class against the ``reference`` class (default ``random``; :func:`eatkit.stats.compare_classes`),
  with Benjamini-Hochberg q-values across the comparisons of the record,
* Spearman's rho between every two models' scores, per group of scores (:func:`eatkit.stats.spearman_by_group`).

Run options (``RunOptions.params``; CLI flags of ``eatkit run``): ``iterations`` (1000), ``fold``
(``half``), ``similarity`` (``cosine``), ``compare`` (a list of model names, each optionally
``name@checkpoint``), ``compare_options`` (model options for them, e.g. ``images``), ``label`` (the run
model's name in the record). Test parameters (suite file): ``pairs``, ``groups``, ``reference``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

from eatkit.analyses.base import Analysis, Embed, Outcome, RunOptions
from eatkit.errors import EatkitError
from eatkit.records import Record
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stats import adjust_p_values, compare_classes, geometry_scores, spearman_by_group
from eatkit.stats.geometry import one_sample_t
from eatkit.stimuli.analysis_sets import REFERENCE, design, pair_key
from eatkit.stimuli.types import AssociationTest

#: Monte Carlo re-labellings of a class-vs-reference comparison when ``permutations="auto"`` (exact when
#: there are at most this many re-labellings)
AUTO_PERMUTATIONS = 10_000
#: the most re-labellings ``permutations="exact"`` enumerates
EXACT_MAX = 1_000_000


@dataclass(frozen=True, kw_only=True)
class GeometryRecord(Record):
    """The geometry of one analysis set under one or more models.

    ``scores``: one entry per model and score (``key`` = a class for an intra-class score, ``"a vs b"``
    for an inter-class one) with mean, sd, min, max over the iterations and the exact mean;
    ``comparisons``: each class against the reference class per model (difference of intra-class
    similarity, Cohen's d, Welch t, permutation p and BH q); ``spearman``: rho and p between every two
    models per group of scores.
    """

    kind = "geometry"

    models: list[str]
    classes: dict[str, int]
    iterations: int
    fold: str
    similarity: str
    reference: str | None = None
    alternative: str
    scores: list[dict[str, Any]] = field(default_factory=list)
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    spearman: list[dict[str, Any]] = field(default_factory=list)
    compare_sources: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def today(cls, data: Any) -> dict[str, Any]:
        """As :meth:`Record.today`, and each comparison's ``exact`` (eatkit before issue 44) as ``p_value_exact``.

        >>> GeometryRecord.today({"comparisons": [{"p_permutation": 0.5, "exact": True}]})["comparisons"]
        [{'p_permutation': 0.5, 'p_value_exact': True}]
        """
        data = super().today(data)
        comparisons = data.get("comparisons")
        if isinstance(comparisons, list):
            data["comparisons"] = [{("p_value_exact" if k == "exact" else k): v for k, v in c.items()}
                                   if isinstance(c, dict) else c for c in comparisons]
        return data


class GeometryAnalysis(Analysis):
    """Intra-class variation, inter-class distance, reference comparisons and model x model Spearman."""

    kind = "geometry"
    record_type = GeometryRecord

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        names = [s.name for s in test.sets().values()]
        if len(set(names)) != len(names):
            raise EatkitError(f"test '{test.id}': two classes have the same name")
        for pair in options.params.get("pairs") or []:
            if not (isinstance(pair, list) and len(pair) == 2 and all(p in names for p in pair)):
                raise EatkitError(f"test '{test.id}': pair {pair!r} does not name two of its classes")
        reference = options.params.get("reference") or (REFERENCE if REFERENCE in names else None)
        if reference is not None and reference not in names:
            raise EatkitError(f"test '{test.id}': the reference class '{reference}' is not one of its classes")

    def embed(self, test: AssociationTest, embed: Embed, options: RunOptions) -> dict[str, Embedded]:
        out = {role: embed(stimuli) for role, stimuli in test.sets().items()}
        params = dict(options.params)
        for i, spec in enumerate(params["compare"], start=1):
            source = _compare_source(spec, tuple(sorted((params.get("compare_options") or {}).items())))
            for role, stimuli in test.sets().items():
                try:
                    out[f"{role}@{i}"] = source.embed(stimuli)
                except EatkitError as err:
                    raise EatkitError(f"test '{test.id}' with the compare model {spec}: {err}") from None
        return out

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        params = dict(options.params)
        iterations, fold, similarity = params["iterations"], params["fold"], params["similarity"]
        sets = test.sets()
        names = [s.name for s in sets.values()]
        models = [str(params["label"] or "model"), *params["compare"]]
        pairs, groups, reference = _design(params, names)
        scores, comparisons, means, arrays = [], [], [], {}
        for i, model in enumerate(models):
            suffix = f"@{i}" if i else ""
            classes = {s.name: embedded[role + suffix].vectors for role, s in sets.items()}
            result = geometry_scores(classes, pairs=pairs, iterations=iterations, fold=fold,
                                     similarity=similarity, rng=seed)
            keyed = {**{k: v for k, v in result.intra.items()}, **{pair_key(k): v for k, v in result.inter.items()}}
            means.append({k: v.mean for k, v in keyed.items()})
            scores += [{"model": model, "key": key, **score.to_dict()} for key, score in keyed.items()]
            arrays |= {f"{model}|{key}": score.values for key, score in keyed.items()}
            if reference is not None:
                comparisons += [{"model": model, **c} for c in _reference_comparisons(
                    classes, result, names, reference, options, params["t_test"], seed)]
        _set_q_values(comparisons)
        spearman = [{"first": a, "second": b, **r.to_dict()}
                    for (i, a), (j, b) in itertools.combinations(enumerate(models), 2)
                    for r in spearman_by_group(means[i], means[j], groups, alternative="two-sided")]
        compare_sources = [_compare_source(spec, tuple(sorted((params.get("compare_options") or {}).items())))
                           .manifest() for spec in models[1:]]
        record = GeometryRecord(
            suite=suite, test=test.id, title=test.title, seed=seed, models=models,
            classes={s.name: len(embedded[role].ids) for role, s in sets.items()}, iterations=iterations,
            fold=fold, similarity=similarity, reference=reference, alternative=options.alternative,
            scores=scores, comparisons=comparisons, spearman=spearman, compare_sources=compare_sources,
        )
        return [Outcome(record, arrays)]


def _design(params: dict[str, Any], names: list[str]) -> tuple[list[tuple[str, ...]], Any, str | None]:
    """The comparisons, Spearman groups and reference class of a test: its parameters', else its classes'
    design (:func:`eatkit.stimuli.analysis_sets.design`; the reference: ``random`` when a class has that name)."""
    pairs = [tuple(p) for p in params["pairs"]] if params["pairs"] else list(design(names)[0])
    groups = params["groups"] or design(names)[1]
    return pairs, groups, params["reference"] or (REFERENCE if REFERENCE in names else None)


def _set_q_values(comparisons: list[dict[str, Any]]) -> None:
    """Each comparison's Benjamini-Hochberg q-value over all of the test's permutation p-values."""
    if comparisons:
        q = adjust_p_values([c["p_permutation"] for c in comparisons], method="bh")
        for c, value in zip(comparisons, q):
            c["q_value"] = float(value)


def _reference_comparisons(classes: dict[str, Any], result: Any, names: list[str], reference: str,
                           options: RunOptions, t_test: str, seed: int) -> list[dict[str, Any]]:
    """Each class against the ``reference`` class (:func:`compare_classes`; ``t_test="one-sample"``: also
    the one-sample t-test of its intra-class scores against the reference's mean)."""
    out = []
    for name in names:
        if name == reference:
            continue
        c = compare_classes(classes[name], classes[reference], similarity=options.params["similarity"],
                            alternative=options.alternative,
                            permutations=_permutations(options.permutations, len(classes[name]),
                                                       len(classes[reference])),
                            rng=seed, names=(name, reference))
        extra = {}
        if t_test == "one-sample":
            t = one_sample_t(result.intra[name].values, result.intra[reference].mean, alternative=options.alternative)
            extra = {"t_one_sample": t.t, "df_one_sample": t.df, "p_t": t.p_value}
        out.append({**c.to_dict(), **extra})
    return out


def _permutations(permutations: str | int, k: int, m: int) -> int:
    """The re-labellings of a class-vs-reference test: ``auto`` -> exact up to AUTO_PERMUTATIONS, else that
    many draws; ``exact`` -> all of them (an error beyond EXACT_MAX); a number -> that many draws."""
    total = math.comb(k + m, k)
    if permutations == "auto":
        return AUTO_PERMUTATIONS
    if permutations == "exact":
        if total > EXACT_MAX:
            raise EatkitError(f"an exact comparison of {k} + {m} images has {total:.3g} re-labellings; "
                              "pass a number of permutations")
        return total
    return int(permutations)


def _compare_source(spec: str, options: tuple[tuple[str, Any], ...]) -> EmbeddingSource:
    """The embedding source of a compare model ``name`` or ``name@checkpoint`` (building one loads no
    weights: that happens on the first embedding that misses the cache)."""
    from eatkit.registry import build_model, get_model

    name, at, checkpoint = spec.partition("@")
    kwargs = dict(options)
    if at:
        kwargs["checkpoint"] = checkpoint
    get_model(name).refuse_options(sorted(kwargs), who=f"the compare model '{name}'")
    return build_model(name, **kwargs)
