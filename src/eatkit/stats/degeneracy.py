"""The one degeneracy check: data on which a statistic would print a number that means nothing.

Every statistic checks its sets with :func:`eatkit.stats._validation.check_sets`, which applies the
rules below before any computation; the runner applies :func:`p_floor_warning` to every record with a
p-value. Each finding follows a declared rule of :data:`RULES`: an ``"error"`` (one line, nothing is
computed) or a ``"warning"`` (a :class:`DegeneracyWarning`: the runner collects it with :func:`collected`,
records it in the record's ``warnings`` and the CLI prints it once).

Only data on which a statistic means nothing is refused: sets that coincide, a set without variance. Sets
that share some vectors (quantized or integer features, two stimuli a model embeds identically) are a fact
to record: the permutation null is exact with ties, and the exact counter counts tied sums as ties.

=====================  ========  =============================================================================
rule                   level     when
=====================  ========  =============================================================================
``one-dimensional``    error     vectors of dimension 1: every cosine is +1 or -1
``zero-variance``      error     a target or attribute set of two or more stimuli that all share one vector
                                 (grounded sets A_x ... may: one caption over several images)
``coincide``           error     two compared sets (the targets, the attributes) hold the same vectors
``overlap``            warning   two compared sets share vectors (a word in both target sets, tied
                                 features); the shared rows are named
``targets-attributes`` error     a target set holds the same vectors as an attribute set
``numeric-range``      error     vector norms whose squares leave float64 (outside :data:`NORM_RANGE`), or,
                                 for a scale-dependent statistic (RNSB's penalised fit), outside
                                 :data:`SCALED_RANGE`
``value-range``        error     values (associations, effects, variances) whose magnitude leaves the range
                                 where their squares and sums stay in float64 (:data:`VALUE_RANGE`; the
                                 range a statistic declares, e.g. a meta-analysis' :data:`META_RANGE`)
``p-floor``            warning   the smallest p-value the test can reach is above the run's alpha
``all-tied``           warning   every pair of a paired comparison is tied (all differences zero): the exact
                                 p is 1, whatever the test
``empty-group``        error     a group (a proportion's n, a group of answers) holds nothing: its share is 0/0
``small-image``        warning   an image whose shorter side is under 1/:data:`SMALL_IMAGE_RATIO` of the model's
                                 input side is upscaled that much: the files and sizes are named, once per set
=====================  ========  =============================================================================

Which rules apply to a kind's inputs is declared with the kind (:class:`eatkit.kinds.Rules`, a family's for
all its members): the rules on sets of vectors (:data:`SET_RULES`) run on a test's sets in one place before
its statistics (:func:`eatkit.analyses.base.check_inputs`: the runner, every kind; :mod:`eatkit.metrics`, the
family's members), the rules on values (:data:`VALUE_RULES`) in the statistics that compute those values.

Scale-free statistics need no rescaling: their formulas divide by norms, and the permutation tolerance
is relative to the size of the terms (:func:`eatkit.stats.metrics`), so vectors scaled by 1e-42 or 1e30
give the same p.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.errors import EatkitError


@dataclass(frozen=True)
class Rule:
    """A declared degeneracy rule: its ``level`` (``"error"`` or ``"warning"``) and its message template."""

    level: str
    message: str


#: every degeneracy rule, by name (the module docstring's table)
RULES: dict[str, Rule] = {
    "one-dimensional": Rule("error", "set '{set}' has vectors of dimension 1: every cosine is +1 or -1, so no "
                                     "association can be measured"),
    "zero-variance": Rule("error", "set '{set}' holds {n} stimuli that all share one vector (zero variance): "
                                   "its statistics would mean nothing (are they distinct words for the model?)"),
    "coincide": Rule("error", "sets '{first}' and '{second}' hold the same vectors: the test would compare a set "
                              "with itself, and its effect size and p-value would mean nothing"),
    "overlap": Rule("warning", "sets '{first}' and '{second}' share {count} vector(s) (row(s) {rows} of '{first}'): "
                               "the shared stimuli count on both sides; the permutation null counts them as ties"),
    "targets-attributes": Rule("error", "target set '{first}' and attribute set '{second}' hold the same vectors: "
                                        "the test would measure a set's association with itself"),
    "numeric-range": Rule("error", "set '{set}' has vector norms from {low:.3g} to {high:.3g}, outside "
                                   "[{lo:g}, {hi:g}] where {why}; rescale the vectors"),
    "value-range": Rule("error", "'{name}' has a value of magnitude {value:.3g} (entry {index}), outside "
                                 "[{lo:g}, {hi:g}] where {why}; rescale the values"),
    "all-tied": Rule("warning", "every one of the {n} pairs of '{name}' is tied (all differences zero): no "
                                "difference can be detected, and the exact p is 1"),
    "empty-group": Rule("error", "{what} '{group}' is empty (n = 0): its share would be 0/0"),
    "small-image": Rule("warning", "image set '{set}': {count} image(s) far smaller than the model's {size} x {size} "
                                   "input ({files}): upscaled {factor:g}x or more, their embeddings carry little "
                                   "more than a few pixels"),
    "p-floor": Rule("warning", "the smallest p-value this test can reach is {floor:.3g} ({how}), above "
                               "alpha={alpha:g}: no result can be significant"),
}

#: the rules on a test's sets of vectors (:func:`check_degenerate`; ``one-dimensional``: every statistic's
#: :func:`eatkit.stats._validation.check_embeddings`)
SET_RULES: tuple[str, ...] = ("zero-variance", "coincide", "overlap", "targets-attributes", "numeric-range")
#: the rules on the values a statistic computes or reads (answers, scores, effects, pairs)
VALUE_RULES: tuple[str, ...] = ("value-range", "all-tied", "empty-group", "p-floor")

#: the norms whose squares float64 holds without under- or overflow
NORM_RANGE: tuple[float, float] = (1e-150, 1e150)
#: the norms on which a scale-dependent statistic (RNSB: an L2-penalised fit) is computed as published
SCALED_RANGE: tuple[float, float] = (1e-6, 1e6)
#: the magnitudes of values (associations, scores) whose squares and sums over many values float64 holds
VALUE_RANGE: tuple[float, float] = (0.0, 1e150)
#: the magnitudes of a meta-analysis' effects and variances: weights 1/v times squared effects stay in float64
META_RANGE: tuple[float, float] = (1e-100, 1e100)
#: an image whose shorter side times this is below the model's input side is a ``small-image``
SMALL_IMAGE_RATIO: int = 8
#: the desired shares of a ranking's groups (MaxSkew@k, NDKL): ln(share / desired) stays finite
SHARE_RANGE: tuple[float, float] = (1e-100, 1.0)
#: the roles read as target sets and as attribute sets (``T1``, ``A2`` ...: the numbered sets of a metric)
TARGET_ROLES, ATTRIBUTE_ROLES = ("X", "Y", "T"), ("A", "B")
#: the pairs of roles a test compares with each other (a shared vector is an ``overlap``)
COMPARED: tuple[tuple[str, str], ...] = (("X", "Y"), ("A", "B"))


def finding(rule: str, **values: Any) -> str:
    """The message of ``rule`` (a key of :data:`RULES`) filled with ``values``.

    >>> finding("one-dimensional", set="A")
    "set 'A' has vectors of dimension 1: every cosine is +1 or -1, so no association can be measured"
    """
    return RULES[rule].message.format(**values)


def fail(rule: str, **values: Any) -> None:
    """Raise the one-line error of the error rule ``rule``.

    >>> fail("zero-variance", set="X", n=4)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: set 'X' holds 4 stimuli that all share one vector (zero variance): ...
    """
    assert RULES[rule].level == "error", rule
    raise EatkitError(finding(rule, **values))


class DegeneracyWarning(UserWarning):
    """A finding of a ``"warning"`` rule of :data:`RULES` (its message is the filled template)."""


def warn(rule: str, **values: Any) -> None:
    """Issue the :class:`DegeneracyWarning` of the warning rule ``rule``.

    >>> with collected() as found:
    ...     warn("p-floor", floor=0.1, how="1 of 10 partitions", alpha=0.05)
    >>> found   # doctest: +ELLIPSIS
    ['the smallest p-value this test can reach is 0.1 ...']
    """
    assert RULES[rule].level == "warning", rule
    warnings.warn(finding(rule, **values), DegeneracyWarning, stacklevel=3)


@contextmanager
def collected() -> Iterator[list[str]]:
    """Within the block, every :class:`DegeneracyWarning` is collected (each message once, in order) into the
    yielded list, filled when the block ends, instead of printed; other warnings pass on as they were."""
    found: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegeneracyWarning)
        yield found
    for item in caught:
        if not issubclass(item.category, DegeneracyWarning):
            warnings.warn_explicit(item.message, item.category, item.filename, item.lineno)
        elif str(item.message) not in found:
            found.append(str(item.message))


def _role(name: str, roles: tuple[str, ...]) -> bool:
    return any(name == r or (name.startswith(r) and name[len(r):].isdigit()) for r in roles)


def check_degenerate(sets: dict[str, np.ndarray], *, scaled: bool = False,
                     compared: Sequence[tuple[str, str]] = COMPARED, rules: Collection[str] = SET_RULES) -> None:
    """Apply the rules to named, already shaped and finite ``(n, d)`` sets (dimension 1 is refused by
    :func:`eatkit.stats._validation.check_embeddings`, for every statistic). Errors: zero variance, norms
    out of range (``scaled``: the statistic depends on the vectors' scale), compared sets that coincide, a
    target set equal to an attribute set; a warning (:func:`warn`): compared sets sharing some vectors.
    ``compared``: the pairs of set names compared with each other (default :data:`COMPARED`; a multi-group
    test compares every pair of its attribute sets, and of its target sets); ``rules``: the rules of
    :data:`SET_RULES` to apply (a kind's declared ones; default all).

    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); check_degenerate({"X": X, "Y": X[::-1] + 1})
    >>> with collected() as found:
    ...     check_degenerate({"X": X, "Y": np.array([[1.0, 0.0], [2.0, 2.0]])})
    >>> found   # doctest: +ELLIPSIS
    ["sets 'X' and 'Y' share 1 vector(s) (row(s) 0 of 'X'): ..."]
    """
    unknown = sorted(set(rules) - set(SET_RULES))
    assert not unknown, f"not rules on sets of vectors: {unknown}"
    for name, arr in sets.items():
        _check_set(name, arr, scaled, rules)
    for first, second in compared:
        if first in sets and second in sets:
            _check_compared(first, second, sets[first], sets[second], rules)
    if "targets-attributes" in rules:
        _check_targets_attributes(sets)


def _check_targets_attributes(sets: dict[str, np.ndarray]) -> None:
    """No target set equal to an attribute set."""
    for first in (n for n in sets if _role(n, TARGET_ROLES)):
        for second in (n for n in sets if _role(n, ATTRIBUTE_ROLES)):
            if _same_rows(sets[first], sets[second]):
                fail("targets-attributes", first=first, second=second)


def _check_set(name: str, arr: np.ndarray, scaled: bool, rules: Collection[str] = SET_RULES) -> None:
    """One set's rules: no zero variance (a stimulus or probe set of two or more), norms in range."""
    low, high = SCALED_RANGE if scaled else NORM_RANGE
    if ("zero-variance" in rules and len(arr) >= 2 and _role(name, TARGET_ROLES + ATTRIBUTE_ROLES + ("N",))
            and not np.ptp(arr, axis=0).any()):
        fail("zero-variance", set=name, n=len(arr))
    if "numeric-range" not in rules:
        return
    largest = np.abs(arr).max()
    norms = np.linalg.norm(arr / largest, axis=1) * largest  # no overflow of the squares
    if norms.min() < low or norms.max() > high:
        why = ("this statistic's fit depends on the vectors' scale (its penalty was set for norms near 1-100)"
               if scaled else "squared norms leave double precision")
        fail("numeric-range", set=name, low=float(norms.min()), high=float(norms.max()), lo=low, hi=high, why=why)


def _check_compared(first: str, second: str, a: np.ndarray, b: np.ndarray,
                    rules: Collection[str] = SET_RULES) -> None:
    """Two compared sets: an error when they coincide, a warning when they share vectors."""
    if "coincide" in rules and _same_rows(a, b):
        fail("coincide", first=first, second=second)
    shared = _shared_rows(a, b) if "overlap" in rules else []
    if shared:
        warn("overlap", first=first, second=second, count=len(shared), rows=_listed(shared))


def check_range(name: str, values: np.ndarray, bounds: tuple[float, float] = VALUE_RANGE,
                why: str = "their squares and sums leave double precision") -> None:
    """The ``value-range`` rule: every magnitude of the finite ``values`` within ``bounds`` (a lower bound of
    0 admits zeros), or the one-line error naming the first value outside.

    >>> check_range("first", np.array([1.0, -4.4e307]))   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: 'first' has a value of magnitude 4.4e+307 (entry 1), outside [0, 1e+150] ...
    """
    low, high = bounds
    magnitude = np.abs(values).ravel()
    bad = np.flatnonzero((magnitude > high) | (magnitude < low))
    if bad.size:
        fail("value-range", name=name, value=float(magnitude[bad[0]]), index=int(bad[0]), lo=low, hi=high, why=why)


def check_tied(name: str, differences: np.ndarray) -> None:
    """The ``all-tied`` rule: a warning when every one of the paired ``differences`` is zero.

    >>> with collected() as found:
    ...     check_tied("first - second", np.zeros(3))
    >>> found   # doctest: +ELLIPSIS
    ["every one of the 3 pairs of 'first - second' is tied (all differences zero): ..."]
    """
    if differences.size and not np.any(differences):
        warn("all-tied", n=int(differences.size), name=name)


def check_image_sizes(name: str, sizes: Sequence[tuple[str, int, int]], side: int) -> None:
    """The ``small-image`` rule: a warning naming the images of set ``name`` (``(file, width, height)``) whose
    shorter side is under 1/:data:`SMALL_IMAGE_RATIO` of the model's input ``side``.

    >>> with collected() as found:
    ...     check_image_sizes("X", [("a.png", 1, 1), ("b.png", 300, 200)], 224)
    >>> found   # doctest: +ELLIPSIS
    ["image set 'X': 1 image(s) far smaller than the model's 224 x 224 input (a.png 1 x 1): upscaled 224x ..."]
    """
    small = [(f, w, h) for f, w, h in sizes if min(w, h) * SMALL_IMAGE_RATIO < side]
    if small:
        files = _listed([f"{Path(f).name} {w} x {h}" for f, w, h in small], 5)
        factor = side / max(1, min(min(w, h) for _, w, h in small))
        warn("small-image", set=name, count=len(small), size=side, files=files, factor=round(factor, 1))


def check_group(what: str, group: str, n: int) -> None:
    """The ``empty-group`` rule: a one-line error when the group ``group`` (a ``what``) holds nothing.

    >>> check_group("group of answers", "women", 0)
    Traceback (most recent call last):
    eatkit.errors.EatkitError: group of answers 'women' is empty (n = 0): its share would be 0/0
    """
    if n == 0:
        fail("empty-group", what=what, group=group)


def _shared_rows(first: np.ndarray, second: np.ndarray) -> list[int]:
    """The rows of ``first`` that are also rows of ``second``."""
    seen = {row.tobytes() for row in second}
    return [i for i, row in enumerate(first) if row.tobytes() in seen]


def _listed(rows: list[Any], limit: int = 8) -> str:
    """Row numbers (or names) for a message: the first ``limit``, then how many more."""
    shown = ", ".join(map(str, rows[:limit]))
    return shown + (f" and {len(rows) - limit} more" if len(rows) > limit else "")


def _same_rows(first: np.ndarray, second: np.ndarray) -> bool:
    """Whether two sets hold the same vectors, in any order."""
    if first.shape != second.shape:
        return False
    return bool(np.array_equal(first[np.lexsort(first.T[::-1])], second[np.lexsort(second.T[::-1])]))


def p_floor(*, exact: bool, n_partitions: int) -> float | None:
    """The smallest p-value an exact permutation test can report: 1 / (number of partitions), the observed
    partition being one of them; None when unknown (sampled draws: their floor 1/(N + 1) is a warning of
    the run's options, ``RunOptions.warnings``).

    >>> p_floor(exact=True, n_partitions=6)   # two against two stimuli: C(4, 2) = 6
    0.16666666666666666
    """
    return 1.0 / n_partitions if exact and n_partitions > 0 else None


def p_floor_warning(record: Any, alpha: float) -> str | None:
    """The ``p-floor`` warning for a record with an exact permutation p-value (fields ``p_value``,
    ``n_partitions``, or a multi-group test's ``n_permutations``, and an exactness flag ``p_value_exact`` or
    ``exact``), or None.

    >>> from types import SimpleNamespace as R
    >>> p_floor_warning(R(p_value=0.17, p_value_exact=True, n_partitions=6), 0.05)
    'the smallest p-value this test can reach is 0.167 (1 of 6 partitions), above alpha=0.05: no result can be significant'
    """
    counted = getattr(record, "n_partitions", getattr(record, "n_permutations", None))  # multi-group: assignments
    if getattr(record, "p_value", None) is None or counted is None:
        return None
    exact = bool(getattr(record, "p_value_exact", getattr(record, "exact", False)))
    floor = p_floor(exact=exact, n_partitions=int(counted or 0))
    if floor is None or not floor > alpha:
        return None
    return finding("p-floor", floor=floor, how=f"1 of {counted} partitions", alpha=alpha)
