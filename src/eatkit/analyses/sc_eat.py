"""The single-category EAT of a test of kind ``"sc-eat"``: one target set T (one or more stimuli of any
modality, e.g. the sentence "a photo of someone who is patriotic") with attributes A vs B.

Statistics: :func:`eatkit.stats.sc_eat`: d = (mean_a u(T, a) - mean_b u(T, b)) / SD (Caliskan SD of all
values, or the pooled SD for unequal A and B; ML-EAT seed eq. 5, "American == White" seed eq. 3-4), with
a permutation p over re-partitions of A ∪ B or Welch's t-test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from eatkit.analyses.base import Analysis, Outcome, RunOptions
from eatkit.errors import EatkitError
from eatkit.records import Record
from eatkit.sources.base import Embedded
from eatkit.stats import sc_eat
from eatkit.stats.options import OBSERVED
from eatkit.stats.permutation import check_exact_feasible
from eatkit.stimuli.types import AssociationTest


@dataclass(frozen=True, kw_only=True)
class SCEATRecord(Record):
    """One SC-EAT: the association of the target set T with A vs B, and how it was computed."""

    kind = "sc-eat"

    t_name: str
    a_name: str
    b_name: str
    n_t: int
    n_a: int
    n_b: int
    effect_size: float
    statistic: float
    mean_a: float
    mean_b: float
    p_value: float
    p_values: dict[str, float] = field(default_factory=dict)  # all three alternatives, same draws
    alternative_observed: bool = False  # alternative chosen by the sign of d (--alternative observed)
    p_value_exact: bool
    p_value_mc_se: float = math.nan
    p_method: str
    n_permutations: int
    n_partitions: int
    alternative: str
    sd: str
    ddof: int


class SCEATAnalysis(Analysis):
    """Single-category tests (roles T, A, B)."""

    kind = "sc-eat"
    record_type = SCEATRecord
    observed_alternative = True

    def precheck(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions) -> None:
        if options.permutations == "exact" and options.p_method == "permutation":
            try:
                check_exact_feasible(len(embedded["A"].ids), len(embedded["B"].ids))
            except EatkitError as err:
                raise EatkitError(f"test '{test.id}' (A and B): {err}") from None

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        T, A, B = (embedded[r].vectors for r in ("T", "A", "B"))
        observed = options.alternative == OBSERVED
        result = sc_eat(T, A, B, alternative="greater" if observed else options.alternative,
                        permutations=options.permutations, rng=seed, ddof=options.ddof, sd=options.sd,
                        p_method=options.p_method)
        result = result.observed_side() if observed else result
        ua, ub = result.associations
        sets = test.sets()
        record = SCEATRecord(
            suite=suite, test=test.id, title=test.title, seed=seed,
            t_name=sets["T"].name, a_name=sets["A"].name, b_name=sets["B"].name,
            n_t=len(embedded["T"].ids), n_a=len(embedded["A"].ids), n_b=len(embedded["B"].ids),
            dropped={r: list(embedded[r].dropped) for r in ("T", "A", "B") if embedded[r].dropped},
            effect_size=result.effect_size, statistic=result.statistic, mean_a=float(ua.mean()),
            mean_b=float(ub.mean()), p_value=result.p_value, p_values=dict(result.p_values),
            alternative_observed=observed, p_value_exact=result.p_value_exact,
            p_value_mc_se=result.mc_standard_error, p_method=result.p_method,
            n_permutations=result.n_permutations, n_partitions=result.n_partitions,
            alternative=result.alternative, sd=result.sd, ddof=result.ddof,
        )
        return [Outcome(record, {"ta": ua, "tb": ub}, result)]
