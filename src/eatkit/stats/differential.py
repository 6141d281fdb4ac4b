"""The embedding association test (WEAT / iEAT / SEAT) and the single-category test (SC-EAT).

Both compare two groups of association values with an effect size and a p-value:

* EAT (level 1 of the ML-EAT): the groups are s(x, A, B) for x ∈ X and s(y, A, B) for y ∈ Y; the
  statistic is s(X, Y, A, B) = Σ_x s(x, A, B) - Σ_y s(y, A, B) (iEAT seed eq. 1); the p-value
  re-partitions X ∪ Y.
* SC-EAT / ML-EAT level 2: for a target set T (a single word is a set of one), the groups are u(T, a) for
  a ∈ A and u(T, b) for b ∈ B; the statistic is Σ_a u(T, a) - Σ_b u(T, b) (ML-EAT seed eq. 8); the
  p-value re-partitions A ∪ B.

Group sizes may differ: the permutation test handles that natively (partitions keep the original sizes);
``sd="pooled"`` and ``p_method="welch"`` give the "American == White" seed's variants (appendix A.2);
``ddof`` follows the one rule of :mod:`eatkit.stats.options`.
No group is ever truncated.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._validation import check_sets
from eatkit.stats.association import attribute_associations, rounding_error, target_associations
from eatkit.stats.effect_size import check_sd_sizes, cohens_d
from eatkit.stats.options import TestOptions, check_choice
from eatkit.stats.permutation import permutation_tests


@dataclass(frozen=True, kw_only=True)
class EATResult:
    """Result of an EAT or SC-EAT, with everything needed to say how it was computed.

    Attributes
    ----------
    effect_size : float
        Cohen's d (see ``sd`` and ``ddof``).
    statistic : float
        The test statistic: s(X, Y, A, B) for an EAT, Σ_A u - Σ_B u for an SC-EAT.
    p_value : float
        The p-value for ``alternative``.
    p_values : dict
        p-values for all three alternatives from the same partitions ("greater", "less", "two-sided").
    alternative : str
        "greater" (first group more associated with A), "less" or "two-sided".
    p_method : str
        "permutation" or "welch".
    p_value_exact : bool
        True when every partition was counted (always False for Welch's test).
    n_permutations : int
        Partitions evaluated (all of them when exact; random draws otherwise; 0 for Welch).
    n_partitions : int
        Number of distinct partitions C(n1 + n2, n1).
    standard_errors : dict
        Monte Carlo standard error of each p-value (0.0 when exact; empty for Welch);
        ``mc_standard_error`` is the one of ``p_value``.
    seed : int or None
        Seed of the Monte Carlo stream, to repeat the run (None when exact or a Generator was passed).
    sd, ddof : str, int
        Standard deviation used for the effect size and Welch's test, and its delta degrees of freedom.
    groups : tuple of str
        Names of the two groups, ("X", "Y") for an EAT and ("A", "B") for an SC-EAT.
    associations : tuple of numpy arrays
        The per-stimulus association values of the two groups (s(w, A, B) or u(T, a)).
    tie_tolerance : float
        Tolerance on subset sums for counting ties (see :mod:`eatkit.stats.permutation`).
    """

    effect_size: float
    statistic: float
    p_value: float
    p_values: dict[str, float]
    alternative: str
    p_method: str
    p_value_exact: bool
    n_permutations: int
    n_partitions: int
    standard_errors: dict[str, float]
    seed: int | None
    sd: str
    ddof: int
    groups: tuple[str, str]
    associations: tuple[np.ndarray, np.ndarray] = field(repr=False)
    tie_tolerance: float

    @property
    def mc_standard_error(self) -> float:
        """Monte Carlo standard error of ``p_value`` (0.0 when exact or Welch)."""
        return self.standard_errors.get(self.alternative, 0.0)

    def with_alternative(self, alternative: str) -> "EATResult":
        """The same result reported for another alternative (nothing is recomputed)."""
        check_choice("alternative", alternative)
        return dataclasses.replace(self, alternative=alternative, p_value=self.p_values[alternative])

    def observed_side(self) -> "EATResult":
        """The result reported for the one-sided alternative on the side of its effect size ("greater"
        when d >= 0, else "less"): the ML-EAT authors' convention for starring levels 1 and 2.

        >>> X, Y = [[0.0, 1.0], [0.1, 0.9]], [[1.0, 0.0], [0.9, 0.1]]
        >>> r = eat(X, Y, [[1.0, 0.1], [0.9, 0.0]], [[0.1, 1.0], [0.0, 0.9]], permutations="exact")
        >>> r.effect_size < 0, r.observed_side().alternative
        (True, 'less')
        """
        return self.with_alternative("greater" if self.effect_size >= 0 else "less")


def eat(X: Any, Y: Any, A: Any, B: Any, *, alternative: str = "greater", permutations: str | int = "auto",
        rng: Any = None, ddof: int = 1, sd: str = "caliskan", p_method: str = "permutation") -> EATResult:
    """Embedding association test of targets X vs Y with attributes A vs B.

    Parameters
    ----------
    X, Y, A, B : array_like, shape (n, d)
        Embeddings (one row per stimulus; any scale, only directions matter). X and Y need at least 2
        stimuli each (with one per group Cohen's d is ±√2 whatever the data); A and B at least 1.
    alternative : {"greater", "less", "two-sided"}
        "greater" tests whether X is more associated with A (and Y with B) than chance.
        "two-sided" counts partitions whose |difference of means| reaches the observed one.
    permutations : "auto", "exact" or int
        See :func:`eatkit.stats.permutation.group_permutation_test`.
    rng : None, int or numpy.random.Generator
        Randomness for Monte Carlo p-values.
    ddof : int
        Delta degrees of freedom of the SD (default 1; see :mod:`eatkit.stats.options` for the rule).
    sd : {"caliskan", "pooled"}
        SD of all target associations (Caliskan et al.) or the pooled SD for unequal groups.
    p_method : {"permutation", "welch"}
        Permutation test over re-partitions of X ∪ Y, or Welch's unequal-variance t-test on the
        associations ("American == White" seed).

    Examples
    --------
    >>> X = [[1.0, 0.1], [0.9, 0.2]]; Y = [[0.1, 1.0], [0.2, 0.9]]
    >>> A = [[1.0, 0.0], [0.8, 0.1]]; B = [[0.0, 1.0], [0.1, 0.8]]
    >>> r = eat(X, Y, A, B, permutations="exact")
    >>> round(r.effect_size, 3), r.p_value, r.n_partitions
    (1.726, 0.16666666666666666, 6)
    """
    options = TestOptions(alternative=alternative, permutations=permutations, ddof=ddof, sd=sd,
                          p_method=p_method).validated()
    sets = check_sets({"A": 1, "B": 1}, X=X, Y=Y, A=A, B=B)
    return eat_of_checked(sets["X"], sets["Y"], sets["A"], sets["B"], options, rng)


def eat_of_checked(X: np.ndarray, Y: np.ndarray, A: np.ndarray, B: np.ndarray, options: TestOptions,
                   rng: Any) -> EATResult:
    """:func:`eat` of sets a caller has checked itself (float arrays of one dimension) with validated
    ``options``: Grounded-WEAT's experiment 1 pools attribute sets it built from its own checked sets, which
    may share vectors by design (an image under two captions with the language masked).

    >>> r = eat_of_checked(np.eye(4)[:2], np.eye(4)[2:], np.eye(4)[[0, 2]], np.eye(4)[[0, 3]],
    ...                    TestOptions(permutations="exact").validated(), None)
    >>> r.n_partitions
    6
    """
    sx = target_associations(X, A, B)
    sy = target_associations(Y, A, B)
    atol = rounding_error(X.shape[1])
    return difference_tests(sx[:, None], sy[:, None], ("X", "Y"), options, rng, atol)[0]


def sc_eat(T: Any, A: Any, B: Any, *, alternative: str = "greater", permutations: str | int = "auto",
           rng: Any = None, ddof: int = 1, sd: str = "caliskan", p_method: str = "permutation") -> EATResult:
    """Single-category EAT: association of one target (a vector) or a target set T with A vs B.

    Effect size (ML-EAT seed eq. 5; for one word, the SC-EAT of the "American == White" seed, eq. 3):
    d = (mean_a u(T, a) - mean_b u(T, b)) / SD_{x ∈ A ∪ B} u(T, x), and a permutation p-value over
    re-partitions of A ∪ B (ML-EAT seed eq. 7).

    Examples
    --------
    >>> r = sc_eat([1.0, 0.0], [[1.0, 0.1], [0.9, 0.0]], [[0.0, 1.0], [0.2, 1.0]], permutations="exact")
    >>> r.groups, r.n_partitions, r.p_value
    (('A', 'B'), 6, 0.16666666666666666)
    """
    return sc_eats([T], A, B, alternative=alternative, permutations=permutations, rng=rng, ddof=ddof, sd=sd,
                   p_method=p_method)[0]


def sc_eats(targets: Sequence[Any], A: Any, B: Any, *, alternative: str = "greater", permutations: str | int = "auto",
            rng: Any = None, ddof: int = 1, sd: str = "caliskan", p_method: str = "permutation") -> list[EATResult]:
    """:func:`sc_eat` of several targets (vectors or sets) against the same A and B.

    All targets re-partition the same A ∪ B, so Monte Carlo draws are shared (each p-value is valid on
    its own; drawing once is faster). ML-EAT level 2 uses this for X and Y.

    >>> [r.groups for r in sc_eats([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.1], [0.9, 0.0]], [[0.0, 1.0], [0.2, 1.0]])]
    [('A', 'B'), ('A', 'B')]
    """
    options = TestOptions(alternative=alternative, permutations=permutations, ddof=ddof, sd=sd,
                          p_method=p_method).validated()
    if len(targets) == 0:
        raise EatkitError("sc_eats needs at least one target")
    names = [f"T{i}" if len(targets) > 1 else "T" for i in range(len(targets))]
    sets = check_sets({name: 1 for name in names}, **dict(zip(names, targets)), A=A, B=B)
    Ts = [sets[name] for name in names]
    ua = np.column_stack([attribute_associations(T, sets["A"]) for T in Ts])
    ub = np.column_stack([attribute_associations(T, sets["B"]) for T in Ts])
    atol = rounding_error(sets["A"].shape[1])
    return difference_tests(ua, ub, ("A", "B"), options, rng, atol)


def welch_p_values(first: np.ndarray, second: np.ndarray, ddof: int) -> dict[str, float]:
    """Welch's unequal-variance t-test of ``mean(first) - mean(second)`` for all three alternatives, each
    group's variance computed with ``ddof`` (1: :func:`scipy.stats.ttest_ind` with ``equal_var=False``;
    0: the population variances, through :func:`scipy.stats.ttest_ind_from_stats`).

    >>> round(welch_p_values(np.array([1.0, 2.0, 3.0]), np.array([0.0, 0.5, 1.0]), 1)["greater"], 4)
    0.0522
    """
    from scipy import stats as sps  # imported here: scipy.stats costs ~1 s at start-up

    moments = (first.mean(), first.std(ddof=ddof), first.size, second.mean(), second.std(ddof=ddof), second.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_values = {alt: float(sps.ttest_ind_from_stats(*moments, equal_var=False, alternative=alt).pvalue)
                    for alt in ("greater", "less", "two-sided")}
    if not all(np.isfinite(list(p_values.values()))):
        raise EatkitError("Welch's t-test is undefined here: the two groups' values have no variance; "
                          "use the permutation test")
    return p_values


def difference_tests(
    first: np.ndarray, second: np.ndarray, groups: tuple[str, str], options: TestOptions, rng: Any, atol: float
) -> list[EATResult]:
    """Effect size and p-value of each column of ``first`` (k, q) vs ``second`` (m, q) association
    values (shared by EAT, SC-EAT and the grounded tests), under validated ``options``; ``atol`` bounds
    the rounding error of each value."""
    k, m = first.shape[0], second.shape[0]
    check_sd_sizes(options.sd, k, m, options.ddof)
    welch = options.p_method == "welch"
    outcomes = [None] * first.shape[1] if welch else permutation_tests(
        first, second, permutations=options.permutations, rng=rng, atol=atol)
    results = []
    for c, out in enumerate(outcomes):
        x, y = first[:, c], second[:, c]
        common = dict(
            effect_size=float(cohens_d(x, y, sd=options.sd, ddof=options.ddof, atol=atol)),
            statistic=float(x.sum() - y.sum()),  # iEAT seed eq. 1 / ML-EAT seed eq. 8
            alternative=options.alternative,
            sd=options.sd,
            ddof=options.ddof,
            groups=groups,
            associations=(x, y),
        )
        if out is None:
            try:
                p_values = welch_p_values(x, y, options.ddof)
            except EatkitError:
                raise EatkitError(f"Welch's t-test is undefined here: the associations of {groups[0]} and "
                                  f"{groups[1]} have no variance; use the permutation test") from None
            results.append(EATResult(
                p_value=p_values[options.alternative], p_values=p_values, p_method="welch", p_value_exact=False,
                n_permutations=0, n_partitions=0, standard_errors={}, seed=None, tie_tolerance=0.0, **common,
            ))
            continue
        results.append(EATResult(
            p_value=out.p_values[options.alternative],
            p_values=dict(out.p_values),
            p_method="permutation",
            p_value_exact=out.p_value_exact,
            n_permutations=out.n_permutations,
            n_partitions=out.n_partitions,
            standard_errors=dict(out.standard_errors),
            seed=out.seed,
            tie_tolerance=out.tolerance,
            **common,
        ))
    return results
