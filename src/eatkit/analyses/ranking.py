"""The ranking probe ("American == White" seed, section 4): which groups' images a CLIP-like model ranks
first for a prompt about each region, compared with a per-region reference table (e.g. census shares).

For every region the prompt (a named prompt set or a template with ``{region}``) is embedded as a
sentence, every image of every group is embedded, and the cosine similarities go to
:func:`eatkit.stats.ranking.rank_shares` (balanced downsampling, top k, averaged over repeats), then
:func:`~eatkit.stats.ranking.compare_shares` (Pearson r per group, averaged multi-output R^2) against the
reference, :func:`~eatkit.stats.ranking.correlate_regions` against any extra tables, and MaxSkew@k and
NDKL of each region's full ranking (desired proportions: the groups' shares of all images).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eatkit.analyses.base import Outcome, RunOptions
from eatkit.analyses.probe import ProbeAnalysis
from eatkit.errors import EatkitError
from eatkit.records import Record
from eatkit.stats.association import cosine_matrix
from eatkit.stats.ranking import (
    check_same_regions, compare_shares, correlate_regions, max_skew, ndkl, rank_shares,
)
from eatkit.stats.summary import describe
from eatkit.stimuli.regions import load_region_table, region_prompts
from eatkit.stimuli.types import AssociationTest, StimulusSet

VL_FAMILIES = "a CLIP-like model that embeds images and sentences (hf-clip:, open_clip:, hf-blip:)"


@dataclass(frozen=True, kw_only=True)
class RankingRecord(Record):
    """Shares of each group among each region's top-k images, and their agreement with a reference."""

    kind = "ranking"

    groups: list[str]
    group_counts: dict[str, int]
    group_size: int
    k: int
    repeats: int
    prompt: str
    prompts: dict[str, str]
    reference: str
    reference_columns: dict[str, str]
    shares: dict[str, dict[str, float]]  # region -> group -> share of the top k
    reference_shares: dict[str, dict[str, float]]  # region -> group -> the reference column's value
    r: dict[str, float]
    r_p_values: dict[str, float]
    r_squared: float
    r_squared_by_output: dict[str, float]
    r_squared_p_values: dict[str, float]
    max_skew: dict[str, float]  # region -> MaxSkew@k
    ndkl: dict[str, float]  # region -> NDKL
    mean_max_skew: float | None = None  # over the regions (None: a record of eatkit 0.2, which had none)
    mean_ndkl: float | None = None
    correlations: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)  # table -> group -> column
    correlation_p_values: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    def check(self, where: str) -> None:
        if set(self.r) != set(self.groups):
            raise EatkitError(f"{where}: 'r' must have one value per group")


class RankingAnalysis(ProbeAnalysis):
    """``eatkit probe ranking``: roles are image groups; params below."""

    kind = "ranking"
    record_type = RankingRecord

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        super().check(test, options)
        params = options.params
        table = load_region_table(params["reference"])
        region_prompts(table.regions, params["prompt"], params["overrides"])
        for extra in params["tables"]:
            check_same_regions(table.regions, load_region_table(extra).frame, f"region table {extra}")
        sizes = {g: len(s.items) for g, s in test.sets().items() if s.items}
        wanted = params["group_size"]
        small = min(sizes, key=sizes.get) if sizes else None
        if small is not None and wanted is not None and sizes[small] < wanted:
            raise EatkitError(f"group '{small}' has {sizes[small]} images, fewer than the {wanted} that the "
                              "downsampling draws from every group")

    def observe(self, test: AssociationTest, model: Any, options: RunOptions) -> dict[str, Any]:
        if not {"image", "sentence"} <= set(getattr(model, "modalities", ())):
            raise EatkitError(f"model '{getattr(model, 'id', model)}' is not a vision-language model: the ranking "
                              f"probe needs {VL_FAMILIES}")
        params = options.params
        table = load_region_table(params["reference"])
        prompts = region_prompts(table.regions, params["prompt"], params["overrides"])
        groups = {g: model.embed(s) for g, s in test.sets().items()}
        text = model.embed(StimulusSet("region prompts", "sentence", tuple(prompts.values())))
        return {"groups": groups, "prompts": prompts, "text": text}

    def compute(self, test: AssociationTest, embedded: dict[str, Any], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        params = options.params
        prompts: dict[str, str] = embedded["prompts"]
        regions = list(prompts)
        groups = embedded["groups"]
        labels = np.concatenate([[g] * len(e.ids) for g, e in groups.items()])
        images = np.concatenate([e.vectors for e in groups.values()])
        sims = cosine_matrix(embedded["text"].vectors, images)
        shares = rank_shares(sims, labels, k=params["k"], repeats=params["repeats"], rng=seed,
                             group_size=params["group_size"], regions=regions)
        table = load_region_table(params["reference"])
        columns = {g: c for g, c in {**table.group_columns, **params["columns"]}.items() if g in shares.columns}
        comparison = compare_shares(shares, table.frame, columns)
        ranked = labels[np.argsort(-sims, axis=1, kind="stable")]
        k = shares.k
        extra = {str(t): correlate_regions(shares, load_region_table(t).frame) for t in params["tables"]}
        ref = table.frame.loc[regions]
        skews, divergences = max_skew(ranked, k), ndkl(ranked)  # per region (Geyik et al. 2019)
        record = RankingRecord(
            suite=suite, test=test.id, title=test.title, seed=seed,
            groups=list(shares.columns), group_counts=shares.group_counts,
            group_size=shares.group_size, k=k, repeats=shares.repeats,
            prompt=str(params["prompt"]), prompts=prompts, reference=table.id,
            reference_columns=comparison.columns,
            shares=shares.to_dict(),
            reference_shares={r: {g: float(ref.loc[r, c]) for g, c in comparison.columns.items()} for r in regions},
            r=comparison.r, r_p_values=comparison.r_p_values, r_squared=comparison.r_squared,
            r_squared_by_output=comparison.r_squared_by_output, r_squared_p_values=comparison.r_squared_p_values,
            max_skew=dict(zip(regions, map(float, skews))), ndkl=dict(zip(regions, map(float, divergences))),
            mean_max_skew=float(describe(skews).mean), mean_ndkl=float(describe(divergences).mean),
            correlations={t: c.r for t, c in extra.items()},
            correlation_p_values={t: c.p_values for t, c in extra.items()},
        )
        return [Outcome(record, {"similarities": sims, "shares": shares.values},
                        {"shares": shares, "comparison": comparison, "correlations": extra})]
