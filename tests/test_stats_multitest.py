"""Holm and Benjamini-Hochberg adjusted p-values."""

from __future__ import annotations

import numpy as np
import pytest

from eatkit.stats import adjust_p_values


def test_holm_by_hand() -> None:
    # sorted p: .01 .02 .03 .04 .05 (m = 5), times m - rank + 1 = 5 4 3 2 1: .05 .08 .09 .08 .05;
    # running maximum: .05 .08 .09 .09 .09; given in shuffled order
    p = [0.04, 0.01, 0.05, 0.03, 0.02]
    np.testing.assert_allclose(adjust_p_values(p, "holm"), [0.09, 0.05, 0.09, 0.09, 0.08], rtol=1e-14)


def test_bh_by_hand() -> None:
    # sorted p: .001 .008 .039 .041 .042 .06 (m = 6), times m / rank = 6 3 2 1.5 1.2 1:
    # .006 .024 .078 .0615 .0504 .06; running minimum from the top: .006 .024 .0504 .0504 .0504 .06
    p = [0.06, 0.041, 0.001, 0.042, 0.008, 0.039]
    np.testing.assert_allclose(
        adjust_p_values(p, "bh"), [0.06, 0.0504, 0.006, 0.0504, 0.024, 0.0504], rtol=1e-12
    )
    np.testing.assert_allclose(adjust_p_values(p), adjust_p_values(p, "bh"))  # BH is the default


def test_docstring_examples_and_caps_at_one() -> None:
    np.testing.assert_allclose(adjust_p_values([0.01, 0.04, 0.03], "bh"), [0.03, 0.04, 0.04])
    np.testing.assert_allclose(adjust_p_values([0.01, 0.04, 0.03], "holm"), [0.03, 0.06, 0.06])
    # 3 x 0.5 = 1.5 -> 1; ties keep equal adjusted values
    np.testing.assert_array_equal(adjust_p_values([0.5, 0.5, 0.9], "holm"), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(adjust_p_values([0.5, 0.5, 0.9], "bh"), [0.75, 0.75, 0.9])


def test_edge_sizes() -> None:
    assert adjust_p_values([], "holm").size == 0
    np.testing.assert_array_equal(adjust_p_values([0.2], "holm"), [0.2])
    np.testing.assert_array_equal(adjust_p_values([0.2], "bh"), [0.2])


@pytest.mark.parametrize(("method", "name"), [("holm", "holm"), ("bh", "fdr_bh")])
def test_against_statsmodels(method: str, name: str) -> None:
    multitest = pytest.importorskip("statsmodels.stats.multitest", reason="statsmodels is not installed")
    g = np.random.default_rng(0)
    for size in (1, 2, 7, 50):
        p = np.concatenate([g.uniform(0, 0.05, size // 2), g.uniform(size=size - size // 2)])
        expected = multitest.multipletests(p, method=name)[1]
        np.testing.assert_allclose(adjust_p_values(p, method), expected, rtol=1e-12)
