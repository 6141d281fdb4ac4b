"""ML-EAT: the nine EAT patterns on constructed embeddings, level 2 and level 3 numbers, thresholds."""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pytest
from stats_reference import cosine

from eatkit.errors import EatkitError
from eatkit.stats import ml_eat

N_ATTRIBUTES = 5  # per attribute set: the most extreme split has p = 1 / C(10, 5) = 1 / 252
P_MIN = 1 / math.comb(2 * N_ATTRIBUTES, N_ATTRIBUTES)

KINDS = ("A", "B", None)  # a target is associated with A, with B, or with neither


def expected_pattern(x: str | None, y: str | None) -> str:
    """The naming rule of the ML-EAT seed ("EAT Patterns"), written out independently of eatkit."""
    if x and y:
        return f"{x}{y}-Divergent" if x != y else f"{x}-Uniform"
    if x or y:
        return f"{x}X-Singular" if x else f"{y}Y-Singular"
    return "Non-Directional"


def _attributes(g: np.random.Generator, n: int = N_ATTRIBUTES) -> tuple[np.ndarray, np.ndarray]:
    """A near e1, B its mirror image near e2 (coordinates 0 and 1 swapped).

    Any target with equal coordinates 0 and 1 then has exactly the same cosines with B as with A.
    """
    A = np.column_stack([np.ones(n), 0.1 * g.random(n), 0.2 * g.normal(size=(n, 2))])
    return A, A[:, [1, 0, 2, 3]]


def _targets(kind: str | None, g: np.random.Generator, n: int = 6) -> np.ndarray:
    """Targets near e1 (associated with A), near e2 (with B), or symmetric in e1/e2 (with neither)."""
    jitter = 0.1 * g.normal(size=(n, 4))
    if kind == "A":
        return np.array([1.0, 0.0, 0.0, 0.0]) + jitter
    if kind == "B":
        return np.array([0.0, 1.0, 0.0, 0.0]) + jitter
    jitter[:, 1] = jitter[:, 0]  # neither: coordinates 0 and 1 equal
    return np.array([0.5, 0.5, 1.0, 0.0]) + jitter


def test_the_naming_rule_gives_nine_distinct_names() -> None:
    names = {expected_pattern(x, y) for x in KINDS for y in KINDS}
    assert names == {
        "AB-Divergent",
        "BA-Divergent",
        "A-Uniform",
        "B-Uniform",
        "AX-Singular",
        "BX-Singular",
        "AY-Singular",
        "BY-Singular",
        "Non-Directional",
    }


def _check_level2(result, kind: str | None) -> None:
    if kind == "A":
        assert result.effect_size >= 0.2
        assert (result.alternative, result.p_value) == ("greater", P_MIN)
    elif kind == "B":
        assert result.effect_size <= -0.2
        assert (result.alternative, result.p_value) == ("less", P_MIN)
    else:
        assert abs(result.effect_size) < 1e-9
        assert min(result.p_values["greater"], result.p_values["less"]) > 0.05


@pytest.mark.parametrize("kind_x", KINDS)
@pytest.mark.parametrize("kind_y", KINDS)
def test_each_of_the_nine_patterns(kind_x: str | None, kind_y: str | None) -> None:
    g = np.random.default_rng(KINDS.index(kind_x) * 3 + KINDS.index(kind_y))
    A, B = _attributes(g)
    X, Y = _targets(kind_x, g), _targets(kind_y, g)
    r = ml_eat(X, Y, A, B, permutations="exact")
    assert (r.association_x, r.association_y) == (kind_x, kind_y)
    assert r.pattern == expected_pattern(kind_x, kind_y)
    _check_level2(r.level2_x, kind_x)
    _check_level2(r.level2_y, kind_y)
    assert r.level2_x.groups == r.level2_y.groups == ("A", "B")
    if (kind_x, kind_y) == ("A", "B"):
        assert r.level1.effect_size > 1 and r.level1.p_value == 1 / math.comb(12, 6)
    if (kind_x, kind_y) == ("B", "A"):
        assert r.level1.effect_size < -1 and r.level1.p_values["less"] == 1 / math.comb(12, 6)


def test_level2_matches_sc_eat_by_hand() -> None:
    g = np.random.default_rng(5)
    A, B = _attributes(g)
    X, Y = _targets("A", g), _targets(None, g)
    r = ml_eat(X, Y, A, B, permutations="exact")
    ua = [statistics.fmean(cosine(x, a) for x in X) for a in A]
    ub = [statistics.fmean(cosine(x, b) for x in X) for b in B]
    d = (statistics.fmean(ua) - statistics.fmean(ub)) / statistics.stdev(ua + ub)
    assert r.level2_x.effect_size == pytest.approx(d, rel=1e-10)
    np.testing.assert_allclose(r.level2_x.associations[0], ua, atol=1e-14)


def test_level3_mean_and_sd_with_ddof_1() -> None:
    g = np.random.default_rng(6)
    X, Y, A, B = g.normal(size=(4, 5)), g.normal(size=(3, 5)), g.normal(size=(2, 5)), g.normal(size=(6, 5))
    r = ml_eat(X, Y, A, B, permutations="exact")
    for key, (T, S) in {"xa": (X, A), "xb": (X, B), "ya": (Y, A), "yb": (Y, B)}.items():
        cos = [cosine(t, s) for t in T for s in S]  # target-major
        level = r.level3[key]
        assert level.mean == pytest.approx(statistics.fmean(cos), rel=1e-12, abs=1e-14)
        assert level.sd == pytest.approx(statistics.stdev(cos), rel=1e-12)  # ML-EAT eq. 11: n m - 1
        np.testing.assert_allclose(level.similarities, cos, atol=1e-14)
    assert set(r.level3) == {"xa", "xb", "ya", "yb"}


def _divergent() -> tuple[np.ndarray, ...]:
    g = np.random.default_rng(7)
    A, B = _attributes(g)
    return _targets("A", g), _targets("B", g), A, B


def test_effect_threshold_is_inclusive_and_changes_the_pattern() -> None:
    X, Y, A, B = _divergent()
    base = ml_eat(X, Y, A, B, permutations="exact")
    assert (base.pattern, base.effect_threshold, base.alpha) == ("AB-Divergent", 0.2, 0.05)
    d_x, d_y = base.level2_x.effect_size, base.level2_y.effect_size
    assert d_x > 0.2 and d_y < -0.2 and d_x != -d_y
    # at the smaller |d| both targets are still associated (d >= threshold); just above it, one drops
    smaller = min(d_x, -d_y)
    assert ml_eat(X, Y, A, B, permutations="exact", effect_threshold=smaller).pattern == "AB-Divergent"
    above = ml_eat(X, Y, A, B, permutations="exact", effect_threshold=smaller * (1 + 1e-9))
    assert above.effect_threshold == smaller * (1 + 1e-9)
    assert above.pattern == ("BY-Singular" if d_x < -d_y else "AX-Singular")
    high = ml_eat(X, Y, A, B, permutations="exact", effect_threshold=max(d_x, -d_y) * 1.01)
    assert high.pattern == "Non-Directional"


def test_alpha_is_strict_and_changes_the_pattern() -> None:
    X, Y, A, B = _divergent()
    assert (
        ml_eat(X, Y, A, B, permutations="exact", alpha=P_MIN).pattern == "Non-Directional"
    )  # p < alpha fails
    assert ml_eat(X, Y, A, B, permutations="exact", alpha=P_MIN * 1.001).pattern == "AB-Divergent"


def test_a_large_effect_without_significance_is_not_an_association() -> None:
    # with 2 + 2 attributes the smallest possible p is 1 / C(4, 2) = 1/6 > 0.05: "p < 0.05" (not the seed's
    # typo "p > 0.05") means no association, whatever the effect size
    g = np.random.default_rng(8)
    A, B = _attributes(g, n=2)
    r = ml_eat(_targets("A", g), _targets("B", g), A, B, permutations="exact")
    assert r.level2_x.effect_size > 1 and r.level2_x.p_value == 1 / 6
    assert (r.association_x, r.association_y, r.pattern) == (None, None, "Non-Directional")


def test_alternative_applies_to_level_1_only() -> None:
    X, Y, A, B = _divergent()
    r = ml_eat(X, Y, A, B, permutations="exact", alternative="two-sided")
    assert r.level1.alternative == "two-sided" and r.level1.p_value == 2 / math.comb(12, 6)
    assert (r.level2_x.alternative, r.level2_y.alternative) == ("greater", "less")


def test_same_seed_repeats_every_level() -> None:
    g = np.random.default_rng(9)
    X, Y, A, B = (g.normal(size=(15, 6)) for _ in range(4))
    first = ml_eat(X, Y, A, B, permutations=2000)
    assert isinstance(first.seed, int)
    again = ml_eat(X, Y, A, B, permutations=2000, rng=first.seed)
    for level in ("level1", "level2_x", "level2_y"):
        assert getattr(again, level).p_values == getattr(first, level).p_values
    other = ml_eat(X, Y, A, B, permutations=2000, rng=first.seed + 1)
    assert other.level1.p_values != first.level1.p_values


def test_levels_record_the_seed_as_documented() -> None:
    # ml_eat's docstring: the seed is recorded in ``seed``; the levels draw from spawned streams
    g = np.random.default_rng(10)
    X, Y, A, B = (g.normal(size=(15, 6)) for _ in range(4))
    r = ml_eat(X, Y, A, B, permutations=500, rng=123)
    assert r.seed == 123
    assert (r.level1.seed, r.level2_x.seed, r.level2_y.seed) == (None, None, None)
    again = ml_eat(X, Y, A, B, permutations=500, rng=r.seed)
    assert again.level2_y.p_values == r.level2_y.p_values


def test_level1_observed_side_and_all_three_p_values():
    """ML-EAT (issue 25): the authors star significant negative Level-1 values, i.e. their p is the tail on
    the observed side; 'observed' reports it, and level1.p_values keeps all three alternatives."""
    rng = np.random.default_rng(4)
    A, B = rng.normal(size=(6, 5)) + [2, 0, 0, 0, 0], rng.normal(size=(6, 5)) + [0, 2, 0, 0, 0]
    X, Y = rng.normal(size=(5, 5)) + [0, 2, 0, 0, 0], rng.normal(size=(5, 5)) + [2, 0, 0, 0, 0]
    plain = ml_eat(X, Y, A, B, permutations="exact")
    observed = ml_eat(X, Y, A, B, permutations="exact", alternative="observed")
    assert plain.level1.effect_size < 0 and plain.level1.alternative == "greater" and plain.level1.p_value > 0.9
    assert observed.level1.alternative == "less"
    assert observed.level1.p_value == plain.level1.p_values["less"] < 0.05
    assert observed.level1.p_values == plain.level1.p_values
    # brute force: the share of the 252 partitions of X ∪ Y whose statistic is <= the observed one
    s = observed.level1.associations
    values = np.concatenate(s)
    totals = [values[list(c)].sum() - values[[i for i in range(10) if i not in c]].sum()
              for c in itertools.combinations(range(10), 5)]
    stat = s[0].sum() - s[1].sum()
    assert observed.level1.p_value == pytest.approx(np.mean(np.array(totals) <= stat + 1e-12), abs=1e-12)
    with pytest.raises(EatkitError, match="alternative must be one of"):
        ml_eat(X, Y, A, B, alternative="sideways")
