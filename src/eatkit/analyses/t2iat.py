"""T2IAT (Wang et al., Findings of ACL 2023): tests of kind ``"t2iat"``.

A test has five word sets: the concepts X and Y (e.g. science and arts subjects), the attribute words A
and B (e.g. male and female words) and the neutral words N (e.g. "child", "person"), and a ``template``
with ``{attribute}`` and ``{concept}`` ("a photo of a {attribute} studying {concept}"). For every concept c
the analysis asks the source to embed three prompt sets (modality ``"prompt"``: a text-to-image source,
``diffusers:``, generates each prompt's images and embeds them, :mod:`eatkit.encoders.diffusion`): the
prompts of c with every neutral word, with every A word and with every B word. The statistics are
:func:`eatkit.stats.t2iat.t2iat` (effect size over concepts, permutation p over re-partitions of X ∪ Y,
bootstrap CI over concepts). The generated images are copied into the run folder (``generated/``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from eatkit.analyses.base import Analysis, Embed, Outcome, RunOptions
from eatkit.errors import EatkitError
from eatkit.io import read_input
from eatkit.records import Record, interval, interval_ends
from eatkit.sources.base import Embedded
from eatkit.stimuli.types import AssociationTest, StimulusSet

#: the sets of a concept's prompts: neutral, A-specific, B-specific
GROUPS: tuple[str, ...] = ("N", "A", "B")


@dataclass(frozen=True, kw_only=True)
class T2IATRecord(Record):
    """One T2IAT: d over concepts, the permutation p, the bootstrap CI, each concept's association."""

    kind = "t2iat"
    renamed = interval_ends("ci")

    template: str
    x_name: str
    y_name: str
    a_name: str
    b_name: str
    effect_size: float
    statistic: float
    p_value: float
    p_values: dict[str, float] = field(default_factory=dict)
    p_value_exact: bool
    p_value_mc_se: float = math.nan
    n_permutations: int
    n_partitions: int
    alternative: str
    ddof: int
    ci: list[float] | None = None  # [low, high]: bootstrap CI of d (results.csv: ci_low, ci_high)
    confidence_level: float = 0.95
    n_bootstrap: int = 0
    s_x: dict[str, float] = field(default_factory=dict)  # s(c) of every concept of X
    s_y: dict[str, float] = field(default_factory=dict)
    images_per_set: dict[str, int] = field(default_factory=dict)  # "<concept>/<N|A|B>" -> images
    images: dict[str, list[str]] = field(default_factory=dict)  # "<concept>/<N|A|B>" -> generated/<sha256>.png
    # --validity: {"leave_one_out": {concept: [d, p]}, "most_influential", "minimum_detectable_d", "power",
    # "alpha", "note"} (eatkit.stats.t2iat.t2iat_validity)
    validity: dict[str, Any] | None = None


def prompt_sets(test: AssociationTest, template: str) -> dict[str, StimulusSet]:
    """The prompt sets of a T2IAT test, by ``"<X|Y>/<concept>/<N|A|B>"``.

    >>> w = lambda *items: StimulusSet("s", "word", items)
    >>> t = AssociationTest("t", "T", "t2iat", (("X", w("math", "physics")), ("Y", w("art", "music")),
    ...     ("A", w("man",)), ("B", w("woman",)), ("N", w("person",))))
    >>> prompt_sets(t, "a photo of a {attribute} studying {concept}")["X/math/A"].items
    ('a photo of a man studying math',)
    """
    sets = test.sets()
    out = {}
    for role in ("X", "Y"):
        for concept in sets[role].items:
            for group in GROUPS:
                prompts = tuple(template.format(attribute=w, concept=concept) for w in sets[group].items)
                out[f"{role}/{concept}/{group}"] = StimulusSet(f"{test.id}:{concept}:{group}", "prompt", prompts)
    return out


class T2IATAnalysis(Analysis):
    kind = "t2iat"
    record_type = T2IATRecord
    takes_validity = True  # --validity: each concept left out, the minimum detectable d over concepts

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        template = options.params["template"]
        try:
            template.format(attribute="a", concept="c")
        except (KeyError, IndexError, ValueError):
            raise EatkitError(f"template must hold only {{attribute}} and {{concept}}, got {template!r}") from None
        if "{attribute}" not in template or "{concept}" not in template:
            raise EatkitError(f"template must hold {{attribute}} and {{concept}}, got {template!r}")
        for role, stimuli in test.sets().items():
            if stimuli.modality != "word" or not stimuli.items:
                raise EatkitError(f"set {role} of a T2IAT test must be a non-empty word set, got "
                                  f"{stimuli.modality} '{stimuli.name}'")
        shared = sorted(set(test.set("X").items) & set(test.set("Y").items))
        if shared:
            raise EatkitError(f"the concepts of X and Y must differ, both hold {', '.join(shared)}")
        for role in ("X", "Y"):
            if len(test.set(role).items) < 2:
                raise EatkitError(f"a T2IAT test needs at least 2 concepts in {role}, got {len(test.set(role).items)}")

    def stimulus_sets(self, test: AssociationTest, options: RunOptions) -> dict[str, StimulusSet]:
        return prompt_sets(test, options.params["template"])

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        from eatkit.stats.t2iat import t2iat, t2iat_validity

        sets = test.sets()
        by = {role: [[embedded[f"{role}/{c}/{g}"].vectors for c in sets[role].items] for g in GROUPS]
              for role in ("X", "Y")}
        result = t2iat(*by["X"], *by["Y"], alternative=options.alternative, permutations=options.permutations,
                       ddof=options.ddof, n_bootstrap=options.n_bootstrap, confidence_level=options.confidence_level,
                       rng=seed)
        r = result.test
        validity = None
        if options.validity:
            panel = t2iat_validity(result, sets["X"].items, sets["Y"].items, alpha=options.alpha, rng=seed)
            validity = {**asdict(panel), "leave_one_out": {c: list(v) for c, v in panel.leave_one_out.items()}}
        record = T2IATRecord(
            suite=suite, test=test.id, title=test.title, seed=seed, template=options.params["template"],
            x_name=sets["X"].name, y_name=sets["Y"].name, a_name=sets["A"].name, b_name=sets["B"].name,
            effect_size=r.effect_size, statistic=r.statistic, p_value=r.p_value, p_values=dict(r.p_values),
            p_value_exact=r.p_value_exact, p_value_mc_se=r.mc_standard_error, n_permutations=r.n_permutations,
            n_partitions=r.n_partitions, alternative=r.alternative, ddof=r.ddof,
            ci=interval(*result.ci) if result.ci else None,
            confidence_level=options.confidence_level, n_bootstrap=result.n_bootstrap,
            s_x=dict(zip(sets["X"].items, map(float, result.s_x))),
            s_y=dict(zip(sets["Y"].items, map(float, result.s_y))),
            images_per_set={key.split("/", 1)[1]: len(e.ids) for key, e in embedded.items()},
            images={key.split("/", 1)[1]: generated_names(e) for key, e in embedded.items()}, validity=validity)
        arrays = {"s_x": result.s_x, "s_y": result.s_y}
        return [Outcome(record, arrays, {"result": result, "files": generated_files(embedded.values())})]

    def files(self, outcomes: Sequence[Outcome]) -> dict[str, bytes]:
        """``generated/<sha256>.png``: every generated image the run's tests used."""
        return copied_images(outcomes)


def generated_names(embedded: Embedded) -> list[str]:
    """The run-folder names of a prompt set's generated images (``generated/<sha256>.png``)."""
    if not embedded.checksums:
        raise EatkitError("a T2IAT or depiction test needs a text-to-image source (diffusers:<model>) whose "
                          "prompt sets are generated images")
    return [f"generated/{sha}.png" for sha in embedded.checksums]


def generated_files(embedded: Sequence[Embedded]) -> dict[str, str]:
    """Run-folder name -> the generated file to copy there, of prompt sets' embeddings."""
    return {name: path for e in embedded if e.files for name, path in zip(generated_names(e), e.files)}


def copied_images(outcomes: Sequence[Outcome]) -> dict[str, bytes]:
    """The generated images of the outcomes (``result["files"]``), read for the run folder."""
    files: dict[str, str] = {}
    for o in outcomes:
        files.update(o.result["files"])
    return {name: read_input(path, "generated image") for name, path in sorted(files.items())}
