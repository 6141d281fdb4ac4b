"""Cosine similarities and the association measures built on them.

* s(w, A, B) = mean_{a∈A} cos(w, a) - mean_{b∈B} cos(w, b)   (Caliskan et al. 2017; iEAT seed §3.3)
* u(T, a)    = mean_{t∈T} cos(t, a)                            (ML-EAT seed, eq. 6)
"""

from __future__ import annotations

import numpy as np


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (inputs are validated to have non-zero norm)."""
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def cosine_matrix(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``out[i, j] = cos(left[i], right[j])``.

    >>> cosine_matrix(np.array([[1.0, 0.0]]), np.array([[2.0, 0.0], [0.0, 3.0]]))
    array([[1., 0.]])
    """
    return unit_rows(left) @ unit_rows(right).T


def target_associations(targets: np.ndarray, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """s(w, A, B) for every row w of ``targets``."""
    return cosine_matrix(targets, A).mean(axis=1) - cosine_matrix(targets, B).mean(axis=1)


def attribute_associations(T: np.ndarray, attributes: np.ndarray) -> np.ndarray:
    """u(T, a) for every row a of ``attributes``: the mean cosine of ``a`` with the target set T."""
    return cosine_matrix(attributes, T).mean(axis=1)
