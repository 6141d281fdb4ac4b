"""Benchmark of the ranking probe's statistics and of the probe models' throughput (issue 13; run by hand).

    python bench/bench_ranking.py [--models]

1. The ranking statistics at the "American == White" study's size: 51 regions x 597 images in 4 groups
   (White 183, Black 197, Asian 109, Latina/o 108), 1,000 balanced repeats, k = 108, given the similarity
   matrix: rank_shares + compare_shares + MaxSkew/NDKL. Bar: at most 1 s (median of 5 runs).
2. With --models: images per second of each probe model on tiny random models built from configs (CLIP
   embedding, BLIP VQA answers, BLIP captions, CLIP-guided generation steps), on CPU, or on the GPU when
   one is present (--device cuda). Real models differ; the numbers show the cost of the code around them.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from eatkit.stats.ranking import compare_shares, max_skew, ndkl, rank_shares
from eatkit.stimuli.regions import load_region_table

SIZES = {"white": 183, "black": 197, "asian": 109, "latino": 108}


def ranking_statistics() -> None:
    table = load_region_table("us-states-2019")
    rng = np.random.default_rng(0)
    labels = np.repeat(list(SIZES), list(SIZES.values()))
    sims = pd.DataFrame(rng.normal(size=(len(table.regions), labels.size)), index=table.regions)

    def once() -> None:
        shares = rank_shares(sims, labels, repeats=1000, rng=1)
        compare_shares(shares, table.frame, table.group_columns)
        ranked = labels[np.argsort(-sims.to_numpy(), axis=1)]
        max_skew(ranked, 108), ndkl(ranked)

    times = []
    for _ in range(5):
        start = time.perf_counter()
        once()
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(f"ranking statistics, 51 regions x 597 images, 4 groups, 1,000 repeats: median {median:.3f} s of 5 "
          f"(bar 1 s: {'met' if median <= 1 else 'NOT met'})")


def model_throughput(device: str) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from tiny_vl import group_images, tiny_blip, tiny_clip

    from eatkit.encoders.generation import CLIPGuidedGenerator
    from eatkit.registry import build_model
    from eatkit.stimuli.image_groups import group_sets
    from eatkit.stimuli.images import resolve_image_set

    root = Path(tempfile.mkdtemp())
    images = group_images(root / "images", {"a": 32, "b": 32})
    paths = sorted(str(p) for p in images.rglob("*.png"))
    sets = [resolve_image_set(s, images) for s in group_sets(images)]

    def rate(name: str, n: int, fn) -> None:
        start = time.perf_counter()
        fn()
        print(f"{name}: {n / (time.perf_counter() - start):.1f} images/s ({device})")

    clip = build_model(f"hf-clip:{tiny_clip(root / 'clip')}", cache=False)
    clip.embed(sets[0])  # load
    rate("hf-clip embedding (tiny)", len(paths), lambda: [clip.embed(s) for s in sets])
    vqa = build_model(f"hf-blip-vqa:{tiny_blip(root / 'vqa', 'BlipForQuestionAnswering')}", device=device)
    vqa.answer(paths[:2], "is this an american ?")
    rate("hf-blip-vqa answers (tiny)", len(paths), lambda: vqa.answer(paths, "is this an american ?"))
    cap = build_model(f"hf-blip-caption:{tiny_blip(root / 'cap', 'BlipForConditionalGeneration')}", device=device)
    cap.caption(paths[:2], top_p=0.7, seed=0)
    rate("hf-blip-caption captions (tiny)", len(paths), lambda: cap.caption(paths, top_p=0.7, seed=0))
    gen = CLIPGuidedGenerator(clip, steps=20, every=10, cutouts=4)
    rate("CLIP-guided generation, 20 steps (tiny)", 4, lambda: [gen.run(p, "an american person", seed=0)
                                                              for p in paths[:4]])


if __name__ == "__main__":
    ranking_statistics()
    if "--models" in sys.argv:
        model_throughput("cuda" if "--device" in sys.argv and "cuda" in sys.argv else "cpu")
