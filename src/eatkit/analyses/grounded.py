"""Grounded-WEAT/SEAT (seed 001) of a test of kind ``"grounded"``: (image, caption) pairs in roles X, Y,
A_x, A_y, B_x, B_y, embedded by a joint encoder (:mod:`eatkit.encoders.joint`).

Options (``RunOptions.params``; ``eatkit run --experiment --embedding --mask``):

- ``experiment``: 1, 2, 3 or ``"all"`` (default: all; 2 with a mask; ``all`` with a mask: 1 and 2);
- ``embedding``: ``"word"`` ([CLS] of one-word captions), ``"sentence"`` ([CLS] of sentence captions),
  ``"contextual"`` (the contextual word's first sub-token in a sentence caption) or ``"all"`` (default).
  A test runs the kinds its captions support (its ``params.embeddings``): the word tests of a suite
  answer ``word``, the sentence tests ``sentence`` and ``contextual``;
- ``mask``: ``"language"`` or ``"vision"``: the masking variant of experiment 3 (seed §4.3) on masked
  inputs, as experiment 2 (the paper's text: "we compute experiment 2 with masked inputs") or as
  experiment 1 (what the authors' code ran for Table 5: images integrated out); not with contextual
  embeddings (they would read the mask token).

Statistics: :func:`eatkit.stats.grounded_eat`; one record per (embedding kind, experiment).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any
from dataclasses import dataclass

from eatkit.analyses.base import Analysis, Outcome, RunOptions
from eatkit.errors import EatkitError
from eatkit.records import Record
from eatkit.sources.base import Embedded
from eatkit.stats.grounded import EXPERIMENTS, grounded_eat
from eatkit.stimuli.captioned import captions_without_words
from eatkit.stimuli.types import AssociationTest, StimulusSet

ROLES: tuple[str, ...] = ("X", "Y", "A_x", "A_y", "B_x", "B_y")


@dataclass(frozen=True, kw_only=True)
class GroundedRecord(Record):
    """One Grounded-WEAT/SEAT experiment on one kind of embedding of a test, and how it was computed."""

    kind = "grounded"

    family: str
    dataset: str
    embedding: str
    mask: str | None = None
    experiment: int
    x_name: str
    y_name: str
    n: dict[str, int]
    effect_size: float
    d_x: float | None = None
    d_y: float | None = None
    statistic: float
    p_value: float
    p_value_exact: bool
    p_value_mc_se: float = math.nan
    p_method: str = "permutation"
    n_permutations: int
    n_partitions: int
    alternative: str

    def key(self) -> tuple[Any, ...]:
        """A grounded test writes one record per embedding kind and experiment (and mask)."""
        return (self.kind, self.test, self.embedding, self.experiment, self.mask)


class GroundedAnalysis(Analysis):
    """Grounded-WEAT/SEAT experiments 1-3 (roles X, Y, A_x, A_y, B_x, B_y)."""

    kind = "grounded"
    record_type = GroundedRecord

    def settings(self, test: AssociationTest, options: RunOptions) -> tuple[list[str], list[int], str | None]:
        """The embedding kinds this test runs, the experiments and the mask (validated)."""
        params = options.params  # validated by eatkit.specs.GROUNDED
        mask, embedding = params["mask"], params["embedding"]
        experiment = params["experiment"] or (2 if mask else "all")
        if mask and experiment == 3:
            raise EatkitError(f"--mask {mask} is the masking variant of experiment 3, computed on masked inputs as "
                              "experiment 2 (seed 001, section 4.3) or as experiment 1 (the authors' code for "
                              "Table 5): pass --experiment 2 or 1")
        if mask and embedding == "contextual":
            raise EatkitError(f"--mask {mask} cannot go with contextual embeddings: the masked contextual word's "
                              "embedding is that of the mask token (use word or sentence)")
        supported = options.params["embeddings"]
        kinds = [k for k in supported if embedding in (k, "all") and not (mask and k == "contextual")]
        experiments = ([1, 2] if mask else list(EXPERIMENTS)) if experiment == "all" else [experiment]
        return kinds, experiments, mask

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        kinds, _, mask = self.settings(test, options)
        words = tuple(options.params["contextual_words"])
        if "contextual" in kinds or mask == "language":
            for role, stimuli in test.sets().items():
                bare = captions_without_words(stimuli, words)
                if bare:
                    why = "contextual embeddings read" if "contextual" in kinds else "--mask language masks"
                    raise EatkitError(f"test '{test.id}': caption {bare[0]!r} of set {role} ('{stimuli.name}') "
                                      f"contains none of the test's contextual words, which {why}")

    def stimulus_sets(self, test: AssociationTest, options: RunOptions) -> dict[str, StimulusSet]:
        """A view of each set per embedding kind, keyed ``kind/role``."""
        kinds, _, mask = self.settings(test, options)
        words = tuple(options.params["contextual_words"])
        return {f"{kind}/{role}": dataclasses.replace(stimuli, embedding="contextual" if kind == "contextual"
                                                      else "cls", contextual_words=words, mask=mask)
                for kind in kinds for role, stimuli in test.sets().items()}

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        kinds, experiments, mask = self.settings(test, options)
        outcomes = []
        for kind in kinds:
            sets = {role: embedded[f"{kind}/{role}"] for role in ROLES}
            vectors = {role: e.vectors for role, e in sets.items()}
            for experiment in experiments:
                alternative, warnings = options.alternative, []
                if experiment == 3 and alternative != "greater":
                    alternative = "greater"
                    warnings.append(f"experiment 3's statistic is an absolute value: its p-value is one-sided "
                                    f"('greater'), not '{options.alternative}'")
                r = grounded_eat(vectors["X"], vectors["Y"], A_x=vectors["A_x"], A_y=vectors["A_y"],
                                 B_x=vectors["B_x"], B_y=vectors["B_y"], experiment=experiment,
                                 permutations=options.permutations, alternative=alternative, rng=seed)
                record = GroundedRecord(
                    suite=suite, test=test.id, title=test.title, seed=seed, warnings=warnings,
                    family=options.params["family"] or test.id, dataset=options.params["dataset"],
                    embedding=kind, mask=mask, experiment=experiment,
                    x_name=test.set("X").name, y_name=test.set("Y").name,
                    n={role: len(e.ids) for role, e in sets.items()},
                    dropped={role: list(e.dropped) for role, e in sets.items() if e.dropped},
                    effect_size=r.effect_size, d_x=r.d_X, d_y=r.d_Y, statistic=r.statistic, p_value=r.p_value,
                    p_value_exact=r.p_value_exact, p_value_mc_se=r.mc_standard_error, n_permutations=r.n_permutations,
                    n_partitions=r.n_partitions, alternative=r.alternative,
                )
                arrays = {f"{kind}-e{experiment}-{name}": values for name, values in r.associations.items()}
                outcomes.append(Outcome(record, arrays, r))
        return outcomes
