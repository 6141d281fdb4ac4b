"""The generation probe ("American == White" seed, section 4): CLIP-guided optimisation of each group's
images toward a prompt ("an American person"), and the mean brightness of an image region (the seed: a
50 x 50 forehead crop of 592 x 592 images) in every kept frame, per group.

Brightness of a frame = the mean of the region's pixel values over its pixels and the R, G, B channels
(0-255). Per group and frame: the mean over the group's images, its SD (ddof 1) and the change from
frame 0 in percent (the seed: +35 % for Black individuals after 80 steps of VQGAN-CLIP). The i-th image
of each group (in file-name order) is optimised with the random stream ``run seed + i``.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.analyses.base import Outcome, RunOptions
from eatkit.analyses.probe import ProbeAnalysis, group_files
from eatkit.errors import EatkitError
from eatkit.records import Record
from eatkit.stats.summary import describe, percent_change
from eatkit.stimuli.types import AssociationTest


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
    """Mean region brightness per group along the optimisation."""

    kind = "generation"

    prompt: str
    groups: list[str]
    n: dict[str, int]
    steps: list[int]  # the optimisation step of each frame
    region: list[float]  # left, top, width, height (fractions of the frame)
    region_pixels: list[int]  # the same in pixels
    brightness_mean: dict[str, list[float]]
    brightness_sd: dict[str, list[float]]
    change_percent: dict[str, list[float]]
    generator: dict[str, Any]
    images: dict[str, list[str]]


class GenerationAnalysis(ProbeAnalysis):
    kind = "generation"
    record_type = GenerationRecord

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        super().check(test, options)
        left, top, width, height = region = options.params["region"]  # 4 fractions (eatkit.specs.GENERATION)
        if width <= 0 or height <= 0 or left + width > 1 or top + height > 1:
            raise EatkitError(f"region must be 4 fractions left,top,width,height inside the image, got {region!r}")

    def observe(self, test: AssociationTest, model: Any, options: RunOptions) -> dict[str, Any]:
        from eatkit.encoders.generation import CLIPGuidedGenerator

        params = options.params
        generator = CLIPGuidedGenerator(model, steps=params["steps"], every=params["every"], lr=params["lr"],
                                        parameterization=params["parameterization"], size=params["size"],
                                        cutouts=params["cutouts"])
        files = group_files(test)
        if params["max_images"] is not None:
            files = {g: (paths[:params["max_images"]], ids[:params["max_images"]]) for g, (paths, ids) in files.items()}
        frames = {g: [generator.run(p, params["prompt"], seed=options.seed + i) for i, p in enumerate(paths)]
                  for g, (paths, _) in files.items()}
        return {"files": files, "frames": frames, "generator": generator.config(), "steps": generator.frame_steps()}

    def compute(self, test: AssociationTest, embedded: dict[str, Any], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        params = options.params
        frames: dict[str, list[np.ndarray]] = embedded["frames"]
        size = next(iter(frames.values()))[0].shape[1]
        left, top, width, height = params["region"]
        box = [int(round(left * size)), int(round(top * size)), max(1, int(round(width * size))),
               max(1, int(round(height * size)))]
        x, y, w, h = box
        # brightness[i, t]: mean over the region's pixels and channels of image i's frame t
        brightness = {g: np.stack([f[:, y:y + h, x:x + w, :].astype(np.float64).mean(axis=(1, 2, 3)) for f in fs])
                      for g, fs in frames.items()}
        summary = {g: describe(b, axis=0, ddof=1) for g, b in brightness.items()}
        record = GenerationRecord(
            suite=suite, test=test.id, title=f"Generation toward '{params['prompt']}'", seed=options.seed,
            prompt=params["prompt"], groups=list(frames), n={g: len(fs) for g, fs in frames.items()},
            steps=embedded["steps"], region=[float(v) for v in params["region"]], region_pixels=box,
            brightness_mean={g: s.mean.tolist() for g, s in summary.items()},
            brightness_sd={g: s.sd.tolist() for g, s in summary.items()},
            change_percent={g: percent_change(s.mean).tolist() for g, s in summary.items()},
            generator=embedded["generator"], images={g: list(ids) for g, (_, ids) in embedded["files"].items()})
        return [Outcome(record, {f"brightness-{g}": b for g, b in brightness.items()},
                        {"frames": frames, "files": embedded["files"]})]

    def files(self, outcomes: Sequence[Outcome]) -> dict[str, bytes]:
        """``frames/<group>/<image>-step<k>.png``: every kept frame of every image."""
        from PIL import Image

        out = {}
        for o in outcomes:
            for group, frames in o.result["frames"].items():
                for image_id, series in zip(o.result["files"][group][1], frames):
                    for step, frame in zip(o.record.steps, series):
                        png = io.BytesIO()
                        Image.fromarray(frame).save(png, format="PNG")
                        out[f"frames/{group}/{Path(image_id).stem}-step{step:04d}.png"] = png.getvalue()
        return out
