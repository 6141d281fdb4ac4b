"""Grounded-WEAT / Grounded-SEAT: association tests on joint vision-and-language embeddings (seed 001, §4).

Each target (x ∈ X, y ∈ Y) and attribute is the embedding of an (image, caption) pair. The attributes
come in four sets: A_x, B_x (attributes shown with images of target X's category) and A_y, B_y (with
images of target Y's category). With s(w, A, B) = mean_a cos(w, a) - mean_b cos(w, b) (seed eq. 1):

* Experiment 1 (vision integrated out, §4.1): the EAT with A = A_x ∪ A_y and B = B_x ∪ B_y.
* Experiment 2 (target-specific images, §4.2): v_x = s(x, A_x, B_x), v_y = s(y, A_y, B_y); statistic
  Σ v_x - Σ v_y, d = (mean v_x - mean v_y) / SD of all v (ddof 1); p by re-partitioning X ∪ Y, each
  target keeping its own v (the exact / Monte Carlo count of :mod:`eatkit.stats.permutation`).
* Experiment 3 (congruent vs incongruent images, §4.3):
  statistic 1/2 (|Σ_x [s(x, A_x, B_x) - s(x, A_y, B_y)]| + |Σ_y [s(y, A_y, B_y) - s(y, A_x, B_x)]|);
  d_X = (mean congruent - mean incongruent over x) / SD of those 2|X| values (ddof 1), d_Y likewise,
  effect size 1/2 (|d_X| + |d_Y|). The p-value re-partitions A_x ∪ A_y and B_x ∪ B_y at their original
  sizes: p = #{partitions with statistic ≥ observed} / #partitions when all are counted, else
  (1 + #draws ≥ observed) / (1 + draws) (Phipson & Smyth 2010). The statistic is an absolute value, so
  its p-value is one-sided ("greater") only.

Two deliberate differences from the seed: its text of experiment 3 (§4.3) writes S(2, ...) where target
embedding 4 (the word *woman* shown with a woman) is meant; and the authors' code passes X where Y is
meant when it permutes the attributes for experiment 3's p-value; eatkit uses Y, as the formula says.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._random import resolve_rng
from eatkit.stats._validation import check_sets
from eatkit.stats.association import cosine_matrix, rounding_error, target_associations
from eatkit.stats.differential import EATResult, difference_tests, eat_of_checked
from eatkit.stats.effect_size import cohens_d
from eatkit.stats.options import TestOptions
from eatkit.stats.permutation import DEFAULT_MONTE_CARLO, MC_BATCH, random_subsets

EXPERIMENTS = (1, 2, 3)
#: the question each experiment answers (seed 001, §1 and §4.1-4.3)
QUESTIONS = {
    1: "Do joint embeddings encode social biases? (images integrated out: A = A_x ∪ A_y, B = B_x ∪ B_y)",
    2: "Can grounded evidence that counters a stereotype alleviate biases? (each target with its own images)",
    3: "How much of the bias comes from vision? (congruent vs incongruent images; 0 = images change nothing)",
}
#: experiment 3 counts every attribute partition when there are at most this many (otherwise samples)
EXACT_MAX_PARTITIONS_3 = 1 << 24


@dataclass(frozen=True)
class GroundedResult:
    """Result of one Grounded-WEAT/SEAT experiment and how it was computed.

    Attributes
    ----------
    experiment : int
        1, 2 or 3.
    effect_size : float
        Cohen's d (experiments 1 and 2); 1/2 (|d_X| + |d_Y|) for experiment 3.
    statistic, p_value : float
        The experiment's statistic and its permutation p-value for ``alternative``.
    p_values, standard_errors : dict
        p-values (and Monte Carlo standard errors, 0.0 when exact) by alternative: all three for
        experiments 1 and 2, only "greater" for experiment 3.
    alternative : str
    p_value_exact : bool
        True when every partition was counted.
    n_permutations, n_partitions : int
        Partitions evaluated, and the number of distinct partitions.
    seed : int or None
        Seed of the Monte Carlo stream (None when exact or when a Generator was passed).
    tie_tolerance : float
        Rounding tolerance within which a permuted statistic counts as reaching the observed one.
    d_X, d_Y : float or None
        Experiment 3's effect sizes for X and for Y (None for experiments 1 and 2).
    associations : dict of numpy arrays
        Per-stimulus s-values: ``x``, ``y`` (experiments 1, 2); ``x_congruent``, ``x_incongruent``,
        ``y_congruent``, ``y_incongruent`` (experiment 3).
    """

    experiment: int
    effect_size: float
    statistic: float
    p_value: float
    p_values: dict[str, float]
    alternative: str
    p_value_exact: bool
    n_permutations: int
    n_partitions: int
    standard_errors: dict[str, float]
    seed: int | None
    tie_tolerance: float
    d_X: float | None
    d_Y: float | None
    associations: dict[str, np.ndarray]

    @property
    def mc_standard_error(self) -> float:
        """Monte Carlo standard error of ``p_value`` (0.0 when exact)."""
        return self.standard_errors.get(self.alternative, 0.0)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (without the per-stimulus associations)."""
        return {
            "experiment": self.experiment,
            "effect_size": self.effect_size,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "p_values": dict(self.p_values),
            "alternative": self.alternative,
            "p_value_exact": self.p_value_exact,
            "n_permutations": self.n_permutations,
            "n_partitions": self.n_partitions,
            "mc_standard_error": self.mc_standard_error,
            "seed": self.seed,
            "d_X": self.d_X,
            "d_Y": self.d_Y,
        }


def grounded_eat(
    X: Any,
    Y: Any,
    *,
    A_x: Any,
    A_y: Any,
    B_x: Any,
    B_y: Any,
    experiment: int,
    permutations: str | int = "auto",
    alternative: str = "greater",
    rng: Any = None,
) -> GroundedResult:
    """One experiment of the Grounded-WEAT/SEAT (seed 001, §4.1-4.3) on (n, d) embedding arrays.

    Parameters
    ----------
    X, Y : array_like, shape (n, d)
        Target embeddings (at least 2 each).
    A_x, A_y, B_x, B_y : array_like, shape (n, d)
        Attribute embeddings: attribute A (B) shown with images of target X's (Y's) category.
    experiment : {1, 2, 3}
        See the module docstring.
    permutations : "auto", "exact" or int
        Experiments 1 and 2: as :func:`eatkit.stats.eat`. Experiment 3: "exact" counts every attribute
        partition (refused beyond ``EXACT_MAX_PARTITIONS_3``); "auto" counts them all when there are no
        more than ``DEFAULT_MONTE_CARLO`` and otherwise draws that many; an int draws that many.
    alternative : {"greater", "less", "two-sided"}
        Experiment 3 takes only "greater" (its statistic is an absolute value).
    rng : None, int or numpy.random.Generator
        Randomness for Monte Carlo p-values.

    Examples
    --------
    >>> X = [[1.0, 0.2], [0.9, 0.1]]; Y = [[0.1, 1.0], [0.3, 0.8]]
    >>> A = [[1.0, 0.0], [0.9, 0.3]]; B = [[0.0, 1.0], [0.2, 0.9]]
    >>> r = grounded_eat(X, Y, A_x=A, A_y=A, B_x=B, B_y=B, experiment=3)
    >>> r.statistic, r.effect_size, r.p_value   # the same images for both targets: no visual effect
    (0.0, 0.0, 1.0)
    """
    if experiment not in EXPERIMENTS or isinstance(experiment, bool):
        raise EatkitError(f"experiment must be 1, 2 or 3, got {experiment!r}")
    options = TestOptions(alternative=alternative, permutations=permutations).validated()
    sets = check_sets({"A_x": 1, "A_y": 1, "B_x": 1, "B_y": 1}, X=X, Y=Y, A_x=A_x, A_y=A_y, B_x=B_x, B_y=B_y)
    if experiment == 1:  # images integrated out: A = A_x ∪ A_y, B = B_x ∪ B_y (checked above, set by set;
        # with the language masked, an image under a caption of A and one of B gives both one vector)
        A = np.concatenate([sets["A_x"], sets["A_y"]])
        B = np.concatenate([sets["B_x"], sets["B_y"]])
        return _from_eat(1, eat_of_checked(sets["X"], sets["Y"], A, B, options, rng))
    if experiment == 2:
        vx = target_associations(sets["X"], sets["A_x"], sets["B_x"])  # s(x, A_x, B_x)
        vy = target_associations(sets["Y"], sets["A_y"], sets["B_y"])  # s(y, A_y, B_y)
        atol = rounding_error(sets["X"].shape[1])
        return _from_eat(2, difference_tests(vx[:, None], vy[:, None], ("X", "Y"), options, rng, atol)[0])
    if alternative != "greater":
        raise EatkitError(
            f"experiment 3's statistic is an absolute value, so its p-value is one-sided: "
            f"alternative must be 'greater', got '{alternative}'"
        )
    return _experiment3(sets, options.permutations, rng)


def _from_eat(experiment: int, r: EATResult) -> GroundedResult:
    return GroundedResult(
        experiment=experiment, effect_size=r.effect_size, statistic=r.statistic, p_value=r.p_value,
        p_values=dict(r.p_values), alternative=r.alternative, p_value_exact=r.p_value_exact,
        n_permutations=r.n_permutations,
        n_partitions=r.n_partitions, standard_errors=dict(r.standard_errors), seed=r.seed,
        tie_tolerance=r.tie_tolerance, d_X=None, d_Y=None,
        associations={"x": r.associations[0], "y": r.associations[1]},
    )


@dataclass(frozen=True)
class _Sums:
    """Column sums Σ_w cos(w, a) over the targets of X (``x``) and Y (``y``) for every pooled attribute
    of A = A_x ∪ A_y (``ax``, ``ay``) and B = B_x ∪ B_y (``bx``, ``by``), with the set sizes. The sum
    over x of s(x, S, T) is Σ_{a ∈ S} ax[a] / |S| - Σ_{b ∈ T} bx[b] / |T|, so every attribute partition's
    statistic needs only subset sums of these four vectors."""

    ax: np.ndarray
    ay: np.ndarray
    bx: np.ndarray
    by: np.ndarray
    sizes: tuple[int, int, int, int]  # |A_x|, |A_y|, |B_x|, |B_y|

    def statistic(self, sax: np.ndarray, say: np.ndarray, sbx: np.ndarray, sbby: np.ndarray) -> np.ndarray:
        """Experiment 3's statistic for attribute partitions given by the subset sums over the new A_x
        (``sax`` of ax, ``say`` of ay) and the new B_x (``sbx`` of bx, ``sbby`` of by)."""
        nax, nay, nbx, nby = self.sizes
        tax, tay, tbx, tby = self.ax.sum(), self.ay.sum(), self.bx.sum(), self.by.sum()
        # Σ_x [s(x, A_x, B_x) - s(x, A_y, B_y)] and Σ_y [s(y, A_y, B_y) - s(y, A_x, B_x)]
        term_x = sax / nax - sbx / nbx - (tax - sax) / nay + (tbx - sbx) / nby
        term_y = (tay - say) / nay - (tby - sbby) / nby - say / nax + sbby / nbx
        return 0.5 * (np.abs(term_x) + np.abs(term_y))


def _experiment3(sets: dict[str, np.ndarray], permutations: str | int, rng: Any) -> GroundedResult:
    X, Y = sets["X"], sets["Y"]
    atol = rounding_error(X.shape[1])
    congruent_x = target_associations(X, sets["A_x"], sets["B_x"])
    incongruent_x = target_associations(X, sets["A_y"], sets["B_y"])
    congruent_y = target_associations(Y, sets["A_y"], sets["B_y"])
    incongruent_y = target_associations(Y, sets["A_x"], sets["B_x"])
    terms = []
    for first, second in ((congruent_x, incongruent_x), (congruent_y, incongruent_y)):
        term = float(first.sum() - second.sum())
        # a sum of n differences of s-values is exact to 2 n atol: within that it is 0 (no visual effect)
        terms.append(0.0 if abs(term) <= 2 * first.size * atol else abs(term))
    statistic = 0.5 * (terms[0] + terms[1])
    d_X = float(cohens_d(congruent_x, incongruent_x, atol=atol))
    d_Y = float(cohens_d(congruent_y, incongruent_y, atol=atol))

    A = np.concatenate([sets["A_x"], sets["A_y"]])
    B = np.concatenate([sets["B_x"], sets["B_y"]])
    sums = _Sums(
        ax=cosine_matrix(X, A).sum(axis=0), ay=cosine_matrix(Y, A).sum(axis=0),
        bx=cosine_matrix(X, B).sum(axis=0), by=cosine_matrix(Y, B).sum(axis=0),
        sizes=(len(sets["A_x"]), len(sets["A_y"]), len(sets["B_x"]), len(sets["B_y"])),
    )
    n_targets, n_attributes = X.shape[0] + Y.shape[0], A.shape[0] + B.shape[0]
    # rounding of the two summation orders (direct vs subset sums) of a statistic bounded by n_targets
    tolerance = 4.0 * n_targets * (atol + n_attributes * float(np.finfo(np.float64).eps))
    threshold = statistic - tolerance
    nax, _, nbx, _ = sums.sizes
    n_partitions = math.comb(A.shape[0], nax) * math.comb(B.shape[0], nbx)
    if permutations == "exact" and n_partitions > EXACT_MAX_PARTITIONS_3:
        raise EatkitError(
            f"experiment 3 has {n_partitions:.3g} attribute partitions, too many to count exactly "
            f"(at most {EXACT_MAX_PARTITIONS_3}); pass a number of Monte Carlo permutations instead"
        )
    if permutations == "exact" or (permutations == "auto" and n_partitions <= DEFAULT_MONTE_CARLO):
        count = _count_exact_3(sums, A.shape[0], B.shape[0], threshold)
        p, exact, n_permutations, seed, error = count / n_partitions, True, n_partitions, None, 0.0
    else:
        draws = DEFAULT_MONTE_CARLO if permutations == "auto" else int(permutations)
        generator, seed = resolve_rng(rng)
        count = 0
        for start in range(0, draws, MC_BATCH):
            b = min(MC_BATCH, draws - start)
            chosen_a = random_subsets(A.shape[0], nax, b, generator)
            chosen_b = random_subsets(B.shape[0], nbx, b, generator)
            stats = sums.statistic(sums.ax[chosen_a].sum(axis=1), sums.ay[chosen_a].sum(axis=1),
                                   sums.bx[chosen_b].sum(axis=1), sums.by[chosen_b].sum(axis=1))
            count += int(np.count_nonzero(stats >= threshold))
        p = (count + 1) / (draws + 1)
        exact, n_permutations, error = False, draws, math.sqrt(p * (1 - p) / draws)
    return GroundedResult(
        experiment=3, effect_size=0.5 * (abs(d_X) + abs(d_Y)), statistic=statistic, p_value=min(1.0, p),
        p_values={"greater": min(1.0, p)}, alternative="greater", p_value_exact=exact, n_permutations=n_permutations,
        n_partitions=n_partitions, standard_errors={"greater": error}, seed=seed, tie_tolerance=tolerance,
        d_X=d_X, d_Y=d_Y,
        associations={"x_congruent": congruent_x, "x_incongruent": incongruent_x,
                      "y_congruent": congruent_y, "y_incongruent": incongruent_y},
    )


def _count_exact_3(sums: _Sums, n_a: int, n_b: int, threshold: float) -> int:
    """Attribute partitions (every new A_x of size |A_x| times every new B_x of size |B_x|) whose
    experiment-3 statistic reaches ``threshold``; blocks of A-subsets bound the memory."""
    nax, _, nbx, _ = sums.sizes
    subsets_b = np.array(list(combinations(range(n_b), nbx)), dtype=np.int64).reshape(-1, nbx)
    sbx, sby = sums.bx[subsets_b].sum(axis=1), sums.by[subsets_b].sum(axis=1)
    block = max(1, (1 << 20) // len(subsets_b))
    count = 0
    subsets_a = combinations(range(n_a), nax)
    while True:
        chunk = np.array([s for _, s in zip(range(block), subsets_a)], dtype=np.int64).reshape(-1, nax)
        if len(chunk) == 0:
            return count
        sax, say = sums.ax[chunk].sum(axis=1), sums.ay[chunk].sum(axis=1)
        stats = sums.statistic(sax[:, None], say[:, None], sbx[None, :], sby[None, :])
        count += int(np.count_nonzero(stats >= threshold))
