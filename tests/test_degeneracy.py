"""The degeneracy rules declared per kind (``KindSpec.degeneracy``, a family's for all its members) and run in
one place: every kind and every member of a family, fed a degenerate input of each rule it declares, gives the
rule's one-line error or its recorded warning, never NaN or a traceback; a new member gets the rules without
writing any."""

from __future__ import annotations

import json
import re
import sys
import textwrap

import numpy as np
import pytest

from eatkit.analyses.base import check_inputs
from eatkit.errors import EatkitError
from eatkit.kinds import KINDS, RoleGroup, Rules, get_kind, register_kind
from eatkit.stats.degeneracy import RULES, SET_RULES, VALUE_RULES, collected, finding

#: the start of each rule's message (the template up to its first field)
PREFIX = {name: rule.message.split("{")[0] for name, rule in RULES.items()}


def _prefix(rule: str) -> str:
    """A pattern for the rule's message: its fixed words between the filled-in fields."""
    parts = re.split(r"\{[^}]*\}", RULES[rule].message)
    return ".*".join(re.escape(p) for p in parts if p)


def _roles(spec) -> list[str]:
    """Role names of one test of the kind: its declared names, two (or the least) sets of each group, or X, Y,
    A, B for a kind that takes any names."""
    if spec.member is not None:
        return list(spec.member.reads)  # a member reads its roles only (targets only: X, Y)
    if spec.roles is None:
        return ["X", "Y", "A", "B"]
    out: list[str] = []
    for role in spec.roles:
        out += [f"{role.prefix}{i + 1}" for i in range(max(role.least, 2))] if isinstance(role, RoleGroup) else [role]
    return out


def _sets(spec, rng) -> dict[str, np.ndarray]:
    """Distinct random vectors, three per role (dimension 6): no rule applies."""
    return {role: rng.normal(size=(3, 6)) for role in _roles(spec)}


def _targets(names):
    return [n for n in names if re.fullmatch(r"(X|Y|T)[0-9]*", n)]


def _attributes(names):
    return [n for n in names if re.fullmatch(r"(A|B)[0-9]*", n)]


def _degenerate(rule: str, spec, sets: dict[str, np.ndarray]) -> dict[str, np.ndarray] | None:
    """``sets`` made degenerate for ``rule`` (None where the kind's roles cannot show it)."""
    sets = {k: v.copy() for k, v in sets.items()}
    pairs = spec.degeneracy.pairs(sets)
    first = (_targets(sets) or list(sets))[0]
    if rule == "zero-variance":
        sets[first][:] = sets[first][0]
    elif rule == "numeric-range":
        sets[first] *= 1e200
    elif rule in ("coincide", "overlap"):
        if not pairs:
            return None
        a, b = pairs[0]
        sets[b] = sets[a][::-1].copy() if rule == "coincide" else np.vstack([sets[a][:1], sets[b][1:]])
    elif rule == "targets-attributes":
        if not (_targets(sets) and _attributes(sets)):
            return None
        sets[_attributes(sets)[0]] = sets[_targets(sets)[0]][::-1].copy()
    return sets


def _fails_with(rule: str, call) -> None:
    """``call()`` gives the rule's one-line error (level error) or its warning, collected (level warning)."""
    if RULES[rule].level == "error":
        with pytest.raises(EatkitError) as info:
            call()
        assert "\n" not in str(info.value) and re.search(_prefix(rule), str(info.value)), (rule, str(info.value))
    else:
        with collected() as found:
            call()
        assert any(re.search(_prefix(rule), f) for f in found), (rule, found)


def _all_specs():
    return [get_kind(name) for name in KINDS]


def test_every_kind_declares_its_rules_by_name():
    """Every registered kind (each family member through its family) says which rules apply to its inputs:
    known names, set rules among the set rules, value rules among the value rules, compared roles among its
    roles; a kind to which none applies says why."""
    for spec in _all_specs():
        rules = spec.degeneracy
        assert isinstance(rules, Rules), f"kind {spec.name} declares no degeneracy rules (KindSpec.degeneracy)"
        assert set(rules.sets) <= set(SET_RULES), (spec.name, rules.sets)
        assert set(rules.values) <= set(VALUE_RULES), (spec.name, rules.values)
        assert rules.sets or rules.values or rules.note, f"kind {spec.name}: no rule applies, and no note says why"
        if rules.sets and spec.roles is not None:
            names = {r.prefix if isinstance(r, RoleGroup) else r for r in spec.roles}
            assert all(set(group) <= names for group in rules.compared), (spec.name, rules.compared)
        if spec.member is not None:
            assert rules == spec.member.family.degeneracy  # the family's, for every member


SET_KINDS = [spec.name for spec in _all_specs() if spec.degeneracy.sets]


@pytest.mark.parametrize("kind", SET_KINDS)
def test_every_kind_refuses_degenerate_sets_of_its_roles(kind):
    """For every kind and member that declares set rules: its roles' sets made degenerate for each rule go
    through the one place the runner (and the metrics API) calls, :func:`check_inputs`: the rule's one-line
    error, or the overlap warning naming the shared rows. Healthy sets pass without a finding."""
    spec = get_kind(kind)
    sets = _sets(spec, np.random.default_rng(0))
    with collected() as found:
        check_inputs(spec, sets)
    assert found == []
    shown = 0
    for rule in spec.degeneracy.sets:
        bad = _degenerate(rule, spec, sets)
        if bad is not None:
            _fails_with(rule, lambda: check_inputs(spec, bad))
            shown += 1
    assert shown >= len(spec.degeneracy.sets) - (1 if len(_roles(spec)) <= 3 else 0), (kind, shown)  # targets only


def test_the_rules_run_on_the_embedded_sets_the_runner_holds():
    """The runner hands check_inputs its Embedded sets (and things that are not vectors, such as answers, which
    the rules leave to the kind's statistics)."""
    from eatkit.sources.base import Embedded

    X = np.eye(4)[:2]
    embedded = {"X": Embedded(X, ("a", "b")), "Y": Embedded(X[::-1], ("c", "d")),
                "A": Embedded(np.eye(4)[2:], ("e", "f")), "B": Embedded(np.eye(4)[[0, 3]] + 1, ("g", "h")),
                "answers": Embedded(["not", "vectors"], ("1", "2"))}  # type: ignore[arg-type]
    with pytest.raises(EatkitError, match=_prefix("coincide")):
        check_inputs(get_kind("eat"), embedded)
    check_inputs(get_kind("answers"), embedded)  # no set rule declared: nothing to do


# --- the rules on values: each kind's statistics, fed what the kind reads ------------------------------------

HUGE = 4.4e307


def _value_cases():
    """(kind, rule) -> a call of the statistics the kind runs on what it reads, made degenerate for the rule."""
    from eatkit.stats.language_models import pair_preference, stereoset_scores, word_pairing_test
    from eatkit.stats.outcomes import paired_choices, paired_scores, proportion
    from eatkit.stats.proportions import group_rates
    from eatkit.stats.ranking import skew_uncertainty

    huge = [HUGE, -HUGE, 1.0, 2.0]
    return {
        ("answers", "value-range"): lambda: paired_scores(huge, [0.0] * 4, n_bootstrap=0),
        ("answers", "all-tied"): lambda: paired_scores([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], n_bootstrap=0),
        ("answers", "empty-group"): lambda: proportion(0, 0),
        ("crows-pairs", "value-range"): lambda: pair_preference(huge, [0.0] * 4, n_bootstrap=0),
        ("crows-pairs", "all-tied"): lambda: pair_preference([-1.0, -2.0], [-1.0, -2.0], n_bootstrap=0),
        ("stereoset", "value-range"): lambda: stereoset_scores(huge, [0.0] * 4, [0.0] * 4),
        ("llm-iat", "value-range"): lambda: word_pairing_test([[HUGE, 3], [2, 2]], [[HUGE, 3], [2, 2]], [True, False],
                                                              permutations="exact", n_bootstrap=0),
        ("vqa", "empty-group"): lambda: group_rates({"a": 0, "b": 1}, {"a": 0, "b": 2}),
        ("caption", "empty-group"): lambda: group_rates({"a": 1, "b": 0}, {"a": 2, "b": 0}),
        ("retrieval", "value-range"): lambda: skew_uncertainty([0.9, 0.1, 0.5, 0.4], list("abab"), 2,
                                                               {"a": 1e-320, "b": 1.0}, n_bootstrap=0),
    }


def test_every_declared_value_rule_has_a_case_and_each_case_is_the_rules_finding():
    """Each (kind, value rule) declared has its degenerate input here, and gives the rule's one-line error or
    its warning; a new declaration without a case fails."""
    cases = _value_cases()
    declared = {(spec.name, rule) for spec in _all_specs() for rule in spec.degeneracy.values if rule != "p-floor"}
    assert declared == set(cases), sorted(declared ^ set(cases))
    for (kind, rule), call in sorted(cases.items()):
        _fails_with(rule, call)


def test_paired_choices_with_no_discordant_pair_warn_that_every_pair_is_tied():
    from eatkit.stats.outcomes import paired_choices

    with collected() as found:
        r = paired_choices([1, 0, 1, 0], [1, 0, 1, 0])
    assert r.p_value == 1.0 and found == [finding("all-tied", n=4, name="first - second")]


def test_an_answers_run_whose_pairs_are_all_tied_records_the_warning(tmp_path):
    """End to end: recorded answers whose two levels give the same outcome in every pair: the record's p is 1
    and its warnings say every pair is tied (not a silent p = 1)."""
    from eatkit.run.runner import run_suite
    from eatkit.sources.answers import RecordedAnswers

    rows = [{"id": f"q{i}/{level}", "item": f"q{i}", "answer": "x", "score": float(i % 3), "level": level}
            for i in range(6) for level in ("a", "b")]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    suite = {"schema": "eatkit.suite/1", "id": "tied", "title": "tied", "tests": [
        {"id": "t", "title": "t", "kind": "answers",
         "params": {"measure": "paired", "outcome": "score", "paired": "level", "levels": ["a", "b"]}}]}
    (tmp_path / "suite.json").write_text(json.dumps(suite), encoding="utf-8")
    source = RecordedAnswers(answers, None, None)
    result = run_suite(tmp_path / "suite.json", source, seed=0, permutations="exact", n_bootstrap=0)
    (record,) = result.records
    assert record.p_value == 1.0
    assert finding("all-tied", n=6, name="first - second") in record.warnings


# --- a new member of a family gets the rules without a line of its own ---------------------------------------

MEMBER_MODULE = '''
"""A throwaway member that checks nothing itself: the distance between the target sets' means."""
import numpy as np

from eatkit.specs import METRICS
from eatkit.stats.metrics import MetricResult


def mean_gap(X, Y, A, B, *, rng=None):
    X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
    return MetricResult(metric="mean_gap", value=float(np.linalg.norm(X.mean(0) - Y.mean(0))))


MEAN_GAP = METRICS.member("mean-gap", "toy_gap:mean_gap", title="Distance between the target means", template=(2, 2))
'''


@pytest.fixture
def new_member(tmp_path, monkeypatch):
    (tmp_path / "toy_gap.py").write_text(textwrap.dedent(MEMBER_MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    register_kind("mean-gap", "toy_gap:MEAN_GAP")
    yield tmp_path
    KINDS.pop("mean-gap", None)
    get_kind.cache_clear()
    sys.modules.pop("toy_gap", None)


def test_a_new_member_gets_the_familys_rules_without_writing_any(new_member, capsys):
    """The member's function calls no check; declared in one line, it refuses coinciding targets and zero
    variance from the API and from ``eatkit run`` (one line, exit 2), and warns about shared vectors."""
    import eatkit.metrics
    from eatkit.cli import main

    spec = get_kind("mean-gap")
    assert spec.degeneracy == get_kind("rnd").degeneracy
    rng = np.random.default_rng(1)
    X, A, B = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    _fails_with("coincide", lambda: eatkit.metrics.mean_gap([X, X[::-1]], [A, B]))
    _fails_with("zero-variance", lambda: eatkit.metrics.mean_gap([np.repeat(X[:1], 3, 0), X], [A, B]))
    _fails_with("overlap", lambda: eatkit.metrics.mean_gap([X, np.vstack([X[:1], A[:2]])], [A, B]))
    assert eatkit.metrics.mean_gap([X, X + 1], [A, B]).value == pytest.approx(2.0)
    words = {"x1": (1, 0, 0), "x2": (0, 1, 0), "y1": (0, 1, 0), "y2": (1, 0, 0), "a1": (1, 1, 0), "a2": (0, 1, 1),
             "b1": (1, 0, 1), "b2": (2, 1, 1)}  # X and Y the same vectors
    (new_member / "v.txt").write_text("".join(f"{w} {' '.join(map(str, v))}\n" for w, v in words.items()),
                                      encoding="utf-8")
    sets = {"X": ["x1", "x2"], "Y": ["y1", "y2"], "A": ["a1", "a2"], "B": ["b1", "b2"]}
    suite = {"schema": "eatkit.suite/1", "id": "gap", "title": "gap", "tests": [
        {"id": "g", "title": "g", "kind": "mean-gap",
         **{r: {"name": r, "modality": "word", "items": w} for r, w in sets.items()}}]}
    (new_member / "suite.json").write_text(json.dumps(suite), encoding="utf-8")
    code = main(["run", str(new_member / "suite.json"), "--vectors", str(new_member / "v.txt"), "-o",
                 str(new_member / "r"), "--seed", "0"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and re.search(_prefix("coincide"), err), err
