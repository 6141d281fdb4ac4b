"""Cosine similarities and the association measures built on them.

* s(w, A, B) = mean_{a∈A} cos(w, a) - mean_{b∈B} cos(w, b)   (Caliskan et al. 2017; iEAT seed §3.3)
* u(T, a)    = mean_{t∈T} cos(t, a)                            (ML-EAT seed, eq. 6)
"""

from __future__ import annotations

import numpy as np


def rounding_error(dim: int) -> float:
    """A bound on the float64 rounding error of one association value (s or u) of ``dim``-d vectors.

    A cosine of unit vectors is a length-``dim`` dot product (error <= dim ε) after two normalisations
    (a few ε); s(w, A, B) is a difference of two means of cosines, so its error is below 2 (dim + 2) ε.
    """
    return 2.0 * (dim + 2) * float(np.finfo(np.float64).eps)


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (inputs are validated to have non-zero norm)."""
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def cosine_matrix(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``out[i, j] = cos(left[i], right[j])``.

    >>> cosine_matrix(np.array([[1.0, 0.0]]), np.array([[2.0, 0.0], [0.0, 3.0]]))
    array([[1., 0.]])
    """
    return unit_rows(left) @ unit_rows(right).T


def differential_association(
    cos_a: np.ndarray, cos_b: np.ndarray, weights_a: np.ndarray | None = None, weights_b: np.ndarray | None = None
) -> np.ndarray:
    """s(w, A, B) = mean_a cos(w, a) - mean_b cos(w, b) (iEAT seed §3.3) from the cosines of each target
    (rows) with A and with B (columns); the one place this formula is written.

    With ``weights_a`` (r, |A|) and ``weights_b`` (r, |B|), rows summing to 1, the means are weighted: row
    r of the (r, n_targets) result is s(w, A*, B*) for resampled multisets A*, B* (the bootstrap).

    >>> differential_association(np.array([[1.0, 0.5]]), np.array([[0.0, 0.25]]))
    array([0.625])
    """
    if weights_a is None or weights_b is None:
        return cos_a.mean(axis=-1) - cos_b.mean(axis=-1)
    return weights_a @ cos_a.T - weights_b @ cos_b.T


def target_associations(targets: np.ndarray, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """s(w, A, B) for every row w of ``targets``."""
    return differential_association(cosine_matrix(targets, A), cosine_matrix(targets, B))


def attribute_associations(T: np.ndarray, attributes: np.ndarray) -> np.ndarray:
    """u(T, a) for every row a of ``attributes``: the mean cosine of ``a`` with the target set T."""
    return cosine_matrix(attributes, T).mean(axis=1)
