"""grounded_eat(): seed 001's three experiments against loops, enumeration and known answers."""

from __future__ import annotations

import itertools
import math
import statistics
import sys

import numpy as np
import pytest
from stats_reference import association_atol, brute_force_p_values, loop_associations

import eatkit
from eatkit.errors import EatkitError
from eatkit.stats import eat, grounded_eat


def _sets(sizes, dim, seed):
    g = np.random.default_rng(seed)
    return [g.normal(size=(n, dim)) for n in sizes]


def _S(w, A, B) -> float:
    """S(w, A, B) of seed 001 §4 for one embedding, with loops."""
    return loop_associations([w], A, B)[0]


# --- the toy dataset of seed Table 2(b) ---------------------------------------------------------------


@pytest.fixture(scope="module")
def toy() -> dict[int, np.ndarray]:
    """The 12 grounded embeddings of Table 2(b), indexed 1..12 as in the seed (random vectors)."""
    vectors = np.random.default_rng(2021).normal(size=(12, 6))
    return {i + 1: vectors[i] for i in range(12)}


def _toy_args(e):
    # X = "man" with a man (1), Y = "woman" with a woman (4); A = lawyer, B = teacher, with images of a
    # man (A_x = 5, B_x = 10) or a woman (A_y = 7, B_y = 12). Each target row twice (a test needs 2), the
    # copy scaled by 2: the same cosines, and no set of one repeated vector (a degenerate set is refused).
    return dict(X=np.stack([e[1], 2 * e[1]]), Y=np.stack([e[4], 2 * e[4]]), A_x=e[5][None], A_y=e[7][None],
                B_x=e[10][None], B_y=e[12][None])


def test_toy_dataset_experiment_1(toy) -> None:
    e = toy
    r = grounded_eat(**_toy_args(e), experiment=1)
    # §4.1: S(1, {5, 7}, {10, 12}) - S(4, {5, 7}, {10, 12}), once per copy of each target
    expected = _S(e[1], [e[5], e[7]], [e[10], e[12]]) - _S(e[4], [e[5], e[7]], [e[10], e[12]])
    assert r.statistic == pytest.approx(2 * expected, abs=1e-13)
    assert r.n_partitions == 6


def test_toy_dataset_experiment_2(toy) -> None:
    e = toy
    r = grounded_eat(**_toy_args(e), experiment=2)
    # §4.2: S(1, {5}, {10}) - S(4, {7}, {12})
    expected = _S(e[1], [e[5]], [e[10]]) - _S(e[4], [e[7]], [e[12]])
    assert r.statistic == pytest.approx(2 * expected, abs=1e-13)


def test_toy_dataset_experiment_3(toy) -> None:
    e = toy
    r = grounded_eat(**_toy_args(e), experiment=3)
    # §4.3 with target 4 where the seed's text writes 2:
    # 1/2 (|S(1, {5}, {10}) - S(1, {7}, {12})| + |S(4, {7}, {12}) - S(4, {5}, {10})|)
    expected = 0.5 * (abs(_S(e[1], [e[5]], [e[10]]) - _S(e[1], [e[7]], [e[12]]))
                      + abs(_S(e[4], [e[7]], [e[12]]) - _S(e[4], [e[5]], [e[10]])))
    assert r.statistic == pytest.approx(2 * expected, abs=1e-13)
    # 1 x 1 attribute partitions: the identity and the swap of A_x/A_y with B_x/B_y, 4 in all
    assert r.n_partitions == 4 and r.p_value_exact


# --- known answers -------------------------------------------------------------------------------------


def test_same_images_for_both_targets() -> None:
    """A_x = A_y and B_x = B_y (every weat8 file of the source): experiment 1's d equals experiment 2's
    and experiment 3 is 0 (why the seed's C8 rows are identical)."""
    X, Y, A, B = _sets((6, 5, 4, 3), 8, seed=1)
    args = dict(X=X, Y=Y, A_x=A, A_y=A, B_x=B, B_y=B)
    r1, r2, r3 = (grounded_eat(**args, experiment=k, permutations="exact") for k in (1, 2, 3))
    assert r1.effect_size == pytest.approx(r2.effect_size, abs=1e-12)
    assert r1.statistic == pytest.approx(r2.statistic, abs=1e-12)
    assert r1.p_values == r2.p_values and r1.n_partitions == r2.n_partitions == math.comb(11, 6)
    assert (r3.statistic, r3.effect_size, r3.d_X, r3.d_Y, r3.p_value) == (0.0, 0.0, 0.0, 0.0, 1.0)


def test_image_blind_encoder_gives_experiment_3_zero() -> None:
    """An encoder that ignores the image embeds (caption, image_x) and (caption, image_y) alike: A_x and
    A_y hold the same captions (in another order), so congruent and incongruent images agree."""
    captions = np.random.default_rng(5).normal(size=(7, 10))

    def blind_encoder(pairs):  # (caption index, image name) -> the caption's vector
        return np.stack([captions[c] for c, _image in pairs])

    X = blind_encoder([(0, "m1.jpg"), (1, "m2.jpg"), (0, "m3.jpg")])
    Y = blind_encoder([(2, "w1.jpg"), (3, "w2.jpg")])
    A_x = blind_encoder([(4, "m-lawyer1.jpg"), (5, "m-lawyer2.jpg"), (4, "m-lawyer3.jpg")])
    A_y = blind_encoder([(5, "w-lawyer1.jpg"), (4, "w-lawyer2.jpg"), (4, "w-lawyer3.jpg")])
    B_x = blind_encoder([(6, "m-teacher1.jpg"), (6, "m-teacher2.jpg")])
    B_y = blind_encoder([(6, "w-teacher2.jpg"), (6, "w-teacher1.jpg")])
    r = grounded_eat(X, Y, A_x=A_x, A_y=A_y, B_x=B_x, B_y=B_y, experiment=3)
    assert (r.statistic, r.effect_size, r.p_value) == (0.0, 0.0, 1.0)
    # a non-blind encoder (images shift the vectors) does see a difference
    shifted = grounded_eat(X, Y, A_x=A_x + 0.5, A_y=A_y, B_x=B_x, B_y=B_y, experiment=3)
    assert shifted.statistic > 0.1 and shifted.effect_size > 0


@pytest.mark.parametrize("experiment", [1, 2])
def test_swapping_targets_flips_sign(experiment: int) -> None:
    X, Y, A_x, A_y, B_x, B_y = _sets((5, 4, 3, 4, 3, 2), 6, seed=7)
    X[0] += A_x.mean(axis=0)
    r = grounded_eat(X, Y, A_x=A_x, A_y=A_y, B_x=B_x, B_y=B_y, experiment=experiment)
    # the images follow their target: Y's are now the first target's
    s = grounded_eat(Y, X, A_x=A_y, A_y=A_x, B_x=B_y, B_y=B_x, experiment=experiment)
    assert s.statistic == pytest.approx(-r.statistic, abs=1e-12)
    assert s.effect_size == pytest.approx(-r.effect_size, abs=1e-12)
    assert s.p_values["greater"] == r.p_values["less"] and s.p_values["two-sided"] == r.p_values["two-sided"]
    r3 = grounded_eat(X, Y, A_x=A_x, A_y=A_y, B_x=B_x, B_y=B_y, experiment=3)
    s3 = grounded_eat(Y, X, A_x=A_y, A_y=A_x, B_x=B_y, B_y=B_x, experiment=3)
    assert s3.statistic == pytest.approx(r3.statistic, abs=1e-12) and s3.p_value == r3.p_value


# --- against loops and enumeration ----------------------------------------------------------------------


def test_experiment_1_is_the_eat_on_pooled_attributes() -> None:
    X, Y, A_x, A_y, B_x, B_y = _sets((4, 5, 2, 3, 3, 2), 5, seed=11)
    r = grounded_eat(X, Y, A_x=A_x, A_y=A_y, B_x=B_x, B_y=B_y, experiment=1, alternative="two-sided")
    ref = eat(X, Y, np.vstack([A_x, A_y]), np.vstack([B_x, B_y]), alternative="two-sided")
    assert (r.effect_size, r.statistic, r.p_value, r.p_value_exact) == (ref.effect_size, ref.statistic, ref.p_value,
                                                                         True)


@pytest.mark.parametrize(("nx", "ny", "seed"), [(3, 4, 0), (5, 5, 1), (6, 2, 2)])
def test_experiment_2_against_loops_and_brute_force(nx: int, ny: int, seed: int) -> None:
    dim = 7
    X, Y, A_x, A_y, B_x, B_y = _sets((nx, ny, 3, 2, 2, 4), dim, seed=seed)
    X[0] += A_x.mean(axis=0)
    vx, vy = loop_associations(X, A_x, B_x), loop_associations(Y, A_y, B_y)
    p_ref, _, partitions = brute_force_p_values(vx, vy, association_atol(dim))
    for alternative in ("greater", "less", "two-sided"):
        r = grounded_eat(X, Y, A_x=A_x, A_y=A_y, B_x=B_x, B_y=B_y, experiment=2, alternative=alternative,
                         permutations="exact")
        assert r.p_value == p_ref[alternative] and r.n_partitions == partitions
    assert r.statistic == pytest.approx(math.fsum(vx) - math.fsum(vy), abs=1e-13)
    d = (statistics.fmean(vx) - statistics.fmean(vy)) / statistics.stdev(vx + vy)
    assert r.effect_size == pytest.approx(d, rel=1e-12)


def _brute_force_3(X, Y, A_x, A_y, B_x, B_y, tol):
    """Experiment 3 by loops over every re-partition of A_x ∪ A_y and B_x ∪ B_y."""
    def stat(ax, ay, bx, by):
        tx = math.fsum(loop_associations(X, ax, bx)) - math.fsum(loop_associations(X, ay, by))
        ty = math.fsum(loop_associations(Y, ay, by)) - math.fsum(loop_associations(Y, ax, bx))
        return 0.5 * (abs(tx) + abs(ty))

    observed = stat(A_x, A_y, B_x, B_y)
    A, B = list(A_x) + list(A_y), list(B_x) + list(B_y)
    count = total = 0
    for ia in itertools.combinations(range(len(A)), len(A_x)):
        for ib in itertools.combinations(range(len(B)), len(B_x)):
            new_ax = [A[i] for i in ia]
            new_ay = [A[i] for i in range(len(A)) if i not in ia]
            new_bx = [B[i] for i in ib]
            new_by = [B[i] for i in range(len(B)) if i not in ib]
            count += stat(new_ax, new_ay, new_bx, new_by) >= observed - tol
            total += 1
    return observed, count / total, total


@pytest.mark.parametrize(("sizes", "seed"), [((3, 3, 2, 2, 2, 2), 0), ((4, 2, 3, 2, 2, 3), 1),
                                             ((2, 3, 3, 3, 1, 2), 2)])
def test_experiment_3_against_loops_and_brute_force(sizes, seed: int) -> None:
    dim = 5
    X, Y, A_x, A_y, B_x, B_y = _sets(sizes, dim, seed=seed)
    A_x += 0.7 * X.mean(axis=0)  # congruent images closer to their targets: a visual effect
    r = grounded_eat(X, Y, A_x=A_x, A_y=A_y, B_x=B_x, B_y=B_y, experiment=3, permutations="exact")
    tol = 4 * (len(X) + len(Y)) * (association_atol(dim) + (len(A_x) + len(A_y) + len(B_x) + len(B_y))
                                   * sys.float_info.epsilon)
    observed, p, total = _brute_force_3(X, Y, A_x, A_y, B_x, B_y, tol)
    assert r.statistic == pytest.approx(observed, abs=1e-13)
    assert (r.p_value, r.n_partitions, r.p_value_exact) == (p, total, True)
    # d_X, d_Y: congruent vs incongruent s-values, SD of the 2|X| (2|Y|) values, ddof 1
    cx, ix = loop_associations(X, A_x, B_x), loop_associations(X, A_y, B_y)
    cy, iy = loop_associations(Y, A_y, B_y), loop_associations(Y, A_x, B_x)
    d_x = (statistics.fmean(cx) - statistics.fmean(ix)) / statistics.stdev(cx + ix)
    d_y = (statistics.fmean(cy) - statistics.fmean(iy)) / statistics.stdev(cy + iy)
    assert (r.d_X, r.d_Y) == (pytest.approx(d_x, rel=1e-12), pytest.approx(d_y, rel=1e-12))
    assert r.effect_size == pytest.approx(0.5 * (abs(d_x) + abs(d_y)), rel=1e-12)
    # "auto" counts these few partitions exactly too; sampling agrees within its standard error
    assert grounded_eat(X, Y, A_x=A_x, A_y=A_y, B_x=B_x, B_y=B_y, experiment=3).p_value == p
    mc = grounded_eat(X, Y, A_x=A_x, A_y=A_y, B_x=B_x, B_y=B_y, experiment=3, permutations=20_000, rng=3)
    assert not mc.p_value_exact and mc.seed == 3 and mc.n_permutations == 20_000
    assert abs(mc.p_value - p) <= 4 * mc.mc_standard_error + 1 / 20_001


def test_experiment_3_monte_carlo_is_seeded_and_phipson_smyth() -> None:
    X, Y, A_x, A_y, B_x, B_y = _sets((4, 4, 12, 12, 12, 12), 6, seed=9)
    kwargs = dict(A_x=A_x, A_y=A_y, B_x=B_x, B_y=B_y, experiment=3)
    r = grounded_eat(X, Y, **kwargs)  # C(24, 12)^2 partitions: sampled
    assert not r.p_value_exact and r.n_permutations == 100_000 and r.n_partitions == math.comb(24, 12) ** 2
    a, b = grounded_eat(X, Y, **kwargs, permutations=500, rng=4), grounded_eat(X, Y, **kwargs, permutations=500, rng=4)
    assert a.p_value == b.p_value and a.seed == 4
    assert a.p_value * 501 == pytest.approx(round(a.p_value * 501))  # (1 + count) / (1 + draws)


# --- bad input ---------------------------------------------------------------------------------------


def test_bad_input_one_line() -> None:
    X, Y, A, B = _sets((3, 3, 2, 2), 4, seed=0)
    kwargs = dict(A_x=A, A_y=A, B_x=B, B_y=B)
    with pytest.raises(EatkitError, match="experiment must be 1, 2 or 3, got 4"):
        grounded_eat(X, Y, **kwargs, experiment=4)
    with pytest.raises(EatkitError, match="alternative must be 'greater', got 'less'"):
        grounded_eat(X, Y, **kwargs, experiment=3, alternative="less")
    with pytest.raises(EatkitError, match="set 'B_y' has dimension 3"):
        grounded_eat(X, Y, A_x=A, A_y=A, B_x=B, B_y=B[:, :3], experiment=2)
    with pytest.raises(EatkitError, match="set 'X' has 1 stimuli"):
        grounded_eat(X[:1], Y, **kwargs, experiment=1)
    big = _sets((30, 30), 4, seed=1)
    with pytest.raises(EatkitError, match="too many to count exactly"):
        grounded_eat(X, Y, A_x=big[0], A_y=big[1], B_x=B, B_y=B, experiment=3, permutations="exact")
    assert eatkit.grounded_eat is grounded_eat
