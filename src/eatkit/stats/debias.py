"""Debiasing of static word vectors, on arrays (numpy only): Hard Debias, Double-Hard Debias and
Half-Sibling Regression.

Each function takes the table ``vectors`` (V, d), the row indices of the word lists it needs, and returns
a new table (the input is never modified) with a :class:`DebiasInfo` saying what was done.

* :func:`hard_debias` (Bolukbasi et al. 2016, NeurIPS, §6 "hard de-biasing"): every row is scaled to unit
  length; g is the bias direction of the definitional pairs (:func:`eatkit.stats.metrics.gender_direction`);
  *neutralise*: every neutral row w becomes (w - (w·g) g) / ‖w - (w·g) g‖, so w·g = 0; *equalise*: each
  equality pair (a, b) becomes ν ± √(1 - ‖ν‖²) g, ν = μ - (μ·g) g and μ = (a + b) / 2 (the sign of
  (a - b)·g kept), so that every neutral word is equidistant from a and b.
* :func:`double_hard_debias` (Wang et al. 2020, ACL, §3, Algorithm 1): first removes a "frequency"
  direction: the candidate u_i among the first ``n_components`` principal components of the centred
  table whose removal, followed by neutralisation, leaves the ``n_words`` most male- and female-biased
  words least separable by 2-means (the accuracy of the clusters against the two groups, at least 0.5);
  then w' = (w - μ) - (u_i·(w - μ)) u_i for every row, and :func:`hard_debias` of the result.
* :func:`repulsion_attraction_neutralisation` (Kumar et al. 2020, TACL 8, §4; WEFE's RAN): every row is
  scaled to unit length; each neutral word w gets a new vector w_d minimising
  λ1 F_r + λ2 F_a + λ3 F_n, with repulsion F_r = mean_{n ∈ S} |cos(w_d, n)| over its repulsion set S (those of
  its ``n_neighbours`` nearest words whose indirect bias β(n, w) = (n·w - cos(n⊥, w⊥)) / (n·w) exceeds
  ``theta``, ⊥ removing the g component; Bolukbasi et al. 2016 §5), attraction F_a = |cos(w_d, w) - 1| / 2
  and neutralisation F_n = |w_d · g|; ``epochs`` steps of Adam (learning rate ``learning_rate``) from w_d = w,
  with the gradient written out.
* :func:`half_sibling_regression` (Yang & Feng 2020, AAAI, §3): the non-gender rows are predicted from the
  gender-definition rows by ridge regression, W = (G G^T + α I)^{-1} G N^T with G (n_g, d) and N (n_n, d)
  read as column matrices d x n: N_hat = (G^T W)^T, and the debiased rows are N - N_hat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._random import resolve_rng
from eatkit.stats._validation import check_embeddings
from eatkit.stats.association import unit_rows
from eatkit.stats.metrics import gender_direction, two_means

METHODS: tuple[str, ...] = ("hard", "double-hard", "hsr", "ran")
#: Adam's constants (as torch.optim.Adam's defaults, which WEFE's RAN uses)
ADAM_BETAS, ADAM_EPS = (0.9, 0.999), 1e-8


@dataclass(frozen=True, kw_only=True)
class DebiasInfo:
    """How a table was debiased: the method, its bias direction (None for HSR) and method details."""

    method: str
    direction: np.ndarray | None = field(default=None, repr=False)
    details: dict[str, Any] = field(default_factory=dict)


def _check_rows(name: str, rows: Any, n: int) -> np.ndarray:
    arr = np.asarray(rows, dtype=np.int64).reshape(-1)
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise EatkitError(f"{name}: row index out of range (the table has {n} rows)")
    return arr


def _pairs_of(name: str, pairs: Any, n: int) -> np.ndarray:
    arr = _check_rows(name, pairs, n).reshape(-1, 2) if np.size(pairs) else np.zeros((0, 2), dtype=np.int64)
    return arr


def _neutralise(vectors: np.ndarray, neutral: np.ndarray, g: np.ndarray) -> None:
    """Neutral rows minus their projection on g, re-scaled to unit length (in place)."""
    rows = vectors[neutral]
    rows = rows - np.outer(rows @ g, g)
    vectors[neutral] = unit_rows(rows)


def _equalise(vectors: np.ndarray, pairs: np.ndarray, g: np.ndarray) -> None:
    """Each equality pair made symmetric about the hyperplane orthogonal to g (in place)."""
    for a, b in pairs:
        mu = (vectors[a] + vectors[b]) / 2
        nu = mu - (mu @ g) * g
        z = np.sqrt(max(0.0, 1.0 - float(nu @ nu)))
        if float((vectors[a] - vectors[b]) @ g) < 0:
            z = -z
        vectors[a], vectors[b] = nu + z * g, nu - z * g


def hard_debias(vectors: Any, definitional: Any, neutral: Any, equalize: Any = ()) -> tuple[np.ndarray, DebiasInfo]:
    """Hard Debias (Bolukbasi et al. 2016; see the module docstring).

    ``definitional`` and ``equalize`` are (n, 2) row-index pairs, ``neutral`` row indices.

    >>> V = np.array([[1.0, 0.2, 0.0], [-1.0, 0.2, 0.0], [0.5, 1.0, 0.0], [0.3, 0.0, 1.0]])
    >>> out, info = hard_debias(V, [[0, 1]], [2, 3])
    >>> bool(np.abs(out[[2, 3]] @ info.direction).max() < 1e-12)
    True
    """
    table = unit_rows(check_embeddings("vectors", vectors, min_rows=2)).copy()
    n = len(table)
    definitional = _pairs_of("definitional pairs", definitional, n)
    if len(definitional) == 0:
        raise EatkitError("hard debias needs at least one definitional pair")
    neutral = _check_rows("neutral words", neutral, n)
    equalize = _pairs_of("equalize pairs", equalize, n)
    g = gender_direction(table[definitional[:, 0]], table[definitional[:, 1]])
    _neutralise(table, neutral, g)
    _equalise(table, equalize, g)
    return table, DebiasInfo(method="hard", direction=g, details={"neutral": int(neutral.size),
                                                                   "equalized": int(len(equalize))})


def _kmeans_alignment(points: np.ndarray, generator: np.random.Generator) -> float:
    """The accuracy (at least 0.5) of 2-means clusters (:func:`eatkit.stats.metrics.two_means`) against the
    two halves of ``points`` (the first half one group, the second the other)."""
    labels = two_means(points, generator)
    half = len(points) // 2
    truth = np.r_[np.zeros(half, dtype=int), np.ones(len(points) - half, dtype=int)]
    accuracy = float(np.mean(labels == truth))
    return max(accuracy, 1 - accuracy)


def double_hard_debias(vectors: Any, definitional: Any, neutral: Any, equalize: Any = (), *,
                       bias_words: tuple[int, int], n_words: int = 1000, n_components: int = 4,
                       rng: Any = None) -> tuple[np.ndarray, DebiasInfo]:
    """Double-Hard Debias (Wang et al. 2020; see the module docstring). ``bias_words`` are the rows of the
    two words that represent the groups (e.g. "he", "she"); the ``n_words`` neutral words with the highest
    and lowest cos(w, he) - cos(w, she) are the ones the 2-means must not separate.

    >>> rng = np.random.default_rng(0); V = rng.normal(size=(40, 5))
    >>> out, info = double_hard_debias(V, [[0, 1], [2, 3]], range(4, 40), bias_words=(0, 1), n_words=5, rng=0)
    >>> info.details["component"] in range(4), bool(np.abs(out[4:] @ info.direction).max() < 1e-12)
    (True, True)
    """
    table = check_embeddings("vectors", vectors, min_rows=2)
    neutral = _check_rows("neutral words", neutral, len(table))
    if not 1 <= n_words <= len(neutral) // 2:
        raise EatkitError(f"n_words must be between 1 and half the neutral words ({len(neutral) // 2}), got {n_words}")
    if not isinstance(n_components, int) or not 1 <= n_components <= min(table.shape):
        raise EatkitError(f"n_components must be between 1 and {min(table.shape)} (the vectors' dimension and "
                          f"count), got {n_components!r}")
    generator, seed = resolve_rng(rng)
    mean = table.mean(axis=0)
    centred = table - mean
    components = np.linalg.svd(centred, full_matrices=False)[2][:n_components]
    unit = unit_rows(table)
    he, she = _check_rows("bias words", list(bias_words), len(table))
    bias = unit[neutral] @ (unit[he] - unit[she])
    order = np.argsort(bias, kind="stable")
    extreme = neutral[np.r_[order[-n_words:], order[:n_words]]]
    definitional = _pairs_of("definitional pairs", definitional, len(table))
    g = gender_direction(table[definitional[:, 0]], table[definitional[:, 1]])
    scores = []
    for u in components:
        dropped = centred[extreme] - np.outer(centred[extreme] @ u, u)
        dropped = unit_rows(dropped - np.outer(dropped @ g, g))
        scores.append(_kmeans_alignment(dropped, generator))
    best = int(np.argmin(scores))
    u = components[best]
    out, info = hard_debias(centred - np.outer(centred @ u, u), definitional, neutral, equalize)
    return out, DebiasInfo(method="double-hard", direction=info.direction,
                           details={**info.details, "component": best, "alignments": scores, "seed": seed})


def half_sibling_regression(vectors: Any, gender: Any, non_gender: Any, *, alpha: float = 60.0) -> tuple[np.ndarray, DebiasInfo]:
    """Half-Sibling Regression (Yang & Feng 2020; see the module docstring); ``alpha`` is the ridge
    penalty (the paper's 60). Gender-definition rows are left as they are.

    >>> V = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> out, _ = half_sibling_regression(V, [0, 1], [2], alpha=1e-9)
    >>> bool(np.abs(out[2]).max() < 1e-8)   # (1, 1) lies in the span of the gender rows: nothing is left
    True
    """
    table = check_embeddings("vectors", vectors, min_rows=2).copy()
    gender = _check_rows("gender words", gender, len(table))
    non_gender = _check_rows("non-gender words", non_gender, len(table))
    if gender.size == 0:
        raise EatkitError("half-sibling regression needs at least one gender-definition word")
    if not alpha > 0:
        raise EatkitError(f"alpha must be positive, got {alpha!r}")
    G, N = table[gender].T, table[non_gender].T  # (d, n_g), (d, n_n): the paper's column matrices
    W = np.linalg.solve(G.T @ G + alpha * np.eye(G.shape[1]), G.T @ N)
    table[non_gender] = (N - G @ W).T
    return table, DebiasInfo(method="hsr", details={"alpha": alpha, "gender": int(gender.size)})


def _ran_objective(P: np.ndarray, W: np.ndarray, S: np.ndarray, M: np.ndarray, g: np.ndarray,
                   weights: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    """RAN's objective of each row of P (b, d) and its gradient: originals W (b, d), repulsion sets S
    (b, k, d) with mask M (b, k), bias direction g (see the module docstring)."""
    norm = np.linalg.norm(P, axis=1, keepdims=True)
    unit = P / norm
    # d cos(p, x) / dp = x / (|x| |p|) - cos(p, x) p / |p|^2
    s_unit = S / np.linalg.norm(S, axis=2, keepdims=True)
    cos_s = np.einsum("bkd,bd->bk", s_unit, unit)
    count = np.maximum(M.sum(axis=1, keepdims=True), 1)
    f_r = (M * np.abs(cos_s)).sum(axis=1, keepdims=True) / count
    d_cos_s = (s_unit - cos_s[..., None] * unit[:, None, :]) / norm[:, None, :]
    g_r = np.einsum("bk,bkd->bd", M * np.sign(cos_s), d_cos_s) / count
    w_unit = W / np.linalg.norm(W, axis=1, keepdims=True)
    cos_w = np.einsum("bd,bd->b", unit, w_unit)[:, None]
    f_a = np.abs(cos_w - 1) / 2
    g_a = np.sign(cos_w - 1) / 2 * (w_unit - cos_w * unit) / norm
    proj = (P @ g)[:, None]
    f_n, g_n = np.abs(proj), np.sign(proj) * g
    l1, l2, l3 = weights
    return (l1 * f_r + l2 * f_a + l3 * f_n)[:, 0], l1 * g_r + l2 * g_a + l3 * g_n


def repulsion_attraction_neutralisation(vectors: Any, definitional: Any, neutral: Any, *, theta: float = 0.05,
                                        n_neighbours: int = 100, learning_rate: float = 0.01, epochs: int = 300,
                                        weights: tuple[float, float, float] = (0.33, 0.33, 0.33),
                                        chunk: int = 256) -> tuple[np.ndarray, DebiasInfo]:
    """Repulsion-Attraction-Neutralisation (Kumar et al. 2020; see the module docstring; WEFE's defaults).
    Words are optimised in chunks of ``chunk`` (each independently of the others).

    >>> rng = np.random.default_rng(0); V = rng.normal(size=(30, 6))
    >>> out, info = repulsion_attraction_neutralisation(V, [[0, 1], [2, 3]], range(4, 30), n_neighbours=5)
    >>> bool(np.abs(out[4:] @ info.direction).mean() < np.abs(V[4:] @ info.direction / np.linalg.norm(V[4:], axis=1)).mean())
    True
    """
    table = unit_rows(check_embeddings("vectors", vectors, min_rows=2)).copy()
    definitional = _pairs_of("definitional pairs", definitional, len(table))
    neutral = _check_rows("neutral words", neutral, len(table))
    if len(definitional) == 0:
        raise EatkitError("RAN needs at least one definitional pair")
    if not 1 <= n_neighbours < len(table):
        raise EatkitError(f"n_neighbours must be between 1 and {len(table) - 1}, got {n_neighbours}")
    g = gender_direction(table[definitional[:, 0]], table[definitional[:, 1]])
    orth = unit_rows(table - np.outer(table @ g, g))
    sizes, objective = [], []
    original = table.copy()
    for start in range(0, neutral.size, chunk):
        rows = neutral[start:start + chunk]
        W = original[rows]
        sims = W @ original.T
        sims[np.arange(rows.size), rows] = -np.inf  # a word is not its own neighbour
        near = np.argsort(-sims, axis=1, kind="stable")[:, :n_neighbours]
        dots = np.take_along_axis(sims, near, axis=1)
        cos_orth = np.einsum("bd,bkd->bk", orth[rows], orth[near])
        with np.errstate(divide="ignore", invalid="ignore"):
            mask = ((dots - cos_orth) / dots > theta).astype(np.float64)
        S = original[near]
        P, m, v = W.copy(), np.zeros_like(W), np.zeros_like(W)
        for step in range(1, epochs + 1):
            _, grad = _ran_objective(P, W, S, mask, g, weights)
            m = ADAM_BETAS[0] * m + (1 - ADAM_BETAS[0]) * grad
            v = ADAM_BETAS[1] * v + (1 - ADAM_BETAS[1]) * grad**2
            P -= learning_rate * (m / (1 - ADAM_BETAS[0] ** step)) / (np.sqrt(v / (1 - ADAM_BETAS[1] ** step)) + ADAM_EPS)
        table[rows] = P
        sizes.append(mask.sum(axis=1))
        objective.append(_ran_objective(P, W, S, mask, g, weights)[0])
    details = {"theta": theta, "n_neighbours": n_neighbours, "learning_rate": learning_rate, "epochs": epochs,
               "weights": list(weights),
               "mean_repulsion_set": float(np.mean(np.concatenate(sizes))) if sizes else 0.0,
               "mean_objective": float(np.mean(np.concatenate(objective))) if objective else 0.0}
    return table, DebiasInfo(method="ran", direction=g, details=details)
