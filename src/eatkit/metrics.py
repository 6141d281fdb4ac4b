"""The field's bias metrics in WEFE's vocabulary: ``eatkit.metrics.<name>(targets, attributes, **options)``.

``targets`` and ``attributes`` are sequences of sets, each an ``(n, d)`` array, or, with ``model=``, a
list of words looked up in a word-embedding object: a gensim ``KeyedVectors``, a WEFE
``WordEmbeddingModel`` (its ``.wv``) or anything with ``key_to_index`` and ``vectors`` (duck-typed: gensim
is never imported). A word the model lacks is an error naming it, or, with ``oov="drop"``, dropped and
listed in the result's ``dropped``. Each metric checks its query's template (WEFE's numbers of target and
attribute sets) and calls :mod:`eatkit.stats.metrics`, which computes the value, a permutation p where the
metric has a null, and a bootstrap CI (``n_resamples > 0``); see there for the formulas and citations.

=====================  ===================  ===============================================================
function               template (T, A)      attributes
=====================  ===================  ===============================================================
:func:`rnd`            (2, 1)               Garg et al. 2018
:func:`ect`            (2, 1)               Dev & Phillips 2019
:func:`ripa`           (2, 1)               Ethayarajh et al. 2019 (targets paired row by row)
:func:`mac`            (n, n)               Manzini et al. 2019
:func:`rnsb`           (n, 2)               Sweeney & Najafian 2019 (attribute 1 positive, 2 negative)
:func:`direct_bias`    (2, 1)               Bolukbasi et al. 2016 (targets: definitional pairs; attributes:
                                             the neutral words)
=====================  ===================  ===============================================================

>>> import numpy as np, eatkit.metrics
>>> X = np.array([[1.0, 0.1], [0.9, 0.0]]); Y = np.array([[0.1, 1.0], [0.0, 0.9]])
>>> A = np.array([[1.0, 0.2], [0.8, 0.0], [0.2, 1.0]])
>>> r = eatkit.metrics.ripa([X, Y], [A], permutations="exact")
>>> round(r.value, 4), r.p_values["two-sided"]
(0.1886, 0.5)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats import metrics as _m
from eatkit.stats.metrics import MetricResult

__all__ = ["MetricResult", "direct_bias", "ect", "mac", "ripa", "rnd", "rnsb", "word_vectors"]


def rnd(targets: Sequence[Any], attributes: Sequence[Any], *, model: Any = None, oov: str = "error",
        **options: Any) -> MetricResult:
    """Relative norm distance of targets (X, Y) and one attribute set (:func:`eatkit.stats.metrics.rnd`;
    options ``distance``, ``alternative``, ``permutations``, ``n_resamples``, ``confidence_level``, ``rng``)."""
    (X, Y), (A,), dropped = _query("RND", targets, attributes, (2, 1), model, oov)
    return _with(_m.rnd(X, Y, A, **options), dropped)


def ect(targets: Sequence[Any], attributes: Sequence[Any], *, model: Any = None, oov: str = "error",
        **options: Any) -> MetricResult:
    """Embedding coherence test of targets (X, Y) and one attribute set (:func:`eatkit.stats.metrics.ect`)."""
    (X, Y), (A,), dropped = _query("ECT", targets, attributes, (2, 1), model, oov)
    return _with(_m.ect(X, Y, A, **options), dropped)


def ripa(targets: Sequence[Any], attributes: Sequence[Any], *, model: Any = None, oov: str = "error",
         **options: Any) -> MetricResult:
    """RIPA of target pairs (X[i], Y[i]) and one attribute set (:func:`eatkit.stats.metrics.ripa`)."""
    (X, Y), (A,), dropped = _query("RIPA", targets, attributes, (2, 1), model, oov)
    return _with(_m.ripa(X, Y, A, **options), dropped)


def mac(targets: Sequence[Any], attributes: Sequence[Any], *, model: Any = None, oov: str = "error",
        **options: Any) -> MetricResult:
    """Mean average cosine distance of any target and attribute sets (:func:`eatkit.stats.metrics.mac`)."""
    T, A, dropped = _query("MAC", targets, attributes, (None, None), model, oov)
    return _with(_m.mac(T, A, **options), dropped)


def rnsb(targets: Sequence[Any], attributes: Sequence[Any], *, model: Any = None, oov: str = "error",
         **options: Any) -> MetricResult:
    """RNSB of any target sets with a positive and a negative attribute set
    (:func:`eatkit.stats.metrics.rnsb`; options ``n_fits``, ``holdout``, ``n_resamples``, ``rng``)."""
    T, (A, B), dropped = _query("RNSB", targets, attributes, (None, 2), model, oov)
    return _with(_m.rnsb(T, A, B, **options), dropped)


def direct_bias(targets: Sequence[Any], attributes: Sequence[Any], *, model: Any = None, oov: str = "error",
                **options: Any) -> MetricResult:
    """Direct bias of neutral words (the attribute set) on the direction of the definitional pairs
    (X[i], Y[i]) (:func:`eatkit.stats.metrics.direct_bias`; option ``c``)."""
    (X, Y), (N,), dropped = _query("direct bias", targets, attributes, (2, 1), model, oov)
    return _with(_m.direct_bias(X, Y, N, **options), dropped)


def word_vectors(model: Any) -> tuple[dict[str, int], np.ndarray]:
    """The word index and vector table of a word-embedding object, by duck typing: gensim ``KeyedVectors``
    (``key_to_index``, ``vectors``), WEFE's ``WordEmbeddingModel`` (its ``wv``), or eatkit's word vectors.

    >>> class KV: key_to_index = {"a": 0}; vectors = np.array([[1.0, 2.0]])
    >>> word_vectors(KV())[0]
    {'a': 0}
    """
    inner = getattr(model, "wv", model)
    index, table = getattr(inner, "key_to_index", None), getattr(inner, "vectors", None)
    if index is None or table is None:
        raise EatkitError(f"model must be a gensim KeyedVectors or WEFE WordEmbeddingModel (an object with "
                          f"key_to_index and vectors), got {type(model).__name__}")
    return dict(index), np.asarray(table)


def _query(name: str, targets: Any, attributes: Any, template: tuple[int | None, int | None], model: Any,
           oov: str) -> tuple[list[Any], list[Any], dict[str, list[str]]]:
    """The sets of a query, checked against the metric's template, looked up in ``model`` when given."""
    if oov not in ("error", "drop"):
        raise EatkitError(f"oov must be 'error' or 'drop', got {oov!r}")
    out = []
    for what, sets, count in (("target", targets, template[0]), ("attribute", attributes, template[1])):
        if isinstance(sets, (str, np.ndarray)) or not isinstance(sets, Sequence) or len(sets) == 0:
            raise EatkitError(f"{name}: the {what} sets must be a non-empty list of sets")
        if count is not None and len(sets) != count:
            raise EatkitError(f"{name} takes {count} {what} set(s) (WEFE's template), got {len(sets)}")
        out.append(list(sets))
    dropped: dict[str, list[str]] = {}
    if model is None:
        return out[0], out[1], dropped
    index, table = word_vectors(model)
    for group, prefix in zip(out, "TA"):
        for i, words in enumerate(group):
            label = f"{prefix}{i + 1}"
            if isinstance(words, str) or not all(isinstance(w, str) for w in words):
                raise EatkitError(f"{name}: with model=, set {label} must be a list of words")
            missing = [w for w in words if w not in index]
            if missing and oov == "error":
                raise EatkitError(f"{name}: set {label} has word(s) the model lacks: {', '.join(missing[:10])}"
                                  " (pass oov='drop' to drop them and record it)")
            if missing:
                dropped[label] = missing
            group[i] = np.asarray(table[[index[w] for w in words if w in index]], dtype=np.float64)
    return out[0], out[1], dropped


def _with(result: MetricResult, dropped: dict[str, list[str]]) -> MetricResult:
    return dataclasses.replace(result, dropped=dropped) if dropped else result
