"""Run a probe (``eatkit probe <kind>``): a vision-language model on a labelled image set, per group.

>>> import eatkit.run.probes                                                          # doctest: +SKIP
>>> run = eatkit.run.probes.run_probe("ranking", "hf-clip:openai/clip-vit-base-patch32", "faces/", seed=0)  # doctest: +SKIP
>>> run.records[0].r_squared, run.save("results/ranking")                         # doctest: +SKIP

The probe's test has one role per group folder of ``images`` (``DIR/<group>/*``); its analysis
(:mod:`eatkit.analyses.ranking`, :mod:`~eatkit.analyses.rates`, :mod:`~eatkit.analyses.generation`)
observes what the model does with every image, then computes the statistics. The result is a
:class:`~eatkit.run.runner.RunResult` (records, arrays, manifest with every image's SHA-256) like a suite run's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from eatkit.analyses import get_analysis
from eatkit.analyses.base import RunOptions, options_by_test
from eatkit.analyses.probe import ProbeAnalysis
from eatkit.errors import EatkitError
from eatkit.io import file_sha256
from eatkit.kinds import get_kind, probe_kinds
from eatkit.run.folder import set_entry
from eatkit.run.manifest import build_manifest
from eatkit.run.runner import RunResult, resolve_run_seed
from eatkit.stats.degeneracy import collected
from eatkit.stimuli.image_groups import group_sets
from eatkit.stimuli.images import image_ids, resolve_image_set
from eatkit.stimuli.types import AssociationTest, Suite

CITATION = ("Wolfe, R. & Caliskan, A. (2022). American == White in Multimodal Language-and-Image AI. AIES '22. "
            "doi:10.1145/3514094.3534136")


def probe_suite(kind: str, images: str | Path | None, groups: Sequence[str] | None = None) -> Suite:
    """A one-test suite for a probe: one role per group folder of ``images``, the files resolved (no
    ``images``: a test without groups, e.g. generation from the text alone)."""
    probes = [spec.name for spec in probe_kinds().values()]
    if kind not in probes:
        raise EatkitError(f"unknown probe '{kind}' (probes: {', '.join(probes)})")
    if images is None and groups:
        raise EatkitError("groups choose group folders of images: give the images too")
    title = get_kind(kind).title
    sets = [] if images is None else [resolve_image_set(s, images)
                                      for s in group_sets(images, list(groups) if groups else None)]
    test = AssociationTest(id=kind, title=title, kind=kind, roles=tuple((s.name, s) for s in sets),
                           citation=CITATION)
    return Suite(id=f"probe-{kind}", title=title, tests=(test,), citation=CITATION,
                 source="no images" if images is None else f"images:{Path(images).expanduser()}")


def run_probe(kind: str, model: Any, images: str | Path | None, *, groups: Sequence[str] | None = None,
              seed: int | str | None = None, params: Mapping[str, Any] | None = None, confidence_level: float = 0.95,
              command: str | None = None, warnings: Sequence[str] = ()) -> RunResult:
    """Run the probe ``kind`` of model ``model`` (a built model or a registered name) on the group folders
    of ``images``; ``params`` are the probe's parameters (its spec in :mod:`eatkit.specs`). Generation from
    the prompt alone takes ``images=None`` and ``params={"text_only": True, ...}``. ``warnings``: settings outside their useful range (e.g.
    ``--num-beams 50``), recorded in every record and the manifest."""
    suite = probe_suite(kind, images, groups)
    (test,) = suite.tests
    analysis = get_analysis(kind)
    if not isinstance(analysis, ProbeAnalysis):
        raise AssertionError(f"analysis of '{kind}' is not a probe")
    run_seed = resolve_run_seed(seed)  # None: the default seed, as a run's
    options = options_by_test([test], RunOptions(seed=run_seed, n_bootstrap=0, confidence_level=confidence_level,
                                                 params=probe_params(kind, params)).validated())[test.id]
    analysis.check(test, options)
    if isinstance(model, str):
        from eatkit.registry import build_model

        model = build_model(model)
    with collected() as found:  # findings of the inputs (an image far smaller than the model's input)
        observed = analysis.observe(test, model, options)
        outcomes = analysis.compute(test, observed, options, suite=suite.id, seed=run_seed)
    warnings = [*warnings, *found]
    # what the observation settled beyond the options (e.g. the generator's resolved size) is recorded too
    outcomes = [dataclasses.replace(o, record=dataclasses.replace(o.record, warnings=[*o.record.warnings, *warnings]))
                for o in outcomes]
    statistics = {**options.manifest(), **observed.get("manifest", {}), "warnings": list(warnings)}
    manifest = build_manifest(suite, model, statistics, {test.id: _image_checksums(test)}, command)
    source = manifest.get("source")
    if images is not None and isinstance(source, dict) and not source.get("images"):  # what verify checks against
        source["images"] = str(Path(images).expanduser().resolve())
    return RunResult(suite, outcomes, manifest)


def probe_params(kind: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """A probe's parameters as given, a generation ``preset`` expanded into its settings (the parameters
    given beside it win; the preset's name stays, recorded in the manifest); a generation option given where
    it cannot apply (``region`` with ``text_only``, ``starts`` without) is an error.

    >>> probe_params("generation", {"preset": "wolfe2022", "steps": 3})["steps"], probe_params("vqa", None)
    (3, {})
    >>> "region" in probe_params("generation", {"preset": "wolfe2022", "text_only": True})
    False
    """
    given = dict(params or {})
    if kind != "generation":
        return given
    from eatkit.specs import GENERATION

    text_only = GENERATION.check(given).get("text_only")  # every given value checked by the spec first
    if text_only and given.get("region") is not None:
        raise EatkitError("region applies to image starts (a face region's brightness), not to text-only generation")
    if not text_only and given.get("starts") is not None:
        raise EatkitError("starts applies only to text-only generation (--text-only)")
    if given.get("preset") is not None:
        from eatkit.analyses.generation import preset

        settings = preset(given["preset"])
        if text_only:  # no face to measure: the preset's steps and size only
            settings.pop("region", None)
        given = {**settings, **given}
    return given


def _image_checksums(test: AssociationTest) -> dict[str, Any]:
    """Every image of every group with its SHA-256, and one SHA-256 per group (its fingerprint)."""
    return {group: set_entry(stimuli.name, "image", [[i, file_sha256(p)] for i, p in zip(image_ids(stimuli),
                                                                                        stimuli.items)])
            for group, stimuli in test.sets().items()}
