"""The field's bias metrics in WEFE's vocabulary: ``eatkit.metrics.<name>(targets, attributes, **options)``.

``targets`` and ``attributes`` are sequences of sets, each an ``(n, d)`` array, or, with ``model=``, a
list of words looked up in a word-embedding object: a gensim ``KeyedVectors``, a WEFE
``WordEmbeddingModel`` (its ``.wv``) or anything with ``key_to_index`` and ``vectors`` (duck-typed: gensim
is never imported). A word the model lacks is an error naming it, or, with ``oov="drop"``, dropped and
listed in the result's ``dropped``. Each metric checks its query's template (WEFE's numbers of target and
attribute sets) and calls :mod:`eatkit.stats.metrics`, which computes the value, a permutation p where the
metric has a null, and a bootstrap CI (``n_bootstrap > 0``); see there for the formulas and citations.

One function per member of the metrics family (:data:`eatkit.specs.METRICS`), made from its declaration
(the kind's name with dashes as underscores, :func:`eatkit.kinds.api_name`), its docstring saying its
template (WEFE's numbers of target and attribute sets; a member that reads the targets only takes
``attributes=None``) and options; ``eatkit list kinds`` lists them. The result's ``null`` is the one its
declaration states.

>>> import numpy as np, eatkit.metrics
>>> X = np.array([[1.0, 0.1], [0.9, 0.0]]); Y = np.array([[0.1, 1.0], [0.0, 0.9]])
>>> A = np.array([[1.0, 0.2], [0.8, 0.0], [0.2, 1.0]])
>>> r = eatkit.metrics.ripa([X, Y], [A], permutations="exact")
>>> round(r.value, 4), r.p_values["two-sided"]
(0.1886, 0.5)
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.io import load_object
from eatkit.stats.metrics import MetricResult

__all__ = ["MetricResult", "word_vectors"]  # and a function per member of the metrics family (__getattr__)

def __getattr__(name: str) -> Any:
    """``eatkit.metrics.<name>``: the API function of the member ``name`` of the metrics family (made on
    first use from its declaration: a new member is here without another line)."""
    spec = _members().get(name)
    if spec is None:
        raise AttributeError(f"module 'eatkit.metrics' has no attribute {name!r}")
    return _api_function(spec.name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_members()])


def _members() -> dict[str, Any]:
    from eatkit.specs import METRICS

    return {spec.api_name: spec for spec in METRICS.members()}


@cache
def _api_function(kind: str) -> Callable[..., MetricResult]:
    """The API function of a member: its query checked against the member's template, words looked up,
    the options checked by name (the function's keywords) and its declared parameters, then the member's
    statistics function called by the family's one rule (:meth:`eatkit.kinds.Member.arguments`)."""
    from eatkit.analyses.base import check_inputs
    from eatkit.kinds import get_kind

    spec = get_kind(kind)
    member = spec.member
    function = load_object(member.stats)
    takes = [n for n, p in inspect.signature(function).parameters.items() if p.kind is p.KEYWORD_ONLY]
    declared = {p.name: p for p in spec.params}

    def metric(targets: Sequence[Any], attributes: Sequence[Any] | None = None, *, model: Any = None, oov: str = "error",
               **options: Any) -> MetricResult:
        unknown = sorted(set(options) - set(takes))
        if unknown:
            raise EatkitError(f"{member.label} takes no option {unknown[0]!r} (its options: {', '.join(takes)})")
        options = {k: declared[k].convert(v) if k in declared else v for k, v in options.items()}
        T, A, dropped = _query(member.label, targets, attributes, member.template, model, oov)
        check_inputs(spec, _named(T, "X", "T") | _named(A, "A", "A"))  # the family's declared degeneracy rules
        result = function(*member.arguments(T, A), **options)
        return dataclasses.replace(result, null=member.null, **({"dropped": dropped} if dropped else {}))

    shape = "/".join("n" if c is None else str(c) for c in member.template)
    metric.__name__ = metric.__qualname__ = spec.api_name
    metric.__doc__ = (f"{spec.title}: template (targets/attributes) {shape} (:func:`{member.stats.replace(':', '.')}`;"
                      f" options {', '.join(takes)}).")
    return metric


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
    if template[1] == 0 and attributes not in (None, []):
        raise EatkitError(f"{name} reads the targets only: pass no attribute sets (attributes=None)")
    T = _group(name, "target", targets, template[0])
    A = [] if template[1] == 0 else _group(name, "attribute", attributes or [], template[1])
    dropped: dict[str, list[str]] = {}
    if model is not None:
        index, table = word_vectors(model)
        T, A = (_look_up(name, group, prefix, index, table, oov, dropped) for group, prefix in ((T, "T"), (A, "A")))
    return T, A, dropped


def _named(sets: list[Any], first: str, prefix: str) -> dict[str, Any]:
    """A query's sets named as a test's roles: two are X, Y (or A, B), one is ``first``, more ``<prefix>1``, ...
    (the names the declared degeneracy rules compare)."""
    pair = {"X": ("X", "Y"), "A": ("A", "B")}[first]
    names = pair if len(sets) == 2 else (first,) if len(sets) == 1 else [f"{prefix}{i + 1}" for i in range(len(sets))]
    return dict(zip(names, sets))


def _group(name: str, what: str, sets: Any, count: int | None) -> list[Any]:
    """A query's target or attribute sets, checked against the template's number (``None``: any)."""
    if isinstance(sets, (str, np.ndarray)) or not isinstance(sets, Sequence) or len(sets) == 0:
        raise EatkitError(f"{name}: the {what} sets must be a non-empty list of sets")
    if count is not None and len(sets) != count:
        raise EatkitError(f"{name} takes {count} {what} set(s) (WEFE's template), got {len(sets)}")
    return list(sets)


def _look_up(name: str, group: list[Any], prefix: str, index: dict[str, int], table: np.ndarray, oov: str,
             dropped: dict[str, list[str]]) -> list[Any]:
    """Each set of words of ``group`` as its vectors; a word the model lacks is an error, or (``oov="drop"``)
    dropped and listed in ``dropped`` under the set's label (T1, A2, ...)."""
    return [_vectors_of(name, f"{prefix}{i + 1}", words, index, table, oov, dropped) for i, words in enumerate(group)]


def _words(name: str, label: str, words: Any) -> list[str]:
    """A set given as words: a list of strings, or a one-line error."""
    if isinstance(words, str) or not all(isinstance(w, str) for w in words):
        raise EatkitError(f"{name}: with model=, set {label} must be a list of words")
    return list(words)


def _vectors_of(name: str, label: str, words: Any, index: dict[str, int], table: np.ndarray, oov: str,
                dropped: dict[str, list[str]]) -> np.ndarray:
    """The vectors of one set of words (:func:`_look_up`)."""
    missing = [w for w in _words(name, label, words) if w not in index]
    if missing and oov == "error":
        raise EatkitError(f"{name}: set {label} has word(s) the model lacks: {', '.join(missing[:10])}"
                          " (pass oov='drop' to drop them and record it)")
    if missing:
        dropped[label] = missing
    return np.asarray(table[[index[w] for w in words if w in index]], dtype=np.float64)
