"""Power of the EAT's permutation test: the smallest effect its set sizes can detect, and the set size a
given effect needs.

A test of 8 + 8 targets cannot detect a moderate bias: a non-significant EAT on small sets says little
(Ethayarajh, Duvenaud & Hirst 2019, "Understanding Undesirable Word Embedding Associations", ACL, on
WEAT's small sets; Dobrzeniecka & Urbaniak 2024, "A Bayesian Approach to Uncertainty in Word Embedding Bias
Estimation", Computational Linguistics 50(2), on the false confidence of tests on few pre-averaged scores).

Model: the association values of the two groups are normal with SD 1 and means δ apart (the pooled-SD
Cohen's d, δ). For ``n_simulations`` seeded data sets Z_r (standard normal, with δ added to the first
group's values), the test eatkit runs counts the partitions S of the pooled values whose first-group sum
reaches the observed one (:mod:`eatkit.stats.permutation`): exact when the partitions number at most
``permutations``, else that many uniform random partitions (p = (c + 1) / (N + 1)), the same partitions
for every data set. A partition's sum is T0(S) + δ |S ∩ first|, so for "greater" each data set rejects
(p < alpha) exactly when δ exceeds a critical value δ*_r (the (K + 1)-th largest of
(T0(S) - T0(first)) / (k - |S ∩ first|) over the partitions, K the largest count with p < alpha): the
power at δ is the share of data sets with δ*_r < δ, and the minimum detectable effect the ``power``
quantile of the δ*_r -- no search, no noise beyond the simulation's own. "less" is the mirror image;
"two-sided" (|difference of means|) is found by bisection on the simulated power.

Beside it, the t-test approximation (the non-central t distribution with n_x + n_y - 2 degrees of freedom,
as :class:`statsmodels.stats.power.TTestIndPower` computes it), and eatkit's effect size convention: the
Caliskan SD of all values of both groups (ddof 1) has expectation-level variance
((n - 2) + δ² n_x n_y / n) / (n - 1) when the within-group SD is 1, so d_Caliskan = δ / sqrt(that)
("American == White" seed, appendix A.2, for the two SDs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._random import resolve_rng
from eatkit.stats._validation import check_count, check_share
from eatkit.stats.cost import check_cost
from eatkit.stats.options import check_choice

#: data sets simulated per minimum detectable effect
N_SIMULATIONS = 4000
#: partitions per simulated permutation test (exact when there are at most this many)
POWER_PERMUTATIONS = 1999
_CHUNK = 500  # data sets per block (memory: _CHUNK x partitions doubles)


@dataclass(frozen=True, kw_only=True)
class MinimumDetectableEffect:
    """The smallest effect the permutation test detects with probability ``power`` at level ``alpha``.

    Attributes
    ----------
    cohens_d : float
        In pooled-SD units (the normal model's δ), by simulation of the permutation test.
    effect_size : float
        The same effect as the Caliskan-SD d that eatkit reports (``effect_size`` in results.json).
    t_test_cohens_d : float
        The pooled-SD d by the two-sample t-test approximation (non-central t).
    p_value_exact : bool
        True when every simulated test counted all partitions; else ``permutations`` random ones.
    """

    cohens_d: float
    effect_size: float
    t_test_cohens_d: float
    n_x: int
    n_y: int
    alpha: float
    power: float
    alternative: str
    permutations: int
    p_value_exact: bool
    n_simulations: int
    seed: int | None


def caliskan_effect_size(cohens_d: float, n_x: int, n_y: int) -> float:
    """The Caliskan-SD d (SD of all values, ddof 1) of a shift of ``cohens_d`` pooled SDs between groups of
    ``n_x`` and ``n_y`` normal values, at the expected sample variances (module docstring).

    >>> round(caliskan_effect_size(0.8, 25, 25), 4)
    0.7483
    """
    n = n_x + n_y
    return cohens_d / math.sqrt(((n - 2) + cohens_d**2 * n_x * n_y / n) / (n - 1))


def t_test_power(cohens_d: float, n_x: int, n_y: int, alpha: float, alternative: str) -> float:
    """Power of the two-sample t-test (equal variances) at pooled-SD ``cohens_d`` (for "less", the
    effect's size in the direction tested).

    >>> round(t_test_power(1.0, 17, 17, 0.05, "greater"), 3)
    0.886
    """
    from scipy import stats as sps  # imported here: scipy.stats costs ~1 s at start-up

    df = n_x + n_y - 2
    nc = cohens_d * math.sqrt(n_x * n_y / (n_x + n_y))
    if alternative == "two-sided":
        crit = sps.t.ppf(1 - alpha / 2, df)
        return float(sps.nct.sf(crit, df, nc) + sps.nct.cdf(-crit, df, nc))
    return float(sps.nct.sf(sps.t.ppf(1 - alpha, df), df, nc))


def _check(n_x: Any, n_y: Any, alpha: float, power: float, alternative: str) -> tuple[int, int]:
    n_x, n_y = check_count("n_x", n_x), check_count("n_y", n_y)
    if n_x < 2 or n_y < 2:
        raise EatkitError(f"power needs at least 2 values in each group, got {n_x} and {n_y}")
    check_choice("alternative", alternative)
    check_share("alpha", alpha)
    check_share("power", power)
    return n_x, n_y


def _enumerable(n: int, k: int, permutations: int) -> bool:
    """Whether C(n, k) <= permutations, without the huge integer of a large n (log-gamma first)."""
    log_comb = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return log_comb <= math.log(permutations) + 1e-6 and math.comb(n, k) <= permutations


def _check_simulation_cost(n_x: int, n_y: int, permutations: int, n_simulations: int, alternative: str) -> None:
    """The one cost estimate (:func:`eatkit.stats.cost.check_cost`) of a power simulation: the sums of
    every simulated data set over every partition, about 20 times for a two-sided bisection."""
    n = n_x + n_y
    partitions = math.comb(n, n_x) if _enumerable(n, n_x, permutations) else permutations
    steps = float(n_simulations) * partitions * n * (20 if alternative == "two-sided" else 1)
    check_cost(f"a power simulation of {n_x} + {n_y} stimuli ({n_simulations} data sets x {partitions} partitions)",
               steps, "use fewer simulations or permutations (1000 of each give the effect to about two digits)",
               nbytes=8.0 * max(n_simulations * n, partitions * n, n_simulations * partitions))


def minimum_detectable_effect(n_x: int, n_y: int, alpha: float = 0.05, power: float = 0.8,
                              alternative: str = "greater", *, permutations: int = POWER_PERMUTATIONS,
                              n_simulations: int = N_SIMULATIONS, rng: Any = 0) -> MinimumDetectableEffect:
    """The minimum effect size detectable by eatkit's permutation test for groups of ``n_x`` and ``n_y``.

    Parameters
    ----------
    n_x, n_y : int
        Group sizes (targets X and Y of an EAT).
    alpha, power : float
        Level of the test (significant: p < alpha) and the probability of detecting the effect.
    alternative : {"greater", "less", "two-sided"}
        The test's alternative (the effect is reported as a positive size in the direction tested).
    permutations : int
        Partitions per simulated test: all of them when there are at most this many, else a Monte Carlo
        sample of this many (the same for every data set).
    n_simulations : int
        Simulated data sets.
    rng : None, int or numpy.random.Generator
        Randomness (seed 0 by default: the same sizes give the same answer).

    Examples
    --------
    >>> m = minimum_detectable_effect(16, 16)
    >>> round(m.cohens_d, 1), round(m.t_test_cohens_d, 2), m.p_value_exact
    (0.9, 0.9, False)
    """
    n_x, n_y = _check(n_x, n_y, alpha, power, alternative)
    permutations = check_count("permutations", permutations)
    n_simulations = check_count("n_simulations", n_simulations)
    n = n_x + n_y
    exact = _enumerable(n, n_x, permutations)
    _check_simulation_cost(n_x, n_y, permutations, n_simulations, alternative)
    generator, seed = resolve_rng(rng)
    members = _partitions(n, n_x, permutations, exact, generator)  # (M, n) 0/1, the first group of each
    total = members.shape[0]
    # p = c / N exact (c counts the observed partition itself), (c + 1) / (N + 1) sampled; K: largest c with p < alpha
    limit = _largest_count(total, alpha, exact)
    if limit < (1 if exact else 0):
        raise EatkitError(f"with {total} partitions no p-value is below alpha={alpha:g}: no effect is detectable")
    z = generator.standard_normal((n_simulations, n))
    t_test = _t_test_mde(n_x, n_y, alpha, power, alternative)
    if alternative == "two-sided":
        delta = _bisect_two_sided(z, members, n_x, limit, power, t_test)
    else:
        delta = _one_sided(z, members, n_x, limit, power)
    return MinimumDetectableEffect(
        cohens_d=delta, effect_size=caliskan_effect_size(delta, n_x, n_y),
        t_test_cohens_d=t_test, n_x=n_x, n_y=n_y, alpha=alpha,
        power=power, alternative=alternative, permutations=permutations, p_value_exact=exact,
        n_simulations=n_simulations, seed=seed,
    )


def required_set_size(cohens_d: float, alpha: float = 0.05, power: float = 0.8, alternative: str = "greater", *,
                      permutations: int = POWER_PERMUTATIONS, n_simulations: int = N_SIMULATIONS,
                      rng: Any = 0) -> int:
    """The smallest number of stimuli per group (X and Y equal) whose minimum detectable effect
    (:func:`minimum_detectable_effect`, pooled SD) is at most ``cohens_d``.

    >>> required_set_size(1.0)
    14
    """
    if not isinstance(cohens_d, (int, float)) or not cohens_d > 0:
        raise EatkitError(f"cohens_d must be a positive effect size, got {cohens_d!r}")
    _check(2, 2, alpha, power, alternative)
    # the size the t-test approximation needs (Dobrzeniecka & Urbaniak's closed form): the search's scale
    from scipy.stats import norm

    tails = 2 if alternative == "two-sided" else 1
    approximate = math.ceil(2 * ((norm.ppf(1 - alpha / tails) + norm.ppf(power)) / cohens_d) ** 2)
    if approximate > 100_000:
        raise EatkitError(f"an effect of {cohens_d:g} needs about {approximate:.3g} stimuli per group (t-test "
                          "approximation), more than 100000: no simulation is run")
    _check_simulation_cost(approximate, approximate, check_count("permutations", permutations),
                           check_count("n_simulations", n_simulations), alternative)

    def detects(n: int) -> bool:
        return minimum_detectable_effect(n, n, alpha, power, alternative, permutations=permutations,
                                         n_simulations=n_simulations, rng=rng).cohens_d <= cohens_d

    high = 4
    while not detects(high):
        if high > 100_000:
            raise EatkitError(f"an effect of {cohens_d:g} needs more than 100000 stimuli per group")
        high *= 2
    low = max(2, high // 2)
    while low < high:  # the smallest detecting size in [low, high]
        mid = (low + high) // 2
        low, high = (low, mid) if detects(mid) else (mid + 1, high)
    return high


def _largest_count(total: int, alpha: float, exact: bool) -> int:
    """The largest count c of partitions reaching the observed sum whose p-value (c / N exact, (c + 1) /
    (N + 1) sampled) is below ``alpha`` (checked on the p-values themselves, not on a rounded product).

    >>> _largest_count(1999, 0.05, False), _largest_count(20, 0.05, True)
    (98, 0)
    """
    def p(c: int) -> float:
        return c / total if exact else (c + 1) / (total + 1)

    c = math.floor(alpha * (total + 1))
    while c >= 0 and p(c) >= alpha:
        c -= 1
    while p(c + 1) < alpha:
        c += 1
    return c


def _partitions(n: int, k: int, permutations: int, exact: bool, rng: np.random.Generator) -> np.ndarray:
    """Membership rows (M, n) of the first group of every partition (exact) or of ``permutations`` random
    ones (each a uniform size-k subset)."""
    if exact:
        from itertools import combinations

        rows = np.zeros((math.comb(n, k), n))
        for r, subset in enumerate(combinations(range(n), k)):
            rows[r, list(subset)] = 1.0
        return rows
    order = np.argsort(rng.random((permutations, n)), axis=1)[:, :k]
    rows = np.zeros((permutations, n))
    np.put_along_axis(rows, order, 1.0, axis=1)
    return rows


def _one_sided(z: np.ndarray, members: np.ndarray, k: int, limit: int, power: float) -> float:
    """The ``power`` quantile of the data sets' critical shifts δ*_r (module docstring)."""
    overlap = members[:, :k].sum(axis=1)  # |S ∩ first|
    gap = k - overlap
    critical = np.empty(z.shape[0])
    for start in range(0, z.shape[0], _CHUNK):
        block = z[start:start + _CHUNK]
        sums = block @ members.T  # T0(S), (b, M)
        observed = block[:, :k].sum(axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            c = np.where(gap > 0, (sums - observed) / gap, np.inf)  # the partition counts while δ <= c
        # reject iff #{S: c_S >= δ} <= limit, i.e. δ > the (limit + 1)-th largest c_S
        critical[start:start + _CHUNK] = -np.partition(-c, limit, axis=1)[:, limit]
    return float(np.sort(critical)[math.ceil(power * critical.size) - 1])


def _bisect_two_sided(z: np.ndarray, members: np.ndarray, k: int, limit: int, power: float, start: float) -> float:
    """The smallest δ whose simulated two-sided power reaches ``power`` (bisection to 1e-4, from a bracket
    around ``start``, the t-test's answer).

    A partition's difference of means is linear in δ: D(S) = Σ_S / k - (Σ - Σ_S) / m = a_S + δ b_S with
    a_S from the standard normal scores and b_S = |S ∩ first| (1/k + 1/m) - k/m (b = 1 for the observed S).
    """
    m = z.shape[1] - k
    scale = 1 / k + 1 / m
    totals = z.sum(axis=1, keepdims=True)
    a = scale * (z @ members.T) - totals / m  # (R, M)
    b = scale * members[:, :k].sum(axis=1) - k / m  # (M,)
    a_obs = scale * z[:, :k].sum(axis=1, keepdims=True) - totals / m

    def rejected(delta: float) -> float:
        reached = np.abs(a + delta * b) >= np.abs(a_obs + delta) - 1e-12
        return float((reached.sum(axis=1) <= limit).mean())

    low, high = 0.8 * start, 1.25 * start
    while rejected(low) >= power:
        low, high = low / 2, low
    while rejected(high) < power:
        low, high = high, 2 * high
    while high - low > 1e-4:
        mid = (low + high) / 2
        low, high = (low, mid) if rejected(mid) >= power else (mid, high)
    return high


def _t_test_mde(n_x: int, n_y: int, alpha: float, power: float, alternative: str) -> float:
    from scipy.optimize import brentq

    def short(d: float) -> float:
        return t_test_power(d, n_x, n_y, alpha, alternative) - power

    high = 1.0
    while short(high) < 0:
        high *= 2
    return float(brentq(short, 0.0, high, xtol=1e-10))
