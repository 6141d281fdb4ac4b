"""Every bad input to the statistics gives one EatkitError with an exact, one-line message."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from eatkit.errors import EatkitError
from eatkit.stats.permutation import compiled
from eatkit.stats import (
    adjust_p_values,
    bootstrap_effect_size,
    eat,
    group_permutation_test,
    ml_eat,
    sc_eat,
    specificity,
)

RNG = np.random.default_rng(0)
GOOD = {name: RNG.normal(size=(3, 4)) for name in "XYAB"}


def _sets(**changes) -> dict[str, np.ndarray]:
    return {**GOOD, **changes}


def _with_rows(rows: dict[int, list[float]], n: int = 3) -> np.ndarray:
    arr = RNG.normal(size=(n, 4))
    for i, row in rows.items():
        arr[i] = row
    return arr


def _message(call, *args, **kwargs) -> str:
    with pytest.raises(EatkitError) as info:
        call(*args, **kwargs)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"X": _with_rows({1: [1.0, np.nan, 0.0, 0.0]})},
            "set 'X' has non-finite values (NaN or inf) in row(s) 1",
        ),
        (
            {"B": _with_rows({0: [np.inf, 0, 0, 0], 2: [0, 0, -np.inf, 1]})},
            "set 'B' has non-finite values (NaN or inf) in row(s) 0, 2",
        ),
        ({"A": _with_rows({2: [0.0, 0.0, 0.0, 0.0]})}, "set 'A' has zero-norm vector(s) in row(s) 2"),
        ({"Y": np.zeros((7, 4))}, "set 'Y' has zero-norm vector(s) in row(s) 0, 1, 2, 3, 4 (and 2 more)"),
        ({"Y": np.ones((3, 5))}, "set 'Y' has dimension 5, but the other sets have dimension 4"),
        ({"B": np.ones((2, 3))}, "set 'B' has dimension 3, but the other sets have dimension 4"),
        ({"A": np.empty((0, 4))}, "set 'A' is empty"),
        ({"X": np.ones((2, 3, 4))}, "set 'X' must be a 2-D array (n, d), got 3 dimensions"),
        ({"X": [["a", "b"]]}, "set 'X' is not a numeric array"),
        ({"Y": [[1.0, 2.0], [3.0]]}, "set 'Y' is not a numeric array"),
    ],
)
def test_bad_embeddings(changes: dict, message: str) -> None:
    assert _message(eat, **_sets(**changes)) == message


def test_empty_list_is_an_empty_set() -> None:
    # [] is the natural way to pass a set whose stimuli were all dropped; today it reads as one row of
    # dimension 0 ("set 'B' has vectors of dimension 0")
    assert _message(eat, **_sets(B=[])) == "set 'B' is empty"


def test_sc_eat_and_ml_eat_name_their_sets() -> None:
    assert _message(sc_eat, [0.0, 0.0, 0.0, 0.0], GOOD["A"], GOOD["B"]) == (
        "set 'T' has zero-norm vector(s) in row(s) 0"
    )
    assert _message(ml_eat, **_sets(A=np.ones((2, 2)))) == (
        "set 'A' has dimension 2, but the other sets have dimension 4"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"alternative": "bigger"}, "alternative must be one of greater, less, two-sided, got 'bigger'"),
        (
            {"alternative": "two_sided"},
            "alternative must be one of greater, less, two-sided, got 'two_sided'",
        ),
        ({"permutations": 0}, "permutations must be auto, exact or an integer >= 1, got 0"),
        ({"permutations": -5}, "permutations must be auto, exact or an integer >= 1, got -5"),
        ({"permutations": 1.5}, "permutations must be auto, exact or an integer >= 1, got 1.5"),
        ({"permutations": True}, "permutations must be auto, exact or an integer >= 1, got True"),
        ({"permutations": "all"}, "permutations must be auto, exact or an integer >= 1, got 'all'"),
        ({"ddof": -1}, "ddof must be an integer in [0, 1000000], got -1"),
        ({"ddof": 1.0}, "ddof must be an integer in [0, 1000000], got 1.0"),
        ({"ddof": True}, "ddof must be an integer in [0, 1000000], got True"),
        ({"ddof": 6}, "the SD with ddof=6 needs more than 6 values in all"),
        ({"sd": "hedges"}, "sd must be one of caliskan, pooled, got 'hedges'"),
        ({"p_method": "t"}, "p_method must be one of permutation, welch, got 't'"),
        (
            {"permutations": 100, "rng": "abc"},
            "rng must be None, 'random', a non-negative integer seed or a numpy Generator, got 'abc'",
        ),
        (
            {"permutations": 100, "rng": -1},
            "rng must be None, 'random', a non-negative integer seed or a numpy Generator, got -1",
        ),
        (
            {"permutations": 100, "rng": 1.5},
            "rng must be None, 'random', a non-negative integer seed or a numpy Generator, got 1.5",
        ),
    ],
)
def test_bad_options(options: dict, message: str) -> None:
    assert _message(eat, **GOOD, **options) == message


def test_bad_rng_is_rejected_even_when_the_test_is_exact() -> None:
    # 3 + 3 targets: "auto" counts exactly and never draws, but a bad rng is still a bad input (it would
    # fail later on a larger test)
    assert _message(eat, **GOOD, rng="abc") == (
        "rng must be None, 'random', a non-negative integer seed or a numpy Generator, got 'abc'"
    )


def test_ml_eat_rejects_a_bad_rng() -> None:
    assert _message(ml_eat, **GOOD, rng=np.random.RandomState(0)).startswith(
        "rng must be None, 'random', a non-negative integer seed or a numpy Generator, got RandomState"
    )


def test_exact_test_too_large() -> None:
    g = np.random.default_rng(1)
    X, Y, A, B = g.normal(size=(40, 3)), g.normal(size=(40, 3)), g.normal(size=(2, 3)), g.normal(size=(2, 3))
    # both halves of the 80 values list all 2^40 subset sums: 2 * 2^40 = 2.2e12 sums (days of counting)
    message = _message(eat, X, Y, A, B, permutations="exact")
    assert message.startswith("an exact permutation test for 40 + 40 values would take about ")
    assert re.search(r"about [\d.]+ (hours|days) and [\d.]+ MB", message)
    assert message.endswith("(2.2e+12 subset sums, limit 8.59e+09); pass a number of Monte Carlo permutations instead")
    # the first equal split over the limit: 33 + 33 with the compiled kernels, 27 + 27 without
    n = 33 if compiled() else 27
    assert _message(
        group_permutation_test, np.arange(float(n)), np.arange(float(n)), permutations="exact"
    ).startswith(f"an exact permutation test for {n} + {n} values would take about")


def test_one_element_groups() -> None:
    # with one stimulus per group Cohen's d is ±√2 whatever the data: refused, naming the set
    X1 = GOOD["X"][:1]
    assert _message(eat, X1, GOOD["Y"], GOOD["A"], GOOD["B"]) == "set 'X' has 1 stimuli; this test needs at least 2"
    assert _message(ml_eat, GOOD["X"], GOOD["Y"], GOOD["A"][:1], GOOD["B"]) == (
        "set 'A' has 1 stimuli; this test needs at least 2"
    )
    assert _message(sc_eat, GOOD["X"], GOOD["A"], GOOD["B"][:1]) == "set 'B' has 1 stimuli; this test needs at least 2"
    assert _message(bootstrap_effect_size, GOOD["X"], X1, GOOD["A"], GOOD["B"]) == (
        "set 'Y' has 1 stimuli; this test needs at least 2"
    )


def test_single_attributes_and_single_target_word_are_fine() -> None:
    r = eat(GOOD["X"], GOOD["Y"], GOOD["A"][:1], GOOD["B"][:1], permutations="exact")
    assert r.n_partitions == math.comb(6, 3)
    assert sc_eat(GOOD["X"][0], GOOD["A"], GOOD["B"], permutations="exact").n_partitions == math.comb(6, 3)


def test_welch_with_no_variance_is_refused() -> None:
    same = np.array([[1.0, 0.0], [2.0, 0.0]])
    assert _message(eat, same, -same, [[1.0, 1.0]], [[1.0, -1.0]], p_method="welch") == (
        "Welch's t-test is undefined here: the associations of X and Y have no variance; use the permutation test"
    )


@pytest.mark.parametrize(
    ("first", "second", "message"),
    [
        ([[1.0, 2.0]], [1.0], "'first' must be a 1-D array of association values"),
        ([1.0], [], "'second' is empty"),
        ([1.0, np.nan], [1.0], "'first' has non-finite values"),
    ],
)
def test_bad_association_values(first, second, message: str) -> None:
    assert _message(group_permutation_test, first, second) == message


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"confidence_level": 1.0}, "confidence_level must be a number in (0, 1), got 1.0"),
        ({"n_bootstrap": 0}, "n_bootstrap must be a positive integer, got 0"),
        ({"resample": ("X", "Z", "C")}, "resample lists unknown sets: C, Z (use X, Y, A, B)"),
    ],
)
def test_bad_bootstrap_options(options: dict, message: str) -> None:
    assert _message(bootstrap_effect_size, **GOOD, **options) == message


@pytest.mark.parametrize("count", [2.5, "many"])
def test_counts_must_be_integers(count) -> None:
    # today 2.5 is silently truncated to 2 and "many" raises int()'s own ValueError
    assert _message(bootstrap_effect_size, **GOOD, n_bootstrap=count).startswith(
        "n_bootstrap must be a positive integer, got "
    )
    assert _message(specificity, **GOOD, n_splits=count).startswith(
        "n_splits must be a positive integer, got "
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"n_splits": 0}, "n_splits must be a positive integer, got 0"),
        ({"alphas": (0.05, 1.0)}, "alphas must lie strictly between 0 and 1, got (0.05, 1.0)"),
        ({"alternative": "up"}, "alternative must be one of greater, less, two-sided, got 'up'"),
        ({"permutations": "many"}, "permutations must be auto, exact or an integer >= 1, got 'many'"),
    ],
)
def test_bad_specificity_options(options: dict, message: str) -> None:
    assert _message(specificity, **GOOD, **options) == message


@pytest.mark.parametrize(
    ("p", "method", "message"),
    [
        ([0.1], "bonferroni", "method must be one of holm, bh, got 'bonferroni'"),
        ([[0.1, 0.2]], "holm", "p-values must be a 1-D array"),
        ([0.1, 1.2], "bh", "p-values must be finite numbers in [0, 1]"),
        ([0.1, -0.1], "bh", "p-values must be finite numbers in [0, 1]"),
        ([0.1, np.nan], "holm", "p-values must be finite numbers in [0, 1]"),
    ],
)
def test_bad_p_values(p, method: str, message: str) -> None:
    assert _message(adjust_p_values, p, method) == message
