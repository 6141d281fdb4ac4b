"""Families of kinds (eatkit.kinds: role groups, Family): what members share is declared once, and a new
member is a statistics function plus one declaration, shown everywhere without touching another file."""

from __future__ import annotations

import json

import pytest

from eatkit.errors import EatkitError
from eatkit.kinds import KINDS, KindSpec, RoleGroup, get_kind, register_kind


@pytest.fixture
def grouped():
    """A kind with n target sets and m attribute sets (role groups), registered for the test only."""
    register_kind("toy-groups", KindSpec("toy-groups", (RoleGroup("T", 2), RoleGroup("A", 1, 3)),
                                         "eatkit.analyses.eat:EATAnalysis", title="toy role groups"))
    yield
    del KINDS["toy-groups"]
    get_kind.cache_clear()


def _suite(**roles):
    word = lambda *w: {"name": w[0], "modality": "word", "items": list(w)}  # noqa: E731
    test = {"id": "g1", "title": "groups", "kind": "toy-groups", **{r: word(*w) for r, w in roles.items()}}
    return json.dumps({"schema": "eatkit.suite/1", "id": "g", "title": "g", "tests": [test]})


def test_role_groups_are_declared_and_checked(grouped):
    from eatkit.stimuli.schema import check_json_schema, parse_suite, suite_json_schema

    text = _suite(T1=["a"], T3=["c"], T2=["b"], A1=["x"])
    test = parse_suite(text, "g.json").tests[0]
    assert [r for r, _ in test.roles] == ["T1", "T2", "T3", "A1"]
    check_json_schema(json.loads(text), suite_json_schema(), "g.json")  # the schema's patterns admit them
    with pytest.raises(EatkitError, match=r"^suite file g.json: test 'g1': a toy-groups test needs at least 2 sets T1, "
                                          r"T2, \.\.\. \(got T1\)$"):
        parse_suite(_suite(T1=["a"], A1=["x"]), "g.json")
    with pytest.raises(EatkitError, match=r"numbered from 1 without gaps \(got T1, T3\)$"):
        parse_suite(_suite(T1=["a"], T3=["c"], A1=["x"]), "g.json")
    with pytest.raises(EatkitError, match=r"at most 3 sets A1, A2, \.\.\. \(got A1, A2, A3, A4\)$"):
        parse_suite(_suite(T1=["a"], T2=["b"], A1=["x"], A2=["y"], A3=["z"], A4=["w"]), "g.json")
    with pytest.raises(EatkitError, match="B1"):  # a key of no role is refused as before
        parse_suite(_suite(T1=["a"], T2=["b"], A1=["x"], B1=["y"]), "g.json")
