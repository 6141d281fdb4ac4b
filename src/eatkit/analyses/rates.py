"""The VQA and caption probes ("American == White" seed, section 4): the rate of an outcome per group
(a "yes" answer, a caption that mentions race or ethnicity), with Wilson intervals and a chi-square test
of independence across groups (:func:`eatkit.stats.proportions.group_rates`).

- ``vqa`` (``hf-blip-vqa:<name>``): every question is put to every image; one record per question with
  the tally of answers per group, the rate of the answer ``yes`` (param ``yes``), the share of answers
  that name a region of a region table (param ``regions``, default the US states and D.C.: the seed's
  Figure 4, "What state does this person live in?" answered with a state or not) and every image's answer.
- ``caption`` (``hf-blip-caption:<name>``): one caption per image at each top-p (default .5 to .9),
  seeded; one record per top-p with the rate of captions matching the lexicon (``<descriptor>
  person|man|woman``), the descriptors used per group, and every caption.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from eatkit.analyses.base import Outcome, RunOptions
from eatkit.analyses.probe import ProbeAnalysis, group_files, require_capability
from eatkit.errors import EatkitError
from eatkit.records import Record
from eatkit.stats.proportions import GroupRates, group_rates
from eatkit.stimuli.lexicon import load_lexicon
from eatkit.stimuli.regions import load_region_table
from eatkit.stimuli.types import AssociationTest



@dataclass(frozen=True, kw_only=True)
class RateRecord(Record):
    """The rate of an outcome per group with Wilson intervals and Pearson's chi-square across groups."""

    groups: list[str]
    n: dict[str, int]
    counts: dict[str, int]
    rates: dict[str, float]
    intervals: dict[str, list[float]]
    confidence_level: float
    chi_square: float
    dof: int
    p_value: float
    min_expected: float


def _rate_fields(rates: GroupRates) -> dict[str, Any]:
    return {"groups": list(rates.rates), "n": rates.totals, "counts": rates.counts, "rates": rates.rates,
            "intervals": {g: list(v) for g, v in rates.intervals.items()}, "confidence_level": rates.confidence_level,
            "chi_square": rates.statistic, "dof": rates.dof, "p_value": rates.p_value,
            "min_expected": rates.min_expected}


@dataclass(frozen=True, kw_only=True)
class VQARecord(RateRecord):
    """One question: counts and rates of the answer ``yes_answer``; ``answers`` tallies every answer."""

    kind = "vqa"

    question: str
    yes_answer: str
    answers: dict[str, dict[str, int]]  # group -> answer -> count
    answers_by_image: dict[str, str]
    region_table: str = ""
    region_answers: dict[str, Any] | None = None  # the rate fields of "the answer names a region"


@dataclass(frozen=True, kw_only=True)
class CaptionRecord(RateRecord):
    """One top-p: counts and rates of captions that match the lexicon, and every caption."""

    kind = "caption"

    top_p: float
    lexicon: dict[str, Any]
    descriptors: dict[str, dict[str, int]]  # group -> descriptor -> count
    captions_by_image: dict[str, str]


class VQAAnalysis(ProbeAnalysis):
    kind = "vqa"
    record_type = VQARecord

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        super().check(test, options)
        load_region_table(options.params["regions"])

    def observe(self, test: AssociationTest, model: Any, options: RunOptions) -> dict[str, Any]:
        answer = require_capability(model, "answer", "vqa", "a visual question answering model (hf-blip-vqa:<name>)")
        files = group_files(test)
        return {"files": files, "answers": {q: {g: answer(paths, q) for g, (paths, _) in files.items()}
                                            for q in options.params["questions"]}}

    def compute(self, test: AssociationTest, embedded: dict[str, Any], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        yes = options.params["yes"].strip().lower()
        table = load_region_table(options.params["regions"])
        names = region_answers(table.regions)
        files = embedded["files"]
        outcomes = []
        for i, (question, answers) in enumerate(embedded["answers"].items(), start=1):
            tallies = {g: dict(Counter(a.strip().lower() for a in answers[g]).most_common()) for g in files}
            totals = {g: len(answers[g]) for g in files}
            rates = group_rates({g: tallies[g].get(yes, 0) for g in files}, totals, options.confidence_level)
            in_table = group_rates({g: sum(n for a, n in tallies[g].items() if a in names) for g in files}, totals,
                                   options.confidence_level)
            record = VQARecord(
                suite=suite, test=f"{test.id}-{i}", title=f"VQA: {question}", seed=seed, question=question,
                yes_answer=yes, answers=tallies, **_rate_fields(rates), region_table=table.id,
                region_answers=_rate_fields(in_table),
                answers_by_image={img: a for g, (_, ids) in files.items() for img, a in zip(ids, answers[g])})
            outcomes.append(Outcome(record, {}, rates))
        return outcomes


#: other spellings of a region's name in answers (lower case)
REGION_ALIASES: dict[str, tuple[str, ...]] = {
    "district of columbia": ("washington dc", "washington d.c.", "washington, dc", "washington, d.c.", "dc", "d.c."),
}


def region_answers(regions: list[str]) -> frozenset[str]:
    """The lower-case answers that name one of ``regions`` (with :data:`REGION_ALIASES`).

    >>> sorted(region_answers(["Ohio", "District of Columbia"]))[:3]
    ['d.c.', 'dc', 'district of columbia']
    """
    names = {r.strip().lower() for r in regions}
    return frozenset(names | {a for r in names for a in REGION_ALIASES.get(r, ())})


class CaptionAnalysis(ProbeAnalysis):
    kind = "caption"
    record_type = CaptionRecord

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        super().check(test, options)
        if len(set(options.params["top_p"])) != len(options.params["top_p"]):
            raise EatkitError("top_p lists a value twice")
        load_lexicon(options.params["lexicon"])

    def observe(self, test: AssociationTest, model: Any, options: RunOptions) -> dict[str, Any]:
        caption = require_capability(model, "caption", "caption", "an image captioning model (hf-blip-caption:<name>)")
        files = group_files(test)
        seed = options.seed  # run_probe always sets the run's seed (drawn and recorded when not given)
        return {"files": files, "seed": seed,
                "captions": {p: {g: caption(paths, top_p=float(p), seed=seed) for g, (paths, _) in files.items()}
                             for p in options.params["top_p"]}}

    def compute(self, test: AssociationTest, embedded: dict[str, Any], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        lexicon = load_lexicon(options.params["lexicon"])
        files = embedded["files"]
        outcomes = []
        for p, captions in embedded["captions"].items():
            found = {g: [lexicon.match(c) for c in captions[g]] for g in files}
            rates = group_rates({g: sum(m is not None for m in found[g]) for g in files},
                                {g: len(captions[g]) for g in files}, options.confidence_level)
            record = CaptionRecord(
                suite=suite, test=f"{test.id}-p{p:g}", title=f"Captions at top-p {p:g}", seed=embedded["seed"],
                top_p=float(p), lexicon=lexicon.to_dict(), **_rate_fields(rates),
                descriptors={g: dict(Counter(m for m in found[g] if m).most_common()) for g in files},
                captions_by_image={img: c for g, (_, ids) in files.items() for img, c in zip(ids, captions[g])})
            outcomes.append(Outcome(record, {}, rates))
        return outcomes

    def files(self, outcomes: Sequence[Outcome]) -> dict[str, bytes]:
        """``captions.csv``: every caption (image, top_p, caption)."""
        table = io.StringIO()
        writer = csv.writer(table, lineterminator="\r\n")
        writer.writerow(["image", "top_p", "caption"])
        for o in outcomes:
            writer.writerows([img, f"{o.record.top_p:g}", c] for img, c in o.record.captions_by_image.items())
        return {"captions.csv": table.getvalue().encode("utf-8")}
