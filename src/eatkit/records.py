"""Typed result records: what a run writes to ``results.json`` and what the report and CLI read.

Every analysis (:mod:`eatkit.analyses`) returns records, one frozen dataclass per kind of test, built
on :class:`Record`. A record writes itself once (:meth:`Record.to_json`, plain JSON types, the field
names documented in ``docs/results.md``) and loads back into the same type (:meth:`Record.from_json`,
which checks every field's JSON type and names the one at fault); :func:`eatkit.analyses.record_from_json`
picks the type from the record's ``kind``. Records hold numbers and names, never arrays: the arrays
of a test (e.g. level-3 similarities) are saved beside them in ``similarities.npz``.

``schema_version`` 2 added ``kind``, ``schema_version``, ``sd``, ``ddof`` and ``warnings`` to every
record; version-1 records (eatkit 0.1.0: no ``kind``) load as ``eat`` records with their defaults.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from eatkit.errors import EatkitError

#: the version of the record format written by this eatkit
SCHEMA_VERSION = 2

R = TypeVar("R", bound="Record")

#: the declared ranges of record fields, by field name (the field's number, or every number in its list or
#: object): probabilities, levels and shares in [0, 1]; counts, sizes and variances at least 0. Checked on
#: every read-back (:meth:`Record.from_json`), so a hand-edited results.json is refused naming file and field
FIELD_RANGES: tuple[tuple[re.Pattern[str], float, float], ...] = (
    (re.compile(r"(.*_)?p_values?(_.*)?|q_value|q_p_value|p_max_skew|p_ndkl|i2|confidence_level|alpha"
                r"|share(_.*)?|shares|top_shares"), 0.0, 1.0),
    (re.compile(r"n_.*|.*_n_permutations|k|q_df|q|tau2|se|set_sizes|counts|group_counts|group_size"), 0.0, math.inf),
)


@dataclass(frozen=True, kw_only=True)
class Record:
    """The fields every record has: where it comes from, the seed of its random draws, and what every
    tested record needs, so that no layer has to know which kinds have them.

    ``warnings`` lists legal but questionable conditions of the test (e.g. a useless option value);
    they are printed and kept with the result. ``p_value`` is the record's tested p-value (``None``: the
    record tests no hypothesis), which enters the run's Benjamini-Hochberg ``q_value``; ``dropped`` lists
    the stimuli left out of each role (e.g. out-of-vocabulary words with ``oov="drop"``).
    """

    kind: ClassVar[str] = ""
    #: old field names of this kind's records (results.json of earlier eatkit versions) -> today's: one name
    #: per quantity (docs/architecture.md, "One name per quantity"), and existing run folders still read; an
    #: interval's old ends map to ``(field, 0)`` and ``(field, 1)`` of today's ``[low, high]`` (:func:`interval_ends`)
    renamed: ClassVar[Mapping[str, str | tuple[str, int]]] = {}

    suite: str
    test: str
    title: str
    seed: int | None = None
    warnings: list[str] = field(default_factory=list)
    p_value: float | None = None
    q_value: float | None = None
    dropped: dict[str, list[str]] = field(default_factory=dict)

    def key(self) -> tuple[Any, ...]:
        """What identifies this record among a run's records: its kind and test, and, for a kind that writes
        several records per test, what tells them apart (e.g. a grounded test's embedding and experiment).

        >>> Record(suite="s", test="t", title="T").key()
        ('', 't')
        """
        return (self.kind, self.test)

    def check(self, where: str) -> None:
        """Raise :class:`EatkitError` when the fields contradict each other (called by :meth:`from_json`)."""

    def to_frame(self) -> Any:
        """This record as a one-row pandas DataFrame with the columns of ``results.csv``
        (:func:`flatten_record`: one column per value, ``estimate`` the kind's headline value).

        >>> Record(suite="s", test="t", title="T").to_frame().loc[0, "test"]
        't'
        """
        import pandas as pd

        return pd.DataFrame([flatten_record(self.to_json())])

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON object: ``kind``, ``schema_version`` and every field (non-finite floats
        become ``None``, tuples lists).

        >>> Record(suite="s", test="t", title="T").to_json()["schema_version"]
        2
        """
        fields = {f.name: plain_json(getattr(self, f.name)) for f in dataclasses.fields(self)}
        return {"kind": self.kind, "schema_version": SCHEMA_VERSION, **fields}

    @classmethod
    def today(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        """A record's JSON with an earlier eatkit's field names mapped to today's (:attr:`renamed`), an
        interval's two old ends joined into one ``[low, high]`` (``null`` when neither is a number).

        >>> class Old(Record):
        ...     renamed = {"n_resamples": "n_bootstrap", **interval_ends("ci")}
        >>> Old.today({"n_resamples": 20, "ci_low": 0.1, "ci_high": 0.4})
        {'n_bootstrap': 20, 'ci': [0.1, 0.4]}
        """
        out: dict[str, Any] = {}
        joined = set()
        for key, value in data.items():
            new = cls.renamed.get(key, key)
            if isinstance(new, tuple):  # one end of an interval
                out.setdefault(new[0], [None, None])[new[1]] = value
                joined.add(new[0])
            else:
                out[new] = value
        return out | {name: interval(*out[name]) for name in joined}

    @classmethod
    def from_json(cls: type[R], data: Mapping[str, Any], where: str = "record") -> R:
        """Load a record written by :meth:`to_json` (or by eatkit 0.1.0), checking each field's type.

        >>> Record.from_json({"suite": "s", "test": "t", "title": 3})
        Traceback (most recent call last):
        ...
        eatkit.errors.EatkitError: record: test 't': 'title' must be a string, got 3
        """
        if not isinstance(data, Mapping):
            raise EatkitError(f"{where}: every result must be a JSON object, got {type(data).__name__}")
        who = f"{where}: test {data['test']!r}" if isinstance(data.get("test"), str) else f"{where}: a result"
        _check_renamed(cls.renamed, data, who)
        data = cls.today(data)
        _check_version(data, who)
        unknown = sorted(set(data) - {f.name for f in dataclasses.fields(cls)} - {"kind", "schema_version"})
        if unknown:  # a field this eatkit does not know would be dropped silently
            raise EatkitError(f"{who} has unknown field(s) {', '.join(repr(k) for k in unknown[:5])} (written by "
                              "another eatkit version, or edited?)")
        values = _field_values(cls, data, who)
        for name, value in values.items():
            check_range(name, value, f"{who}: {name!r}")
        record = cls(**values)
        record.check(who)
        return record


def interval(low: float | None, high: float | None) -> list[float | None] | None:
    """An interval as a record holds it: ``[low, high]`` (written as ``ci_low``, ``ci_high`` in results.csv),
    or None when neither end is a finite number (no interval was computed).

    >>> interval(0.25, 0.5), interval(float("nan"), None)
    ([0.25, 0.5], None)
    """
    if all(v is None or (isinstance(v, float) and not math.isfinite(v)) for v in (low, high)):
        return None
    return [low, high]


def is_interval(name: str) -> bool:
    """Whether a record field ``name`` holds an interval ``[low, high]`` (``ci``, ``ss_ci``, ``bootstrap_interval``):
    results.csv writes it as ``<name>_low``, ``<name>_high`` (:func:`flatten_record`), the report as "[low, high]".

    >>> is_interval("ci"), is_interval("accuracy_ci"), is_interval("cities")
    (True, True, False)
    """
    return name.rsplit("_", 1)[-1] in ("ci", "interval")


def interval_ends(name: str = "ci") -> dict[str, tuple[str, int]]:
    """The :attr:`Record.renamed` entries of an interval ``name`` an earlier eatkit wrote as two fields.

    >>> interval_ends("ss_ci")
    {'ss_ci_low': ('ss_ci', 0), 'ss_ci_high': ('ss_ci', 1)}
    """
    return {f"{name}_low": (name, 0), f"{name}_high": (name, 1)}


def _check_renamed(renamed: Mapping[str, str | tuple[str, int]], data: Mapping[str, Any], who: str) -> None:
    """Refuse a record holding a quantity under an earlier eatkit's name and today's, or one end of an interval
    without the other (no eatkit wrote either: the file was edited or mixed)."""
    for old, new in renamed.items():
        name = new if isinstance(new, str) else new[0]
        if old in data and name in data:
            raise EatkitError(f"{who} has both {old!r} (an earlier eatkit's name) and {name!r}")
    _check_interval_ends({old: new for old, new in renamed.items() if isinstance(new, tuple)}, data, who)


def _check_interval_ends(ends: Mapping[str, tuple[str, int]], data: Mapping[str, Any], who: str) -> None:
    """Refuse one old end of an interval (``ends``: :func:`interval_ends`) without the other."""
    given = {ends[key] for key in data if key in ends}
    for name, end in sorted(given):
        if (name, 1 - end) not in given:
            missing = next(old for old, new in ends.items() if new == (name, 1 - end))
            raise EatkitError(f"{who} has one end of the interval {name!r} without {missing!r}")


def _check_version(data: Mapping[str, Any], who: str) -> None:
    version = data.get("schema_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= SCHEMA_VERSION:
        raise EatkitError(f"{who} has schema_version {version!r}; this eatkit reads versions 1 to "
                          f"{SCHEMA_VERSION} (a newer eatkit wrote it? upgrade eatkit)")


def _field_values(cls: type, data: Mapping[str, Any], who: str) -> dict[str, Any]:
    """Each field of record class ``cls`` given in ``data``, checked against its type; an error naming the
    required fields missing."""
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    missing = []
    for f in dataclasses.fields(cls):
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                missing.append(f.name)
            continue
        values[f.name] = _checked(data[f.name], hints[f.name], f"{who}: {f.name!r}")
    if missing:
        raise EatkitError(f"{who} lacks {', '.join(repr(k) for k in missing)}")
    return values


def check_range(name: str, value: Any, what: str) -> None:
    """Raise a one-line error when the number ``value`` of field ``name`` (or a number inside it) leaves the
    field's declared range (:data:`FIELD_RANGES`); NaN (written as null) passes.

    >>> check_range("p_value", 7.5, "results.json: test 't': 'p_value'")
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: results.json: test 't': 'p_value' is 7.5, outside its declared range [0, 1]
    """
    bounds = next(((low, high) for pattern, low, high in FIELD_RANGES if pattern.fullmatch(name)), None)
    if bounds is None:
        return
    numbers = value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value]
    for number in numbers:
        if isinstance(number, (dict, list)):
            check_range(name, number, what)
        elif _outside(number, bounds):
            raise EatkitError(f"{what} is {number!r}, outside its declared range [{bounds[0]:g}, {bounds[1]:g}]")


def _outside(number: Any, bounds: tuple[float, float]) -> bool:
    """Whether ``number`` is a number (not NaN) outside ``bounds``."""
    return isinstance(number, (int, float)) and not isinstance(number, bool) and \
        not bounds[0] <= number <= bounds[1] and not math.isnan(number)


def plain_json(value: Any) -> Any:
    """``value`` in plain JSON types (tuples as lists, non-finite floats as None: JSON has no NaN).

    >>> plain_json({"d": float("nan"), "n": (1, 2.5)})
    {'d': None, 'n': [1, 2.5]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_json(v) for v in value]
    return value


_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false", type(None): "null",
          list: "a list", dict: "an object"}


def _checked(value: Any, hint: Any, what: str) -> Any:
    """``value`` if it is JSON of the annotated type ``hint`` (a JSON null stands for NaN in a float field);
    else a one-line error naming the field, what it expects and what it got."""
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union \
        else (hint,)
    for option in options:
        found = _as_option(value, option, type(None) in options, what)
        if found is not _NOT:
            return found
    expected = " or ".join(_NAMES.get(typing.get_origin(o) or o, str(o)) for o in options)
    raise EatkitError(f"{what} must be {expected}, got {value!r:.60}")


#: what :func:`_as_option` returns for a value that is not of the type
_NOT = object()


def _as_option(value: Any, option: Any, nullable: bool, what: str) -> Any:
    """``value`` as the type ``option`` of a field (``nullable``: null is another option of it), or
    :data:`_NOT`; the items of a list or object checked in turn."""
    origin = typing.get_origin(option) or option
    if origin is float and value is None and not nullable:
        return math.nan  # written as null: a statistic that could not be computed
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if origin is float and number:
        return float(value)
    if origin is int and number and isinstance(value, int):
        return value
    if origin in (str, bool, type(None)) and type(value) is origin:
        return value
    if origin in (list, dict) and isinstance(value, origin):
        return _items(value, typing.get_args(option), what)
    return value if option is Any else _NOT


def _items(value: list[Any] | dict[str, Any], args: tuple[Any, ...], what: str) -> Any:
    """A list's or an object's items, each checked against the item type in ``args`` (none: any)."""
    item = args[-1] if args else Any
    if isinstance(value, list):
        return [v if item is Any else _checked(v, item, what) for v in value]
    return {k: v if item is Any else _checked(v, item, what) for k, v in value.items()}


#: record fields holding a panel of many values (``--validity``, the anisotropy check): written to their own
#: tables, ``tables/<field>.csv``, one row per record, joined to ``results.csv`` by its ``row``
PANELS: tuple[str, ...] = ("validity", "anisotropy")


def flatten_record(record: dict[str, Any], tables: dict[str, list[dict[str, Any]]] | None = None,
                   ident: dict[str, Any] | None = None) -> dict[str, Any]:
    """A record's JSON as one flat row, one column per value: nested fields as ``level3_xa_mean``,
    ``p_value_two_sided``, ``dropped_X`` (a list of words as one text cell, ``"; "``-separated),
    ``ci_low``; ``estimate``, the kind's headline value (an EAT's ``effect_size``, a metric's
    ``value``) under one name for every kind.

    Lists of objects (e.g. the most influential stimuli) and the :data:`PANELS` go to ``tables`` (file
    name -> rows, each row starting with ``ident``) when given, and are left out of the row otherwise.

    >>> flatten_record({"kind": "eat", "effect_size": 1.5, "level3": {"xa": {"mean": 0.5}}, "ci": None})
    {'kind': 'eat', 'estimate': 1.5, 'effect_size': 1.5, 'level3_xa_mean': 0.5, 'ci_low': None, 'ci_high': None}
    >>> flatten_record({"p_values": {"greater": 0.9, "two-sided": 0.2}, "dropped": {"X": ["a", "b"]}, "warnings": []})
    {'estimate': None, 'p_value_greater': 0.9, 'p_value_two_sided': 0.2, 'dropped_X': 'a; b', 'warnings': ''}
    """
    tables = {} if tables is None else tables
    ident = ident or {}
    flat: dict[str, Any] = {}
    for key, value in record.items():
        if key == "kind":
            flat["kind"] = value
        if key in PANELS and isinstance(value, dict):
            tables.setdefault(f"tables/{key}.csv", []).append(_flatten_row(value, tables, ident, key))
        elif key == "p_values":  # the p of every alternative, one column each
            flat |= {f"p_value_{alternative.replace('-', '_')}": v for alternative, v in value.items()}
        elif key != "kind":
            _flatten_value(flat, key, value, tables, ident)
    return _kind_first(flat, _estimate(record))


def _kind_first(flat: dict[str, Any], estimate: Any) -> dict[str, Any]:
    """The flat row's columns: kind, estimate, then the others."""
    out = {k: flat[k] for k in ("kind",) if k in flat} | {"estimate": estimate}
    return out | {k: v for k, v in flat.items() if k != "kind"}


def _estimate(record: dict[str, Any]) -> Any:
    """The kind's headline value (:class:`eatkit.kinds.Presentation`), else ``effect_size``, else ``value``."""
    from eatkit.kinds import KINDS, get_kind

    headline = get_kind(record["kind"]).presentation.headline if record.get("kind") in KINDS else None
    for name in (headline, "effect_size", "value"):
        if name and name in record:
            return record[name]
    return None


def _flatten_value(flat: dict[str, Any], key: str, value: Any, tables: dict[str, list[dict[str, Any]]],
                   ident: dict[str, Any], table_prefix: str = "") -> None:
    """``value`` into ``flat`` under ``key`` (nested: ``key_sub``), lists of objects into ``tables``."""
    name = f"{table_prefix}_{key}" if table_prefix else key
    if isinstance(value, dict):
        for sub, v in value.items():
            _flatten_value(flat, f"{key}_{sub}", v, tables, ident, table_prefix)
    elif is_interval(key):  # [low, high]
        low, high = value if isinstance(value, (list, tuple)) and len(value) == 2 else (None, None)
        flat[f"{key}_low"], flat[f"{key}_high"] = low, high
    elif isinstance(value, list):
        _flatten_list(flat, key, value, tables, ident, name)
    else:
        flat[key] = value


def _flatten_row(values: Mapping[str, Any], tables: dict[str, list[dict[str, Any]]], ident: dict[str, Any],
                 table: str) -> dict[str, Any]:
    """One row of table ``table``: ``ident``, then ``values`` flattened (their lists of objects into ``tables``)."""
    row = dict(ident)
    for sub, v in values.items():
        _flatten_value(row, sub, v, tables, ident, table)
    return row


def _flatten_list(flat: dict[str, Any], key: str, value: list[Any], tables: dict[str, list[dict[str, Any]]],
                  ident: dict[str, Any], name: str) -> None:
    """A list of objects as the rows of table ``name``; any other list as one ``"; "``-separated text cell."""
    if any(isinstance(v, dict) for v in value):
        rows = tables.setdefault(f"tables/{name}.csv", [])
        for item in value:
            rows.append(_flatten_row(item if isinstance(item, dict) else {"value": item}, tables, ident, name))
    else:
        flat[key] = "; ".join(json.dumps(v) if isinstance(v, list) else str(v) for v in value)
