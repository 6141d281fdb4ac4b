"""How numbers from a run folder are written in tables, plots and the HTML report (presentation only)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from eatkit.stats.permutation import DEFAULT_MONTE_CARLO

#: significance marks for Benjamini-Hochberg q-values, strictest first
STAR_LEVELS: tuple[tuple[float, str], ...] = ((0.001, "***"), (0.01, "**"), (0.05, "*"))
#: the legend of the significance marks, shared by every figure that uses them
STARS_NOTE = (
    ", ".join(f"{mark} q < {level:g}" for level, mark in reversed(STAR_LEVELS))
    + " (q: p-value after Benjamini-Hochberg correction among the tests of its kind in the run)"
)
#: marks of a sampled permutation p-value: at the Monte Carlo floor 1/(n + 1), or above it
AT_FLOOR, SAMPLED = "\u2264", "\u2020"
#: how the legends write their symbols: plain text (Markdown, HTML, figures) or LaTeX
TEXT_SYMBOLS = {"p": "p", "n": "n", "le": AT_FLOOR, "dagger": SAMPLED, "ge": "\u2265", "vs": "vs."}
TEX_SYMBOLS = {"p": "$p$", "n": "$n$", "le": r"$\leq$", "dagger": r"$^\dagger$", "ge": r"$\geq$", "vs": "vs.\\"}


def is_missing(value: Any) -> bool:
    """True for ``None`` and NaN (a statistic the run could not compute)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def fmt_d(value: float | None) -> str:
    """An effect size with two decimals, as papers report Cohen's d (never ``-0.00``).

    >>> fmt_d(1.5049), fmt_d(-0.2), fmt_d(-0.004), fmt_d(None)
    ('1.50', '-0.20', '0.00', 'n/a')
    """
    # round() rounds exactly as format() does; adding 0.0 turns the -0.0 it may leave into 0.0
    return "n/a" if is_missing(value) else f"{round(value, 2) + 0.0:.2f}"


#: Cohen's conventional effect sizes, the iEAT seed's Table 1 colours: (lower bound of |d|, name), largest first
EFFECT_SIZES: tuple[tuple[float, str], ...] = ((0.8, "large"), (0.5, "medium"), (0.2, "small"))


def effect_size_label(value: float | None) -> str | None:
    """Cohen's name of an effect size by ``|d|`` (small >= 0.2, medium >= 0.5, large >= 0.8), else None.

    >>> effect_size_label(-0.62), effect_size_label(0.19), effect_size_label(None)
    ('medium', None, None)
    """
    if is_missing(value):
        return None
    return next((name for bound, name in EFFECT_SIZES if abs(value) >= bound), None)


def fmt_number(value: float | None, digits: int = 2) -> str:
    """A number with ``digits`` decimals; ``"n/a"`` for a statistic that could not be computed.

    >>> fmt_number(0.12345, 3), fmt_number(float("nan")), fmt_number(None)
    ('0.123', 'n/a', 'n/a')
    """
    return "n/a" if is_missing(value) or not math.isfinite(value) else f"{value:.{digits}f}"


def fmt_p(value: float | None) -> str:
    """A p- or q-value: three decimals down to 0.001, two significant digits below.

    >>> fmt_p(0.0123), fmt_p(0.00001234), fmt_p(None)
    ('0.012', '1.2e-05', 'n/a')
    """
    if is_missing(value):
        return "n/a"
    return f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"


def sampled_draws(record: Mapping[str, Any], level: str = "") -> int | None:
    """The number of random partitions behind a sampled permutation p-value of ``record``, or ``None``
    when that p is exact or a Welch p-value. ``level`` is ``""`` (level 1), ``"x"`` or ``"y"`` (level 2).

    Level 2 draws as many partitions as level 1 when level 1 is sampled; when level 1 was counted
    exactly, ``permutations="auto"`` was in force and level 2 drew the default number.

    >>> from types import SimpleNamespace as Rec
    >>> l2 = Rec(p_value_exact=False, n_permutations=5000)
    >>> rec = Rec(p_method="permutation", p_value_exact=False, n_permutations=5000, level2=lambda t: l2)
    >>> sampled_draws(rec), sampled_draws(rec, "x")
    (5000, 5000)
    """
    if not level:
        return None if record.p_method != "permutation" or record.p_value_exact else record.n_permutations
    level2 = record.level2(level)
    if record.p_method != "permutation" or level2.p_value_exact:
        return None
    if level2.n_permutations is not None:
        return level2.n_permutations
    # eatkit 0.1.0 did not record the level-2 draws: as many as level 1, or the default when level 1 was exact
    return record.n_permutations if not record.p_value_exact else DEFAULT_MONTE_CARLO


def fmt_p_marked(record: Mapping[str, Any], level: str = "") -> str:
    """A p-value of ``record`` (see :func:`sampled_draws` for ``level``) with the mark of a sampled one:
    ``≤`` before a p at the Monte Carlo floor 1/(n + 1) (no draw was as extreme as the observation),
    ``†`` after any other sampled p; exact and Welch p-values stay unmarked.

    >>> from types import SimpleNamespace as Rec
    >>> rec = dict(p_method="permutation", p_value_exact=False, n_permutations=99999, p_value=1e-05)
    >>> fmt_p_marked(Rec(**rec)), fmt_p_marked(Rec(**rec | {"p_value": 0.0123})), fmt_p_marked(Rec(**rec | {"p_value_exact": True}))
    ('≤1.0e-05', '0.012†', '1.0e-05')
    """
    p = record.p_value if not level else record.level2(level).p_value
    text, draws = fmt_p(p), sampled_draws(record, level)
    if draws is None or is_missing(p):
        return text
    return AT_FLOOR + text if math.isclose(p * (draws + 1), 1.0, rel_tol=1e-9) else text + SAMPLED


def p_note(records: Sequence[Mapping[str, Any]], symbols: Mapping[str, str] = TEXT_SYMBOLS) -> str:
    """The legend of the level-1 p-values of ``records`` and of their sampling marks, in ``symbols``.

    >>> from types import SimpleNamespace as Rec
    >>> rec = Rec(p_method="welch", p_value_exact=False, alternative="greater", p_value=0.01,
    ...           level2=lambda t: Rec(p_value_exact=False, p_value=0.2, n_permutations=0))
    >>> p_note([rec])
    "p: level-1 p-value of Welch's t-test (alternative: greater)"
    """
    methods = {r.p_method for r in records}
    p = symbols["p"]
    kind = {frozenset({"permutation"}): f"permutation {p}-value", frozenset({"welch"}): f"{p}-value of Welch's t-test"}
    alternatives = _alternatives(records)
    note = (f"{p}: level-1 {kind.get(frozenset(methods), f'{p}-value (permutation or Welch)')} "
            f"(alternative: {alternatives})")
    marks = [(fmt_p_marked(r, level), sampled_draws(r, level)) for r in records for level in ("", "x", "y")]
    draws = sorted({n for _, n in marks if n is not None})
    if not draws:
        return note
    return "; ".join([note, *_sampling_clauses([text for text, _ in marks], draws, symbols)])


def _alternatives(records: Sequence[Any]) -> str:
    """The records' alternatives, and whether one was taken on the side of the observed effect size."""
    alternatives = " or ".join(sorted({str(r.alternative) for r in records}))
    if any(getattr(r, "alternative_observed", False) for r in records):
        alternatives = f"one-sided on the side of the observed effect size, {alternatives}"
    return alternatives


def _sampling_clauses(texts: list[str], draws: list[int], symbols: Mapping[str, str]) -> list[str]:
    """The legend of the sampled p-values' marks (the dagger, the floor) that ``texts`` use."""
    p = symbols["p"]
    n = f"{symbols['n']} = {' or '.join(map(str, draws))}"
    clauses = []
    if any(text.endswith(SAMPLED) for text in texts):
        clauses.append(f"{symbols['dagger']}: sampled {p}-value, a Monte Carlo estimate from {n} random partitions "
                       "(unmarked ones are exact)")
    if any(text.startswith(AT_FLOOR) for text in texts):
        clauses.append(f"{symbols['le']}: none of the {n} random partitions was as extreme as the observed one, so "
                       f"{p} is the Monte Carlo floor 1/({symbols['n']} + 1)")
    return clauses


def stars(q: float | None) -> str:
    """``***``/``**``/``*`` for q < 0.001/0.01/0.05, else ``""``.

    >>> stars(0.0004), stars(0.03), stars(0.2)
    ('***', '*', '')
    """
    if is_missing(q):
        return ""
    return next((mark for level, mark in STAR_LEVELS if q < level), "")


def fmt_sizes(first: int, second: int) -> str:
    """A set size as the iEAT tables write it: ``"8"``, or ``"8/7"`` when the two sets differ.

    >>> fmt_sizes(8, 8), fmt_sizes(8, 7)
    ('8', '8/7')
    """
    return str(first) if first == second else f"{first}/{second}"


def fmt_value(value: Any, spec: str | None = None) -> str:
    """A record field as a table cell: with the format ``spec`` when one is given; else a float to three
    significant digits, a list or mapping item by item, ``"n/a"`` for a missing statistic.

    >>> fmt_value(0.123456), fmt_value(0.123456, ".2f"), fmt_value({"a": 1, "b": None}), fmt_value([2, "x"])
    ('0.123', '0.12', 'a 1, b n/a', '2, x')
    """
    if is_missing(value):
        return "n/a"
    if spec:
        return format(value, spec)
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {fmt_value(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(fmt_value(v) for v in value)
    return str(value)


def fmt_interval(low: Any, high: Any, spec: str = ".2f", brackets: bool = True) -> str:
    """An interval's two ends (numbers or a CSV's text) formatted, or "-" when either is empty or undefined
    (e.g. a CI of too few values, the prediction interval of k = 2 models): never a bare ",".

    >>> fmt_interval("0.1", 0.25), fmt_interval("", "nan"), fmt_interval(-1, 2, ".1f", brackets=False)
    ('[0.10, 0.25]', '-', '-1.0, 2.0')
    """
    ends = []
    for value in (low, high):
        try:
            number = float(value)
        except (TypeError, ValueError):
            return "-"
        if not math.isfinite(number):
            return "-"
        ends.append(format(number, spec))
    text = ", ".join(ends)
    return f"[{text}]" if brackets else text


def fmt_ci(value: Any, spec: str = ".2f") -> str:
    """A record's interval ``[low, high]`` (None: none computed) as :func:`fmt_interval` writes it, or each
    key's of ``{key: [low, high]}``.

    >>> fmt_ci([0.1, 0.25]), fmt_ci(None), fmt_ci([0.5, None], ".1f"), fmt_ci({"doctor": [0.1, 0.5]})
    ('[0.10, 0.25]', '-', '-', 'doctor [0.10, 0.50]')
    """
    if isinstance(value, Mapping):
        return ", ".join(f"{key} {fmt_ci(v, spec)}" for key, v in value.items())
    low, high = value if isinstance(value, (list, tuple)) and len(value) == 2 else (None, None)
    return fmt_interval(low, high, spec)
