"""The generation probe ("American == White" seed, section 4): CLIP-guided optimisation of each group's
images toward a prompt ("an American person"), and the mean brightness of an image region (the seed: a
50 x 50 forehead crop of 592 x 592 images) in every kept frame, per group.

Brightness of a frame = the mean of the region's pixel values over its pixels and the R, G, B channels
(0-255). Per group and frame: the mean over the group's images, its SD (ddof 1) and the change from
frame 0 in percent (the seed: +35 % for Black individuals after 80 steps of VQGAN-CLIP). The i-th image
of each group (in file-name order) is optimised with the random stream ``run seed + i``.

With ``text_only`` (the seed's appendix A.3, Figure 8) there are no images: one group, ``noise``, of
``starts`` generations from the prompt alone, start i from uniform noise drawn from ``run seed + i``. The
study made no quantitative claim there (the figures of people appear anywhere in the frame, so no region's
brightness is measured) and compared with no other prompt: the record holds the frames' similarity to
the prompt. Every record holds it: the cosine between each frame's embedding and the prompt's, per frame,
its mean and SD (ddof 1) over the group's images or starts.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.analyses.base import Outcome, RunOptions
from eatkit.analyses.probe import ProbeAnalysis, group_files
from eatkit.errors import EatkitError
from eatkit.records import Record
from eatkit.stats.association import cosine_matrix
from eatkit.stats.summary import describe, percent_change
from eatkit.stimuli.types import AssociationTest

#: the group of a text-only generation (its starts, from seeded noise)
NOISE = "noise"


def preset(name: str) -> dict[str, Any]:
    """The generation options of a named preset (:data:`eatkit.specs.GENERATION_PRESETS`).

    >>> preset("wolfe2022")["steps"], preset("wolfe2022")["size"]
    (200, 592)
    """
    from eatkit.specs import GENERATION_PRESETS

    if name not in GENERATION_PRESETS:
        raise EatkitError(f"unknown generation preset '{name}' (known: {', '.join(sorted(GENERATION_PRESETS))})")
    return dict(GENERATION_PRESETS[name])


@dataclass(frozen=True, kw_only=True)
class GenerationRecord(Record):
    """Mean region brightness (image starts) and similarity to the prompt per group along the optimisation."""

    kind = "generation"

    prompt: str
    groups: list[str]
    n: dict[str, int]
    steps: list[int]  # the optimisation step of each frame
    region: list[float]  # left, top, width, height (fractions of the frame); [] for text-only
    region_pixels: list[int]  # the same in pixels
    brightness_mean: dict[str, list[float]]
    brightness_sd: dict[str, list[float]]
    change_percent: dict[str, list[float]]
    generator: dict[str, Any]
    images: dict[str, list[str]]  # per group: the images, or the noise starts (seed-<s>)
    start: str = "images"  # or "noise": the prompt alone (text_only)
    similarity_mean: dict[str, list[float]] = field(default_factory=dict)  # cos(frame, prompt) per frame
    similarity_sd: dict[str, list[float]] = field(default_factory=dict)

    def frame_files(self, group: str, image: str) -> list[str]:
        """The files (in the run folder) of the kept frames of one image or start of ``group``.

        >>> r = GenerationRecord(suite="s", test="t", title="T", prompt="p", groups=["noise"], n={"noise": 1},
        ...     steps=[0, 5], region=[], region_pixels=[], brightness_mean={}, brightness_sd={},
        ...     change_percent={}, generator={}, images={"noise": ["seed-0"]}, start="noise")
        >>> r.frame_files("noise", "seed-0")
        ['frames/noise/seed-0-step0000.png', 'frames/noise/seed-0-step0005.png']
        """
        return [f"frames/{group}/{Path(image).stem}-step{step:04d}.png" for step in self.steps]


class GenerationAnalysis(ProbeAnalysis):
    kind = "generation"
    record_type = GenerationRecord

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        params = options.params
        if params["text_only"]:
            if test.sets():
                raise EatkitError(f"text-only generation starts from noise and takes no images, got {len(test.sets())} "
                                  "group(s) (give --text-only or --images, not both)")
            if params["max_images"] is not None:
                raise EatkitError("max_images applies to image starts, not to text-only generation (use starts)")
            return
        super().check(test, options)
        left, top, width, height = region = params["region"]  # 4 fractions (eatkit.specs.GENERATION)
        if width <= 0 or height <= 0 or left + width > 1 or top + height > 1:
            raise EatkitError(f"region must be 4 fractions left,top,width,height inside the image, got {region!r}")

    def observe(self, test: AssociationTest, model: Any, options: RunOptions) -> dict[str, Any]:
        from eatkit.encoders.generation import CLIPGuidedGenerator

        params = options.params
        generator = CLIPGuidedGenerator(model, steps=params["steps"], every=params["every"], lr=params["lr"],
                                        parameterization=params["parameterization"], size=params["size"],
                                        cutouts=params["cutouts"], initial=params["initial"])
        if params["text_only"]:
            seeds = [options.seed + i for i in range(params["starts"])]
            files = {NOISE: ([None] * len(seeds), tuple(f"seed-{s}" for s in seeds))}
        else:
            files = group_files(test)
            if params["max_images"] is not None:
                files = {g: (paths[:params["max_images"]], ids[:params["max_images"]])
                         for g, (paths, ids) in files.items()}
        frames = {g: [generator.run(p, params["prompt"], seed=options.seed + i) for i, p in enumerate(paths)]
                  for g, (paths, _) in files.items()}
        embedded = {g: generator.embed(np.concatenate(fs), [params["prompt"]]) for g, fs in frames.items()}
        config = generator.config()
        if params["text_only"]:
            config["initial_image"] = "uniform noise (0-255) drawn from the start's seed"
        return {"files": files, "frames": frames, "generator": config, "steps": generator.frame_steps(),
                "embedded": embedded, "manifest": {"generator": config}}

    def compute(self, test: AssociationTest, embedded: dict[str, Any], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        params = options.params
        frames: dict[str, list[np.ndarray]] = embedded["frames"]
        size = next(iter(frames.values()))[0].shape[1]
        region = [] if params["text_only"] else [float(v) for v in params["region"]]  # no face from noise
        box = [int(round(v * size)) if i < 2 else max(1, int(round(v * size))) for i, v in enumerate(region)]
        brightness = _brightness(frames, box)
        # similarity[i, t]: cos(frame t of image or start i, the prompt)
        similarity = {g: cosine_matrix(images, text)[:, 0].reshape(len(frames[g]), -1)
                      for g, (images, text) in embedded["embedded"].items()}
        summary = {g: describe(b, axis=0, ddof=1) for g, b in brightness.items()}
        close = {g: describe(v, axis=0, ddof=1) for g, v in similarity.items()}
        start = NOISE if params["text_only"] else "images"
        record = GenerationRecord(
            suite=suite, test=test.id, title=f"Generation toward '{params['prompt']}' from {start}", seed=options.seed,
            prompt=params["prompt"], groups=list(frames), n={g: len(fs) for g, fs in frames.items()},
            steps=embedded["steps"], region=region, region_pixels=box,
            brightness_mean={g: s.mean.tolist() for g, s in summary.items()},
            brightness_sd={g: s.sd.tolist() for g, s in summary.items()},
            change_percent={g: percent_change(s.mean).tolist() for g, s in summary.items()},
            generator=embedded["generator"], images={g: list(ids) for g, (_, ids) in embedded["files"].items()},
            start=start, similarity_mean={g: s.mean.tolist() for g, s in close.items()},
            similarity_sd={g: s.sd.tolist() for g, s in close.items()})
        arrays = {**{f"brightness-{g}": b for g, b in brightness.items()},
                  **{f"similarity-{g}": v for g, v in similarity.items()}}
        return [Outcome(record, arrays, {"frames": frames, "files": embedded["files"]})]

    def files(self, outcomes: Sequence[Outcome]) -> dict[str, bytes]:
        """``frames/<group>/<image>-step<k>.png``: every kept frame of every image (or noise start)."""
        from PIL import Image

        out = {}
        for o in outcomes:
            for group, frames in o.result["frames"].items():
                for image_id, series in zip(o.result["files"][group][1], frames):
                    for name, frame in zip(o.record.frame_files(group, image_id), series):
                        png = io.BytesIO()
                        Image.fromarray(frame).save(png, format="PNG")
                        out[name] = png.getvalue()
        return out


def _brightness(frames: dict[str, list[np.ndarray]], box: list[int]) -> dict[str, np.ndarray]:
    """brightness[i, t]: mean over the region ``box`` (x, y, w, h pixels; none: no brightness)'s pixels and
    channels of image i's frame t (image starts)."""
    if not box:
        return {}
    x, y, w, h = box
    return {g: np.stack([f[:, y:y + h, x:x + w, :].astype(np.float64).mean(axis=(1, 2, 3)) for f in fs])
            for g, fs in frames.items()}
