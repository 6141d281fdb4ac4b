"""Text-to-image models as sources, and their generated images compared between two models.

:func:`text_to_image` builds ``diffusers:<hub id or folder>`` (:class:`eatkit.encoders.diffusion.TextToImage`
with its ``embedder`` built from the registry); :func:`compare_depiction_runs` compares the depiction tests
(who gets generated) of two run folders, per test, prompt group and attribute, by a permutation test
(:mod:`eatkit.stats.depiction`).

>>> compare_depiction_runs("run-model-a", "run-model-b", seed=0)  # doctest: +SKIP
[{'test': 'occupations', 'group': 'Doctor', 'attribute': 'gender', 'difference': 0.25, 'p_value': 0.03, ...}]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eatkit.errors import EatkitError
from eatkit.flags import option_name
from eatkit.io import ensure_installed
from eatkit.sources.base import EmbeddingSource


#: what a text-to-image run imports (pyproject's extra t2i: the pipeline and the embedder's libraries)
T2I_MODULES = ("torch", "diffusers", "transformers", "PIL")


def text_to_image(name: str, *, embedder: str | None = None, generation: Any = None, revision: str | None = None,
                  device: str = "auto", precision: str = "fp32", cache: bool = True, batch_size: int | None = None,
                  workers: int | None = None) -> EmbeddingSource:
    """The registry's factory of ``diffusers:<name>``: the generator (``generation`` settings, ``revision``,
    ``device``, ``precision``, ``cache``) and its image model ``embedder`` (a registered model name, built
    with ``batch_size``, ``workers`` and ``cache``).

    >>> text_to_image("/no/such/pipeline", embedder="glove-6b-50d")
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: text-to-image model folder not found: /no/such/pipeline
    """
    from eatkit.encoders.diffusion import TextToImage
    from eatkit.registry import build_model, get_model

    source = TextToImage(name, generation=generation, revision=revision, device=device, precision=precision,
                         cache=cache)  # the model and settings checked before the embedder is built
    for module in T2I_MODULES:  # the extra of a text-to-image run is t2i (its embedder's libraries included)
        ensure_installed(module, "text-to-image generation", "t2i")
    if embedder is not None:
        options = {"batch_size": batch_size, "workers": workers, "cache": False if not cache else None}
        options = {k: v for k, v in options.items() if v is not None}
        spec = get_model(embedder)
        if "image" not in spec.modalities:
            raise EatkitError(f"the embedder '{embedder}' does not embed images (it embeds "
                              f"{', '.join(spec.modalities)}): give an image model, e.g. hf-clip:<name>")
        spec.refuse_options(options, option_name, who=f"the embedder '{embedder}'")
        source.embedder = build_model(embedder, **options)
    elif batch_size is not None or workers is not None:
        raise EatkitError("batch_size and workers apply to the embedder of a text-to-image model")
    return source


def compare_depiction_runs(first: str | Path, second: str | Path, *, measure: str = "mad", permutations: int = 10_000,
                 seed: int | None = None) -> list[dict[str, Any]]:
    """Two models' runs (run folders) of the same depiction tests compared, per test, group and attribute:
    measure(first) - measure(second) and its two-sided permutation p (:func:`eatkit.stats.depiction.compare_depictions`),
    each comparison with its own seed from ``seed`` and its test, group and attribute
    (:func:`eatkit.stats.derived_seed`)."""
    from eatkit.run.folder import read_run
    from eatkit.stats import derived_seed
    from eatkit.stats.depiction import compare_depictions

    runs = [read_run(first)[0], read_run(second)[0]]
    records = [{r.key(): r for r in run if r.kind == "depiction"} for run in runs]
    common = [k for k in records[0] if k in records[1]]
    if not common:
        raise EatkitError(f"{first} and {second} have no depiction record in common")
    out = []
    for key in common:
        a, b = records[0][key], records[1][key]
        if a.classes != b.classes:
            raise EatkitError(f"{a.test}/{a.group}/{a.attribute}: the two runs' classes differ")
        index = {c: j for j, c in enumerate(a.classes)}
        reference = [a.reference[c] for c in a.classes]
        r = compare_depictions([index[c] for c in a.labels], [index[c] for c in b.labels], len(a.classes),
                               measure=measure, reference=reference, permutations=permutations,
                               rng=None if seed is None else derived_seed(seed, f"{a.test}/{a.group}/{a.attribute}"))
        out.append({"test": a.test, "group": a.group, "attribute": a.attribute, "measure": measure,
                    "first": a.mad if measure == "mad" else a.kl, "second": b.mad if measure == "mad" else b.kl,
                    "difference": r.difference, "p_value": r.p_value, "n_permutations": r.n_permutations,
                    "seed": r.seed})
    return out
