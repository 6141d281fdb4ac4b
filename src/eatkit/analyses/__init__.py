"""The analyses: one module per kind of test, dispatched by the runner on the test's ``kind``.

Adding an analysis is one module here (an :class:`~eatkit.analyses.base.Analysis` subclass and its
:class:`~eatkit.records.Record` type) plus one line in :data:`ANALYSES` (and its roles in
:data:`eatkit.stimuli.types.TEST_KINDS`; a renderer in :mod:`eatkit.report.kinds` if it needs its own
table). Modules are imported only when their kind is used.

>>> get_analysis("eat").kind
'eat'
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from eatkit.analyses.base import Analysis
from eatkit.errors import EatkitError
from eatkit.io import load_object
from eatkit.records import Record

#: test kind -> "module:class" of its analysis
ANALYSES: dict[str, str] = {
    "eat": "eatkit.analyses.eat:EATAnalysis",
    "sc-eat": "eatkit.analyses.sc_eat:SCEATAnalysis",
    "grounded": "eatkit.analyses.grounded:GroundedAnalysis",
    "ranking": "eatkit.analyses.ranking:RankingAnalysis",
    "vqa": "eatkit.analyses.rates:VQAAnalysis",
    "caption": "eatkit.analyses.rates:CaptionAnalysis",
    "generation": "eatkit.analyses.generation:GenerationAnalysis",
    "geometry": "eatkit.analyses.geometry:GeometryAnalysis",
    "rnd": "eatkit.analyses.metrics:RNDAnalysis",
    "ect": "eatkit.analyses.metrics:ECTAnalysis",
    "ripa": "eatkit.analyses.metrics:RIPAAnalysis",
    "mac": "eatkit.analyses.metrics:MACAnalysis",
    "rnsb": "eatkit.analyses.metrics:RNSBAnalysis",
    "direct-bias": "eatkit.analyses.metrics:DirectBiasAnalysis",
}


@cache
def get_analysis(kind: str) -> Analysis:
    """The analysis of a test kind; an unknown kind is an error listing the known ones."""
    if kind not in ANALYSES:
        raise EatkitError(f"unknown test kind {kind!r} (known: {', '.join(ANALYSES)})")
    return load_object(ANALYSES[kind])()


def record_from_json(data: Any, where: str = "record") -> Record:
    """A record loaded from its JSON object, typed by its ``kind`` (eatkit 0.1.0 records, which have none,
    are EAT records).

    >>> record_from_json({"kind": "probe"})
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: record: unknown test kind 'probe' (known: eat, sc-eat, grounded, ranking, vqa, caption, generation, geometry, rnd, ect, ripa, mac, rnsb, direct-bias)
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
