"""Stimulus influence, stability over the sets, power and vector-set diagnostics (issue 28)."""

from __future__ import annotations

import numpy as np
import pytest

from eatkit.errors import EatkitError
from eatkit.stats import eat
from eatkit.stats.influence import stimulus_influence

ROLES = ("X", "Y", "A", "B")


def _sets(seed: int, sizes=(6, 5, 4, 5), dim: int = 12, shift: float = 0.4):
    rng = np.random.default_rng(seed)
    axis = rng.normal(size=dim)
    X = rng.normal(size=(sizes[0], dim)) + shift * axis
    Y = rng.normal(size=(sizes[1], dim)) - shift * axis
    A = rng.normal(size=(sizes[2], dim)) + shift * axis
    B = rng.normal(size=(sizes[3], dim)) - shift * axis
    return {"X": X, "Y": Y, "A": A, "B": B}


@pytest.mark.parametrize("sd", ["caliskan", "pooled"])
@pytest.mark.parametrize("seed", [0, 1])
def test_leave_one_out_equals_recomputation(seed, sd):
    sets = _sets(seed)
    r = stimulus_influence(*(sets[k] for k in ROLES), sd=sd, rng=3, loo_permutations=500)
    assert r.effect_size == eat(*(sets[k] for k in ROLES), sd=sd).effect_size
    for role in ROLES:
        assert r.leave_one_out[role].shape == (len(sets[role]),)
        for i in range(len(sets[role])):
            reduced = dict(sets, **{role: np.delete(sets[role], i, axis=0)})
            expected = eat(*(reduced[k] for k in ROLES), sd=sd, permutations="exact")
            assert abs(r.leave_one_out[role][i] - expected.effect_size) <= 1e-12
            # the partitions are few enough to be counted exactly: the same p as eat's
            assert r.loo_exact
            assert r.leave_one_out_p[role][i] == pytest.approx(expected.p_value, rel=1e-12)


def test_ranked_and_flips():
    sets = _sets(2, sizes=(8, 8, 6, 6), shift=0.3)
    r = stimulus_influence(*(sets[k] for k in ROLES), rng=0)
    ranked = r.ranked()
    assert len(ranked) == sum(len(sets[k]) for k in ROLES)
    changes = [abs(x.change) for x in ranked]
    assert changes == sorted(changes, reverse=True)
    top = ranked[0]
    assert top.effect_size == r.leave_one_out[top.role][top.index]
    significant = r.p_value < r.alpha
    assert all((f.p_value < r.alpha) != significant for f in r.flips())
    assert {(f.role, f.index) for f in r.flips()} == {
        (role, i) for role in ROLES for i, p in enumerate(r.leave_one_out_p[role]) if (p < 0.05) != significant}


def test_leave_one_out_monte_carlo_is_seeded():
    sets = _sets(4, sizes=(10, 10, 4, 4))
    a = stimulus_influence(*(sets[k] for k in ROLES), rng=5, loo_permutations=999)
    b = stimulus_influence(*(sets[k] for k in ROLES), rng=5, loo_permutations=999)
    assert not a.loo_exact and a.seed == 5
    for role in ROLES:
        np.testing.assert_array_equal(a.leave_one_out_p[role], b.leave_one_out_p[role])
        exact = [eat(*(dict(sets, **{role: np.delete(sets[role], i, axis=0)})[k] for k in ROLES)).p_value
                 for i in range(len(sets[role]))]
        # Monte Carlo p within 5 standard errors of the exact one
        se = np.sqrt(np.maximum(np.array(exact) * (1 - np.array(exact)), 1e-3) / 999)
        assert np.all(np.abs(a.leave_one_out_p[role] - exact) <= 5 * se + 2 / 1000)


def test_influence_rejects_too_small_sets():
    sets = _sets(0, sizes=(2, 5, 4, 5))
    with pytest.raises(EatkitError, match="set 'X' has 2 stimuli; this test needs at least 3"):
        stimulus_influence(*(sets[k] for k in ROLES))
