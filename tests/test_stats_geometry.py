"""Intra-class variation, inter-class distance, class comparisons and Spearman grids (seed 004)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps
from scipy.spatial.distance import cdist

import eatkit
from eatkit.errors import EatkitError
from eatkit.stats import geometry
from eatkit.stats.geometry import (
    _draw_folds,
    compare_classes,
    geometry_scores,
    inter_class_distance,
    intra_class_variation,
    spearman_by_group,
)


def _gaussian(rng, mu, sigma, n):
    return mu + sigma * rng.standard_normal((n, mu.size))


def test_exported_at_top_level():
    assert eatkit.intra_class_variation is intra_class_variation
    assert eatkit.inter_class_distance is inter_class_distance


@pytest.mark.parametrize("fold", ["half", "pair"])
def test_gaussian_closed_forms(fold):
    # x = mu + sigma z in d dimensions: cos(x, y) -> mu_i.mu_j / sqrt((|mu_i|^2 + s_i^2 d)(|mu_j|^2 + s_j^2 d))
    rng = np.random.default_rng(3)
    d = 800
    mu_i = np.ones(d)
    mu_j = np.concatenate([np.ones(d // 2), np.zeros(d // 2)]) * 1.5
    s_i, s_j = 1.0, 0.8
    F_i, F_j = _gaussian(rng, mu_i, s_i, 80), _gaussian(rng, mu_j, s_j, 60)
    intra = intra_class_variation(F_i, iterations=300, fold=fold, rng=1)
    expected_intra = mu_i @ mu_i / (mu_i @ mu_i + s_i**2 * d)
    assert expected_intra == pytest.approx(0.5)
    assert intra.mean == pytest.approx(expected_intra, abs=0.01)
    inter = inter_class_distance(F_i, F_j, iterations=300, fold=fold, rng=1)
    expected_inter = mu_i @ mu_j / np.sqrt((mu_i @ mu_i + s_i**2 * d) * (mu_j @ mu_j + s_j**2 * d))
    assert inter.mean == pytest.approx(expected_inter, abs=0.01)
    # the fold means of "half" average hundreds of pairs: far less spread than single pairs
    assert intra.min <= intra.mean <= intra.max and intra.sd > 0


def test_centroid_closed_form():
    # the mean of m vectors has noise variance sigma^2 / m per coordinate
    rng = np.random.default_rng(4)
    d, n = 400, 40
    mu = np.ones(d) * 0.5
    F = _gaussian(rng, mu, 1.0, n)
    out = intra_class_variation(F, iterations=300, fold="centroid", rng=0)
    m = n // 2
    assert out.mean == pytest.approx(mu @ mu / (mu @ mu + d / m), abs=0.02)
    assert out.exact_mean is None


@pytest.mark.parametrize("fold", ["half", "pair", "centroid"])
@pytest.mark.parametrize("similarity", ["cosine", "euclidean"])
def test_rotation_and_scale(fold, similarity):
    rng = np.random.default_rng(5)
    A, B = rng.normal(size=(9, 6)) + 1, rng.normal(size=(8, 6))
    Q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    base = geometry_scores({"a": A, "b": B}, iterations=50, fold=fold, similarity=similarity, rng=7)
    scale = 3.5
    moved = geometry_scores({"a": scale * A @ Q, "b": scale * B @ Q}, iterations=50, fold=fold,
                            similarity=similarity, rng=7)
    factor = scale if similarity == "euclidean" else 1.0   # a distance scales with the features
    for key in [("a",), ("b",), ("a", "b")]:
        old = base.intra[key[0]] if len(key) == 1 else base.inter[key]
        new = moved.intra[key[0]] if len(key) == 1 else moved.inter[key]
        np.testing.assert_allclose(new.values, factor * old.values, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fold", ["half", "pair", "centroid"])
def test_identical_vectors(fold):
    F = np.tile([0.3, -1.2, 2.0], (7, 1))
    out = intra_class_variation(F, iterations=40, fold=fold, rng=0)
    assert out.min == out.max
    assert out.mean == pytest.approx(1.0, abs=2e-16) and out.sd == 0.0
    dist = intra_class_variation(F, iterations=40, fold=fold, similarity="euclidean", rng=0)
    assert dist.min == dist.max == pytest.approx(0.0, abs=1e-12)


def test_seeded_runs_identical_and_recorded():
    rng = np.random.default_rng(0)
    classes = {"a": rng.normal(size=(11, 5)), "b": rng.normal(size=(6, 5)), "c": rng.normal(size=(9, 5))}
    one = geometry_scores(classes, iterations=64, rng=42)
    two = geometry_scores(classes, iterations=64, rng=42)
    assert one.seed == 42
    for k in one.intra:
        np.testing.assert_array_equal(one.intra[k].values, two.intra[k].values)
    for k in one.inter:
        np.testing.assert_array_equal(one.inter[k].values, two.inter[k].values)
    other = geometry_scores(classes, iterations=64, rng=43)
    assert not np.array_equal(one.intra["a"].values, other.intra["a"].values)
    fresh = geometry_scores(classes, iterations=8)
    assert isinstance(fresh.seed, int)
    again = geometry_scores(classes, iterations=8, rng=fresh.seed)
    np.testing.assert_array_equal(fresh.intra["a"].values, again.intra["a"].values)


def _naive(P, Q, similarity):
    """The mean over all pairs (p in P, q in Q) of the similarity, from the full pairwise matrix."""
    if similarity == "euclidean":
        return cdist(P, Q).mean()
    Pu = P / np.linalg.norm(P, axis=1, keepdims=True)
    Qu = Q / np.linalg.norm(Q, axis=1, keepdims=True)
    return (Pu @ Qu.T).mean()


@pytest.mark.parametrize("fold", ["half", "pair", "centroid"])
@pytest.mark.parametrize("similarity", ["cosine", "euclidean"])
@pytest.mark.parametrize("sizes", [(10, 7), (9, 2)])
def test_fast_path_equals_naive_pairwise(fold, similarity, sizes, monkeypatch):
    rng = np.random.default_rng(sum(sizes))
    A, B = rng.normal(size=(sizes[0], 4)) + 0.5, rng.normal(size=(sizes[1], 4))
    T = 600
    monkeypatch.setattr(geometry, "_BLOCK_BYTES", 8 * 2 * 4 * 256)   # blocks of 256 iterations: three blocks
    out = geometry_scores({"a": A, "b": B}, iterations=T, fold=fold, similarity=similarity, rng=11)
    draw = np.random.default_rng(11)
    folds = dict(zip("ab", _draw_folds([len(A), len(B)], T, fold, draw)))

    def score(P, Q):
        if fold != "centroid":
            return _naive(P, Q, similarity)
        p, q = P.mean(axis=0), Q.mean(axis=0)
        if similarity == "euclidean":
            return np.linalg.norm(p - q)
        return p @ q / (np.linalg.norm(p) * np.linalg.norm(q))

    for name, X in (("a", A), ("b", B)):
        f1, f2 = folds[name]
        naive = [score(X[f1[t]], X[f2[t]]) for t in range(T)]
        np.testing.assert_allclose(out.intra[name].values, naive, rtol=1e-11, atol=1e-12)
        assert not set(f1[0]) & set(f2[0])
    naive = [score(A[folds["a"][0][t]], B[folds["b"][0][t]]) for t in range(T)]
    np.testing.assert_allclose(out.inter[("a", "b")].values, naive, rtol=1e-11, atol=1e-12)
    assert out.intra["a"].fold_sizes == ((1, 1) if fold == "pair" else (sizes[0] // 2,) * 2)


@pytest.mark.parametrize("similarity", ["cosine", "euclidean"])
def test_exact_mean_is_the_all_pairs_mean(similarity):
    rng = np.random.default_rng(8)
    A, B = rng.normal(size=(7, 3)) + 1, rng.normal(size=(5, 3))
    out = geometry_scores({"a": A, "b": B}, iterations=4000, fold="pair", similarity=similarity, rng=0)
    pairs = [_naive(A[[i]], A[[j]], similarity) for i, j in itertools.permutations(range(7), 2)]
    assert out.intra["a"].exact_mean == pytest.approx(np.mean(pairs), abs=1e-12)
    assert out.inter[("a", "b")].exact_mean == pytest.approx(_naive(A, B, similarity), abs=1e-12)
    # the iteration mean converges to it (Monte Carlo error sd / sqrt(T))
    s = out.intra["a"]
    assert abs(s.mean - s.exact_mean) < 4 * s.sd / np.sqrt(s.iterations)


def test_bad_input_is_one_line():
    good = np.ones((3, 2))
    with pytest.raises(EatkitError, match="set 'class' has 1 stimuli"):
        intra_class_variation(np.ones((1, 2)))
    with pytest.raises(EatkitError, match="fold must be one of"):
        intra_class_variation(good, fold="thirds")
    with pytest.raises(EatkitError, match="similarity must be one of"):
        intra_class_variation(good, similarity="dot")
    with pytest.raises(EatkitError, match="iterations must be a positive integer"):
        intra_class_variation(good, iterations=0)
    with pytest.raises(EatkitError, match="unknown class 'c'"):
        geometry_scores({"a": good, "b": good}, pairs=[("a", "c")])
    with pytest.raises(EatkitError, match="dimension 3"):
        inter_class_distance(good, np.ones((3, 3)))
    with pytest.raises(EatkitError, match="non-finite"):
        intra_class_variation(np.array([[1.0, np.nan], [1.0, 2.0]]))


def _brute_comparison(X, R, alternative):
    pooled = np.concatenate([X, R])
    U = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    k, n = len(X), len(pooled)

    def w(idx):
        idx = list(idx)
        return np.mean([U[i] @ U[j] for i, j in itertools.permutations(idx, 2)])

    observed = w(range(k)) - w(range(k, n))
    diffs = []
    for S in itertools.combinations(range(n), k):
        rest = [i for i in range(n) if i not in S]
        diffs.append(w(S) - w(rest))
    diffs = np.array(diffs)
    if alternative == "greater":
        return observed, np.mean(diffs >= observed - 1e-12)
    return observed, np.mean(np.abs(diffs) >= abs(observed) - 1e-12)


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_compare_classes_exact_against_brute_force(alternative):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(5, 3)) + [2.0, 0, 0]
    R = rng.normal(size=(4, 3))
    out = compare_classes(X, R, alternative=alternative, permutations=1000, names=("car", "random"))
    observed, p = _brute_comparison(X, R, alternative)
    assert out.p_value_exact and out.n_permutations == 126
    assert out.difference == pytest.approx(observed, abs=1e-12)
    assert out.p_permutation == pytest.approx(p, abs=1e-12)
    # the difference of intra-class means is the difference of the per-image scores' means
    assert out.scores.mean() - out.reference_scores.mean() == pytest.approx(observed, abs=1e-12)
    assert out.difference == pytest.approx(
        intra_class_variation(X, rng=0).exact_mean - intra_class_variation(R, rng=0).exact_mean, abs=1e-12)
    welch = sps.ttest_ind(out.scores, out.reference_scores, equal_var=False, alternative=alternative)
    assert (out.t, out.p_welch, out.df) == pytest.approx((welch.statistic, welch.pvalue, welch.df))
    sp = np.sqrt(((5 - 1) * out.scores.var(ddof=1) + 3 * out.reference_scores.var(ddof=1)) / 7)
    assert out.effect_size == pytest.approx((out.scores.mean() - out.reference_scores.mean()) / sp)
    assert out.to_dict()["classes"] == ["car", "random"]


def test_compare_classes_monte_carlo_seeded():
    rng = np.random.default_rng(10)
    X, R = 0.5 * rng.normal(size=(30, 8)) + 1.0, rng.normal(size=(30, 8))
    one = compare_classes(X, R, permutations=500, rng=3)
    two = compare_classes(X, R, permutations=500, rng=3)
    assert not one.p_value_exact and one.seed == 3 and one.n_permutations == 500
    assert one.p_permutation == two.p_permutation == pytest.approx(1 / 501)
    far = compare_classes(X, R, permutations=500, rng=3, similarity="euclidean", alternative="less")
    assert far.difference < 0 and far.p_permutation == pytest.approx(1 / 501)


def test_spearman_matches_scipy_and_exact_enumeration():
    rng = np.random.default_rng(12)
    keys = [f"c{i}" for i in range(6)]
    a = dict(zip(keys, rng.normal(size=6)))
    b = dict(zip(keys, np.array(list(a.values())) + rng.normal(scale=0.7, size=6)))
    r = spearman_by_group(a, b)[0]
    ref = sps.spearmanr(list(a.values()), list(b.values()))
    assert r.rho == pytest.approx(ref.statistic) and r.method == "exact" and r.n == 6
    x, y = sps.rankdata(list(a.values())), sps.rankdata(list(b.values()))
    null = [sps.spearmanr(x, p).statistic for p in itertools.permutations(y)]
    assert r.p_value == pytest.approx(np.mean(np.abs(null) >= abs(r.rho) - 1e-12))
    keys = [f"c{i}" for i in range(12)]
    a = dict(zip(keys, rng.normal(size=12)))
    b = dict(zip(keys, rng.normal(size=12)))
    big = spearman_by_group(a, b, {"all": keys, "half": keys[:6]})
    ref = sps.spearmanr(list(a.values()), list(b.values()))
    assert big[0].method == "t-approximation"
    assert (big[0].rho, big[0].p_value) == pytest.approx((ref.statistic, ref.pvalue))
    assert big[1].group == "half" and big[1].n == 6


@pytest.mark.parametrize("sign, alternative", [(1, "two-sided"), (-1, "two-sided"), (1, "greater"), (-1, "greater"),
                                               (1, "less"), (-1, "less")])
def test_a_perfect_rank_agreement_beyond_the_exact_limit_has_its_exact_p(sign, alternative):
    """|rho| = 1 over 9 untied classes (above SPEARMAN_EXACT_MAX): the p of enumerating all 9! = 362,880
    orderings, not the t-approximation's 0."""
    keys = [f"c{i}" for i in range(9)]
    a = {k: float(i) for i, k in enumerate(keys)}
    b = {k: sign * float(i) ** 2 for i, k in enumerate(keys)}
    r = spearman_by_group(a, b, alternative=alternative)[0]
    ranks = np.arange(9.0) - 4
    null = np.array(list(itertools.permutations(ranks))) @ ranks / (ranks @ ranks)
    rho = float(sign)
    expected = {"two-sided": np.mean(np.abs(null) >= 1 - 1e-12), "greater": np.mean(null >= rho - 1e-12),
                "less": np.mean(null <= rho + 1e-12)}[alternative]
    assert r.rho == pytest.approx(rho) and r.method == "exact" and r.p_value == pytest.approx(expected, rel=1e-12)
    if expected < 0.5:  # (on the observed side, the t-approximation says 0)
        assert sps.spearmanr(list(a.values()), list(b.values()), alternative=alternative).pvalue == 0


def test_spearman_bad_groups_and_constant_scores():
    a, b = {"x": 1.0, "y": 2.0, "z": 3.0}, {"x": 1.0, "y": 1.0, "z": 1.0}
    r = spearman_by_group(a, b)[0]
    assert np.isnan(r.rho) and np.isnan(r.p_value)
    with pytest.raises(EatkitError, match="without a score in both models: w"):
        spearman_by_group(a, b, {"g": ["x", "w"]})
    with pytest.raises(EatkitError, match="needs at least 2"):
        spearman_by_group(a, b, {"g": ["x"]})
