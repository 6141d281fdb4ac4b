"""Benchmark of text-to-image generation throughput (issue 39; run by hand, not a test).

    python bench/bench_generation.py [--model FOLDER_OR_HUB_ID] [--images 16] [--steps 4] [--size 32] [--device auto]

Compares, in one process and on the same pipeline object and settings, the images/s of eatkit's generator
(:class:`eatkit.encoders.diffusion.DiffusionGenerator`, cache off: one pipeline call per image with its own
seeded generator, PNG encoding included) with diffusers' own pipeline called the same way (one image per
call, ``torch.Generator(device).manual_seed(seed + i)``, PIL output; no PNG encoding). Without ``--model``
it builds the tiny random pipeline of the tests (``tests/tiny_t2i.py``) in a temporary folder. Each side is
the median of 3 rounds, after one warm-up image. The goal is eatkit >= 0.9x diffusers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", help="a diffusers pipeline folder or hub id (default: the tiny test pipeline)")
    parser.add_argument("--images", type=int, default=16)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--precision", default="fp32")
    args = parser.parse_args()

    import torch

    from eatkit.encoders.device import device_name
    from eatkit.encoders.diffusion import DiffusionGenerator

    model = args.model
    if model is None:
        from tiny_t2i import tiny_pipeline

        model = tiny_pipeline(Path(tempfile.mkdtemp(prefix="eatkit-bench-")) / "pipe")
    settings = {"images_per_prompt": args.images, "steps": args.steps, "size": args.size, "seed": 0}
    ours = DiffusionGenerator(model, settings=settings, device=args.device, precision=args.precision, cache=False)
    pipe = ours.pipeline()
    prompt = "a photo of a person studying science"

    def eatkit_round() -> float:
        start = time.perf_counter()
        ours.generate(prompt)
        return args.images / (time.perf_counter() - start)

    def diffusers_round() -> float:
        start = time.perf_counter()
        with torch.inference_mode():
            for i in range(args.images):
                generator = torch.Generator(device=pipe.device).manual_seed(i)
                pipe(prompt, num_inference_steps=args.steps, guidance_scale=7.5, height=args.size, width=args.size,
                     num_images_per_prompt=1, generator=generator, output_type="pil")
        return args.images / (time.perf_counter() - start)

    pipe(prompt, num_inference_steps=args.steps, height=args.size, width=args.size)  # warm-up
    rates: dict[str, list[float]] = {"eatkit": [], "diffusers": []}
    for _ in range(3):  # interleaved, so that a load change on the machine hits both sides
        rates["eatkit"].append(eatkit_round())
        rates["diffusers"].append(diffusers_round())
    median = {k: statistics.median(v) for k, v in rates.items()}
    print(json.dumps({"model": str(model), "device": device_name(torch, pipe.device), "settings": settings,
                      "precision": args.precision, "torch_threads": torch.get_num_threads(),
                      "images_per_s": median, "ratio": median["eatkit"] / median["diffusers"],
                      "rounds": rates}, indent=1))


if __name__ == "__main__":
    main()
