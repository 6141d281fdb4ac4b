"""The field's metrics as kinds of test (``"rnd"``, ``"ect"``, ``"ripa"``, ``"mac"``, ``"rnsb"``,
``"direct-bias"``), on the EAT's roles X, Y, A, B, so that any EAT test of any modality (words, sentences,
images, image-caption pairs) runs as a metric too (``eatkit run --metrics``, :func:`with_metrics`).

How each metric reads the roles (WEFE's query templates; :mod:`eatkit.stats.metrics` computes):

* RND, ECT, RIPA: targets X, Y and one attribute set, A ∪ B; direct bias: the definitional pairs
  (X[i], Y[i]) and the neutral words A ∪ B (RIPA and direct bias need |X| = |Y|);
* MAC: target sets X, Y and attribute sets A, B; RNSB: targets X ∪ Y, A positive and B negative.

Options: the run's ``permutations``, ``alternative`` (ECT always tests "less": low coherence is the bias),
``n_bootstrap`` and ``confidence_level``, and the kinds' parameters (:mod:`eatkit.specs`; run flags or a
suite test's ``params``): ``distance`` (RND), ``c`` (direct bias), ``n_fits`` (RNSB).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eatkit.analyses.base import Analysis, Outcome, RunOptions
from eatkit.analyses.eat import FourSetRecord
from eatkit.errors import EatkitError
from eatkit.sources.base import Embedded
from eatkit.stats import metrics as sm
from eatkit.stimuli.types import AssociationTest, Suite

#: kind of test -> the metric of :mod:`eatkit.stats.metrics` (the kinds' specs, with their parameters, are in
#: :mod:`eatkit.specs`)
KINDS: dict[str, str] = {"rnd": "rnd", "ect": "ect", "ripa": "ripa", "mac": "mac", "rnsb": "rnsb",
                         "direct-bias": "direct_bias"}


@dataclass(frozen=True, kw_only=True)
class MetricRecord(FourSetRecord):
    """One metric of one test: its value, options, permutation p (None without a null), bootstrap CI and,
    for RNSB, the spread over its fits. One subclass per kind (:data:`RECORDS`), no other fields."""

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
    n_resamples: int = 0
    spread: dict[str, float] = field(default_factory=dict)


# one record type per kind (module attributes, so that records pickle across processes)
class RNDRecord(MetricRecord): kind = "rnd"  # noqa: E701
class ECTRecord(MetricRecord): kind = "ect"  # noqa: E701
class RIPARecord(MetricRecord): kind = "ripa"  # noqa: E701
class MACRecord(MetricRecord): kind = "mac"  # noqa: E701
class RNSBRecord(MetricRecord): kind = "rnsb"  # noqa: E701
class DirectBiasRecord(MetricRecord): kind = "direct-bias"  # noqa: E701


#: kind -> its record type
RECORDS: dict[str, type[MetricRecord]] = {
    r.kind: r for r in (RNDRecord, ECTRecord, RIPARecord, MACRecord, RNSBRecord, DirectBiasRecord)}


class MetricAnalysis(Analysis):
    """A metric of :mod:`eatkit.stats.metrics` on a test's roles X, Y, A, B (see the module docstring)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.record_type = RECORDS[cls.kind]

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        X, Y, A, B = (embedded[r].vectors for r in "XYAB")
        AB = np.concatenate([A, B])
        metric = KINDS[self.kind]
        uncertainty = dict(n_resamples=options.n_bootstrap, confidence_level=options.confidence_level, rng=seed)
        null = dict(permutations=options.permutations, **uncertainty)
        params = dict(options.params)  # this kind's parameters, validated, with their defaults
        calls = {
            "rnd": lambda: sm.rnd(X, Y, AB, alternative=options.alternative, **params, **null),
            "ect": lambda: sm.ect(X, Y, AB, alternative="less", **null),
            "ripa": lambda: sm.ripa(X, Y, AB, alternative=options.alternative, **null),
            "mac": lambda: sm.mac([X, Y], [A, B], **uncertainty),
            "rnsb": lambda: sm.rnsb([X, Y], A, B, **params, **uncertainty),
            "direct_bias": lambda: sm.direct_bias(X, Y, AB, **params, **uncertainty),
        }
        result = calls[metric]()
        sets = test.sets()
        record = RECORDS[self.kind](
            suite=suite, test=test.id, title=test.title, seed=seed, metric=metric,
            **{f"{r.lower()}_name": sets[r].name for r in "XYAB"},
            **{f"n_{r.lower()}": len(embedded[r].ids) for r in "XYAB"},
            dropped={r: list(embedded[r].dropped) for r in "XYAB" if embedded[r].dropped},
            value=result.value, options=result.options, null=result.null, p_value=result.p_value,
            p_value_exact=result.exact, p_value_mc_se=result.mc_standard_error,
            n_permutations=result.n_permutations, n_partitions=result.n_partitions, alternative=result.alternative,
            ci=list(result.ci) if result.ci is not None else None, confidence_level=result.confidence_level,
            n_resamples=result.n_resamples, spread=result.spread,
        )
        return [Outcome(record, {name: np.asarray(v) for name, v in result.parts.items()}, result)]


# one class per kind, as ANALYSES names them (their record type follows from the kind)
class RNDAnalysis(MetricAnalysis): kind = "rnd"  # noqa: E701
class ECTAnalysis(MetricAnalysis): kind = "ect"  # noqa: E701
class RIPAAnalysis(MetricAnalysis): kind = "ripa"  # noqa: E701
class MACAnalysis(MetricAnalysis): kind = "mac"  # noqa: E701
class RNSBAnalysis(MetricAnalysis): kind = "rnsb"  # noqa: E701
class DirectBiasAnalysis(MetricAnalysis): kind = "direct-bias"  # noqa: E701


def parse_metrics(text: str) -> tuple[str, ...]:
    """The metric kinds of a comma-separated list (``all``: every one), or a one-line error.

    >>> parse_metrics("rnd,mac"), len(parse_metrics("all"))
    (('rnd', 'mac'), 6)
    """
    names = tuple(KINDS) if text.strip() == "all" else tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in KINDS]
    if unknown or not names:
        raise EatkitError(f"unknown metric(s) {', '.join(unknown) or repr(text)} (known: {', '.join(KINDS)}, all)")
    return tuple(dict.fromkeys(names))


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
