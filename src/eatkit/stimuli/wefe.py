"""WEFE interoperability for word sets: read WEFE's bundled word-set files, export tests as WEFE queries.

WEFE (dccuchile/wefe) ships its word sets as a JSON object of set name -> list of words
(``wefe/datasets/data/WEAT.json``); a WEFE ``Query`` takes target sets, attribute sets and their names.
:func:`read_wefe_word_sets` reads the first (every set checked: a non-empty list of words, no
duplicate name), :func:`test_from_word_sets` makes an eatkit EAT test (kind ``"eat"`` or a metric kind)
of four of them, and :func:`wefe_queries` writes the word sets of a suite's tests as WEFE query
arguments (``Query(**query)`` after dropping ``"name"``), so a run can be repeated in WEFE.

>>> sets = {"flowers": ["rose", "tulip"], "insects": ["ant", "bee"], "pleasant": ["good"], "unpleasant": ["bad"]}
>>> test = test_from_word_sets(sets, ("flowers", "insects"), ("pleasant", "unpleasant"), id="fi")
>>> wefe_queries([test])[0]["target_sets_names"]
['flowers', 'insects']
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from eatkit.io import read_json
from eatkit.errors import EatkitError
from eatkit.stimuli.types import AssociationTest, StimulusSet


def read_wefe_word_sets(path: str | Path) -> dict[str, tuple[str, ...]]:
    """The word sets of a WEFE word-set JSON file (an object of name -> list of words)."""
    path = Path(path)
    pairs = read_json(path, "WEFE word sets", object_pairs_hook=list)  # the one reader: bounded
    if not isinstance(pairs, list) or not all(isinstance(p, tuple) for p in pairs):
        raise EatkitError(f"WEFE word sets {path}: expected a JSON object of set name -> list of words")
    out: dict[str, tuple[str, ...]] = {}
    for name, words in pairs:
        if name in out:
            raise EatkitError(f"WEFE word sets {path}: set '{name}' is given twice")
        if not _is_word_list(words):
            raise EatkitError(f"WEFE word sets {path}: set '{name}' must be a non-empty list of words")
        out[name] = tuple(words)
    return out


def _is_word_eat(sets: Mapping[str, Any]) -> bool:
    """Whether a test's sets are the EAT's roles X, Y, A, B, each of plain words."""
    return set(sets) == set("XYAB") and not any(s.modality != "word" or s.templates for s in sets.values())


def _query(name: str, sets: Mapping[str, Any]) -> dict[str, Any]:
    """The WEFE ``Query`` arguments of an EAT's word sets."""
    return {"name": name,
            "target_sets": [list(sets[r].items) for r in "XY"],
            "target_sets_names": [sets[r].name for r in "XY"],
            "attribute_sets": [list(sets[r].items) for r in "AB"],
            "attribute_sets_names": [sets[r].name for r in "AB"]}


def _is_word_list(words: Any) -> bool:
    """Whether ``words`` is a non-empty list of non-blank strings."""
    return isinstance(words, list) and bool(words) and all(isinstance(w, str) and w.strip() for w in words)


def test_from_word_sets(sets: Mapping[str, Sequence[str]], targets: tuple[str, str], attributes: tuple[str, str], *,
                        id: str, kind: str = "eat") -> AssociationTest:
    """An eatkit test of two target and two attribute sets named in ``sets`` (roles X, Y, A, B)."""
    missing = [name for name in (*targets, *attributes) if name not in sets]
    if missing:
        raise EatkitError(f"no word set named {', '.join(repr(m) for m in missing)} (known: {', '.join(sets)})")
    roles = tuple((role, StimulusSet(name, "word", tuple(sets[name])))
                  for role, name in zip("XYAB", (*targets, *attributes)))
    return AssociationTest(id, f"{targets[0]} vs {targets[1]}, {attributes[0]} vs {attributes[1]}", kind, roles)


test_from_word_sets.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def wefe_queries(tests: Iterable[AssociationTest]) -> list[dict[str, Any]]:
    """The word sets of every test with the EAT's roles and word stimuli, as WEFE ``Query`` arguments
    (targets X, Y; attributes A, B) with the test id as ``name``."""
    out = [_query(test.id, sets) for test in tests for sets in [test.sets()] if _is_word_eat(sets)]
    if not out:
        raise EatkitError("no test with word sets X, Y, A, B to export as a WEFE query")
    return out
