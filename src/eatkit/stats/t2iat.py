"""T2IAT, the text-to-image association test (Wang et al., Findings of ACL 2023).

For each concept c (a word of the target sets X and Y, e.g. "astronomy" in science, "music" in arts), a
text-to-image model generates *neutral* images N_c from prompts with neutral words ("a photo of a child
studying astronomy") and *attribute-specific* images A_c and B_c from the same prompts with the words of
the attribute sets ("... a boy ...", "... a girl ..."). The association of the concept is

    s(c) = mean_{n ∈ N_c, a ∈ A_c} cos(n, a) - mean_{n ∈ N_c, b ∈ B_c} cos(n, b)

(the mean over every pair of neutral and attribute-specific image, as the authors' notebook takes it, but
as a cosine *similarity*: their notebook averages cosine *distances*, 1 - cos, so its X_pos - X_neg is
-s(c); with similarities a positive effect means that X is closer to A, as in WEAT). The test statistic is
Σ_{x ∈ X} s(x) - Σ_{y ∈ Y} s(y), the effect size d = (mean_X s - mean_Y s) / SD_{X ∪ Y} s (the authors'
notebook: numpy's std, ddof 0; eatkit's ``ddof`` rule), and the p-value a permutation test over
re-partitions of the concepts X ∪ Y (the units are concepts, not images: the images of one prompt are not
independent evidence), exact where feasible; the bootstrap CI of d resamples the concepts within X and Y.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._random import resolve_rng
from eatkit.stats._validation import check_count, check_embeddings
from eatkit.stats.association import cosine_matrix, rounding_error
from eatkit.stats.differential import EATResult, difference_tests
from eatkit.stats.effect_size import cohens_d
from eatkit.stats.options import TestOptions, check_option
from eatkit.stats.power import minimum_detectable_effect


@dataclass(frozen=True, kw_only=True)
class T2IATResult:
    """The T2IAT of targets X vs Y with attributes A vs B: the EAT-style result over concepts (``test``:
    effect size, statistic, p-values, how computed), each concept's association ``s`` and the percentile
    bootstrap CI of d over concepts (``ci``: (low, high), ``None`` without resamples)."""

    test: EATResult
    s_x: np.ndarray = field(repr=False)
    s_y: np.ndarray = field(repr=False)
    ci: tuple[float, float] | None
    n_bootstrap: int
    confidence_level: float
    seed: int | None


def concept_associations(neutral: Sequence[Any], first: Sequence[Any], second: Sequence[Any]) -> np.ndarray:
    """s(c) of every concept c (module docstring): ``neutral[c]``, ``first[c]``, ``second[c]`` are the
    embeddings (rows) of concept c's neutral, A-specific and B-specific images.

    >>> concept_associations([[[1.0, 0.0]]], [[[1.0, 0.0]]], [[[0.0, 1.0]]])
    array([1.])
    """
    if not (len(neutral) == len(first) == len(second)) or not len(neutral):
        raise EatkitError(f"T2IAT needs the neutral, A and B images of every concept, got {len(neutral)}, "
                          f"{len(first)} and {len(second)} concepts")
    out = np.empty(len(neutral))
    for c, (n, a, b) in enumerate(zip(neutral, first, second)):
        n = check_embeddings(f"neutral images of concept {c}", n)
        a = check_embeddings(f"A images of concept {c}", a, dim=n.shape[1])
        b = check_embeddings(f"B images of concept {c}", b, dim=n.shape[1])
        out[c] = cosine_matrix(n, a).mean() - cosine_matrix(n, b).mean()
    return out


def t2iat(neutral_x: Sequence[Any], a_x: Sequence[Any], b_x: Sequence[Any], neutral_y: Sequence[Any],
          a_y: Sequence[Any], b_y: Sequence[Any], *, alternative: str = "greater", permutations: str | int = "auto",
          ddof: int = 1, n_bootstrap: int = 0, confidence_level: float = 0.95, rng: Any = None) -> T2IATResult:
    """The T2IAT (module docstring) from the image embeddings of each concept of X and of Y.

    >>> nx = [[[1.0, 0.1]], [[0.9, 0.2]]]; ny = [[[0.1, 1.0]], [[0.2, 0.9]]]
    >>> a = [[[1.0, 0.0]]] * 2; b = [[[0.0, 1.0]]] * 2
    >>> r = t2iat(nx, a, b, ny, a, b, permutations="exact")
    >>> round(r.test.effect_size, 3), r.test.p_value, r.test.n_partitions
    (1.726, 0.16666666666666666, 6)
    """
    options = TestOptions(alternative=alternative, permutations=permutations, ddof=ddof).validated()
    s_x = concept_associations(neutral_x, a_x, b_x)
    s_y = concept_associations(neutral_y, a_y, b_y)
    if len(s_x) < 2 or len(s_y) < 2:
        raise EatkitError(f"T2IAT needs at least 2 concepts in X and in Y, got {len(s_x)} and {len(s_y)}")
    generator, seed = resolve_rng(rng)
    dim = np.asarray(neutral_x[0]).shape[-1]
    atol = rounding_error(dim)
    test = difference_tests(s_x[:, None], s_y[:, None], ("X", "Y"), options, generator, atol)[0]
    n_bootstrap = check_count("n_bootstrap", n_bootstrap) if n_bootstrap else 0
    ci = None
    if n_bootstrap:
        check_option("confidence_level", confidence_level)
        ix = generator.integers(0, len(s_x), size=(n_bootstrap, len(s_x)))
        iy = generator.integers(0, len(s_y), size=(n_bootstrap, len(s_y)))
        d = cohens_d(s_x[ix], s_y[iy], ddof=options.ddof, atol=atol)
        tail = (1 - confidence_level) / 2
        with np.errstate(invalid="ignore"):
            low, high = np.quantile(d, [tail, 1 - tail])
        ci = (float(low), float(high))
    return T2IATResult(test=test, s_x=s_x, s_y=s_y, ci=ci, n_bootstrap=n_bootstrap,
                       confidence_level=confidence_level, seed=seed)


@dataclass(frozen=True, kw_only=True)
class T2IATValidity:
    """How far to trust a T2IAT (``--validity``): d and p with each concept left out (``leave_one_out``:
    concept -> (d, p)), the concept whose removal moves d most, and the smallest d the permutation test over
    these numbers of concepts detects (:func:`eatkit.stats.power.minimum_detectable_effect`; ``None`` with
    the reason in ``note`` when too few concepts let no p-value fall below ``alpha``)."""

    leave_one_out: dict[str, tuple[float, float]]
    most_influential: str
    minimum_detectable_d: float | None
    power: float
    alpha: float
    note: str = ""


def t2iat_validity(result: T2IATResult, x_names: Sequence[str], y_names: Sequence[str], *, alpha: float = 0.05,
                   power: float = 0.8, rng: Any = None) -> T2IATValidity:
    """The validity panel of a T2IAT result (its options: alternative, permutations, ddof) over concepts.

    >>> nx = [[[1.0, 0.1]], [[0.9, 0.2]], [[1.0, 0.3]]]; ny = [[[0.1, 1.0]], [[0.2, 0.9]], [[0.3, 1.0]]]
    >>> a = [[[1.0, 0.0]]] * 3; b = [[[0.0, 1.0]]] * 3
    >>> v = t2iat_validity(t2iat(nx, a, b, ny, a, b), ["m", "p", "c"], ["a", "u", "l"], rng=0)
    >>> sorted(v.leave_one_out)[:2], v.minimum_detectable_d, v.note
    (['a', 'c'], None, 'with 20 partitions no p-value is below alpha=0.05: no effect is detectable')
    """
    test = result.test
    if len(x_names) != len(result.s_x) or len(y_names) != len(result.s_y):
        raise EatkitError("t2iat_validity needs one name per concept of X and of Y")
    options = TestOptions(alternative=test.alternative, permutations="auto", ddof=test.ddof).validated()
    generator, _ = resolve_rng(rng)
    atol = 0.0
    out: dict[str, tuple[float, float]] = {}
    for group, names in (("X", x_names), ("Y", y_names)):
        for i, name in enumerate(names):
            s_x = np.delete(result.s_x, i) if group == "X" else result.s_x
            s_y = np.delete(result.s_y, i) if group == "Y" else result.s_y
            if len(s_x) + len(s_y) <= options.ddof or min(len(s_x), len(s_y)) == 0:
                continue
            r = difference_tests(s_x[:, None], s_y[:, None], ("X", "Y"), options, generator, atol)[0]
            out[name] = (r.effect_size, r.p_value)
    if not out:
        raise EatkitError("no concept can be left out of this T2IAT (too few concepts)")
    most = max(out, key=lambda name: abs(out[name][0] - test.effect_size))
    try:
        mde: float | None = minimum_detectable_effect(len(result.s_x), len(result.s_y), alpha=alpha, power=power,
                                                      alternative=test.alternative, rng=generator).cohens_d
        note = ""
    except EatkitError as err:  # too few concepts: no partition is rare enough
        mde, note = None, str(err)
    return T2IATValidity(leave_one_out=out, most_influential=most, minimum_detectable_d=mde, power=power,
                         alpha=alpha, note=note)
