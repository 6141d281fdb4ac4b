"""The outcome layer: statistics of what models answer (choices, counts, paired scores), for every answer
benchmark. numpy/scipy only; each result says how it was computed.

=======================================  ====================================================================
:func:`proportion`                       a share with a Wilson or Clopper-Pearson interval, exact binomial p
:func:`proportion_difference`            p1 - p2 of two independent samples: Newcombe's hybrid score interval,
                                         Fisher's exact test
:func:`paired_choices`                   binary outcomes of counterfactual pairs: exact McNemar test and
                                         Newcombe's paired interval (his method 10)
:func:`sign_test`                        the sign test of paired differences (exact binomial on the signs)
:func:`paired_scores`                    paired sign-flip permutation test of a mean difference (exact by
                                         enumeration or sampled, as asked), percentile bootstrap CI
:func:`clustered_proportion`             a share whose items share templates: cluster-robust (CR1) interval
:func:`minimum_detectable_difference`    the smallest difference a design of ``n`` items detects
:func:`bootstrap_mean`                   percentile bootstrap interval of a mean over items
=======================================  ====================================================================

A battery's p-values are corrected with :func:`eatkit.stats.multitest.adjust_p_values` (BH, Holm); effects
of several templates or prompts are pooled with :func:`eatkit.stats.meta_analysis.random_effects`.

Every interval follows ``alternative`` as :func:`scipy.stats.binomtest`'s ``proportion_ci`` does: two-sided
at ``confidence_level``; ``"greater"``: ``[low, upper limit]``; ``"less"``: ``[lower limit, high]``, the
finite bound at the one-sided level.
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._random import resolve_rng
from eatkit.stats._validation import check_count, check_share, check_values
from eatkit.stats.cost import check_cost
from eatkit.stats.degeneracy import check_group, check_tied
from eatkit.stats.options import check_choice, check_option

INTERVALS = ("wilson", "clopper-pearson")


# -- validation (one message per quantity) ----------------------------------------------------------------


def _whole(name: str, value: Any, low: int = 0) -> int:
    """A whole number >= ``low`` (a numpy integer too), or a one-line error naming ``name``."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
        raise EatkitError(f"{name} must be a whole number >= {low}, got {value!r}")
    return int(value)


def _counts(successes: Any, n: Any, suffix: str = "") -> tuple[int, int]:
    """``(successes, n)`` checked: whole numbers, ``n >= 1`` (n = 0: the ``empty-group`` rule),
    ``0 <= successes <= n``."""
    k, m = _whole(f"successes{suffix}", successes), _whole(f"n{suffix}", n)
    check_group("sample", f"n{suffix}", m)
    if k > m:
        raise EatkitError(f"successes{suffix} ({k}) must not exceed n{suffix} ({m})")
    return k, m


def _binary(name: str, values: Any) -> np.ndarray:
    """A non-empty 1-D array of 0/1 (or booleans) as booleans."""
    arr = check_values(name, values)
    if not np.isin(arr, (0.0, 1.0)).all():
        raise EatkitError(f"'{name}' must hold binary outcomes (0 or 1, False or True)")
    return arr.astype(bool)


def _paired(first: Any, second: Any, check: Any = check_values) -> tuple[np.ndarray, np.ndarray]:
    a, b = check("first", first), check("second", second)
    if a.shape != b.shape:
        raise EatkitError(f"first and second must pair up, got {a.size} and {b.size} values")
    return a, b


def _settings(confidence_level: Any, alternative: Any) -> tuple[float, str]:
    return float(check_option("confidence_level", confidence_level)), str(check_option("alternative", alternative))


def _z(level: float, alternative: str) -> float:
    """The normal quantile of a two-sided (1 - alpha/2) or one-sided (1 - alpha) interval."""
    from scipy import stats as sps

    return float(sps.norm.ppf(0.5 + level / 2 if alternative == "two-sided" else level))


def _sided(low: float, high: float, alternative: str, limits: tuple[float, float]) -> tuple[float, float]:
    """The one-sided interval keeps the bound on its side and opens the other to the parameter's limit."""
    if alternative == "greater":
        return low, limits[1]
    if alternative == "less":
        return limits[0], high
    return low, high


@dataclass(frozen=True)
class _Result:
    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (tuples as lists)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}


# -- one proportion ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Proportion(_Result):
    """A share ``successes / n`` with its interval and, given ``p0``, the exact binomial test against it.

    ``method``: the interval (``"wilson"`` or ``"clopper-pearson"``); ``test``: how ``p_value`` was
    computed (None without ``p0``); ``exact``: the p-value is exact (not an approximation).
    """

    estimate: float
    ci_low: float
    ci_high: float
    successes: int
    n: int
    p_value: float | None
    p0: float | None
    alternative: str
    confidence_level: float
    method: str
    test: str | None
    exact: bool = True


def wilson_bounds(successes: int, n: int, z: float) -> tuple[float, float]:
    """Wilson's (1927) score interval at normal quantile ``z`` (checked counts):
    (p̂ + z²/2n ± z sqrt(p̂(1 - p̂)/n + z²/4n²)) / (1 + z²/n).

    >>> [round(v, 4) for v in wilson_bounds(0, 10, 1.959963984540054)]
    [0.0, 0.2775]
    """
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # the bounds are exactly 0 and 1 at p = 0 and p = 1 (the formula gives them up to rounding)
    low = 0.0 if successes == 0 else float(centre - half)
    high = 1.0 if successes == n else float(centre + half)
    return low, high


def clopper_pearson_bounds(successes: int, n: int, tail: float) -> tuple[float, float]:
    """Clopper & Pearson's (1934) exact interval, ``tail`` the probability outside each side:
    low = Beta⁻¹(tail; k, n - k + 1), high = Beta⁻¹(1 - tail; k + 1, n - k).

    >>> [round(v, 4) for v in clopper_pearson_bounds(0, 10, 0.025)]
    [0.0, 0.3085]
    """
    from scipy import stats as sps

    low = 0.0 if successes == 0 else float(sps.beta.ppf(tail, successes, n - successes + 1))
    high = 1.0 if successes == n else float(sps.beta.isf(tail, successes + 1, n - successes))
    return low, high


def _interval(successes: int, n: int, method: str, level: float, alternative: str) -> tuple[float, float]:
    if method == "wilson":
        low, high = wilson_bounds(successes, n, _z(level, alternative))
    else:
        low, high = clopper_pearson_bounds(successes, n, (1 - level) / (2 if alternative == "two-sided" else 1))
    return _sided(low, high, alternative, (0.0, 1.0))


def proportion(successes: Any, n: Any, *, method: str = "wilson", confidence_level: float = 0.95,
               p0: float | None = None, alternative: str = "two-sided") -> Proportion:
    """The share ``successes / n``, its Wilson or Clopper-Pearson interval and, given ``p0``, the exact
    binomial test of H0: p = p0 (:func:`scipy.stats.binomtest`).

    >>> r = proportion(7, 10, p0=0.5)
    >>> r.estimate, round(r.ci_low, 4), round(r.ci_high, 4), round(r.p_value, 4)
    (0.7, 0.3968, 0.8922, 0.3438)
    >>> proportion(11, 10)
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: successes (11) must not exceed n (10)
    """
    from scipy import stats as sps

    k, m = _counts(successes, n)
    level, alternative = _settings(confidence_level, alternative)
    method = check_choice("method", method, INTERVALS)
    low, high = _interval(k, m, method, level, alternative)
    p = None
    if p0 is not None:
        p0 = check_share("p0", p0)
        p = float(sps.binomtest(k, m, p0, alternative=alternative).pvalue)
    return Proportion(estimate=k / m, ci_low=low, ci_high=high, successes=k, n=m, p_value=p, p0=p0,
                      alternative=alternative, confidence_level=level, method=method,
                      test=None if p0 is None else "exact binomial test (scipy.stats.binomtest)")


# -- two independent proportions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ProportionDifference(_Result):
    """``p1 - p2`` of two independent samples: Newcombe's (1998, method 10) hybrid score interval from the
    two Wilson intervals, and Fisher's exact (conditional) test of H0: p1 = p2 (``"greater"``: p1 > p2)."""

    estimate: float
    ci_low: float
    ci_high: float
    successes: tuple[int, int]
    n: tuple[int, int]
    p_value: float
    alternative: str
    confidence_level: float
    method: str = "Newcombe hybrid score interval (Newcombe 1998, method 10; Wilson intervals of each share)"
    test: str = "Fisher's exact test (conditional on the margins; scipy.stats.fisher_exact)"
    exact: bool = True


def _newcombe(d: float, p: tuple[float, float], w1: tuple[float, float], w2: tuple[float, float],
              phi: float = 0.0) -> tuple[float, float]:
    """Newcombe's hybrid score limits of d = p1 - p2 from Wilson limits (l_i, u_i); ``phi`` the correlation
    of paired outcomes (0 for independent samples; Newcombe 1998b, method 10):
    low = d - sqrt((p1 - l1)² - 2φ(p1 - l1)(u2 - p2) + (u2 - p2)²),
    high = d + sqrt((u1 - p1)² - 2φ(u1 - p1)(p2 - l2) + (p2 - l2)²)."""
    a, b = p[0] - w1[0], w2[1] - p[1]
    c, e = w1[1] - p[0], p[1] - w2[0]
    low = d - np.sqrt(max(a * a - 2 * phi * a * b + b * b, 0.0))
    high = d + np.sqrt(max(c * c - 2 * phi * c * e + e * e, 0.0))
    return float(low), float(high)


def proportion_difference(successes1: Any, n1: Any, successes2: Any, n2: Any, *, confidence_level: float = 0.95,
                          alternative: str = "two-sided") -> ProportionDifference:
    """``p1 - p2`` with Newcombe's hybrid score interval and Fisher's exact p.

    >>> r = proportion_difference(9, 10, 3, 10)
    >>> round(r.estimate, 2), round(r.ci_low, 4), round(r.ci_high, 4), round(r.p_value, 4)
    (0.6, 0.1705, 0.809, 0.0198)
    """
    from scipy import stats as sps

    k1, m1 = _counts(successes1, n1, "1")
    k2, m2 = _counts(successes2, n2, "2")
    level, alternative = _settings(confidence_level, alternative)
    z = _z(level, alternative)
    p = (k1 / m1, k2 / m2)
    d = p[0] - p[1]
    low, high = _sided(*_newcombe(d, p, wilson_bounds(k1, m1, z), wilson_bounds(k2, m2, z)), alternative, (-1.0, 1.0))
    table = [[k1, m1 - k1], [k2, m2 - k2]]
    pv = float(sps.fisher_exact(table, alternative=alternative).pvalue)
    return ProportionDifference(estimate=d, ci_low=low, ci_high=high, successes=(k1, k2), n=(m1, m2), p_value=pv,
                                alternative=alternative, confidence_level=level)


# -- paired binary outcomes (counterfactual pairs) -----------------------------------------------------------


@dataclass(frozen=True)
class PairedChoices(_Result):
    """Binary outcomes of ``n`` pairs: ``estimate = p_first - p_second = (b - c) / n`` with ``b`` pairs where
    only the first variant has the outcome, ``c`` where only the second does.

    ``p_value``: the exact McNemar test, the binomial test of ``b`` among the ``b + c`` discordant pairs against
    1/2 (1.0 without discordant pairs); the interval: Newcombe's (1998b) method 10 for paired data.
    """

    estimate: float
    ci_low: float
    ci_high: float
    n: int
    first_only: int
    second_only: int
    both: int
    neither: int
    p_value: float
    alternative: str
    confidence_level: float
    method: str = "Newcombe's paired square-and-add interval (Newcombe 1998b, method 10: Wilson limits, phi corrected)"
    test: str = "exact McNemar test (binomial on the discordant pairs, p0 = 1/2)"
    exact: bool = True


def _phi(a: int, b: int, c: int, d: int) -> float:
    """Newcombe's (1998b) estimate of the correlation of the paired shares: (ad - bc) / sqrt of the four
    margins, with ad - bc reduced by n/2 when above it, 0 from 0 to n/2, kept when negative; 0 when a margin
    is empty (as Fagerland, Lydersen & Laake 2017, ch. 8, the square-and-add interval)."""
    margins = float(a + b) * (c + d) * (a + c) * (b + d)
    if margins == 0:
        return 0.0
    cross, half = float(a * d - b * c), (a + b + c + d) / 2
    # ψ = (AD - BC - N/2) / sqrt(...) if AD - BC > N/2; 0 if 0 <= AD - BC <= N/2; (AD - BC) / sqrt(...) if < 0
    return (cross - half if cross > half else min(cross, 0.0)) / float(np.sqrt(margins))


def paired_choices(first: Any, second: Any, *, confidence_level: float = 0.95,
                   alternative: str = "two-sided") -> PairedChoices:
    """Compare paired binary outcomes (``first[i]``, ``second[i]``: the same item under two variants).

    >>> r = paired_choices([1, 1, 1, 1, 0, 1, 0, 0], [1, 0, 0, 0, 0, 1, 0, 0])
    >>> r.estimate, r.first_only, r.second_only, r.p_value
    (0.375, 3, 0, 0.25)
    """
    from scipy import stats as sps

    x, y = _paired(first, second, _binary)
    level, alternative = _settings(confidence_level, alternative)
    a, b, c = int(np.sum(x & y)), int(np.sum(x & ~y)), int(np.sum(~x & y))
    n = x.size
    check_tied("first - second", (x != y).astype(float))  # no discordant pair: McNemar's p is 1
    d = n - a - b - c
    # exact McNemar: b ~ Binomial(b + c, 1/2) under H0 (McNemar 1947; the exact form of Liddell 1983)
    pv = float(sps.binomtest(b, b + c, 0.5, alternative=alternative).pvalue) if b + c else 1.0
    z = _z(level, alternative)
    p = ((a + b) / n, (a + c) / n)
    limits = _newcombe((b - c) / n, p, wilson_bounds(a + b, n, z), wilson_bounds(a + c, n, z), _phi(a, b, c, d))
    low, high = _sided(*limits, alternative, (-1.0, 1.0))
    return PairedChoices(estimate=(b - c) / n, ci_low=low, ci_high=high, n=n, first_only=b, second_only=c, both=a,
                         neither=d, p_value=pv, alternative=alternative, confidence_level=level)


@dataclass(frozen=True)
class SignTest(_Result):
    """The sign test of paired differences: ``positive`` of the ``positive + negative`` non-zero differences
    (zeros, ``zero``, are left out and counted) against 1/2, exact binomial; ``estimate`` is the share of
    positive signs with its Clopper-Pearson interval."""

    estimate: float
    ci_low: float
    ci_high: float
    positive: int
    negative: int
    zero: int
    p_value: float
    alternative: str
    confidence_level: float
    method: str = "Clopper-Pearson interval of the share of positive signs"
    test: str = "exact sign test (scipy.stats.binomtest on the signs, p0 = 1/2; zero differences left out)"
    exact: bool = True


def sign_test(differences: Any, *, confidence_level: float = 0.95, alternative: str = "two-sided") -> SignTest:
    """The sign test (``"greater"``: positive differences are more likely than negative ones).

    >>> r = sign_test([0.5, 1.0, 2.0, -1.0, 0.0, 3.0])
    >>> r.positive, r.negative, r.zero, r.p_value
    (4, 1, 1, 0.375)
    """
    diff = check_values("differences", differences)
    level, alternative = _settings(confidence_level, alternative)
    pos, neg = int(np.sum(diff > 0)), int(np.sum(diff < 0))
    if pos + neg == 0:
        raise EatkitError("every difference is zero: the sign test needs at least one non-zero difference")
    share = proportion(pos, pos + neg, method="clopper-pearson", confidence_level=level, p0=0.5,
                       alternative=alternative)
    return SignTest(estimate=share.estimate, ci_low=share.ci_low, ci_high=share.ci_high, positive=pos, negative=neg,
                    zero=int(diff.size - pos - neg), p_value=float(share.p_value), alternative=alternative,
                    confidence_level=level)


# -- paired scores -------------------------------------------------------------------------------------------

#: ``permutations="exact"`` lists all 2^n sign vectors' sums (16 bytes a sum at the peak); beyond what
#: :func:`eatkit.stats.cost.check_cost` allows it is refused with the estimate, never sampled silently
EXACT_SIGN_FLIP_MAX_PAIRS = 26
#: ``permutations="auto"`` enumerates up to this many pairs (2^20 sums), else draws this many sign vectors
AUTO_EXACT_PAIRS = 20
DEFAULT_SIGN_FLIPS = 100_000


@dataclass(frozen=True)
class PairedScores(_Result):
    """The mean of ``first - second`` over pairs, the paired sign-flip permutation test of H0: the
    differences are symmetric about 0, and a percentile bootstrap interval of the mean.

    ``exact``: every one of the 2^n sign vectors was evaluated (``permutations`` = 2^n); else ``permutations``
    random sign vectors were drawn and ``p = (1 + hits) / (1 + permutations)`` (Phipson & Smyth 2010).
    ``tolerance``: sums within it of the observed one count as reaching it (rounding of summation orders).
    """

    estimate: float
    ci_low: float
    ci_high: float
    n: int
    p_value: float
    alternative: str
    confidence_level: float
    exact: bool
    permutations: int
    n_bootstrap: int
    seed: int | None
    tolerance: float
    method: str = "percentile bootstrap of the mean difference over pairs"
    test: str = "paired sign-flip permutation test of the mean difference"


def _hits(sums: np.ndarray, observed: float, tol: float) -> dict[str, int]:
    """How many sign-flipped sums reach the observed one, per alternative."""
    return {"greater": int(np.sum(sums >= observed - tol)), "less": int(np.sum(sums <= observed + tol)),
            "two-sided": int(np.sum(np.abs(sums) >= abs(observed) - tol))}


def _all_sign_sums(values: np.ndarray) -> np.ndarray:
    """Σ s_i v_i over all 2^n sign vectors s (doubling: each value adds its two signs to every sum so far)."""
    sums = np.zeros(1)
    for v in values:
        sums = np.concatenate((sums + v, sums - v))
    return sums


def _sign_flip_counts(diff: np.ndarray, permutations: str | int, rng: np.random.Generator,
                      tol: float) -> tuple[dict[str, int], int, bool]:
    """Counts of sums reaching the observed sum, the number of sign vectors evaluated, and whether all were."""
    n, observed = diff.size, float(diff.sum())
    if permutations == "exact" or (permutations == "auto" and n <= AUTO_EXACT_PAIRS):
        check_cost(f"an exact sign-flip test of {n} pairs (2^{n} sign vectors)", 4.0 * 2.0**n,
                   "give permutations as a number of random sign flips", nbytes=16.0 * 2.0**n)
        return _hits(_all_sign_sums(np.abs(diff)), observed, tol), 2**n, True
    draws = DEFAULT_SIGN_FLIPS if permutations == "auto" else int(permutations)
    check_cost(f"{draws} random sign flips of {n} pairs", 2.0 * draws * n, "draw fewer sign flips")
    counts = {"greater": 0, "less": 0, "two-sided": 0}
    chunk = max(1, (1 << 22) // n)
    for start in range(0, draws, chunk):
        signs = rng.choice(np.array([-1.0, 1.0]), size=(min(chunk, draws - start), n))
        for alt, c in _hits(signs @ np.abs(diff), observed, tol).items():
            counts[alt] += c
    return counts, draws, False


def bootstrap_mean(values: np.ndarray, n_bootstrap: int, *, confidence_level: float = 0.95,
                   alternative: str = "two-sided", rng: np.random.Generator) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` over ``n_bootstrap`` resamples of the items
    (Efron & Tibshirani 1993, ch. 13), one-sided as ``alternative``; NaN bounds when ``n_bootstrap`` is 0.

    >>> bootstrap_mean(np.array([1.0, 2.0, 3.0]), 200, rng=np.random.default_rng(0))
    (1.0, 3.0)
    """
    if n_bootstrap == 0:
        return float("nan"), float("nan")
    n = values.size
    check_cost(f"{n_bootstrap} bootstrap resamples of {n} items", 2.0 * n_bootstrap * n, "use fewer resamples",
               nbytes=8.0 * n_bootstrap * n)
    means = values[rng.integers(0, n, size=(n_bootstrap, n))].mean(axis=1)
    tail = (1 - confidence_level) / (2 if alternative == "two-sided" else 1)
    low, high = (float(v) for v in np.quantile(means, [tail, 1 - tail]))
    return _sided(low, high, alternative, (-np.inf, np.inf))


def paired_scores(first: Any, second: Any, *, permutations: str | int = "auto", alternative: str = "two-sided",
                  confidence_level: float = 0.95, n_bootstrap: int = 2000, rng: Any = None) -> PairedScores:
    """The paired sign-flip permutation test of ``mean(first - second)`` (``"greater"``: first scores higher).

    ``permutations``: ``"exact"`` (all 2^n sign vectors; refused with its cost beyond what can be listed),
    ``"auto"`` (exact up to 20 pairs, else 100,000 random sign vectors) or a number of random sign vectors.

    >>> r = paired_scores([3.0, 2.5, 4.0, 1.0], [1.0, 1.5, 2.0, 2.0], permutations="exact", n_bootstrap=0)
    >>> r.estimate, r.p_value, r.permutations, r.exact
    (1.0, 0.375, 16, True)
    """
    a, b = _paired(first, second)
    level, alternative = _settings(confidence_level, alternative)
    if isinstance(permutations, numbers.Integral) and not isinstance(permutations, bool):
        permutations = int(permutations)
    permutations = check_option("permutations", permutations)
    b_count = n_bootstrap if n_bootstrap == 0 else check_count("n_bootstrap", n_bootstrap)
    generator, seed = resolve_rng(rng)
    diff = a - b
    check_tied("first - second", diff)  # every sign vector gives the same sum: p = 1
    # rounding bound of two summation orders of the same signed values (as eatkit.stats.permutation)
    tol = 4.0 * diff.size * np.finfo(float).eps * float(np.abs(diff).sum())
    counts, evaluated, exact = _sign_flip_counts(diff, permutations, generator, tol)
    p = counts[alternative] / evaluated if exact else (counts[alternative] + 1) / (evaluated + 1)
    low, high = bootstrap_mean(diff, b_count, confidence_level=level, alternative=alternative, rng=generator)
    return PairedScores(estimate=float(diff.mean()), ci_low=low, ci_high=high, n=int(diff.size), p_value=float(p),
                        alternative=alternative, confidence_level=level, exact=exact, permutations=evaluated,
                        n_bootstrap=b_count, seed=seed, tolerance=tol)


# -- items that share a template ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusteredProportion(_Result):
    """A share over items grouped in clusters (templates, prompts): the cluster-robust (CR1, Liang & Zeger
    1986) standard error of the mean and a t interval with ``clusters - 1`` degrees of freedom (Cameron &
    Miller 2015, section VI), clipped to [0, 1]. ``design_effect``: the robust variance over the binomial
    variance p̂(1 - p̂)/n (1: items as independent as coin flips)."""

    estimate: float
    ci_low: float
    ci_high: float
    se: float
    n: int
    clusters: int
    design_effect: float
    alternative: str
    confidence_level: float
    method: str = "cluster-robust (CR1) standard error, t interval with clusters - 1 degrees of freedom"


def clustered_proportion(outcomes: Any, clusters: Any, *, confidence_level: float = 0.95,
                         alternative: str = "two-sided") -> ClusteredProportion:
    """The share of ``outcomes`` (0/1) with an interval that accounts for items sharing a cluster.

    >>> r = clustered_proportion([1, 1, 0, 0, 1, 0], ["t1", "t1", "t2", "t2", "t3", "t3"])
    >>> r.estimate, r.clusters, round(r.se, 4)
    (0.5, 3, 0.2887)
    """
    from scipy import stats as sps

    y = _binary("outcomes", outcomes).astype(float)
    labels = np.asarray(clusters)
    if labels.shape != y.shape:
        raise EatkitError(f"clusters must name one cluster per outcome, got {labels.size} for {y.size} outcomes")
    level, alternative = _settings(confidence_level, alternative)
    _, group = np.unique(labels, return_inverse=True)
    g, n = int(group.max()) + 1, y.size
    if g < 2:
        raise EatkitError("a cluster-robust interval needs at least 2 clusters, got 1")
    p = float(y.mean())
    # CR1: Var(p̂) = G/(G - 1) Σ_g (Σ_{i in g} (y_i - p̂))² / n²
    scores = np.bincount(group, weights=y - p)
    se = float(np.sqrt(g / (g - 1) * np.sum(scores * scores)) / n)
    t = float(sps.t.ppf(0.5 + level / 2 if alternative == "two-sided" else level, g - 1))
    low, high = _sided(max(p - t * se, 0.0), min(p + t * se, 1.0), alternative, (0.0, 1.0))
    binomial = p * (1 - p) / n
    return ClusteredProportion(estimate=p, ci_low=low, ci_high=high, se=se, n=n, clusters=g,
                               design_effect=se * se / binomial if binomial > 0 else float("nan"),
                               alternative=alternative, confidence_level=level)


# -- minimum detectable difference ------------------------------------------------------------------------------


@dataclass(frozen=True)
class MinimumDetectableDifference(_Result):
    """The smallest difference a design detects at ``alpha`` with probability ``power`` (normal approximation).

    ``design="proportion"``: a share against ``p0`` with ``n`` items, the difference ``p1 - p0`` solving
    z_α sqrt(p0 q0 / n) + z_β sqrt(p1 q1 / n) = p1 - p0; ``design="paired"``: paired binary outcomes of ``n``
    pairs with a share ``discordant`` of discordant pairs (McNemar), the difference δ solving Connor's (1987)
    n = (z_α sqrt(ψ) + z_β sqrt(ψ - δ²))² / δ². z_α is one-sided, or at α/2 for ``"two-sided"``.
    """

    difference: float
    n: int
    design: str
    alpha: float
    power: float
    alternative: str
    p0: float | None
    discordant: float | None
    method: str


def _mdd_equation(design: str, n: int, za: float, zb: float, p0: float, psi: float) -> tuple[Any, float]:
    """The function whose root is the detectable difference, and the largest difference possible."""
    if design == "proportion":
        return (lambda d: za * np.sqrt(p0 * (1 - p0) / n) + zb * np.sqrt((p0 + d) * (1 - p0 - d) / n) - d), 1 - p0
    return (lambda d: za * np.sqrt(psi) + zb * np.sqrt(max(psi - d * d, 0.0)) - d * np.sqrt(n)), psi


def minimum_detectable_difference(n: Any, *, design: str = "proportion", p0: float = 0.5,
                                  discordant: float | None = None, alpha: float = 0.05, power: float = 0.8,
                                  alternative: str = "two-sided") -> MinimumDetectableDifference:
    """The smallest difference (above ``p0``, or between paired shares) detectable with ``n`` items.

    >>> round(minimum_detectable_difference(100).difference, 4)
    0.1384
    >>> round(minimum_detectable_difference(200, design="paired", discordant=0.3).difference, 4)
    0.1079
    """
    from scipy import optimize, stats as sps

    n = check_count("n", n)
    design = check_choice("design", design, ("proportion", "paired"))
    alpha, power = float(check_option("alpha", alpha)), check_share("power", power)
    alternative = str(check_option("alternative", alternative))
    p0 = check_share("p0", p0)
    psi = check_share("discordant", discordant) if design == "paired" else float("nan")
    if design == "paired" and discordant is None:
        raise EatkitError("design 'paired' needs discordant, the expected share of discordant pairs")
    za = float(sps.norm.isf(alpha / 2 if alternative == "two-sided" else alpha))
    zb = float(sps.norm.ppf(power))
    f, top = _mdd_equation(design, n, za, zb, p0, psi)
    if f(top) > 0:
        raise EatkitError(f"{n} items cannot detect any difference at alpha {alpha:g} with power {power:g}")
    d = float(optimize.brentq(f, 0.0, top, xtol=1e-14, rtol=1e-14))
    method = ("normal approximation, one proportion against p0" if design == "proportion"
              else "normal approximation of McNemar's test (Connor 1987)")
    return MinimumDetectableDifference(difference=d, n=n, design=design, alpha=alpha, power=power,
                                       alternative=alternative, p0=p0 if design == "proportion" else None,
                                       discordant=psi if design == "paired" else None, method=method)
