"""The outcome layer (eatkit.stats.outcomes) against scipy, statsmodels, brute force and closed forms."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from eatkit.errors import EatkitError
from eatkit.stats.outcomes import (clustered_proportion, minimum_detectable_difference, paired_choices,
                                   paired_scores, proportion, proportion_difference, sign_test)



def statsmodels(module: str):
    """statsmodels' ``module`` (the reference of a test), or the test skipped with the reason."""
    return pytest.importorskip(f"statsmodels.{module}")

COUNTS = [(0, 1), (0, 10), (1, 10), (5, 10), (9, 10), (10, 10), (3, 37), (17, 40), (250, 1000), (999, 1000)]
ALTERNATIVES = ("two-sided", "greater", "less")


@pytest.mark.parametrize("k, n", COUNTS)
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_two_sided_intervals_equal_statsmodels(k, n, level):
    for ours, theirs in (("wilson", "wilson"), ("clopper-pearson", "beta")):
        r = proportion(k, n, method=ours, confidence_level=level)
        assert (r.ci_low, r.ci_high) == pytest.approx(
            statsmodels("stats.proportion").proportion_confint(k, n, alpha=1 - level, method=theirs), abs=1e-12)
        assert r.estimate == k / n and r.p_value is None and r.method == ours


@pytest.mark.parametrize("k, n", COUNTS)
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_p_value_and_one_sided_intervals_equal_scipy_binomtest(k, n, alternative):
    reference = sps.binomtest(k, n, 0.3, alternative=alternative)
    for ours, theirs in (("wilson", "wilson"), ("clopper-pearson", "exact")):
        r = proportion(k, n, method=ours, p0=0.3, alternative=alternative)
        assert abs(r.p_value - reference.pvalue) <= 1e-12
        ci = reference.proportion_ci(confidence_level=0.95, method=theirs)
        assert (r.ci_low, r.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_clopper_pearson_is_the_inversion_of_the_exact_test():
    # brute force: the exact interval holds the p0 whose one-sided exact p-values both exceed 2.5%
    k, n = 4, 15
    r = proportion(k, n, method="clopper-pearson")
    grid = np.linspace(0.001, 0.999, 999)
    kept = [p for p in grid if sps.binom.cdf(k, n, p) > 0.025 and sps.binom.sf(k - 1, n, p) > 0.025]
    assert r.ci_low == pytest.approx(min(kept), abs=1e-3) and r.ci_high == pytest.approx(max(kept), abs=1e-3)


@pytest.mark.parametrize("counts", [(9, 10, 3, 10), (0, 12, 0, 15), (5, 20, 15, 20), (30, 31, 1, 40),
                                    (56, 70, 48, 80)])
def test_difference_interval_equals_statsmodels_newcombe_and_fisher(counts):
    k1, n1, k2, n2 = counts
    r = proportion_difference(k1, n1, k2, n2)
    low, high = statsmodels("stats.proportion").confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff")
    assert (r.ci_low, r.ci_high) == pytest.approx((low, high), abs=1e-12)
    for alternative in ALTERNATIVES:
        one = proportion_difference(k1, n1, k2, n2, alternative=alternative)
        assert one.p_value == sps.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]], alternative=alternative).pvalue
    swapped = proportion_difference(k2, n2, k1, n1)
    assert (swapped.estimate, swapped.ci_low, swapped.ci_high) == pytest.approx((-r.estimate, -r.ci_high,
                                                                                   -r.ci_low), abs=1e-15)


def _pairs(a: int, b: int, c: int, d: int) -> tuple[list[int], list[int]]:
    """Paired outcomes with a pairs (1, 1), b (1, 0), c (0, 1), d (0, 0)."""
    return [1] * a + [1] * b + [0] * c + [0] * d, [1] * a + [0] * b + [1] * c + [0] * d


@pytest.mark.parametrize("table", [(10, 5, 1, 4), (3, 0, 0, 7), (20, 12, 9, 30), (0, 4, 0, 0), (5, 25, 3, 1),
                                   (40, 1, 11, 2)])
def test_paired_choices_exact_mcnemar_equals_statsmodels(table):
    first, second = _pairs(*table)
    r = paired_choices(first, second)
    a, b, c, d = table
    reference = statsmodels("stats.contingency_tables").mcnemar([[a, b], [c, d]], exact=True).pvalue
    assert abs(r.p_value - reference) <= 1e-12
    assert (r.both, r.first_only, r.second_only, r.neither) == table
    assert r.estimate == (b - c) / sum(table)
    swapped = paired_choices(second, first)
    assert (swapped.estimate, swapped.p_value) == (-r.estimate, r.p_value)
    assert (swapped.ci_low, swapped.ci_high) == pytest.approx((-r.ci_high, -r.ci_low), abs=1e-15)


def reference_square_and_add(n11: int, n12: int, n21: int, n22: int) -> tuple[float, float]:
    """Fagerland, Lydersen & Laake (2017, ch. 8) Newcombe square-and-add interval, written out from their
    contingencytables R function: the table's rows are the first variant, its columns the second."""
    big_n = n11 + n12 + n21 + n22
    p1, p2 = (n11 + n12) / big_n, (n11 + n21) / big_n
    z = sps.norm.ppf(0.975)

    def wilson(x: int) -> tuple[float, float]:
        centre, half = 2 * x + z * z, z * math.sqrt(z * z + 4 * x * (1 - x / big_n))
        return (centre - half) / (2 * (big_n + z * z)), (centre + half) / (2 * (big_n + z * z))

    (l1, u1), (l2, u2) = wilson(n11 + n12), wilson(n11 + n21)
    margins = [n11 + n12, n21 + n22, n11 + n21, n12 + n22]
    psi = 0.0
    if min(margins) > 0:
        cross = n11 * n22 - n12 * n21
        psi = (cross - big_n / 2) / math.sqrt(math.prod(margins)) if cross > big_n / 2 else (
            0.0 if cross >= 0 else cross / math.sqrt(math.prod(margins)))
    low = p1 - p2 - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2 - 2 * psi * (p1 - l1) * (u2 - p2))
    high = p1 - p2 + math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2 - 2 * psi * (p2 - l2) * (u1 - p1))
    return low, high


@pytest.mark.parametrize("table", [(1, 1, 7, 12), (59, 6, 16, 80), (10, 5, 1, 4), (20, 12, 9, 30), (3, 0, 0, 7),
                                   (0, 4, 3, 0), (40, 1, 11, 2)])
def test_paired_interval_equals_fagerlands_square_and_add(table):
    # (1, 1, 7, 12): Bentur et al. 2009 and (59, 6, 16, 80): Cavo et al. 2012, the book's examples
    n11, n12, n21, n22 = table
    first, second = _pairs(n11, n12, n21, n22)
    r = paired_choices(first, second)
    assert (r.ci_low, r.ci_high) == pytest.approx(reference_square_and_add(*table), abs=1e-12)


def test_paired_interval_is_newcombes_with_zero_correlation_equal_to_the_independent_one():
    # a d = b c makes phi 0: method 10 then equals the independent samples' hybrid score interval
    first, second = _pairs(4, 2, 2, 1)
    r = paired_choices(first, second)
    low, high = statsmodels("stats.proportion").confint_proportions_2indep(6, 9, 6, 9, method="newcomb", compare="diff")
    assert (r.ci_low, r.ci_high) == pytest.approx((low, high), abs=1e-12)
    # positive correlation narrows the interval against the independent one
    first, second = _pairs(30, 5, 3, 30)
    paired = paired_choices(first, second)
    independent = proportion_difference(35, 68, 33, 68)
    assert paired.ci_high - paired.ci_low < independent.ci_high - independent.ci_low
    assert paired.ci_low <= paired.estimate <= paired.ci_high


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_sign_test_equals_binomtest_on_the_signs(alternative):
    rng = np.random.default_rng(1)
    diff = np.round(rng.normal(0.3, 1, size=40), 1)
    r = sign_test(diff, alternative=alternative)
    pos, neg = int((diff > 0).sum()), int((diff < 0).sum())
    assert (r.positive, r.negative, r.zero) == (pos, neg, int((diff == 0).sum()))
    assert abs(r.p_value - sps.binomtest(pos, pos + neg, 0.5, alternative=alternative).pvalue) <= 1e-12
    assert sign_test(-diff, alternative="two-sided").p_value == sign_test(diff, alternative="two-sided").p_value


def _brute_sign_flip(d: np.ndarray) -> dict[str, float]:
    observed = d.sum()
    sums = np.array([np.dot(s, np.abs(d)) for s in itertools.product([-1, 1], repeat=d.size)])
    eps = 1e-9
    return {"greater": np.mean(sums >= observed - eps), "less": np.mean(sums <= observed + eps),
            "two-sided": np.mean(np.abs(sums) >= abs(observed) - eps)}


@pytest.mark.parametrize("seed", range(4))
def test_paired_scores_exact_equals_brute_force_enumeration(seed):
    rng = np.random.default_rng(seed)
    first, second = rng.normal(size=9) + 0.4, rng.normal(size=9)
    if seed == 3:
        first, second = np.round(first, 0), np.round(second, 0)  # tied absolute differences
    brute = _brute_sign_flip(first - second)
    for alternative in ALTERNATIVES:
        r = paired_scores(first, second, permutations="exact", alternative=alternative, n_bootstrap=0)
        assert r.exact and r.permutations == 2**9 and r.p_value == pytest.approx(brute[alternative], abs=1e-15)
    swapped = paired_scores(second, first, permutations="exact", alternative="less", n_bootstrap=0)
    assert swapped.estimate == pytest.approx(-r.estimate, abs=1e-15)
    assert swapped.p_value == paired_scores(first, second, permutations="exact", alternative="greater",
                                            n_bootstrap=0).p_value


def test_paired_scores_sampled_is_recorded_and_close_to_exact():
    rng = np.random.default_rng(5)
    first, second = rng.normal(size=14) + 0.5, rng.normal(size=14)
    exact = paired_scores(first, second, permutations="exact", n_bootstrap=0)
    sampled = paired_scores(first, second, permutations=20000, n_bootstrap=500, rng=3)
    assert not sampled.exact and sampled.permutations == 20000 and sampled.seed == 3
    assert sampled.p_value == pytest.approx(exact.p_value, abs=4 * math.sqrt(exact.p_value / 20000) + 1e-4)
    assert sampled.ci_low <= sampled.estimate <= sampled.ci_high
    assert sampled == paired_scores(first, second, permutations=20000, n_bootstrap=500, rng=3)


def test_exact_sign_flip_is_refused_with_its_cost_never_sampled():
    with pytest.raises(EatkitError, match=r"exact sign-flip test of 60 pairs .* would (take|need)"):
        paired_scores(np.arange(60.0), np.zeros(60), permutations="exact")
    auto = paired_scores(np.arange(1.0, 31.0), np.zeros(30), n_bootstrap=0, rng=0)
    assert not auto.exact and auto.permutations == 100_000


def test_clustered_proportion_se_equals_statsmodels_cluster_robust_ols():
    sm_api = statsmodels("api")
    rng = np.random.default_rng(2)
    clusters = np.repeat(np.arange(12), 7)
    y = (rng.random(84) < 0.3 + 0.4 * (clusters % 3 == 0)).astype(float)
    r = clustered_proportion(y, clusters)
    fit = sm_api.OLS(y, np.ones((84, 1))).fit(cov_type="cluster", cov_kwds={"groups": clusters}, use_t=True)
    assert r.se == pytest.approx(float(fit.bse[0]), abs=1e-12)
    low, high = fit.conf_int(alpha=0.05)[0]
    assert (r.ci_low, r.ci_high) == pytest.approx((max(low, 0), min(high, 1)), abs=1e-12)
    assert r.clusters == 12 and r.design_effect > 1  # items of a template agree: wider than binomial


def test_minimum_detectable_difference_inverts_its_sample_size_formula():
    z = sps.norm.isf(0.025) , sps.norm.ppf(0.8)
    r = minimum_detectable_difference(150, p0=0.4)
    p1 = 0.4 + r.difference
    n = ((z[0] * math.sqrt(0.4 * 0.6) + z[1] * math.sqrt(p1 * (1 - p1))) / r.difference) ** 2
    assert n == pytest.approx(150, rel=1e-9)
    paired = minimum_detectable_difference(300, design="paired", discordant=0.25)
    d = paired.difference
    assert ((z[0] * math.sqrt(0.25) + z[1] * math.sqrt(0.25 - d * d)) / d) ** 2 == pytest.approx(300, rel=1e-9)
    # the exact binomial power at that difference is near the nominal 80% (large n)
    big = minimum_detectable_difference(2000, p0=0.5)
    crit = sps.binom.isf(0.025, 2000, 0.5)
    assert sps.binom.sf(crit, 2000, 0.5 + big.difference) == pytest.approx(0.8, abs=0.02)
    assert minimum_detectable_difference(600).difference < minimum_detectable_difference(150).difference


@pytest.mark.parametrize("call, message", [
    (lambda: proportion(11, 10), r"^successes \(11\) must not exceed n \(10\)$"),
    (lambda: proportion(0, 0), r"^sample 'n' is empty \(n = 0\): its share would be 0/0$"),
    (lambda: proportion(float("nan"), 10), r"^successes must be a whole number >= 0, got nan$"),
    (lambda: proportion(-1, 10), r"^successes must be a whole number >= 0, got -1$"),
    (lambda: proportion(3, 10, method="wald"), r"^method must be one of wilson, clopper-pearson, got 'wald'$"),
    (lambda: proportion(3, 10, confidence_level=1.0), r"^confidence_level must be"),
    (lambda: proportion(3, 10, p0=1.5), r"^p0 must lie strictly between 0 and 1"),
    (lambda: proportion(3, 10, alternative="bigger"), r"^alternative must be"),
    (lambda: proportion_difference(3, 10, 4, 3), r"^successes2 \(4\) must not exceed n2 \(3\)$"),
    (lambda: paired_choices([], []), r"^'first' is empty$"),
    (lambda: paired_choices([1, 0], [1, 0, 1]), r"^first and second must pair up"),
    (lambda: paired_choices([1, 2], [1, 0]), r"^'first' must hold binary outcomes"),
    (lambda: paired_choices([1, np.nan], [1, 0]), r"^'first' has non-finite values$"),
    (lambda: sign_test([0.0, 0.0]), r"^every difference is zero"),
    (lambda: paired_scores([1.0], [np.nan]), r"^'second' has non-finite values$"),
    (lambda: paired_scores([1.0], [0.0], permutations=0), r"^permutations"),
    (lambda: clustered_proportion([1, 0], ["a", "a"]), r"needs at least 2 clusters, got 1$"),
    (lambda: clustered_proportion([1, 0], ["a"]), r"^clusters must name one cluster per outcome"),
    (lambda: minimum_detectable_difference(0), r"^n must be a positive integer"),
    (lambda: minimum_detectable_difference(3), r"^3 items cannot detect any difference"),
    (lambda: minimum_detectable_difference(50, design="paired"), r"^discordant must lie strictly"),
])
def test_degenerate_inputs_give_one_line_errors(call, message):
    with pytest.raises(EatkitError, match=message) as info:
        call()
    assert "\n" not in str(info.value)


def test_docs_coverage_numbers_are_the_exact_coverages_of_wilson_and_clopper_pearson():
    """docs/answers.md's coverages of a share's intervals, computed exactly by bench/bench_coverage.py's
    exact_coverage (checked here against a brute-force sum for one share); Clopper-Pearson never below 95%."""
    import re
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "bench"))
    from bench_coverage import exact_coverage

    cover = {(m, n): exact_coverage(m, n) for m in ("wilson", "clopper-pearson") for n in (20, 200)}
    hits = [k for k in range(21) if proportion(k, 20).ci_low <= 0.3 <= proportion(k, 20).ci_high]
    assert exact_coverage("wilson", 20, [0.3])[0] == pytest.approx(sum(sps.binom.pmf(hits, 20, 0.3)), abs=1e-14)
    assert cover["clopper-pearson", 20].min() >= 0.95 and cover["clopper-pearson", 200].min() >= 0.95
    want = (f"is {100 * cover['wilson', 20].mean():.2f}% at n = 20 and {100 * cover['wilson', 200].mean():.2f}% at "
            f"n = 200, dipping to {100 * cover['wilson', 20].min():.2f}% and {100 * cover['wilson', 200].min():.2f}%",
            f"{100 * cover['clopper-pearson', 20].mean():.2f}% on average at n = 20 "
            f"({100 * cover['clopper-pearson', 20].min():.2f}% at the worst share) and "
            f"{100 * cover['clopper-pearson', 200].mean():.2f}% at n = 200")
    doc = re.sub(r"\s+", " ", (root / "docs" / "answers.md").read_text(encoding="utf-8"))
    for text in want:
        assert text in doc, text
