"""The field's metrics as kinds of test (the members of :data:`eatkit.specs.METRICS`, ``eatkit list kinds``),
on the EAT's roles X, Y, A, B, so that any EAT test of any modality (words, sentences,
images, image-caption pairs) runs as a metric too (``eatkit run --metrics``, :func:`with_metrics`).

Every member is its statistics function (:mod:`eatkit.stats.metrics`) and one declaration
(:meth:`eatkit.kinds.Family.member`, in :mod:`eatkit.specs`); one analysis and one record base serve them
all. The one rule: targets X, Y; attributes A ∪ B when the member's template takes one attribute set, else
A and B, or none when the template takes none (the member reads the targets only); each group unpacked
into the function's arguments when the template fixes its number, else passed as a list; the run's options
passed where the function takes them, then the kind's parameters and the member's fixed options. Each
member's template, parameters and null are in its declaration (``eatkit list kinds`` prints them).
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from eatkit.analyses.base import Analysis, Outcome, RunOptions
from eatkit.analyses.eat import FourSetRecord
from eatkit.errors import EatkitError
from eatkit.io import load_object
from eatkit.kinds import KindSpec
from eatkit.sources.base import Embedded
from eatkit.stimuli.types import AssociationTest, Suite

@dataclass(frozen=True, kw_only=True)
class MetricRecord(FourSetRecord):
    """One metric of one test: its value, options, permutation p (None without a null), bootstrap CI and,
    for RNSB, the spread over its fits. Each member of the family has its subclass (:func:`record_type`),
    with no other fields."""

    renamed = {"n_resamples": "n_bootstrap"}

    metric: str
    value: float
    options: dict[str, Any] = field(default_factory=dict)
    null: str = ""
    p_value_exact: bool = False
    p_value_mc_se: float = 0.0
    n_permutations: int = 0
    n_partitions: int = 0
    alternative: str | None = None
    ci: list[float] | None = None
    confidence_level: float = 0.95
    n_bootstrap: int = 0
    spread: dict[str, float] = field(default_factory=dict)

    def __reduce__(self) -> tuple[Any, ...]:  # made per member at run time: pickled by kind and fields
        return _rebuild, (self.kind, {f.name: getattr(self, f.name) for f in dataclasses.fields(self)})


@cache
def record_type(kind: str) -> type[MetricRecord]:
    """The record type of the member ``kind`` of the metrics family (made once per kind).

    >>> record_type("direct-bias").__name__, record_type("rnd").kind
    ('DirectBiasRecord', 'rnd')
    """
    name = "".join(part.capitalize() for part in kind.split("-")) + "Record"
    return type(name, (MetricRecord,), {"kind": kind, "__module__": __name__})


def _rebuild(kind: str, fields: dict[str, Any]) -> MetricRecord:
    return record_type(kind)(**fields)


class MetricAnalysis(Analysis):
    """A member of the metrics family (:data:`eatkit.specs.METRICS`) on a test's roles X, Y, A, B: its
    statistics function, called by the one rule of the module docstring."""

    def __init__(self, spec: KindSpec) -> None:
        self.spec, self.kind, self.record_type = spec, spec.name, record_type(spec.name)

    @classmethod
    def for_member(cls, spec: KindSpec) -> MetricAnalysis:
        """The analysis of the member ``spec``."""
        return cls(spec)

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        X, Y, A, B = (embedded[r].vectors for r in "XYAB")
        member = self.spec.member
        assert member is not None
        function = load_object(member.stats)
        attributes = [np.concatenate([A, B])] if member.template[1] == 1 else [A, B]  # none read: template 0
        run = dict(alternative=options.alternative, permutations=options.permutations,
                   n_bootstrap=options.n_bootstrap, confidence_level=options.confidence_level, rng=seed)
        takes = inspect.signature(function).parameters
        keywords = {k: v for k, v in run.items() if k in takes} | dict(options.params) | dict(member.fixed)
        result = function(*member.arguments([X, Y], attributes), **keywords)
        sets = test.sets()
        record = self.record_type(
            suite=suite, test=test.id, title=test.title, seed=seed, metric=result.metric,
            **{f"{r.lower()}_name": sets[r].name for r in "XYAB"},
            **{f"n_{r.lower()}": len(embedded[r].ids) for r in "XYAB"},
            dropped={r: list(embedded[r].dropped) for r in "XYAB" if embedded[r].dropped},
            value=result.value, options=result.options, null=member.null, p_value=result.p_value,
            p_value_exact=result.p_value_exact, p_value_mc_se=result.mc_standard_error,
            n_permutations=result.n_permutations, n_partitions=result.n_partitions, alternative=result.alternative,
            ci=list(result.ci) if result.ci is not None else None, confidence_level=result.confidence_level,
            n_bootstrap=result.n_bootstrap, spread=result.spread,
        )
        return [Outcome(record, {name: np.asarray(v) for name, v in result.parts.items()}, result)]


def parse_metrics(text: str) -> tuple[str, ...]:
    """The metric kinds of a comma-separated list (``all``: every member of the family), or a one-line error.

    >>> from eatkit.specs import METRICS
    >>> parse_metrics("rnd,mac"), parse_metrics("all") == METRICS.names()
    (('rnd', 'mac'), True)
    """
    from eatkit.specs import METRICS

    return METRICS.parse(text)


def with_metrics(suite: Suite, metrics: tuple[str, ...], tests: list[str] | None = None) -> tuple[Suite, list[str] | None]:
    """``suite`` with, after each selected EAT test ``t``, one test ``t:<metric>`` per metric on the same
    stimulus sets, and the selection extended by them (``tests=None``: every test)."""
    added = []
    for test in suite.tests:
        if test.kind == "eat" and (tests is None or test.id in tests):
            added += [dataclasses.replace(test, id=f"{test.id}:{kind}", kind=kind, params=()) for kind in metrics]
    if not added:
        raise EatkitError("--metrics applies to EAT tests (kind 'eat'), and none is selected")
    suite = dataclasses.replace(suite, tests=(*suite.tests, *added))
    return suite, (None if tests is None else [*tests, *(t.id for t in added)])
