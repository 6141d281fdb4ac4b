"""The analyses: one module per kind of test, found through the kind's spec (:mod:`eatkit.kinds`).

Adding a kind is its :class:`~eatkit.kinds.KindSpec` (in :mod:`eatkit.specs`), one line in
:data:`eatkit.kinds.KINDS` and one module here (its :class:`~eatkit.records.Record` type and
:class:`~eatkit.analyses.base.Analysis` subclass); see ``docs/architecture.md``. Modules are imported only
when their kind is used.

>>> get_analysis("eat").kind
'eat'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eatkit.analyses.base import Analysis
from eatkit.errors import EatkitError
from eatkit.kinds import get_kind
from eatkit.records import Record


def get_analysis(kind: str) -> Analysis:
    """The analysis of a test kind; an unknown kind is an error listing the known ones."""
    return get_kind(kind).load_analysis()


def record_from_json(data: Any, where: str = "record") -> Record:
    """A record loaded from its JSON object, typed by its ``kind`` (eatkit 0.1.0 records, which have none,
    are EAT records).

    >>> record_from_json({"kind": "probe"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: record: unknown test kind 'probe' (known: eat, sc-eat, grounded, ...)
    """
    if not isinstance(data, Mapping):
        raise EatkitError(f"{where}: every result must be a JSON object, got {type(data).__name__}")
    kind = data.get("kind", "eat")
    try:
        analysis = get_analysis(kind) if isinstance(kind, str) else None
    except EatkitError as err:
        raise EatkitError(f"{where}: {err}") from None
    if analysis is None:
        raise EatkitError(f"{where}: 'kind' must be a string, got {kind!r}")
    return analysis.record_type.from_json(data, where)
