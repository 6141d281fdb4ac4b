"""Ties are data, not errors (issue 45): sets sharing vectors run, warn naming the shared rows, and their exact
p-values equal brute force over every split (small) or the closed form over value multiplicities (large)."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from eatkit.cli import main
from eatkit.errors import EatkitError
from eatkit.stats.association import target_associations
from eatkit.stats.degeneracy import DegeneracyWarning, collected
from eatkit.stats.differential import eat


def _integer_features(g: np.random.Generator, n: int, d: int = 3) -> np.ndarray:
    """``n`` vectors with features in {0, 1, 2}, none zero (cosine needs a norm)."""
    v = g.integers(0, 3, size=(n, d)).astype(float)
    v[~v.any(axis=1)] = 1.0
    return v


def _sets() -> tuple[np.ndarray, ...]:
    g = np.random.default_rng(3)
    X, Y, A, B = (_integer_features(g, n) for n in (8, 8, 4, 4))
    Y[:3] = X[[1, 4, 6]]
    return X, Y, A, B


def _shared(X: np.ndarray, Y: np.ndarray) -> str:
    """The warning's words for the rows of X found in Y (computed here by hand)."""
    rows = [i for i, x in enumerate(X) if any((x == y).all() for y in Y)]
    return f"share {len(rows)} vector(s) (row(s) {', '.join(map(str, rows))} of 'X')"


def _brute_force(s: np.ndarray, k: int) -> dict[str, float]:
    """p of every alternative over all C(n, k) splits of the values ``s`` (first k: the observed group), the
    statistic being the first group's sum (a difference of means at fixed sizes is monotone in it)."""
    observed, total = s[:k].sum(), s.sum()
    sums = np.array([s[list(c)].sum() for c in itertools.combinations(range(s.size), k)])
    tol = 1e-9 * np.abs(s).sum()
    centre = total * k / s.size
    dev, obs_dev = np.abs(sums - centre), abs(observed - centre)
    return {"greater": float(np.mean(sums >= observed - tol)), "less": float(np.mean(sums <= observed + tol)),
            "two-sided": float(np.mean(dev >= obs_dev - tol)), "splits": sums.size}


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_an_exact_8_8_test_on_integer_features_sharing_vectors_equals_brute_force(alternative: str) -> None:
    X, Y, A, B = _sets()
    with pytest.warns(DegeneracyWarning) as caught:
        r = eat(X, Y, A, B, permutations="exact", alternative=alternative)
    assert [str(w.message) for w in caught if _shared(X, Y) in str(w.message)]
    brute = _brute_force(np.r_[target_associations(X, A, B), target_associations(Y, A, B)], 8)
    assert brute["splits"] == r.n_partitions == 12_870
    assert r.p_value == pytest.approx(brute[alternative], abs=1e-15)
    assert r.p_value * 12_870 == pytest.approx(round(r.p_value * 12_870), abs=1e-9)  # a count of splits


def test_sets_that_coincide_or_have_no_variance_stay_errors() -> None:
    X, Y, A, B = _sets()
    with pytest.raises(EatkitError, match="hold the same vectors"):
        eat(X, X[::-1], A, B)
    with pytest.raises(EatkitError, match="zero variance"):
        eat(np.ones((3, 3)), Y, A, B)


def test_collected_gathers_each_warning_once_and_passes_others_on() -> None:
    X, Y, A, B = _sets()
    with warnings.catch_warnings(record=True) as outside:
        warnings.simplefilter("always")
        with collected() as found:
            eat(X, Y, A, B, permutations=100, rng=0)
            eat(X, Y, A, B, permutations=100, rng=0)
            warnings.warn("another", RuntimeWarning)
    assert len(found) == 1 and _shared(X, Y) in found[0]
    assert [str(w.message) for w in outside] == ["another"]


def test_a_run_on_sets_sharing_vectors_records_and_prints_the_warning(tmp_path: Path, capsys) -> None:
    X, Y, A, B = _sets()
    words = {"X": [f"x{i}" for i in range(8)], "Y": [f"y{i}" for i in range(8)], "A": ["a0", "a1", "a2", "a3"],
             "B": ["b0", "b1", "b2", "b3"]}
    vectors = {w: v for role, arr in zip("XYAB", (X, Y, A, B)) for w, v in zip(words[role], arr)}
    (tmp_path / "v.txt").write_text("".join(f"{w} {' '.join(map(str, v))}\n" for w, v in vectors.items()))
    test = {"id": "ties", "title": "ties", "kind": "eat",
            **{r: {"name": r, "modality": "word", "items": items} for r, items in words.items()}}
    (tmp_path / "suite.json").write_text(json.dumps({"schema": "eatkit.suite/1", "id": "s", "title": "s",
                                                     "tests": [test]}))
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "suite.json"), "--vectors", str(tmp_path / "v.txt"), "--permutations", "exact",
                 "--n-bootstrap", "0", "-q", "-o", str(out)]) == 0
    printed = capsys.readouterr()  # -q silences progress only: the warning is under the results table
    assert (printed.out + printed.err).count(_shared(X, Y)) == 1, printed
    record = next(r for r in json.loads((out / "results.json").read_text()) if r.get("p_value") is not None)
    assert any(_shared(X, Y) in w for w in record["warnings"])
    brute = _brute_force(np.r_[target_associations(X, A, B), target_associations(Y, A, B)], 8)
    assert record["p_value"] == pytest.approx(brute["greater"], abs=1e-12)


def _multiplicity_p(values: np.ndarray, counts: np.ndarray, k: int, observed: float) -> float:
    """The closed form of the exact 'greater' p over value multiplicities: the size-k sub-multisets taking
    x_i ≤ c_i copies of value v_i, each standing for prod C(c_i, x_i) subsets, whose sum reaches the observed."""
    reach, tol = 0, 1e-9 * float(np.abs(values).max()) * counts.sum()
    for xs in itertools.product(*(range(c + 1) for c in counts)):
        if sum(xs) == k and float(np.dot(xs, values)) >= observed - tol:
            reach += math.prod(math.comb(int(c), x) for c, x in zip(counts, xs))
    return reach / math.comb(int(counts.sum()), k)


_LARGE = """
import sys, warnings
import numpy as np
from eatkit.stats.association import target_associations
from eatkit.stats.differential import eat
k = int(sys.argv[1]); g = np.random.default_rng(k)
V = g.normal(size=(4, 6)); A = g.normal(size=(5, 6)); B = g.normal(size=(5, 6))
V = V[np.argsort(-target_associations(V, A, B))]  # the first value the most associated with A
X = V[g.choice(4, k, p=[0.4, 0.3, 0.2, 0.1])]; Y = V[g.choice(4, k, p=[0.1, 0.2, 0.3, 0.4])]
warnings.simplefilter("ignore", UserWarning)
r = eat(X, Y, A, B, permutations="exact")
np.save(sys.argv[2], np.r_[X, Y, A, B])
peak = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM"))  # kB, this program's
print(repr(r.p_value), r.n_partitions, r.p_value_exact, peak)
"""


@pytest.mark.parametrize("k", [28, 32])
def test_tied_large_exact_tests_equal_the_closed_form_over_multiplicities_in_under_a_gigabyte(
        k: int, tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", _LARGE, str(k), str(tmp_path / "v.npy")], capture_output=True,
                         text=True, timeout=600, check=True).stdout.split()
    # the peak resident memory of the program (VmHWM: ru_maxrss would count pytest's memory, forked before exec)
    p, partitions, exact, max_rss_kb = float(out[0]), int(out[1]), out[2] == "True", int(out[3])
    vectors = np.load(tmp_path / "v.npy")
    X, Y, A, B = vectors[:k], vectors[k:2 * k], vectors[2 * k:2 * k + 5], vectors[2 * k + 5:]
    s = np.r_[target_associations(X, A, B), target_associations(Y, A, B)]
    values, counts = np.unique(s, return_counts=True)
    assert values.size <= 4 and exact and partitions == math.comb(2 * k, k)
    assert p == pytest.approx(_multiplicity_p(values, counts, k, float(s[:k].sum())), rel=1e-12, abs=1e-300)
    assert 0 < p < 1e-3  # X leans to the first values: a small p, not a trivial 1
    assert max_rss_kb * 1024 < 1e9, max_rss_kb
