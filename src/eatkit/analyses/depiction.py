"""Who gets generated (DALL-Eval, Cho et al. ICCV 2023; Stable Bias, Luccioni et al. NeurIPS 2023): tests of
kind ``"depiction"``.

Each role of a test is one group of generation prompts (modality ``"prompt"``, e.g. ``Doctor``: "a photo
of a doctor"); a text-to-image source (``diffusers:``) generates every prompt's images and embeds them with
its ``--embedder``, a CLIP-like model that also embeds text. Every image gets the class of each perceived
attribute (gender, skin tone, age) whose classifier prompt it is most similar to (zero-shot CLIP: the
argmax over the classes of cos(image, prompt); the prompts are parameters, recorded in every record). Per
group and attribute, :func:`eatkit.stats.depiction.depiction` gives the class counts, DALL-Eval's mean
absolute deviation from uniform and the KL divergence from a reference (uniform, or a CSV table of
``group,attribute,class,share`` rows, e.g. a labour-statistics table), each with a bootstrap CI over the
images. :func:`eatkit.run.generated.compare_depiction_runs` compares two
models' runs of the same test by a permutation test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.analyses.base import Analysis, Outcome, RunOptions
from eatkit.analyses.t2iat import copied_images, generated_files, generated_names
from eatkit.errors import EatkitError
from eatkit.records import Record
from eatkit.sources.base import Embedded
from eatkit.stats.association import cosine_matrix
from eatkit.stimuli.types import AssociationTest, StimulusSet

CLASSIFIER = "zero-shot: the class whose prompt has the largest cosine with the image embedding (--embedder)"


@dataclass(frozen=True, kw_only=True)
class DepictionRecord(Record):
    """The perceived classes of one attribute over one prompt group's generated images."""

    kind = "depiction"

    group: str
    prompts: list[str]
    attribute: str
    classes: list[str]
    classifier_prompts: dict[str, str]
    classifier: str = CLASSIFIER
    n_images: int
    counts: dict[str, int]
    shares: dict[str, float]
    reference: dict[str, float]
    reference_source: str
    mad: float  # DALL-Eval: mean absolute deviation from uniform
    mad_ci: list[float] = field(default_factory=list)
    kl: float  # KL(shares || reference), nats
    kl_ci: list[float] = field(default_factory=list)
    confidence_level: float = 0.95
    n_bootstrap: int = 0
    images: list[str] = field(default_factory=list)  # generated/<sha256>.png of every image
    labels: list[str] = field(default_factory=list)  # the class of every image

    def key(self) -> tuple[Any, ...]:
        """One record per prompt group and attribute."""
        return (self.kind, self.test, self.group, self.attribute)


def classifier_prompts(params: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Class -> prompt of every attribute the test measures (``classes`` replaces the default prompts of a
    single attribute).

    >>> classifier_prompts({"attributes": ["gender"], "classes": {}})["gender"]["woman"]
    'a photo of a woman'
    """
    from eatkit.specs import DEPICTION_CLASSES

    attributes = params["attributes"]
    if params["classes"]:
        if len(attributes) != 1:
            raise EatkitError("classes (--class CLASS=PROMPT) replaces the prompts of one attribute: give a single "
                              f"--attributes, got {', '.join(attributes)}")
        if len(params["classes"]) < 2:
            raise EatkitError(f"the classifier needs at least 2 classes, got {len(params['classes'])}")
        return {attributes[0]: dict(params["classes"])}
    return {a: dict(DEPICTION_CLASSES[a]) for a in dict.fromkeys(attributes)}


def read_reference(path: str, prompts: dict[str, dict[str, str]], groups: Sequence[str]) -> dict[tuple[str, str], dict[str, float]]:
    """(group, attribute) -> class -> share of a reference CSV (``group,attribute,class,share``); each listed
    (group, attribute) must give every class of the attribute a positive share."""
    from eatkit.io import read_csv

    rows = read_csv(path, "reference table", ["group", "attribute", "class", "share"])  # the one reader
    if not rows:
        raise EatkitError(f"reference table {path} has no rows")
    out: dict[tuple[str, str], dict[str, float]] = {}
    for i, row in enumerate(rows, start=2):
        try:
            share = float(row["share"])
        except (TypeError, ValueError):
            share = float("nan")
        if not np.isfinite(share) or share <= 0:
            raise EatkitError(f"reference table {path}, line {i}: share must be a positive number, got {row['share']!r}")
        out.setdefault((row["group"], row["attribute"]), {})[row["class"]] = share
    for (group, attribute), shares in out.items():
        if group not in groups or attribute not in prompts:
            continue
        if set(shares) != set(prompts[attribute]):
            raise EatkitError(f"reference table {path}: {group}/{attribute} gives the classes "
                              f"{', '.join(sorted(shares))}, the classifier has {', '.join(prompts[attribute])}")
    return out


class DepictionAnalysis(Analysis):
    kind = "depiction"
    record_type = DepictionRecord

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        for role, stimuli in test.sets().items():
            if stimuli.modality != "prompt" or not stimuli.items:
                raise EatkitError(f"group {role} of a depiction test must be a non-empty prompt set, got "
                                  f"{stimuli.modality} '{stimuli.name}'")
        prompts = classifier_prompts(dict(options.params))
        if options.params["reference"] != "uniform":
            read_reference(options.params["reference"], prompts, list(test.sets()))

    def stimulus_sets(self, test: AssociationTest, options: RunOptions) -> dict[str, StimulusSet]:
        prompts = classifier_prompts(dict(options.params))
        return {**test.sets(), **{f"classifier/{a}": StimulusSet(f"classifier:{a}", "sentence", tuple(p.values()))
                                  for a, p in prompts.items()}}

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        from eatkit.stats.depiction import depiction

        params = dict(options.params)
        prompts = classifier_prompts(params)
        source = params["reference"]
        table = {} if source == "uniform" else read_reference(source, prompts, list(test.sets()))
        outcomes = []
        rng = np.random.default_rng(seed)
        for group, stimuli in test.sets().items():
            images = embedded[group]
            for attribute, classes in prompts.items():
                names = list(classes)
                labels = cosine_matrix(images.vectors, embedded[f"classifier/{attribute}"].vectors).argmax(axis=1)
                shares = table.get((group, attribute))
                reference = [shares[c] for c in names] if shares else None
                d = depiction(labels, names, reference=reference, n_bootstrap=options.n_bootstrap,
                              confidence_level=options.confidence_level, rng=rng)
                record = DepictionRecord(
                    suite=suite, test=test.id, title=test.title, seed=seed, group=group, prompts=list(stimuli.items),
                    attribute=attribute, classes=names, classifier_prompts=dict(classes), n_images=len(labels),
                    counts=dict(zip(names, d.counts)), shares=dict(zip(names, d.shares)),
                    reference=dict(zip(names, d.reference)),
                    reference_source=source if shares else "uniform", mad=d.mad, mad_ci=list(d.mad_ci or ()),
                    kl=d.kl, kl_ci=list(d.kl_ci or ()), confidence_level=options.confidence_level,
                    n_bootstrap=d.n_bootstrap, images=generated_names(images), labels=[names[i] for i in labels])
                outcomes.append(Outcome(record, {f"{group}/{attribute}/labels": labels},
                                        {"result": d, "files": generated_files([images])}))
        return outcomes

    def files(self, outcomes: Sequence[Outcome]) -> dict[str, bytes]:
        """``generated/<sha256>.png``: every generated image of the run's depiction tests."""
        return copied_images(outcomes)
