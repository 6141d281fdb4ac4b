"""The retrieval probe (``eatkit probe retrieval``): the benchmark of the CLIP bias studies (Geyik et al.
2019's measures as used by Berg et al. 2022, oxai/debias-vision-lang, and Wolfe & Caliskan's
kshitishghate/CLIP_bias), generalising the ranking probe from region prompts to any prompt set.

The images are a labelled set of one attribute, one folder per value (``DIR/<value>/*``, e.g. FairFace's
race, gender or age groups; the attribute is the folder's name). For every concept the prompt
``template.format(concept)`` (e.g. "a photo of a doctor person" from "a photo of a {} person") is embedded
as a sentence and every image is ranked by its cosine with it; per prompt, MaxSkew@k and NDKL
(:func:`eatkit.stats.ranking.max_skew`, :func:`~eatkit.stats.ranking.ndkl`, desired proportions: each
value's share of all images) and each value's share of the top k; over the prompts, their means. One run
per attribute (e.g. ``--images fairface/race``, then ``fairface/gender``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.analyses.base import Outcome, RunOptions
from eatkit.analyses.probe import ProbeAnalysis
from eatkit.analyses.ranking import VL_FAMILIES
from eatkit.errors import EatkitError
from eatkit.records import Record
from eatkit.stats.association import cosine_matrix
from eatkit.stats.ranking import max_skew, ndkl
from eatkit.stimuli.types import AssociationTest, StimulusSet


@dataclass(frozen=True, kw_only=True)
class RetrievalRecord(Record):
    """MaxSkew@k and NDKL of each prompt's ranking of a labelled image set, and each value's top-k share."""

    kind = "retrieval"

    attribute: str
    groups: list[str]
    group_counts: dict[str, int]
    template: str
    prompts: dict[str, str]  # concept -> prompt
    k: int
    max_skew: dict[str, float]  # concept -> MaxSkew@k
    ndkl: dict[str, float]  # concept -> NDKL
    top_shares: dict[str, dict[str, float]] = field(default_factory=dict)  # concept -> value -> share of top k
    mean_max_skew: float
    mean_ndkl: float


class RetrievalAnalysis(ProbeAnalysis):
    """``eatkit probe retrieval``: roles are the values of one attribute (image folders)."""

    kind = "retrieval"
    record_type = RetrievalRecord

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        super().check(test, options)
        template = options.params["template"]
        if template.count("{}") != 1:
            raise EatkitError(f"the retrieval template must contain {{}} once (where the concept goes), got {template!r}")
        concepts = list(options.params["concepts"] or ())
        repeated = sorted({c for c in concepts if concepts.count(c) > 1})
        if repeated:
            raise EatkitError(f"concepts: {', '.join(repeated)} given more than once (each concept is one query)")

    def observe(self, test: AssociationTest, model: Any, options: RunOptions) -> dict[str, Any]:
        if not {"image", "sentence"} <= set(getattr(model, "modalities", ())):
            raise EatkitError(f"model '{getattr(model, 'id', model)}' is not a vision-language model: the retrieval "
                              f"probe needs {VL_FAMILIES}")
        params = options.params
        prompts = {c: params["template"].format(c) for c in params["concepts"]}
        groups = {g: model.embed(s) for g, s in test.sets().items()}
        text = model.embed(StimulusSet("retrieval prompts", "sentence", tuple(prompts.values())))
        return {"groups": groups, "prompts": prompts, "text": text}

    def compute(self, test: AssociationTest, embedded: dict[str, Any], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        prompts: dict[str, str] = embedded["prompts"]
        groups = embedded["groups"]
        labels = np.concatenate([[g] * len(e.ids) for g, e in groups.items()])
        sims = cosine_matrix(embedded["text"].vectors, np.concatenate([e.vectors for e in groups.values()]))
        ranked = labels[np.argsort(-sims, axis=1, kind="stable")]
        k = options.params["k"] or min(len(e.ids) for e in groups.values())
        if k > labels.size:
            raise EatkitError(f"k={k} exceeds the {labels.size} images of the retrieval probe")
        skews, divergences = max_skew(ranked, k), ndkl(ranked)  # per prompt (Geyik et al. 2019)
        concepts = list(prompts)
        top = {c: {g: float(np.mean(ranked[i, :k] == g)) for g in groups} for i, c in enumerate(concepts)}
        record = RetrievalRecord(
            suite=suite, test=test.id, title=test.title, seed=seed, attribute=_attribute(test),
            groups=list(groups), group_counts={g: len(e.ids) for g, e in groups.items()},
            template=options.params["template"], prompts=prompts, k=int(k),
            max_skew=dict(zip(concepts, map(float, skews))), ndkl=dict(zip(concepts, map(float, divergences))),
            top_shares=top, mean_max_skew=float(np.mean(skews)), mean_ndkl=float(np.mean(divergences)),
        )
        return [Outcome(record, {"similarities": sims}, {"ranked": ranked})]


def _attribute(test: AssociationTest) -> str:
    """The attribute: the name of the folder that holds the value folders."""
    first = next(iter(test.sets().values()))
    return Path(first.items[0]).parent.parent.name if first.items else first.name
