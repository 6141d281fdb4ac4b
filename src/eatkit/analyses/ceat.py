"""CEAT (Guo & Caliskan, AIES 2021): the contextualised embedding association test, kind ``"ceat"``.

Each stimulus word of X, Y, A, B is embedded in N distinct sentence contexts drawn without replacement from
the sentences of a corpus file that contain it (one sentence per line; :mod:`eatkit.stimuli.contexts`), or
from sentence templates (``--context-template "This is {x}."``, repeatable) filled with the word, by a
contextual encoder that embeds the marked word in its sentence (``hf:<model>`` with ``pooling=token``: the
word's first sub-token). Sample i takes every word's i-th context, so the N samples are independent
observations: N above the distinct contexts of the word with fewest is capped there, with a recorded
warning (a context drawn twice would count one observation twice and shrink p without new data). Each
sample's EAT effect size d_i (:func:`eatkit.stats.meta_analysis.ceat`) has a within-sample variance
(``--ceat-variance``): the closed form of a standardised mean difference (``hedges-olkin``, the default) or,
as CEAT's code weights them, the variance of the association scores (``ceat``); the N effect sizes are
combined by :func:`~eatkit.stats.meta_analysis.random_effects` (``--meta-method``; CEAT's code uses ``dl``)
with its two-sided p, and CEAT's one-sided p (``p_value_greater``). The record keeps the plain mean of the
d_i (the summary of CEAT's first code) beside the random-effects estimate.

The contexts are drawn with the run's seed (0 when none is given: the same contexts on every run, so that
the embedding cache serves them), recorded as ``context_seed``.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from eatkit.analyses.base import Analysis, Outcome, RunOptions
from eatkit.errors import EatkitError
from eatkit.records import Record
from eatkit.sources.base import Embedded
from eatkit.stats.meta_analysis import ceat
from eatkit.stimuli.contexts import contexts_of, draw, read_corpus
from eatkit.stimuli.types import AssociationTest, StimulusSet

ROLES = ("X", "Y", "A", "B")


@dataclass(frozen=True, kw_only=True)
class CEATRecord(Record):
    """The random-effects combination of a test's N per-context effect sizes."""

    kind = "ceat"

    set_names: dict[str, str]
    set_sizes: dict[str, int]
    corpus: str  # the corpus file's name ("" with templates)
    corpus_sha256: str
    templates: list[str]
    context_seed: int
    n_contexts: int
    method: str
    variance: str = "hedges-olkin"  # within-sample variance of each d_i: the closed form, or "ceat" (CEAT's code)
    estimate: float
    p_value_greater: float  # one-sided p of the estimate (H1: mu > 0), as CEAT's code reports it
    se: float
    ci: list[float]
    tau2: float
    i2: float
    q: float
    q_df: int
    q_p_value: float
    prediction_interval: list[float]
    mean_effect: float  # the plain mean of the d_i (CEAT's first code's summary; its later code: the estimate)
    sd_effect: float  # their SD (ddof 1)
    confidence_level: float = 0.95


@lru_cache(maxsize=4)
def _corpus(path: str) -> tuple[tuple[str, ...], str]:
    from eatkit.io import read_input

    data = read_input(path, "corpus file")  # the one reader: a regular file (no FIFO, no /dev/zero), bounded
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise EatkitError(f"corpus {path} is not UTF-8 text") from None
    return tuple(read_corpus(text, path)), hashlib.sha256(data).hexdigest()


def _context_seed(options: RunOptions) -> int:
    return 0 if options.seed is None else int(options.seed)


class CEATAnalysis(Analysis):
    """``ceat``: X, Y, A, B word sets, each word in N sampled sentence contexts."""

    kind = "ceat"
    record_type = CEATRecord

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        corpus, templates = options.params["corpus"], options.params["context_templates"]
        if bool(corpus) == bool(templates):
            raise EatkitError(f"test '{test.id}' (ceat) needs a corpus file of sentences (--corpus FILE) or sentence "
                              "templates (--context-template 'TEXT with {x}', repeatable), not both")
        bad = [t for t in templates if t.count("{x}") != 1]
        if bad:
            raise EatkitError(f"a context template must contain {{x}} once (where the word goes), got {bad[0]!r}")
        for role, stimuli in test.sets().items():
            if stimuli.modality != "word":
                raise EatkitError(f"test '{test.id}' (ceat): set {role} holds {stimuli.modality}s; CEAT embeds words "
                                  "in sentence contexts")
        self.stimulus_sets(test, options)  # every word has a context, before any model is loaded

    def samples(self, test: AssociationTest, options: RunOptions) -> tuple[dict[str, list[str]], int, list[str]]:
        """Each role's marked sentences, word by word, the same number of distinct ones per word; that number
        (``contexts``, or fewer: the distinct contexts of the word with fewest) and the warning when fewer."""
        templates = options.params["context_templates"]
        sentences = () if templates else _corpus(options.params["corpus"])[0]
        found = {word: contexts_of([t.replace("{x}", word) for t in templates] if templates else sentences, word)
                 for stimuli in test.sets().values() for word in stimuli.items}
        asked, fewest = options.params["contexts"], min(found, key=lambda word: len(found[word]))
        n = min(asked, len(found[fewest]))
        where = "templates" if templates else "corpus"
        if n < 2:
            raise EatkitError(f"test '{test.id}' (ceat): the word {fewest!r} has 1 distinct context in the {where}; "
                              "CEAT needs at least 2 per word")
        warnings = [] if n == asked else [
            f"--contexts {asked} capped at {n}: the word {fewest!r} has {n} distinct contexts in the {where}, and "
            "contexts are drawn without replacement (a context drawn twice would count one observation twice)"]
        out = {}
        for index, (role, stimuli) in enumerate(test.sets().items()):
            rng = np.random.default_rng([_context_seed(options), index])
            out[role] = [c for word in stimuli.items for c in draw(found[word], word, n, rng)]
        return out, n, warnings

    def stimulus_sets(self, test: AssociationTest, options: RunOptions) -> dict[str, StimulusSet]:
        # each distinct sentence once (two words of a role may share a sentence; eatkit embeds a stimulus once)
        return {role: StimulusSet(f"{test.set(role).name} in context", "sentence", tuple(dict.fromkeys(items)))
                for role, items in self.samples(test, options)[0].items()}

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        words = {role: test.set(role).items for role in ROLES}
        contexts, n, warnings = self.samples(test, options)
        samples = []
        for role in ROLES:  # each distinct sentence was embedded once: rows by the sampled contexts
            row = {item: i for i, item in enumerate(embedded[role].ids)}
            rows = [row[item] for item in contexts[role]]
            samples.append(embedded[role].vectors[rows].reshape(len(words[role]), n, -1))
        d, variances, result = ceat(*samples, variance=options.params["ceat_variance"],
                                    method=options.params["meta_method"], sd=options.sd, ddof=options.ddof,
                                    confidence_level=options.confidence_level)
        templates = list(options.params["context_templates"])
        corpus = "" if templates else options.params["corpus"]
        checksum = _corpus(corpus)[1] if corpus else ""
        record = CEATRecord(
            suite=suite, test=test.id, title=test.title, seed=seed,
            set_names={r: test.set(r).name for r in ROLES}, set_sizes={r: len(words[r]) for r in ROLES},
            corpus=Path(corpus).name, corpus_sha256=checksum, templates=templates, context_seed=_context_seed(options),
            n_contexts=n, method=result.method, variance=options.params["ceat_variance"], estimate=result.estimate,
            se=result.se, ci=list(result.ci), p_value=result.p_value,
            p_value_greater=0.5 * math.erfc(result.z / math.sqrt(2)), warnings=warnings,  # norm.sf(z)
            tau2=result.tau2, i2=result.i2, q=result.q, q_df=result.q_df,
            q_p_value=result.q_p_value, prediction_interval=list(result.prediction_interval),
            mean_effect=float(d.mean()), sd_effect=float(d.std(ddof=1)), confidence_level=result.confidence_level)
        return [Outcome(record, {"effect_sizes": d, "variances": variances}, result)]
