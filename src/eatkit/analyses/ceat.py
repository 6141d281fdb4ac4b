"""CEAT (Guo & Caliskan, AIES 2021): the contextualised embedding association test, kind ``"ceat"``.

Each stimulus word of X, Y, A, B is embedded in N sentence contexts sampled (with replacement) from the
sentences of a corpus file that contain it (one sentence per line; :mod:`eatkit.stimuli.contexts`), or
from sentence templates (``--context-template "This is {x}."``, repeatable) filled with the word, by a
contextual encoder that embeds the marked word in its sentence (``hf:<model>`` with ``pooling=token``: the
word's first sub-token). Sample i takes every word's i-th context; its EAT effect size d_i
(:func:`eatkit.stats.meta_analysis.sampled_effect_sizes`) has the within-sample variance of a standardised
mean difference, the closed form :func:`~eatkit.stats.meta_analysis.smd_variance` (Hedges & Olkin); the N
effect sizes are combined by :func:`~eatkit.stats.meta_analysis.random_effects` (``--meta-method``). The
record keeps CEAT's plain mean of the d_i beside the random-effects estimate.

The contexts are drawn with the run's seed (0 when none is given: the same contexts on every run, so that
the embedding cache serves them), recorded as ``context_seed``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from eatkit.analyses.base import Analysis, Outcome, RunOptions
from eatkit.errors import EatkitError
from eatkit.records import Record
from eatkit.sources.base import Embedded
from eatkit.stats.meta_analysis import random_effects, sampled_effect_sizes, smd_variance
from eatkit.stimuli.contexts import read_corpus, sample_contexts
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
    variance: str = "hedges-olkin"  # within-sample variance of each d_i: the closed form
    estimate: float
    se: float
    ci: list[float]
    tau2: float
    i2: float
    q: float
    q_df: int
    q_p_value: float
    prediction_interval: list[float]
    mean_effect: float  # CEAT's own summary: the mean of the d_i
    sd_effect: float  # their SD (ddof 1)
    confidence_level: float = 0.95


@lru_cache(maxsize=4)
def _corpus(path: str) -> tuple[tuple[str, ...], str]:
    from eatkit.io import checked_path, os_error

    try:
        data = checked_path(path, "corpus file").read_bytes()
    except OSError as err:
        raise os_error(err, "reading the corpus") from None
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

    def samples(self, test: AssociationTest, options: RunOptions) -> dict[str, list[str]]:
        """Each role's marked sentences, word by word, N per word (a sentence drawn twice appears twice)."""
        templates = options.params["context_templates"]
        sentences = () if templates else _corpus(options.params["corpus"])[0]
        n = options.params["contexts"]
        out = {}
        for index, (role, stimuli) in enumerate(test.sets().items()):
            rng = np.random.default_rng([_context_seed(options), index])
            out[role] = [c for word in stimuli.items for c in sample_contexts(
                [t.replace("{x}", word) for t in templates] if templates else sentences, word, n, rng)]
        return out

    def stimulus_sets(self, test: AssociationTest, options: RunOptions) -> dict[str, StimulusSet]:
        # each distinct sentence once (sampling with replacement repeats some; eatkit embeds a stimulus once)
        return {role: StimulusSet(f"{test.set(role).name} in context", "sentence", tuple(dict.fromkeys(items)))
                for role, items in self.samples(test, options).items()}

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        n = options.params["contexts"]
        words = {role: test.set(role).items for role in ROLES}
        contexts = self.samples(test, options)
        samples = []
        for role in ROLES:  # each distinct sentence was embedded once: rows by the sampled contexts
            row = {item: i for i, item in enumerate(embedded[role].ids)}
            rows = [row[item] for item in contexts[role]]
            samples.append(embedded[role].vectors[rows].reshape(len(words[role]), n, -1))
        d = sampled_effect_sizes(*samples, sd=options.sd, ddof=options.ddof)
        if not np.isfinite(d).all():
            raise EatkitError("an effect size of a context sample is not finite (its association values are all equal)")
        variances = smd_variance(d, len(words["X"]), len(words["Y"]))
        result = random_effects(d, variances, method=options.params["meta_method"],
                                confidence_level=options.confidence_level)
        templates = list(options.params["context_templates"])
        corpus = "" if templates else options.params["corpus"]
        checksum = _corpus(corpus)[1] if corpus else ""
        record = CEATRecord(
            suite=suite, test=test.id, title=test.title, seed=seed,
            set_names={r: test.set(r).name for r in ROLES}, set_sizes={r: len(words[r]) for r in ROLES},
            corpus=Path(corpus).name, corpus_sha256=checksum, templates=templates, context_seed=_context_seed(options),
            n_contexts=n, method=result.method, estimate=result.estimate, se=result.se, ci=list(result.ci),
            p_value=result.p_value, tau2=result.tau2, i2=result.i2, q=result.q, q_df=result.q_df,
            q_p_value=result.q_p_value, prediction_interval=list(result.prediction_interval),
            mean_effect=float(d.mean()), sd_effect=float(d.std(ddof=1)), confidence_level=result.confidence_level)
        return [Outcome(record, {"effect_sizes": d, "variances": variances}, result)]
