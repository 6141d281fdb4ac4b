"""The EAT (WEAT / iEAT / SEAT) of a test of kind ``"eat"``, reported with all three ML-EAT levels.

Statistics: :func:`eatkit.stats.ml_eat` (levels 1-3 and the pattern) and, with ``n_bootstrap > 0``,
:func:`eatkit.stats.bootstrap_effect_size` (the CI of d). The record keeps the field names of
``results.json`` documented in ``docs/results.md``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from eatkit.analyses.base import Analysis, Outcome, RunOptions
from eatkit.analyses.validity import validity_panel
from eatkit.errors import EatkitError
from eatkit.records import Record
from eatkit.sources.base import Embedded
from eatkit.stats import anisotropy, bootstrap_effect_size, cosine_diagnostic, ml_eat, specificity
from eatkit.stats.multilevel import PATTERNS
from eatkit.stats.options import OBSERVED
from eatkit.stats.permutation import check_exact_feasible
from eatkit.stimuli.types import AssociationTest

#: the four level-3 similarity distributions of ML-EAT: target x attribute
PAIRS: tuple[str, ...] = ("xa", "xb", "ya", "yb")


class Level2(NamedTuple):
    """The level-2 (SC-EAT) result of one target of an :class:`EATRecord`."""

    effect_size: float
    p_value: float
    p_value_exact: bool
    n_permutations: int
    alternative: str
    association: str | None


@dataclass(frozen=True, kw_only=True)
class FourSetRecord(Record):
    """The fields of every record of a test on the EAT's roles X, Y, A, B (the EAT, the metrics): each set's
    name and size (the stimuli dropped from each are the base record's ``dropped``)."""

    x_name: str
    y_name: str
    a_name: str
    b_name: str
    n_x: int
    n_y: int
    n_a: int
    n_b: int

    def names(self) -> dict[str, str]:
        """The set names by role."""
        return {"X": self.x_name, "Y": self.y_name, "A": self.a_name, "B": self.b_name}


@dataclass(frozen=True, kw_only=True)
class EATRecord(FourSetRecord):
    """One EAT: level 1 (X vs Y with A vs B), level 2 (X, resp. Y, with A vs B), level 3 (mean and SD of
    the cosines of each target set with each attribute set), the EAT pattern, how each was computed, and
    with ``RunOptions.validity`` the "how far to trust this" panel (``docs/validity.md``)."""

    kind = "eat"
    renamed = {"effect_size_ci": "ci", "level2_x_p_exact": "level2_x_p_value_exact",
               "level2_y_p_exact": "level2_y_p_value_exact"}

    effect_size: float
    ci: list[float] | None = None
    statistic: float = math.nan
    p_value: float
    p_values: dict[str, float] = field(default_factory=dict)  # level 1, all three alternatives, same draws
    alternative_observed: bool = False  # alternative chosen by the sign of d (--alternative observed)
    p_value_exact: bool
    p_value_mc_se: float = math.nan
    p_method: str
    n_permutations: int
    n_partitions: int = 0
    alternative: str
    sd: str = "caliskan"
    ddof: int = 1
    level2_x_effect_size: float
    level2_x_p_value: float
    level2_x_p_value_exact: bool
    level2_x_n_permutations: int | None = None
    level2_x_alternative: str
    level2_y_effect_size: float
    level2_y_p_value: float
    level2_y_p_value_exact: bool
    level2_y_n_permutations: int | None = None
    level2_y_alternative: str
    level2_x_association: str | None
    level2_y_association: str | None
    level3: dict[str, dict[str, float]] = field(default_factory=dict)
    pattern: str
    pattern_thresholds: dict[str, float] = field(default_factory=dict)
    anisotropy: dict[str, Any] | None = None
    iat_d: float | None = None  # the human IAT's d the test replicates (suite params.iat_d), for comparison only
    specificity: dict[str, Any] | None = None  # --specificity N: false-positive rates on N random re-splits
    validity: dict[str, Any] | None = None

    def level2(self, target: str) -> Level2:
        """The level-2 result of target ``"x"`` or ``"y"``."""
        return Level2(*(getattr(self, f"level2_{target}_{name}") for name in (
            "effect_size", "p_value", "p_value_exact", "n_permutations", "alternative", "association")))

    def check(self, where: str) -> None:
        """The level-2 results agree with themselves: an association with A needs d > 0 (with B, d < 0),
        each level-2 p is one-sided towards the sign of its d, and the pattern is the one the two
        associations make (:data:`eatkit.stats.multilevel.PATTERNS`)."""
        if self.p_method not in ("permutation", "welch"):
            raise EatkitError(f"{where} has p_method={self.p_method!r}; expected 'permutation' or 'welch'")
        for target in ("x", "y"):
            key, level2 = f"level2_{target}", self.level2(target)
            d, association, alternative = level2.effect_size, level2.association, level2.alternative
            if association not in ("A", "B", None):
                raise EatkitError(f"{where} has {key}_association={association!r}; expected 'A', 'B' or null")
            finite = math.isfinite(d)
            if association is not None and not (finite and (d > 0 if association == "A" else d < 0)):
                raise EatkitError(f"{where} has {key}_association={association!r} but {key}_effect_size={d!r} "
                                  "(an association with A needs d > 0, with B d < 0)")
            expected = ("greater" if d >= 0 else "less") if finite else alternative
            if alternative not in ("greater", "less") or alternative != expected:
                raise EatkitError(f"{where} has {key}_alternative={alternative!r} with {key}_effect_size={d!r} "
                                  "(expected 'greater' when d >= 0, 'less' when d < 0)")
        associations = (self.level2_x_association, self.level2_y_association)
        if self.pattern != PATTERNS[associations]:
            raise EatkitError(
                f"{where} has pattern={self.pattern!r}, but its level-2 associations "
                f"(X: {associations[0]!r}, Y: {associations[1]!r}) make {PATTERNS[associations]!r}"
            )


def _specificity(vectors: list[np.ndarray], options: RunOptions, seed: int) -> dict[str, Any] | None:
    """The false-positive rates of ``--specificity N`` (iEAT seed, section 6), or None when N is 0."""
    n_splits = options.params.get("specificity", 0)
    if not n_splits:
        return None
    permutations = 10_000 if options.permutations == "auto" else options.permutations
    alternative = "greater" if options.alternative == OBSERVED else options.alternative
    r = specificity(*vectors, n_splits=n_splits, permutations=permutations, alternative=alternative, rng=seed)
    return {"n_splits": r.n_splits, "permutations": r.permutations, "alternative": r.alternative,
            "false_positive_rates": {f"{alpha:g}": rate for alpha, rate in r.false_positive_rates.items()}}


class EATAnalysis(Analysis):
    """WEAT/iEAT/SEAT with the ML-EAT levels (roles X, Y, A, B)."""

    kind = "eat"
    record_type = EATRecord
    observed_alternative = True
    takes_validity = True

    def precheck(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions) -> None:
        if options.validity:  # leaving one stimulus out must leave a test
            for role, least in (("X", 3), ("Y", 3), ("A", 2), ("B", 2)):
                if len(embedded[role].ids) < least:
                    raise EatkitError(f"test '{test.id}': validity (--validity) needs at least {least} stimuli in "
                                      f"{role}, which has {len(embedded[role].ids)}")
        if options.permutations == "exact" and options.p_method == "permutation":
            for first, second in (("X", "Y"), ("A", "B")):
                try:
                    check_exact_feasible(len(embedded[first].ids), len(embedded[second].ids))
                except EatkitError as err:
                    raise EatkitError(f"test '{test.id}' ({first} and {second}): {err}") from None

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        vectors = [embedded[r].vectors for r in "XYAB"]
        common = dict(rng=seed, ddof=options.ddof, sd=options.sd)
        result = ml_eat(*vectors, alternative=options.alternative, permutations=options.permutations,
                        p_method=options.p_method, effect_threshold=options.effect_threshold,
                        alpha=options.alpha, **common)
        ci = None
        if options.n_bootstrap > 0:
            ci = bootstrap_effect_size(*vectors, n_bootstrap=options.n_bootstrap,
                                       confidence_level=options.confidence_level, **common)
        sets = test.sets()
        l1 = result.level1
        level2: dict[str, Any] = {}
        for target, r in (("x", result.level2_x), ("y", result.level2_y)):
            level2 |= {f"level2_{target}_effect_size": r.effect_size, f"level2_{target}_p_value": r.p_value,
                       f"level2_{target}_p_value_exact": r.p_value_exact,
                       f"level2_{target}_n_permutations": r.n_permutations, f"level2_{target}_alternative": r.alternative}
        diagnostic = cosine_diagnostic({pair: result.level3[pair].similarities for pair in PAIRS},
                                       anisotropy(np.vstack(vectors), rng=seed))
        record = EATRecord(
            suite=suite, test=test.id, title=test.title, seed=seed,
            **{f"{r.lower()}_name": sets[r].name for r in "XYAB"},
            **{f"n_{r.lower()}": len(embedded[r].ids) for r in "XYAB"},
            dropped={r: list(embedded[r].dropped) for r in "XYAB" if embedded[r].dropped},
            effect_size=l1.effect_size, ci=[ci.low, ci.high] if ci is not None else None,
            statistic=l1.statistic, p_value=l1.p_value, p_values=dict(l1.p_values),
            alternative_observed=options.alternative == OBSERVED, p_value_exact=l1.p_value_exact,
            p_value_mc_se=l1.mc_standard_error, p_method=l1.p_method, n_permutations=l1.n_permutations,
            n_partitions=l1.n_partitions, alternative=l1.alternative, sd=l1.sd, ddof=l1.ddof, **level2,
            level2_x_association=result.association_x, level2_y_association=result.association_y,
            level3={k: {"mean": v.mean, "sd": v.sd} for k, v in result.level3.items()},
            pattern=result.pattern,
            pattern_thresholds={"effect_size": result.effect_threshold, "alpha": result.alpha},
            anisotropy=diagnostic.to_dict(), warnings=[diagnostic.warning] if diagnostic.fires else [],
            iat_d=options.params.get("iat_d"), specificity=_specificity(vectors, options, seed),
        )
        arrays = {pair: result.level3[pair].similarities for pair in PAIRS}
        if options.validity:
            panel, more = validity_panel(embedded, l1, alpha=options.alpha, confidence_level=options.confidence_level,
                                         seed=seed)
            record = dataclasses.replace(record, validity=panel)
            arrays |= more
        return [Outcome(record, arrays, result)]
