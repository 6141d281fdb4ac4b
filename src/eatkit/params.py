"""The declaration primitive of every typed quantity (:class:`Param`), and the quantities that a kind's
declaration and a statistics function share (:data:`CONFIDENCE_LEVEL`, :data:`N_FITS`, ...): each
range lives here once, and every layer checks a value through it (one validator, one message per
quantity). A base module: it imports only :mod:`eatkit.errors` and the flag-name rule (:mod:`eatkit.flags`),
so :mod:`eatkit.stats` may import it and nothing about commands or kinds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from eatkit.errors import EatkitError
from eatkit.flags import option_flag

_JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean", list: "array", dict: "object"}
_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
_PLURALS = {int: "integers", float: "numbers", str: "strings", bool: "true/false values"}


def _within(value: Any, low: float | None, high: float | None) -> bool:
    """Whether ``value`` is a number within ``[low, high]`` (``None``: no bound)."""
    return isinstance(value, (int, float)) and (low is None or value >= low) and (high is None or value <= high)


@dataclass(frozen=True)
class Param:
    """One typed parameter of a kind: a run option (``eatkit run --<name>`` / ``eatkit probe``, or
    ``RunOptions.params``) that may also be set per test in a suite file's ``params``.

    ``type`` is the type of one value; ``many`` makes it a list (``"list"``: given as a JSON list, on the
    command line comma-separated when ``sep`` is set, else by repeating the flag) or a mapping of strings
    (``"pairs"``: ``KEY=VALUE`` on the command line, repeatable). ``choices`` or ``low``/``high`` (inclusive;
    ``low_open`` excludes ``low``) bound each value; ``length`` fixes a list's length. ``default`` ``None``
    means "not given" (the analysis decides). ``flag`` overrides the flag name (default: the flag-name rule,
    :func:`eatkit.flags.option_flag`, ``--name`` with dashes; tests/test_names.py lists the overrides and why),
    ``old_flags`` are the names an earlier eatkit gave it (still taken, each use printing one deprecation
    line, hidden from ``--help``: :func:`eatkit.cli.add_flag`) and ``metavar`` its value's name in the help;
    ``cli=False``: set by the program or a suite file, never a flag; ``empty``: a list may be empty.

    >>> Param("iterations", int, 1000, low=1).convert("0")
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: iterations must be an integer >= 1, got 0
    >>> Param("top_p", float, [0.5], low=0, high=1, low_open=True, many="list", sep=",").convert("0.5,0.9")
    [0.5, 0.9]
    >>> Param("questions", many="list").convert([])
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: questions must be a non-empty list of strings, got []
    >>> Param("exact", bool).convert("true")
    True
    >>> Param("n", int).convert(True)
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: n must be an integer, got True
    """

    name: str
    type: type = str
    default: Any = None
    help: str = ""
    choices: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    many: Literal["list", "pairs"] | None = None
    sep: str | None = None
    length: int | None = None
    flag: str | None = None
    cli: bool = True
    metavar: str | None = None
    empty: bool = False
    words: tuple[str, ...] = ()
    high_open: bool = False
    useful: tuple[float | None, float | None] | None = None
    answerer: bool = False  # applies only where a local model answers: refused with recorded answers
    old_flags: tuple[str, ...] = ()

    def warning(self, value: Any) -> str | None:
        """A legal value outside the declared ``useful`` range (``(low, high)``, ``None`` for no bound) is
        run, with this warning (recorded in the records and the manifest, printed once); ``None`` when the
        value is useful, is the default, or is one of ``words``.

        >>> Param("iterations", int, 1000, low=1, useful=(100, None)).warning(10)
        'iterations=10 is outside its useful range (>= 100): the result may mean little'
        """
        if self.useful is None or value is None or value == self.default or value in self.words:
            return None
        low, high = self.useful
        if all(_within(v, low, high) for v in (value if isinstance(value, list) else [value])):
            return None
        bounds = " and ".join(f"{sign} {b:g}" for sign, b in ((">=", low), ("<=", high)) if b is not None)
        return f"{self.name}={value} is outside its useful range ({bounds}): the result may mean little"

    @property
    def option(self) -> str:
        """The command-line flag."""
        return self.flag or option_flag(self.name)

    def convert(self, value: Any) -> Any:
        """``value`` (a Python value, or the text of a command-line flag) checked and converted, or a
        one-line :class:`EatkitError` naming the parameter, what it takes and the value received."""
        if value is None:
            return None
        if self.many == "pairs":
            return self._pairs(value)
        if self.many == "list":
            return self._list(value)
        return self._one(value)

    def _list(self, value: Any) -> list[Any]:
        return [self._one(v.strip() if isinstance(v, str) and self.sep else v) for v in self._items(value)]

    def _items(self, value: Any) -> Sequence[Any]:
        """The items of a list value (its text split at ``sep``), checked for their number."""
        items = value.split(self.sep) if isinstance(value, str) and self.sep else value
        if isinstance(items, str) or not isinstance(items, Sequence) or not (items or self.empty):
            raise EatkitError(f"{self.name} must be a{'' if self.empty else ' non-empty'} list of "
                              f"{self._what()}, got {value!r:.60}")
        if self.length is not None and len(items) != self.length:
            raise EatkitError(f"{self.name} must be {self.length} values, got {len(items)}: {value!r:.60}")
        return items

    def _pairs(self, value: Any) -> dict[str, str]:
        if isinstance(value, Mapping):
            pairs = list(value.items())
        else:
            pairs = []
            for text in [value] if isinstance(value, str) else value:
                key, sep, val = str(text).partition("=")
                if not sep:
                    raise EatkitError(f"{self.option} takes KEY=VALUE, got '{text}'")
                pairs.append((key.strip(), val.strip()))
        if not all(isinstance(k, str) and k and isinstance(v, str) and v for k, v in pairs):
            raise EatkitError(f"{self.name} must map non-empty names to non-empty strings, got {value!r:.60}")
        return dict(pairs)

    def _what(self) -> str:
        return _PLURALS.get(self.type, f"{self.type.__name__} values")

    def _one(self, value: Any) -> Any:
        if isinstance(value, str) and value in self.words:
            return value
        if self.choices is not None:
            return self._choice(value)
        value, ok = self._typed(self._from_text(value))
        if ok:
            self._check_value(value)
            ok = self._in_range(value)
        if not ok:
            raise EatkitError(f"{self.name} must be {self._range()}, got {value!r}")
        return value

    def _choice(self, value: Any) -> Any:
        for choice in self.choices or ():  # a command line gives text: "2" is the choice 2
            if value == choice and type(value) is type(choice) or str(value) == str(choice):
                return choice
        raise EatkitError(f"{self.name} must be one of {', '.join(map(str, self.choices or ()))}, got {value!r}")

    def _from_text(self, value: Any) -> Any:
        """The value of a command line's text: a number, or ``true``/``false`` for a flag."""
        if not isinstance(value, str):
            return value
        if self.type in (int, float):
            try:
                return self.type(value)
            except ValueError:
                raise EatkitError(f"{self.name} must be {self._range()}, got {value!r}") from None
        if self.type is bool and value.lower() in ("true", "false"):
            return value.lower() == "true"
        return value

    def _typed(self, value: Any) -> tuple[Any, bool]:
        """``value`` (an int made float where a float is declared) and whether it has the declared type."""
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value), True
        return value, isinstance(value, self.type) and (self.type is bool or not isinstance(value, bool))

    def _check_value(self, value: Any) -> None:
        if self.type is str and not value.strip():
            raise EatkitError(f"{self.name} must be a non-empty string, got {value!r}")
        if self.type is float and not math.isfinite(value):
            raise EatkitError(f"{self.name} must be a finite number, got {value!r}")

    def _in_range(self, value: Any) -> bool:
        if self.type not in (int, float):
            return True
        return (self.low is None or value > self.low or (value == self.low and not self.low_open)) and \
               (self.high is None or value < self.high or (value == self.high and not self.high_open))

    def _bound(self, bound: float) -> str:
        """A bound as a message prints it: an integer parameter's exactly (2**53 - 1, not 9.0072e+15)."""
        return str(int(bound)) if self.type is int and float(bound).is_integer() else f"{bound:g}"

    def _range(self) -> str:
        what = _TYPE_NAMES.get(self.type, self.type.__name__)
        low, high = (None if b is None else self._bound(b) for b in (self.low, self.high))
        if low is not None and high is not None:
            what = f"{what} in {'(' if self.low_open else '['}{low}, {high}{')' if self.high_open else ']'}"
        elif low is not None:
            what = f"{what} {'>' if self.low_open else '>='} {low}"
        elif high is not None:
            what = f"{what} {'<' if self.high_open else '<='} {high}"
        return ", ".join(self.words) + f" or {what}" if self.words else what

    def json_schema(self, *, nullable: bool = False) -> dict[str, Any]:
        """The JSON Schema of this parameter, its range included (the suite and sweep schemas both take it
        from here); ``nullable``: ``null`` means "not given" (a suite file's ``params``), and a list given
        with a separator may also be its text.

        >>> Param("iterations", int, 1000, low=1).json_schema()
        {'type': 'integer', 'minimum': 1}
        >>> Param("alpha", float, low=0, high=1, low_open=True, high_open=True).json_schema(nullable=True)
        {'anyOf': [{'type': 'number', 'exclusiveMinimum': 0, 'exclusiveMaximum': 1}, {'type': 'null'}]}
        """
        out = self._value_schema()
        if self.many == "pairs":
            out = {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}}
        elif self.many == "list":
            out = {"type": "array", "items": out, **({} if self.empty else {"minItems": 1})}
            if self.length is not None:
                out["minItems"] = out["maxItems"] = self.length
            if nullable and self.sep:
                out = {"anyOf": [out, {"type": "string"}]}
        return {"anyOf": [out, {"type": "null"}]} if nullable else out

    def _value_schema(self) -> dict[str, Any]:
        """The JSON Schema of one value: its type or choices, its range, its words."""
        one: dict[str, Any] = {"enum": list(self.choices)} if self.choices is not None else (
            {"type": _JSON_TYPES[self.type]} if self.type in _JSON_TYPES else {})
        if self.low is not None:
            one["exclusiveMinimum" if self.low_open else "minimum"] = self.low
        if self.high is not None:
            one["exclusiveMaximum" if self.high_open else "maximum"] = self.high
        return {"anyOf": [{"enum": list(self.words)}, one]} if self.words else one

    def argparse_kwargs(self) -> dict[str, Any]:
        """The keywords of ``ArgumentParser.add_argument`` for this parameter: every value reaches
        :meth:`convert` as text (``None`` when not given), so that a bad value is refused in one place."""
        kwargs: dict[str, Any] = {"dest": self.name, "default": None, "help": self.describe()}
        if self.many == "pairs" or (self.many == "list" and not self.sep):
            kwargs["action"] = "append"
        if self.type is bool and self.default is False:  # a switch: the bare flag sets it
            kwargs.update(action="store_const", const="true")
        if self.choices is not None:
            kwargs["metavar"] = "{" + ",".join(map(str, self.choices)) + "}"
        elif self.metavar:
            kwargs["metavar"] = self.metavar
        return kwargs

    def describe(self) -> str:
        """The help text with the default."""
        default = self.default
        if isinstance(default, (list, tuple)):
            default = (self.sep or ", ").join(map(str, default))
        elif isinstance(default, Mapping):
            default = ", ".join(f"{k}={v}" for k, v in default.items()) or None
        shown = default not in (None, "") and default is not False and "default" not in self.help
        return self.help + (f" (default {default})" if shown else "")



# --- quantities shared by a declaration and a statistics function (each range declared once) ----------------

#: the confidence level of every interval: the run option ``confidence_level``, ``eatkit probe`` and
#: ``eatkit meta`` (:data:`eatkit.command_options.COMMAND_OPTIONS`), and every statistics function that
#: takes one (:func:`check`)
CONFIDENCE_LEVEL = Param("confidence_level", float, 0.95, low=0, high=1, low_open=True, high_open=True,
                         useful=(0.5, 0.999), help="confidence level of the bootstrap CI")
#: RNSB's number of logistic-regression fits (the ``rnsb`` kind's parameter and :func:`eatkit.stats.metrics.rnsb`):
#: at least 2 with the holdout split, whose spread over fits needs two (WEFE issue #5)
N_FITS = Param("n_fits", int, 20, low=2, high=10_000, useful=(5, None),
               help="RNSB: logistic regressions fitted on random 80 percent splits, averaged (at least 2: their "
               "spread is reported)")
#: direct bias's strictness c (the ``direct-bias`` kind's parameter and :func:`eatkit.stats.metrics.direct_bias`):
#: |cos|^c of any |cos| < 0.99 is below 1e-43 beyond 1e4
DIRECT_BIAS_C = Param("c", float, 1.0, low=0, low_open=True, high=1e4, useful=(0.1, 10), flag="--direct-bias-c",
                      metavar="C", help="direct bias: the strictness c of mean |cos(w, g)|^c")

#: the quantities above by name (:func:`check`)
SHARED: dict[str, Param] = {p.name: p for p in (CONFIDENCE_LEVEL, N_FITS, DIRECT_BIAS_C)}


def check(name: str, value: Any) -> Any:
    """``value`` of the shared quantity ``name`` checked against its one declaration (numpy scalars too),
    or that declaration's one-line error.

    >>> check("confidence_level", 1)
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: confidence_level must be a number in (0, 1), got 1.0
    """
    if hasattr(value, "item") and not isinstance(value, (list, tuple, str)):
        value = value.item()  # a numpy scalar
    return SHARED[name].convert(value)
