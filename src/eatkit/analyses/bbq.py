"""``bbq``: accuracy and the authors' bias scores of a model's answers to BBQ items (Parrish et al. 2022), per
category and context condition, each with an interval and an exact p-value (:func:`eatkit.stats.bbq.bbq_score`);
the runner adds the Benjamini-Hochberg q-value over the kind's records.

The answers come from the source through one request (:func:`eatkit.sources.answers.answers_request`; the records are :class:`eatkit.sources.answers.Answer`):
recorded answers (``--answers FILE --answer-field FIELD``) or a local model that answers each item (multiple
choice by log-likelihood, or by generation with the answer parsed: ``--answer-mode``). Each answer is mapped to
an option as the authors' script maps a prediction (:func:`eatkit.stimuli.bbq.answer_index`); an answer that
names no option, an item left unanswered and an item without a bias-consistent answer are left out and counted
in the record (``unmatched``, ``unanswered``, ``no_target``), as the authors' script drops them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.analyses.base import Analysis, Embed, Outcome, RunOptions
from eatkit.errors import EatkitError
from eatkit.records import Record
from eatkit.sources.base import Embedded
from eatkit.sources.answers import Answer, answers_request
from eatkit.stats.bbq import CONTEXTS, bbq_score
from eatkit.stimuli.bbq import (CATEGORIES, BBQItem, Target, answer_index, item_target, load_bbq, load_metadata,
                                report_category)
from eatkit.stimuli.types import AssociationTest, StimulusSet


@dataclass(frozen=True, kw_only=True)
class BBQRecord(Record):
    """One category in one context condition: accuracy, the bias score (s_DIS or s_AMB) with its interval
    and exact p, and the counts behind them."""

    kind = "bbq"

    category: str
    context: str
    accuracy: float
    accuracy_ci_low: float
    accuracy_ci_high: float
    bias_score: float  # s_DIS (disambig) or s_AMB = (1 - accuracy) s (ambig), in -1..1 (the authors print x100)
    bias_non_unknown: float  # s = 2 n_target / n_non_unknown - 1
    ci_low: float
    ci_high: float
    n: int
    n_correct: int
    n_unknown: int
    n_target: int
    n_non_target: int
    unanswered: int
    unmatched: int
    no_target: int
    confidence_level: float
    target_source: str  # "metadata" (the authors' additional_metadata.csv) or "derived" (stereotyped_groups)
    method: str

    def key(self) -> tuple[Any, ...]:
        return (self.kind, self.test, self.category, self.context)


@dataclass(frozen=True)
class _Scored:
    """An item's mapped answer (``None``: unmatched or unanswered) and its target."""

    item: BBQItem
    answer: int | None
    answered: bool
    target: Target


_LETTERS = {"a": 0, "b": 1, "c": 2, "0": 0, "1": 1, "2": 2}


def answer_value(answer: Answer) -> int | str | None:
    """What an :class:`Answer` says: the option of largest log-likelihood (three ``logprobs``), an option index
    or letter (``choice``), else its text (mapped to an option as the authors map a prediction)."""
    if len(answer.logprobs) == 3:
        return int(np.argmax(answer.logprobs))
    if answer.choice is not None and answer.choice.strip().lower() in _LETTERS:
        return _LETTERS[answer.choice.strip().lower()]
    return answer.response


def answers_by_item(answers: Sequence[Any]) -> dict[str, int | str | None]:
    """Each answer by its BBQ item, ``<category>/<example_id>`` (the category from the answer's item id or from
    its record's ``category`` field); an item answered twice is an error naming the file and line."""
    out: dict[str, int | str | None] = {}
    for answer in answers:
        if not isinstance(answer, Answer):
            raise EatkitError("the source gave no answer records (a BBQ test needs answers: --answers or a model "
                              "that answers)")
        category = answer.fields.get("category")
        key = answer.item if "/" in answer.item or not isinstance(category, str) else f"{category}/{answer.item}"
        if key in out:
            raise EatkitError(f"{answer.file}: line {answer.line}: BBQ item {key} is answered twice")
        out[key] = answer_value(answer)
    return out


def _dropped(rows: list[_Scored]) -> dict[str, int]:
    """The answers left out of a cell: items not answered, answers naming no option, items without a target."""
    return {"unanswered": sum(not s.answered for s in rows),
            "unmatched": sum(s.answered and s.answer is None for s in rows),
            "no_target": sum(s.answer is not None and s.target.index is None for s in rows)}


#: the warning of a category and context whose every scored answer is the unknown option
UNDEFINED_BIAS = ("every scored answer is the unknown option: the bias score, a share among the answers that name a "
                  "group, is undefined (recorded as NaN)")


def _warnings(counts: dict[str, int], scored: bool) -> list[str]:
    out = [f"{counts['unanswered']} items not answered"] if counts["unanswered"] else []
    return out + ([] if scored else ["no answer maps to an option of an item with a target: nothing scored"])


def _data_folder(given: str) -> Path:
    if given == "bbq":
        from eatkit.stimuli.datasets import default_data_dir

        folder = default_data_dir() / "bbq"
        if not folder.is_dir():
            raise EatkitError(f"dataset 'bbq' is not downloaded ({folder} is missing): run 'eatkit data get bbq', "
                              "or give the folder with --bbq-data")
        return folder
    return Path(given).expanduser()


class BBQAnalysis(Analysis):
    """``bbq``: the items of the selected categories answered by the source, scored per category x context."""

    kind = "bbq"
    record_type = BBQRecord

    def stimulus_sets(self, test: AssociationTest, options: RunOptions) -> dict[str, StimulusSet]:
        return {}

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        self._items(options)  # the data read and checked before a model runs

    def _metadata(self, options: RunOptions) -> Any:
        given = options.params["bbq_metadata"]
        if not given:
            return None
        path = _data_folder("bbq") / "supplemental" / "additional_metadata.csv" if given == "bbq" else Path(given)
        return load_metadata(path)

    def _items(self, options: RunOptions) -> list[BBQItem]:
        categories = tuple(options.params["categories"])
        unknown = sorted(set(categories) - set(CATEGORIES))
        if unknown:
            raise EatkitError(f"unknown BBQ categories {', '.join(unknown)} (known: {', '.join(CATEGORIES)})")
        found = load_bbq(_data_folder(options.params["bbq_data"]), categories)
        limit = options.params["max_items"]
        return [item for category in found for item in (found[category][:limit] if limit else found[category])]

    def embed(self, test: AssociationTest, embed: Embed, options: RunOptions) -> dict[str, Embedded]:
        items = self._items(options)
        request = answers_request(task="bbq", mode=options.params["answer_mode"])
        return {"answers": embed(StimulusSet("bbq items", "sentence", tuple(i.request() for i in items),
                                             category=request))}

    def _scored(self, items: list[BBQItem], embedded: Embedded, options: RunOptions) -> list[_Scored]:
        answers = answers_by_item(embedded.vectors)
        metadata = self._metadata(options)
        return [_Scored(item, answer_index(answers[item.key], item) if item.key in answers else None,
                        item.key in answers, item_target(item, metadata)) for item in items]

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        scored = self._scored(self._items(options), embedded["answers"], options)
        answered = {s.item.category for s in scored if s.answered}
        if not answered:
            ids = embedded["answers"].ids
            where = ids[0].rpartition(":")[0] if ids else "the source"
            raise EatkitError(f"{where}: no answer names a BBQ item of the data (ids <category>/<example_id>, or "
                              "example_id with a category field)")
        groups: dict[tuple[str, str], list[_Scored]] = defaultdict(list)
        for s in scored:
            if s.item.category in answered:
                groups[(report_category(s.item, s.target), s.item.context_condition)].append(s)
        source = "metadata" if options.params["bbq_metadata"] else "derived"
        return [self._outcome(test, suite, seed, category, context, groups[(category, context)], options, source)
                for category, context in sorted(groups, key=lambda k: (k[0], CONTEXTS.index(k[1])))]

    @staticmethod
    def _outcome(test: AssociationTest, suite: str, seed: int, category: str, context: str, rows: list[_Scored],
                 options: RunOptions, source: str) -> Outcome:
        kept = [s for s in rows if s.answer is not None and s.target.index is not None]
        correct = np.array([s.answer == s.item.label for s in kept], dtype=bool)
        unknown = np.array([s.answer == s.item.unknown for s in kept], dtype=bool)
        target = np.array([s.answer == s.target.index for s in kept], dtype=bool)
        result = bbq_score(correct, unknown, target, context=context, confidence_level=options.confidence_level)
        counts = _dropped(rows)
        warnings = _warnings(counts, bool(kept)) + ([UNDEFINED_BIAS] if kept and result.n_unknown == result.n else [])
        record = BBQRecord(
            suite=suite, test=test.id, title=test.title, seed=seed, p_value=result.p_value if kept else None,
            warnings=warnings,
            category=category, context=context, accuracy=result.accuracy, accuracy_ci_low=result.accuracy_ci_low,
            accuracy_ci_high=result.accuracy_ci_high, bias_score=result.bias_score,
            bias_non_unknown=result.bias_non_unknown, ci_low=result.ci_low, ci_high=result.ci_high, n=result.n,
            n_correct=result.n_correct, n_unknown=result.n_unknown, n_target=result.n_target,
            n_non_target=result.n_non_target, **counts, confidence_level=result.confidence_level,
            target_source=source, method=result.method)
        return Outcome(record, {}, result)

    def files(self, outcomes: Sequence[Outcome]) -> dict[str, bytes]:
        return {}
