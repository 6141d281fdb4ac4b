"""Answer benchmarks (``answers`` kind, docs/answers.md): what models *say*, scored per group with the outcome
layer (:mod:`eatkit.stats.outcomes`).

A test reads the answers of its source (recorded files, ``--answers``: :mod:`eatkit.sources.answers`; or a
local model that answers the same request) and computes, as its ``measure`` says:

- ``rate``: per group (and per ``split`` value) the share of answers whose ``outcome`` field takes one of
  ``values`` (Wilson interval; a cluster-robust interval when answers share a ``cluster``), and each group
  against the others (difference of shares, Newcombe interval, Fisher's exact p) when answers are not
  clustered;
- ``paired``: the two ``levels`` of the ``paired`` field (two conditions, or two groups of a counterfactual
  pair) compared within each counterfactual pair (``pair``), per pair family (``group``) and pooled: exact
  McNemar on the choices when each pair holds one answer per level, else the paired sign-flip permutation
  test of the pairs' mean outcomes (repeated samples averaged within the pair);
- ``decision``: yes/no decision questions (Discrim-Eval): per attribute value against the reference value,
  within each decision question (``template``) the difference of mean logit p(yes) (the answers'
  ``logprobs`` of "yes" and "no", or their ``score``), combined over questions by random effects
  (:func:`eatkit.stats.meta_analysis.random_effects`): estimate, SE, CI and p.

Every record has a p-value where it tests something; the runner's Benjamini-Hochberg q-values run over the
battery. A text answer may first be scored by a declared scorer (``scorer``, :data:`SCORERS`).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from eatkit.analyses.base import Analysis, Embed, Outcome, RunOptions
from eatkit.errors import EatkitError
from eatkit.records import Record
from eatkit.sources.answers import Answer, answers_request
from eatkit.sources.base import Embedded
from eatkit.stimuli.answer_items import RECORD_FIELDS, AnswerItem, read_answer_items
from eatkit.stimuli.types import AssociationTest, StimulusSet

ALL = "all"


# -- scorers: a text answer -> a value (declared; docs/answers.md) -----------------------------------------


def _lexicon_scorer(name: str) -> Callable[[Answer], str]:
    from eatkit.stimuli.lexicon import load_lexicon

    lexicon = load_lexicon(name)
    return lambda a: "mentions" if lexicon.match(a.text or "") else "does not mention"


def _length_scorer(_: str) -> Callable[[Answer], float]:
    return lambda a: float(len((a.text or "").split()))


#: declared scorers of text answers: ``name`` or ``name:argument`` of a suite test's ``scorer`` param -> a
#: factory of the function of an answer giving the value its ``outcome`` reads (``"score"``)
SCORERS: dict[str, Callable[[str], Callable[[Answer], Any]]] = {
    "lexicon": _lexicon_scorer,  # lexicon:<bundled name or path>: "mentions" / "does not mention"
    "words": _length_scorer,  # the answer's length in words
}


def register_scorer(name: str, factory: Callable[[str], Callable[[Answer], Any]]) -> None:
    """Declare a scorer (a benchmark's own reading of text answers) under ``name``."""
    SCORERS[name] = factory


def scorer_of(spec: str) -> Callable[[Answer], Any] | None:
    """The scorer a test's ``scorer`` param names (``""``: none): ``name[:argument]`` of :data:`SCORERS`, or
    a benchmark's own, ``package.module:factory[:argument]`` (imported; the factory takes the argument);
    else a one-line error listing the known.

    >>> scorer_of("words")(Answer(item="1", text="Please sit down."))
    3.0
    """
    if not spec:
        return None
    name, _, argument = spec.partition(":")
    if name in SCORERS:
        return SCORERS[name](argument)
    if argument:
        from eatkit.io import load_object

        factory, _, argument = argument.partition(":")
        try:
            return load_object(f"{name}:{factory}")(argument)
        except (ImportError, AttributeError) as err:
            raise EatkitError(f"scorer {spec!r} cannot be loaded ({err})") from None
    raise EatkitError(f"unknown scorer {name!r} (known: {', '.join(sorted(SCORERS))}, or module:factory)")


# -- reading an answer's fields -------------------------------------------------------------------------------


def value_of(answer: Answer, name: str, scored: Any = None) -> Any:
    """The value of field ``name`` of ``answer``: ``"score"`` the scorer's value when there is one, a record
    field, else a column of the answer's ``fields`` (``None`` when absent)."""
    if name == "score" and scored is not None:
        return scored
    if name in ("item", "group", "attribute", "pair", "template", "condition", "sample", "choice", "text",
                "score", "target", "response", "file"):
        return getattr(answer, name)
    doc = answer.fields.get("doc")
    value = answer.fields.get(name, doc.get(name) if isinstance(doc, Mapping) else None)
    return None if value is None else str(value) if not isinstance(value, (int, float)) else value


def _selected(answers: Sequence[Answer], select: Sequence[str]) -> list[Answer]:
    out = list(answers)
    for rule in select:
        name, _, wanted = rule.partition("=")
        out = [a for a in out if str(value_of(a, name)) in wanted.split("|")]
    return out


@dataclass(frozen=True)
class Scored:
    """The answers of a test as arrays: each answer's group, split value, outcome, pair, level, cluster."""

    groups: np.ndarray
    splits: np.ndarray
    outcomes: np.ndarray
    pairs: np.ndarray
    levels: np.ndarray
    clusters: np.ndarray


def _outcome(answer: Answer, params: Mapping[str, Any], scored: Any) -> float:
    value = value_of(answer, params["outcome"], scored)
    if params["measure"] == "rate":
        return 1.0 if value is not None and str(value) in params["values"] else 0.0
    if value is None:
        raise EatkitError(f"{answer.file}: line {answer.line}: field {params['outcome']} missing (a number needed)")
    return float(value)


def score_answers(answers: Sequence[Answer], params: Mapping[str, Any]) -> Scored:
    """The arrays of :class:`Scored` from the test's ``params`` (``outcome``, ``values``, ``group``, ``split``,
    ``paired``, ``cluster``, ``scorer``)."""
    scorer = scorer_of(params["scorer"])
    values = [scorer(a) if scorer else None for a in answers]

    def column(name: str) -> np.ndarray:
        return np.array([ALL if not name else str(value_of(a, name)) for a in answers], dtype=object)

    return Scored(groups=column(params["group"]), splits=column(params["split"]),
                  outcomes=np.array([_outcome(a, params, v) for a, v in zip(answers, values)], dtype=float),
                  pairs=np.array([str(value_of(a, params["pair_by"]) or a.item) for a in answers], dtype=object),
                  levels=column(params["paired"]), clusters=column(params["cluster"]))


# -- the benchmark's items -------------------------------------------------------------------------------------


def _items(options: RunOptions) -> list[AnswerItem]:
    """The test's items (its ``items`` file), none without one."""
    return read_answer_items(options.params["items"]) if options.params["items"] else []


def with_item_facts(answers: Sequence[Answer], items: Sequence[AnswerItem], where: str = "items") -> list[Answer]:
    """Each answer with its item's facts, joined by item id (:mod:`eatkit.stimuli.answer_items`): the record
    fields it lacks (``group``, ``pair``, ...) and the item's other fields beside its own (its own win); an
    answer to no item of ``items`` is a one-line error naming its file and line. Without items, ``answers``.

    >>> from eatkit.stimuli.answer_items import AnswerItem
    >>> item = AnswerItem("q1", "Who?", facts={"group": "f", "pair": 3, "topic": "work"})
    >>> (a,) = with_item_facts([Answer(item="q1", choice="a", pair="7")], [item])
    >>> a.group, a.pair, a.fields["topic"]
    ('f', '7', 'work')
    """
    if not items:
        return list(answers)
    by_id = {item.id: item for item in items}
    out = []
    for answer in answers:
        item = by_id.get(answer.item)
        if item is None:
            raise EatkitError(f"{answer.file}: line {answer.line}: item {answer.item!r} is not in {where}")
        out.append(_with_facts(answer, item.facts))
    return out


def _with_facts(answer: Answer, facts: Mapping[str, Any]) -> Answer:
    """``answer`` with the record fields of ``facts`` it lacks, and the other facts beside its own fields."""
    lacking = {k: str(v) for k, v in facts.items() if k in RECORD_FIELDS and v is not None and getattr(answer, k) is None}
    others = {k: v for k, v in facts.items() if k not in RECORD_FIELDS}
    return replace(answer, **lacking, fields={**others, **answer.fields})


def asked_items(items: Sequence[AnswerItem], select: Sequence[str]) -> list[AnswerItem]:
    """The items a local model is asked: those that pass the rules of ``select`` naming the item's id or one of
    its facts (a rule on what the answer says applies to the answers only).

    >>> from eatkit.stimuli.answer_items import AnswerItem
    >>> items = [AnswerItem("1", "Who?", facts={"template": "hire"}), AnswerItem("2", "Who?", facts={"template": "x"})]
    >>> [i.id for i in asked_items(items, ["template=hire", "choice=a"])]
    ['1']
    """
    out = []
    for item, answer in zip(items, with_item_facts([Answer(item=i.id) for i in items], items)):
        known = {"item", *RECORD_FIELDS, *item.facts}
        if _selected([answer], [rule for rule in select if rule.partition("=")[0] in known]):
            out.append(item)
    return out


# -- the record ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class AnswersRecord(Record):
    """One row of an answer benchmark: a group's rate (``row`` ``"rate"``), a group against the others
    (``"difference"``), two levels compared within counterfactual pairs (``"paired"``), or an attribute
    value's random-effects effect over decision questions (``"effect"``)."""

    kind = "answers"

    row: str
    split: str
    group: str
    compared: str  # the other side: "others", a level, the reference value; "" for a rate
    n: int
    successes: int | None
    estimate: float
    ci_low: float
    ci_high: float
    se: float | None
    clusters: int | None
    confidence_level: float
    method: str
    test_method: str | None

    def key(self) -> tuple[Any, ...]:
        return (self.kind, self.test, self.row, self.split, self.group, self.compared)


def _record(test: AssociationTest, suite: str, seed: int, **fields: Any) -> AnswersRecord:
    base = dict(se=None, clusters=None, successes=None, test_method=None, p_value=None, compared="")
    return AnswersRecord(suite=suite, test=test.id, title=test.title, seed=seed, **(base | fields))


# -- the measures ----------------------------------------------------------------------------------------------


def _rates(test: AssociationTest, s: Scored, options: RunOptions, suite: str, seed: int) -> list[AnswersRecord]:
    from eatkit.stats.outcomes import clustered_proportion, proportion, proportion_difference

    level, out = options.confidence_level, []
    for split in sorted(set(s.splits.tolist())):
        in_split = s.splits == split
        for group in sorted(set(s.groups[in_split].tolist())):
            m = in_split & (s.groups == group)
            k, n = int(s.outcomes[m].sum()), int(m.sum())
            if options.params["cluster"] and len(set(s.clusters[m].tolist())) >= 2:
                c = clustered_proportion(s.outcomes[m], s.clusters[m], confidence_level=level)
                out.append(_record(test, suite, seed, row="rate", split=split, group=group, n=n, successes=k,
                                   estimate=c.estimate, ci_low=c.ci_low, ci_high=c.ci_high, se=c.se,
                                   clusters=c.clusters, confidence_level=level, method=c.method))
                continue
            p = proportion(k, n, confidence_level=level)
            out.append(_record(test, suite, seed, row="rate", split=split, group=group, n=n, successes=k,
                               estimate=p.estimate, ci_low=p.ci_low, ci_high=p.ci_high, confidence_level=level,
                               method=p.method))
            rest = in_split & (s.groups != group)
            if rest.any() and not options.params["cluster"]:
                d = proportion_difference(k, n, int(s.outcomes[rest].sum()), int(rest.sum()), confidence_level=level,
                                          alternative=options.alternative)
                out.append(_record(test, suite, seed, row="difference", split=split, group=group, compared="others",
                                   n=n + int(rest.sum()), estimate=d.estimate, ci_low=d.ci_low, ci_high=d.ci_high,
                                   p_value=d.p_value, confidence_level=level, method=d.method, test_method=d.test))
    return out


def _pair_means(s: Scored, mask: np.ndarray, levels: Sequence[str]) -> tuple[np.ndarray, np.ndarray, bool]:
    """Per counterfactual pair holding both levels: the mean outcome at each level, and whether every such
    pair has exactly one answer per level."""
    means: dict[str, list[list[float]]] = {}
    for pair, level, y in zip(s.pairs[mask], s.levels[mask], s.outcomes[mask]):
        if level in levels:
            means.setdefault(pair, [[], []])[levels.index(level)].append(float(y))
    both = [v for v in means.values() if v[0] and v[1]]
    single = all(len(v[0]) == 1 and len(v[1]) == 1 for v in both)
    return (np.array([np.mean(v[0]) for v in both]), np.array([np.mean(v[1]) for v in both]), single)


def _paired(test: AssociationTest, s: Scored, options: RunOptions, suite: str, seed: int) -> list[AnswersRecord]:
    from eatkit.stats.outcomes import paired_choices, paired_scores

    levels, level, out = list(options.params["levels"]), options.confidence_level, []
    for split in sorted(set(s.splits.tolist())):
        families = sorted(set(s.groups[s.splits == split].tolist()))
        for family in ([ALL] if len(families) == 1 else [*families, ALL]):
            mask = (s.splits == split) & ((s.groups == family) if family != ALL else True)
            first, second, single = _pair_means(s, mask, levels)
            if first.size == 0:
                raise EatkitError(f"no counterfactual pair holds both {levels[0]!r} and "
                                  f"{levels[1]!r} answers{'' if family == ALL else f' in {family}'}")
            if single and options.params["values"]:  # binary outcomes, one answer per level: exact McNemar
                r = paired_choices(first.astype(bool), second.astype(bool), confidence_level=level,
                                   alternative=options.alternative)
                test_method, method = r.test, r.method
            else:
                r = paired_scores(first, second, permutations=options.permutations, alternative=options.alternative,
                                  confidence_level=level, n_bootstrap=options.n_bootstrap,
                                  rng=np.random.default_rng([seed, zlib.crc32(f"{split}/{family}".encode())]))
                test_method = ("paired sign-flip permutation test of the pairs' mean outcomes "
                               f"({'exact' if r.exact else f'{r.permutations} random sign vectors'})")
                method = "percentile bootstrap over pairs"
            out.append(_record(test, suite, seed, row="paired", split=split, group=family,
                               compared=f"{levels[0]} - {levels[1]}", n=int(first.size), estimate=r.estimate,
                               ci_low=r.ci_low, ci_high=r.ci_high, p_value=r.p_value, confidence_level=level,
                               method=method, test_method=test_method))
    return out


def _logit_yes(answer: Answer, scored: Any) -> float:
    """log p(yes) - log p(no) of a decision answer (its first two ``logprobs``), else its number."""
    if len(answer.logprobs) >= 2:
        return float(answer.logprobs[0] - answer.logprobs[1])
    if answer.score is None and scored is None:
        raise EatkitError(f"{answer.file}: line {answer.line}: field logprobs or score missing (a decision needs one)")
    return float(scored if scored is not None else answer.score)


def _question_effects(answers: Sequence[Answer], attribute: str, value: str, reference: str,
                      logits: np.ndarray, question: str) -> tuple[list[float], list[float]]:
    """Per decision question holding both values: the difference of mean logits and its variance
    s_v²/n_v + s_r²/n_r (both arms need 2 answers)."""
    from eatkit.stats.summary import describe

    arms: dict[str, tuple[list[float], list[float]]] = {}
    for a, y in zip(answers, logits):
        side = str(value_of(a, attribute))
        if side in (value, reference):
            arms.setdefault(str(value_of(a, question)), ([], []))[side == reference].append(float(y))
    effects, variances = [], []
    for mine, ref in arms.values():
        if len(mine) >= 2 and len(ref) >= 2:
            dv, dr = describe(mine), describe(ref)
            effects.append(float(dv.mean - dr.mean))
            variances.append(float(dv.sd ** 2 / dv.n + dr.sd ** 2 / dr.n))
    return effects, variances


def _decisions(test: AssociationTest, answers: Sequence[Answer], options: RunOptions, suite: str,
               seed: int) -> list[AnswersRecord]:
    from eatkit.stats.meta_analysis import random_effects

    scorer = scorer_of(options.params["scorer"])
    logits = np.array([_logit_yes(a, scorer(a) if scorer else None) for a in answers])
    out = []
    for rule in options.params["reference"]:
        attribute, _, reference = rule.partition("=")
        values = sorted({str(value_of(a, attribute)) for a in answers} - {reference, "None"})
        for value in values:
            effects, variances = _question_effects(answers, attribute, value, reference, logits,
                                                   options.params["cluster"] or "template")
            if len(effects) < 2 or min(variances) <= 0:
                raise EatkitError(f"{attribute}={value} against {reference}: fewer than 2 decision "
                                  "questions with 2 or more varying answers on each side")
            r = random_effects(effects, variances, confidence_level=options.confidence_level)
            out.append(_record(test, suite, seed, row="effect", split=attribute, group=value, compared=reference,
                               n=len(effects), estimate=r.estimate, ci_low=r.ci[0], ci_high=r.ci[1], se=r.se,
                               clusters=len(effects), p_value=r.p_value, confidence_level=options.confidence_level,
                               method="random effects (DerSimonian-Laird) over decision questions of the "
                               "difference of mean logit p(yes)", test_method="Wald z test of the combined effect"))
    return out


class AnswersAnalysis(Analysis):
    """``answers``: a benchmark's answers, scored per group with the outcome layer (module docstring)."""

    kind = "answers"
    record_type = AnswersRecord

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        params = options.params
        scorer_of(params["scorer"])
        _items(options)  # the items read and checked before a model runs
        if params["measure"] == "rate" and not params["values"]:
            raise EatkitError(f"test '{test.id}': measure rate needs values (the outcome values counted)")
        if params["measure"] == "paired" or params["paired"]:
            if not params["paired"] or len(params["levels"]) != 2:
                raise EatkitError(f"test '{test.id}': a paired comparison needs paired (a field) and two levels")
        if params["measure"] == "decision" and not params["reference"]:
            raise EatkitError(f"test '{test.id}': measure decision needs reference (attribute=value, ...)")

    def stimulus_sets(self, test: AssociationTest, options: RunOptions) -> dict[str, StimulusSet]:
        return {}

    def embed(self, test: AssociationTest, embed: Embed, options: RunOptions) -> dict[str, Embedded]:
        items = tuple(item.request() for item in asked_items(_items(options), options.params["select"]))
        request = answers_request(test=test.id, task=options.params["task"] or None,
                                  mode=options.params["answer_mode"] if items else None)
        return {"answers": embed(StimulusSet(f"{test.id} answers", "sentence", items, category=request))}

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        params = options.params
        given = [a for a in embedded["answers"].vectors if isinstance(a, Answer)]
        answers = _selected(with_item_facts(given, _items(options), params["items"]), params["select"])
        if not answers:
            raise EatkitError(f"no answer{' matches ' + ', '.join(params['select']) if params['select'] else ''}")
        if params["measure"] == "decision":
            records = _decisions(test, answers, options, suite, seed)
        else:
            scored = score_answers(answers, params | {"measure": "rate" if params["values"] else "mean"})
            paired = params["measure"] == "paired" or bool(params["paired"])
            records = (_paired if paired else _rates)(test, scored, options, suite, seed)
        return [Outcome(r) for r in records]


def _finite(value: float) -> bool:
    return value is not None and math.isfinite(value)
