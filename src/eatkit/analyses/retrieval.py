"""The retrieval probe (``eatkit probe retrieval``): the benchmark of the CLIP bias studies (Geyik et al.
2019's measures as used by Berg et al. 2022, oxai/debias-vision-lang, and Wolfe & Caliskan's
kshitishghate/CLIP_bias), generalising the ranking probe from region prompts to any prompt set.

The images are a labelled set of one attribute, one folder per value (``DIR/<value>/*``, e.g. FairFace's
race, gender or age groups; the attribute is the folder's name). For every concept the prompt
``template.format(concept)`` (e.g. "a photo of a doctor person" from "a photo of a {} person") is embedded
as a sentence and every image is ranked by its cosine with it; per prompt, MaxSkew@k and NDKL
(:func:`eatkit.stats.ranking.max_skew`, :func:`~eatkit.stats.ranking.ndkl`, desired proportions: each
value's share of all images, ``--desired uniform`` or a JSON table ``{value: share}``) and each value's
share of the top k; over the prompts, their means. One run per attribute (e.g. ``--images fairface/race``,
then ``fairface/gender``). Per prompt also a permutation p of each measure (group labels shuffled over the
images: a group-blind model; ``--permutations`` draws) and a percentile bootstrap CI over images
(``--n-bootstrap`` resamples), :func:`eatkit.stats.ranking.skew_uncertainty`.
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
from eatkit.stats.ranking import max_skew, ndkl, skew_uncertainty
from eatkit.stimuli.types import AssociationTest, StimulusSet


@dataclass(frozen=True, kw_only=True)
class RetrievalRecord(Record):
    """MaxSkew@k and NDKL of each prompt's ranking of a labelled image set, and each value's top-k share."""

    kind = "retrieval"
    renamed = {"ci_max_skew": "max_skew_ci", "ci_ndkl": "ndkl_ci"}

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
    desired: dict[str, float] = field(default_factory=dict)  # value -> desired proportion
    p_max_skew: dict[str, float] = field(default_factory=dict)  # concept -> permutation p
    p_ndkl: dict[str, float] = field(default_factory=dict)
    max_skew_ci: dict[str, list[float]] = field(default_factory=dict)  # concept -> bootstrap CI
    ndkl_ci: dict[str, list[float]] = field(default_factory=dict)
    n_permutations: int = 0
    n_bootstrap: int = 0
    confidence_level: float = 0.95


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
        _desired(options.params["desired"], list(test.sets()))

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
        desired = _desired(options.params["desired"], list(groups))
        skews, divergences = max_skew(ranked, k, desired), ndkl(ranked, desired)  # per prompt (Geyik et al. 2019)
        concepts = list(prompts)
        draws, resamples = options.params["permutations"], options.params["n_bootstrap"]
        uncertainty = [skew_uncertainty(row, labels, int(k), desired, permutations=draws, n_bootstrap=resamples,
                                        confidence_level=options.confidence_level, rng=seed + i)
                       for i, row in enumerate(sims)]
        ci = resamples > 0
        top = {c: {g: float(np.mean(ranked[i, :k] == g)) for g in groups} for i, c in enumerate(concepts)}
        record = RetrievalRecord(
            suite=suite, test=test.id, title=test.title, seed=seed, attribute=_attribute(test),
            groups=list(groups), group_counts={g: len(e.ids) for g, e in groups.items()},
            template=options.params["template"], prompts=prompts, k=int(k),
            max_skew=dict(zip(concepts, map(float, skews))), ndkl=dict(zip(concepts, map(float, divergences))),
            top_shares=top, mean_max_skew=float(np.mean(skews)), mean_ndkl=float(np.mean(divergences)),
            desired=uncertainty[0].desired, p_max_skew={c: u.p_max_skew for c, u in zip(concepts, uncertainty)},
            p_ndkl={c: u.p_ndkl for c, u in zip(concepts, uncertainty)},
            max_skew_ci={c: list(u.max_skew_ci) for c, u in zip(concepts, uncertainty)} if ci else {},
            ndkl_ci={c: list(u.ndkl_ci) for c, u in zip(concepts, uncertainty)} if ci else {},
            n_permutations=draws, n_bootstrap=resamples, confidence_level=options.confidence_level,
        )
        return [Outcome(record, {"similarities": sims}, {"ranked": ranked})]


def _desired(choice: str, groups: list[str]) -> dict[str, float] | None:
    """The desired proportions: None (each value's share of the images), uniform, or a JSON table's."""
    if choice == "images":
        return None
    if choice == "uniform":
        return dict.fromkeys(groups, 1 / len(groups))
    from eatkit.io import read_json

    table = read_json(choice, "desired proportions file")  # the one reader: regular file, bounded, depth checked
    if not isinstance(table, dict) or set(table) != set(groups) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in table.values()):
        raise EatkitError(f"desired proportions file {choice} must map each value ({', '.join(groups)}) to a "
                          "share, got " + (", ".join(map(str, table)) if isinstance(table, dict) else type(table).__name__))
    return {g: float(v) for g, v in table.items()}


def _attribute(test: AssociationTest) -> str:
    """The attribute: the name of the folder that holds the value folders."""
    first = next(iter(test.sets().values()))
    return Path(first.items[0]).parent.parent.name if first.items else first.name
