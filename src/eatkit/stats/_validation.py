"""Input checks at the boundary of every statistic: one precise message per problem."""

from __future__ import annotations

import numbers
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats.degeneracy import COMPARED, SET_RULES, check_degenerate, check_range, fail


def check_embeddings(name: str, vectors: Any, *, min_rows: int = 1, dim: int | None = None) -> np.ndarray:
    """Return ``vectors`` as a float64 ``(n, d)`` array, or raise naming set ``name`` and the problem.

    A 1-D vector is read as one row. Rows must be finite and have non-zero norm (cosine similarity is
    undefined for a zero vector).
    """
    arr = _real(vectors, f"set '{name}'")
    if arr.ndim == 1:
        if arr.size == 0:
            raise EatkitError(f"set '{name}' is empty")
        arr = arr[np.newaxis, :]
    if arr.ndim != 2:
        raise EatkitError(f"set '{name}' must be a 2-D array (n, d), got {arr.ndim} dimensions")
    n, d = arr.shape
    if n == 0:
        raise EatkitError(f"set '{name}' is empty")
    if n < min_rows:
        raise EatkitError(f"set '{name}' has {n} stimuli; this test needs at least {min_rows}")
    if d == 0:
        raise EatkitError(f"set '{name}' has vectors of dimension 0")
    if d == 1:
        fail("one-dimensional", set=name)
    if dim is not None and d != dim:
        raise EatkitError(f"set '{name}' has dimension {d}, but the other sets have dimension {dim}")
    finite = np.isfinite(arr).all(axis=1)
    if not finite.all():
        rows = np.flatnonzero(~finite)
        raise EatkitError(f"set '{name}' has non-finite values (NaN or inf) in row(s) {_rows(rows)}")
    largest = float(np.abs(arr).max())
    norms = np.linalg.norm(arr / largest, axis=1) * largest if largest > 0 else np.zeros(n)  # no overflow
    if not (norms > 0).all():
        rows = np.flatnonzero(norms <= 0)
        raise EatkitError(f"set '{name}' has zero-norm vector(s) in row(s) {_rows(rows)}")
    return arr


def check_sets(min_rows: int | dict[str, int] = 2, *, scaled: bool = False, rules: bool | Collection[str] = True,
               compared: Sequence[tuple[str, str]] = COMPARED, **sets: Any) -> dict[str, np.ndarray]:
    """Check several named sets (at least ``min_rows`` stimuli each, or per name), that they share one
    dimension, and the degeneracy rules (:func:`eatkit.stats.degeneracy.check_degenerate`; ``scaled``: the
    statistic depends on the vectors' scale; ``rules=False`` only for what describes sets rather than comparing
    them: image-class geometry, set diagnostics; or the names of the rules to apply, a kind's declared ones;
    ``compared``: the pairs of sets compared with each other). Two per group is the default: with one, Cohen's d is ±√2
    whatever the data.

    >>> check_sets(X=[[1.0, 0.0], [1.0, 0.0]], Y=[[0.0, 1.0], [1.0, 1.0]])   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: set 'X' holds 2 stimuli that all share one vector (zero variance): ...
    """
    out: dict[str, np.ndarray] = {}
    dim: int | None = None
    for name, vectors in sets.items():
        least = min_rows.get(name, 2) if isinstance(min_rows, dict) else min_rows
        arr = check_embeddings(name, vectors, min_rows=least, dim=dim)
        dim = arr.shape[1]
        out[name] = arr
    if rules:
        check_degenerate(out, scaled=scaled, compared=compared, rules=SET_RULES if rules is True else rules)
    return out


def _real(values: Any, what: str) -> np.ndarray:
    """``values`` as a float64 array; complex numbers (whose imaginary parts a cast would drop silently) and
    anything not numeric are errors."""
    try:
        raw = np.asarray(values)
        if raw.dtype.kind == "c" or (raw.dtype == object and any(isinstance(v, complex) for v in raw.ravel())):
            raise EatkitError(f"{what} has complex values; embeddings and associations must be real numbers")
        return np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as err:
        if isinstance(err, EatkitError):
            raise
        raise EatkitError(f"{what} is not a numeric array") from None


def check_count(name: str, value: Any) -> int:
    """A positive whole number (e.g. a number of resamples), or a precise error."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise EatkitError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_share(name: str, value: Any) -> float:
    """A number strictly between 0 and 1 (a level, a power, a fraction), or a precise error.

    >>> check_share("alpha", 0.05)
    0.05
    """
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not 0 < value < 1:
        raise EatkitError(f"{name} must lie strictly between 0 and 1, got {value!r}")
    return float(value)


def check_values(name: str, values: Any) -> np.ndarray:
    """Check a non-empty 1-D array of finite association values within the degeneracy rules' ``value-range``
    (:data:`eatkit.stats.degeneracy.VALUE_RANGE`: their squares and sums stay in float64)."""
    arr = _real(values, f"'{name}'")
    if arr.ndim != 1:
        raise EatkitError(f"'{name}' must be a 1-D array of association values")
    if arr.size == 0:
        raise EatkitError(f"'{name}' is empty")
    if not np.isfinite(arr).all():
        raise EatkitError(f"'{name}' has non-finite values")
    check_range(name, arr)
    return arr


def _rows(rows: np.ndarray, limit: int = 5) -> str:
    shown = ", ".join(str(int(r)) for r in rows[:limit])
    return shown + (f" (and {rows.size - limit} more)" if rows.size > limit else "")
