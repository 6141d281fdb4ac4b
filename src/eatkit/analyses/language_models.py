"""The language-model tests (docs/language-models.md): CrowS-Pairs and StereoSet (likelihood pair tests)
and LLM-IAT (a prompted word-association test, Bai et al. 2025).

The model (``hf-mlm:<name>``, ``hf-lm:<name>``: :mod:`eatkit.encoders.language_models`; or recorded
answers, ``responses:<file or folder>``: :mod:`eatkit.sources.responses`) is reached through the runner's
``embed``: each test hands it one request (a sentence set whose ``category`` names what to compute), so the
manifest holds the SHA-256 of every sentence and prompt. The statistics are :mod:`eatkit.stats.language_models`.
"""

from __future__ import annotations

import csv
import io
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eatkit.analyses.base import Analysis, Embed, Outcome, RunOptions
from eatkit.errors import EatkitError
from eatkit.records import Record, interval, interval_ends
from eatkit.sources.base import Embedded
from eatkit.stats.language_models import (direction_scores, pair_preference, stereoset_scores,
                                          summarise_bias_scores, tally_pairings, word_pairing_test)
from eatkit.stimuli.language import (PAIRS, SENTENCES, STATUSES, TEMPLATES, CrowsPair, StereoSetExample, data_path,
                                     generate_request, load_crows_pairs, load_stereoset, parse_pairings)
from eatkit.stimuli.types import AssociationTest, StimulusSet

ALL = "all"


def _csv(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> bytes:
    table = io.StringIO()
    writer = csv.writer(table, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows(rows)
    return table.getvalue().encode("utf-8")


@dataclass(frozen=True)
class Scored:
    """An outcome's statistics result and the rows of the per-item file it adds to the run folder."""

    result: Any
    rows: list[Sequence[Any]]


class _RequestAnalysis(Analysis):
    """A test whose model answers one request (nothing is embedded ahead of it)."""

    def stimulus_sets(self, test: AssociationTest, options: RunOptions) -> dict[str, StimulusSet]:
        return {}


# -- CrowS-Pairs ------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CrowsPairsRecord(Record):
    """CrowS-Pairs' metric for one bias type (or ``all``): the share of pairs whose more stereotyping
    sentence the model scores higher, its exact binomial p and bootstrap CI (:func:`pair_preference`)."""

    renamed = {"n_resamples": "n_bootstrap", **interval_ends("ci")}

    kind = "crows-pairs"

    bias_type: str
    bias: float  # 2 share - 1: 0 no preference, 1 always the more stereotyping sentence, -1 never
    pairs: int
    higher: int  # pairs whose more stereotyping sentence scores higher
    ties: int
    share: float
    #: metric.py's "Stereotype score" / 100: among the untied stereo pairs, the share whose more stereotyping
    #: sentence scores higher (ties are neutral in metric.py, outside its total_stereo); None without one
    share_stereo: float | None
    #: metric.py's "Anti-stereotype score" / 100, the same among the untied antistereo pairs
    share_antistereo: float | None
    alternative: str
    ci: list[float] | None  # [low, high]: percentile bootstrap CI of share (results.csv: ci_low, ci_high)
    confidence_level: float
    n_bootstrap: int
    decimals: int | None
    method: str

    def key(self) -> tuple[Any, ...]:
        return (self.kind, self.test, self.bias_type)


class CrowsPairsAnalysis(_RequestAnalysis):
    """``crows-pairs``: every pair scored by the model (masked: PLL of the shared tokens; causal: sentence
    log-likelihood), then the share per bias type and over all pairs."""

    kind = "crows-pairs"
    record_type = CrowsPairsRecord

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        self._pairs(options)  # the file read and checked before a model runs

    def _pairs(self, options: RunOptions) -> list[CrowsPair]:
        pairs = load_crows_pairs(data_path(options.params["pairs_file"], "crows-pairs", "crows_pairs_anonymized.csv"))
        return pairs[:options.params["max_pairs"]] if options.params["max_pairs"] else pairs

    def embed(self, test: AssociationTest, embed: Embed, options: RunOptions) -> dict[str, Embedded]:
        items = tuple(s for p in self._pairs(options) for s in p.ordered())
        return {"pairs": embed(StimulusSet("crows-pairs sentences (metric.py order)", "sentence", items,
                                           category=PAIRS))}

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        pairs = self._pairs(options)
        scores = np.asarray(embedded["pairs"].vectors, dtype=float)[:, 0]
        if scores.size != 2 * len(pairs):
            raise EatkitError(f"the model scored {scores.size} sentences for {len(pairs)} pairs")
        first, second = scores[0::2], scores[1::2]
        stereo = np.array([p.direction == "stereo" for p in pairs])
        more, less = np.where(stereo, first, second), np.where(stereo, second, first)
        types = np.array([p.bias_type for p in pairs])
        decimals = options.params["decimals"]
        outcomes = []
        for bias in [ALL, *sorted(set(types.tolist()))]:
            m = np.ones(len(pairs), bool) if bias == ALL else types == bias
            out = pair_preference(more[m], less[m], decimals=decimals, alternative=options.alternative,
                                  n_bootstrap=options.n_bootstrap, confidence_level=options.confidence_level,
                                  rng=np.random.default_rng([seed, zlib.crc32(bias.encode())]))
            share_stereo, share_antistereo = direction_scores(more[m], less[m], stereo[m], decimals)
            record = CrowsPairsRecord(
                suite=suite, test=test.id, title=test.title, seed=seed, p_value=out.p_value, bias_type=bias,
                bias=2 * out.share - 1, pairs=out.n, higher=out.k, ties=out.ties, share=out.share,
                share_stereo=share_stereo, share_antistereo=share_antistereo,
                alternative=out.alternative, ci=interval(*out.ci),
                confidence_level=out.confidence_level, n_bootstrap=out.n_bootstrap, decimals=decimals,
                method=out.method)
            rows = [(p.index, p.bias_type, p.direction, f"{a!r}", f"{b!r}")
                    for p, a, b in zip(pairs, more.tolist(), less.tolist())] if bias == ALL else []
            arrays = {"sent_more_scores": more[m], "sent_less_scores": less[m]} if bias == ALL else {}
            outcomes.append(Outcome(record, arrays, Scored(out, rows)))
        return outcomes

    def files(self, outcomes: Sequence[Outcome]) -> dict[str, bytes]:
        """``crows_pairs_scores.csv``: every pair's two scores (as metric.py's output file)."""
        rows = [r for o in outcomes if isinstance(o.result, Scored) for r in o.result.rows]
        return {"crows_pairs_scores.csv": _csv(["index", "bias_type", "stereo_antistereo", "sent_more_score",
                                                "sent_less_score"], rows)} if rows else {}


# -- StereoSet --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class StereoSetRecord(Record):
    """StereoSet's intrasentence SS, LMS and ICAT for one bias type (or ``all``), with the exact binomial p
    of SS's count against 1/2 and its bootstrap CI (in percent)."""

    kind = "stereoset"
    renamed = interval_ends("ss_ci")

    bias_type: str
    bias: float  # (SS - 50) / 50: 0 no preference, 1 always the stereotype, -1 always the anti-stereotype
    examples: int
    targets: int
    ss: float
    lms: float
    icat: float
    alternative: str
    ss_ci: list[float] | None  # [low, high] of ss, in percent (results.csv: ss_ci_low, ss_ci_high)
    confidence_level: float

    def key(self) -> tuple[Any, ...]:
        return (self.kind, self.test, self.bias_type)


class StereoSetAnalysis(_RequestAnalysis):
    """``stereoset``: each example's three sentences scored (mean token log-likelihood), then SS, LMS,
    ICAT per bias type and over all (the authors' averages per target term)."""

    kind = "stereoset"
    record_type = StereoSetRecord

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        self._examples(options)  # the file read and checked before a model runs

    def _examples(self, options: RunOptions) -> list[StereoSetExample]:
        examples = load_stereoset(data_path(options.params["stereoset_file"], "stereoset", "dev.json"))
        n = options.params["max_examples"]
        return examples[:n] if n else examples

    def embed(self, test: AssociationTest, embed: Embed, options: RunOptions) -> dict[str, Embedded]:
        items = tuple(s for e in self._examples(options) for s in (e.stereotype, e.anti_stereotype, e.unrelated))
        return {"sentences": embed(StimulusSet("stereoset intrasentence sentences", "sentence", items,
                                               category=SENTENCES))}

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        examples = self._examples(options)
        scores = np.asarray(embedded["sentences"].vectors, dtype=float)[:, 0].reshape(-1, 3)
        if scores.shape[0] != len(examples):
            raise EatkitError(f"the model scored {scores.shape[0]} examples of {len(examples)}")
        types = np.array([e.bias_type for e in examples])
        targets = np.array([e.target for e in examples])
        outcomes = []
        for bias in [ALL, *sorted(set(types.tolist()))]:
            m = np.ones(len(examples), bool) if bias == ALL else types == bias
            s = stereoset_scores(scores[m, 0], scores[m, 1], scores[m, 2], targets[m])
            pref = pair_preference(scores[m, 0], scores[m, 1], decimals=None, alternative=options.alternative,
                                   n_bootstrap=options.n_bootstrap, confidence_level=options.confidence_level,
                                   rng=np.random.default_rng([seed, zlib.crc32(bias.encode())]))
            record = StereoSetRecord(
                suite=suite, test=test.id, title=test.title, seed=seed, p_value=pref.p_value, bias_type=bias,
                bias=(s.ss - 50) / 50, examples=s.n, targets=s.targets, ss=s.ss, lms=s.lms, icat=s.icat,
                alternative=pref.alternative,
                ss_ci=interval(*(100 * end for end in pref.ci)), confidence_level=pref.confidence_level)
            outcomes.append(Outcome(record, {"scores": scores[m]} if bias == ALL else {}, s))
        return outcomes


# -- LLM-IAT ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class LLMIATRecord(Record):
    """A prompted word-association test: how the answers were read, the authors' bias score, and eatkit's
    word-level association with its permutation p (over attribute words) and bootstrap CI (over prompt
    variants and words)."""

    renamed = {"exact": "p_value_exact", **interval_ends("ci")}

    kind = "llm-iat"

    domain: str
    groups_x: list[str]
    groups_y: list[str]
    source: str  # "model" or "responses"
    responses: int
    complete: int
    partial: int
    unparseable: int
    refused: int
    parsed: int
    pairings: int
    unscored_pairings: int
    bias_score: float | None  # mean over parsed responses of the authors' score
    bias_score_authors: float  # unparsed and partial responses counted as 0, as the authors' pipeline
    bias_by_variation: dict[str, float | None]
    association: float | None
    rates: dict[str, float] = field(default_factory=dict)
    alternative: str
    p_value_exact: bool | None = None
    permutations: int | None = None
    ci: list[float] | None = None  # [low, high] of association (results.csv: ci_low, ci_high)
    confidence_level: float
    templates: dict[str, str] = field(default_factory=dict)
    samples: int | None = None


def resolve_templates(names: Sequence[str]) -> dict[str, str]:
    """The prompt templates by name: the authors' (:data:`TEMPLATES`) or texts with ``{a}``, ``{b}``,
    ``{words}`` (named ``template1``, ``template2``, ...).

    >>> list(resolve_templates(["replication", "Pair {words} with {a} or {b}."]))
    ['replication', 'template2']
    """
    out = {}
    for i, name in enumerate(names, start=1):
        if name in TEMPLATES:
            out[name] = TEMPLATES[name]
            continue
        try:
            name.format(a="", b="", words="")
        except (KeyError, IndexError, ValueError) as err:
            raise EatkitError(f"template {name!r:.60} must name only {{a}}, {{b}} and {{words}} (or be one of "
                              f"{', '.join(TEMPLATES)}): {err}") from None
        if not all(f"{{{k}}}" in name for k in ("a", "b", "words")):
            raise EatkitError(f"template {name!r:.60} must contain {{a}}, {{b}} and {{words}} (or be one of "
                              f"{', '.join(TEMPLATES)})")
        out[f"template{i}"] = name
    return out


class LLMIATAnalysis(_RequestAnalysis):
    """``llm-iat``: roles X, Y (the two groups' names), A, B (attribute words expected with X, with Y)."""

    kind = "llm-iat"
    record_type = LLMIATRecord

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        resolve_templates(options.params["templates"])
        if options.seed is None:
            raise AssertionError("the runner resolves the seed before the tests run")

    def prompts(self, test: AssociationTest, options: RunOptions) -> tuple[list[str], list[str], list[tuple[str, str]],
                                                                           int]:
        """The prompts, the template name and the (X, Y) group names of each, and the generation seed, all
        drawn from the run seed and the test id: per prompt a group name of each side, their order and the
        order of the words, as the authors drew them (names and words lower-cased, the words as a Python list)."""
        rng = np.random.default_rng([options.seed, zlib.crc32(test.id.encode("utf-8"))])
        sets = test.sets()
        x, y = list(sets["X"].items), list(sets["Y"].items)
        words = [w.lower() for w in (*sets["A"].items, *sets["B"].items, *options.params["unscored"])]
        prompts, names, groups = [], [], []
        for name, template in resolve_templates(options.params["templates"]).items():
            for _ in range(options.params["samples"]):
                drawn = (x[rng.integers(len(x))], y[rng.integers(len(y))])
                pair = [g.lower() for g in drawn]
                if rng.random() < 0.5:
                    pair.reverse()
                order = [words[i] for i in rng.permutation(len(words))]
                prompts.append(template.format(a=pair[0], b=pair[1], words=repr(order)))
                names.append(name)
                groups.append(drawn)
        return prompts, names, groups, int(rng.integers(2**31))

    def embed(self, test: AssociationTest, embed: Embed, options: RunOptions) -> dict[str, Embedded]:
        prompts, _, _, gen_seed = self.prompts(test, options)
        recorded = {"category": options.params["category"] or test.id, "variations": options.params["variations"]}
        request = generate_request(options.params["answer_tokens"], options.params["temperature"], gen_seed, recorded)
        return {"responses": embed(StimulusSet(f"{test.id} prompts", "sentence", tuple(prompts), category=request))}

    def _answers(self, test: AssociationTest, answers: Embedded, options: RunOptions) -> tuple[list[Any], list[str],
                                                                                               bool]:
        """Each answer parsed into pairings, its prompt variation, and whether the model answered this run's
        prompts (else: recorded answers, whose ids name their variation)."""
        sets = test.sets()
        prompts, names, drawn, _ = self.prompts(test, options)
        from_model = tuple(answers.ids) == tuple(prompts)
        variations = names if from_model else [i.split("/", 1)[0] for i in answers.ids]
        words = [*sets["A"].items, *sets["B"].items, *options.params["unscored"]]
        # a model's answer may name the two groups of its prompt; recorded answers (no prompt kept) any of them
        named = ([{"X": [a], "Y": [b]} for a, b in drawn] if from_model
                 else [{"X": list(sets["X"].items), "Y": list(sets["Y"].items)}] * len(answers.ids))
        parsed = [parse_pairings(str(answer), words, groups) for answer, groups in zip(answers.vectors, named)]
        return parsed, variations, from_model

    def _word_test(self, test: AssociationTest, tally: Any, options: RunOptions, seed: int) -> tuple[Any, list[str]]:
        """eatkit's word-level association, or None and the warning saying why it could not run."""
        first, second = test.set("A").items, test.set("B").items
        try:
            return word_pairing_test(tally.hits, tally.totals, [i < len(first) for i in range(len(first) + len(second))],
                                     words=[*first, *second], alternative=options.alternative,
                                     permutations=options.permutations, n_bootstrap=options.n_bootstrap,
                                     confidence_level=options.confidence_level, rng=seed), []
        except EatkitError as err:  # too few words were ever paired: the record says so, the counts stand
            return None, [f"no word-level test: {err}"]

    @staticmethod
    def _test_fields(result: Any) -> dict[str, Any]:
        """The record's fields of the word-level test (None where it could not run)."""
        if result is None:
            return {"p_value": None, "association": None, "rates": {}, "p_value_exact": None, "permutations": None,
                    "ci": None}
        return {"p_value": result.p_value, "association": result.statistic, "rates": result.rates,
                "p_value_exact": result.p_value_exact, "permutations": result.permutations,
                "ci": interval(*result.ci)}

    @staticmethod
    def _rows(test: AssociationTest, answers: Embedded, parsed: list[Any], variations: list[str], tally: Any,
              from_model: bool) -> list[list[Any]]:
        """The rows of ``llm_iat_responses.csv``: every answer, how it was read, its counts and score."""
        return [[test.id, variation, "" if from_model else ident, p.status, len(p.pairs), *(int(c) for c in counts),
                 "" if d is None else f"{d!r}", " | ".join(p.invalid), str(answer)]
                for p, variation, ident, counts, d, answer in zip(parsed, variations, answers.ids, tally.counts,
                                                                  tally.scores, answers.vectors)]

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        answers = embedded["responses"]
        parsed, variations, from_model = self._answers(test, answers, options)
        words = [*test.set("A").items, *test.set("B").items]
        tally = tally_pairings([p.pairs for p in parsed], variations, words, len(test.set("A").items))
        statuses = [p.status for p in parsed]
        summary = summarise_bias_scores(tally.scores, [s == "complete" for s in statuses], variations)
        result, warnings = self._word_test(test, tally, options, seed)
        record = LLMIATRecord(
            suite=suite, test=test.id, title=test.title, seed=seed, warnings=warnings,
            domain=options.params["domain"], groups_x=list(test.set("X").items), groups_y=list(test.set("Y").items),
            source="model" if from_model else "responses", responses=len(parsed), parsed=summary.parsed,
            pairings=int(tally.totals.sum()), unscored_pairings=tally.unscored, bias_score=summary.bias_score,
            bias_score_authors=summary.bias_score_authors, bias_by_variation=summary.by_variation,
            alternative=options.alternative, confidence_level=options.confidence_level,
            templates=resolve_templates(options.params["templates"]) if from_model else {},
            samples=options.params["samples"] if from_model else None,
            **{s: statuses.count(s) for s in STATUSES}, **self._test_fields(result))
        rows = self._rows(test, answers, parsed, variations, tally, from_model)
        return [Outcome(record, {"bias_scores": np.array([np.nan if s is None else s for s in tally.scores])},
                        Scored(result, rows))]

    def files(self, outcomes: Sequence[Outcome]) -> dict[str, bytes]:
        """``llm_iat_responses.csv``: every answer, how it was read and its score (none is dropped)."""
        rows = [r for o in outcomes if isinstance(o.result, Scored) for r in o.result.rows]
        if not rows:
            return {}
        return {"llm_iat_responses.csv": _csv(["test", "variation", "response_id", "status", "pairings",
                                               "b_words_with_y", "a_words_with_y", "b_words_with_x",
                                               "a_words_with_x", "bias_score", "invalid_lines", "response"], rows)}
