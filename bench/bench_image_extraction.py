"""Benchmark: EfficientNet-Lite0 extraction over the iEAT images, and cold vs warm cache runs.

1. Extraction throughput of the ``efficientnet_lite0`` encoder (cache disabled: decode, preprocess,
   forward) against the bare forward pass on pre-made input tensors with the same batches; the ratio
   should be at most 1.5.
2. End to end: ``eatkit run ieat --model efficientnet_lite0 --images DIR`` with an empty cache (cold)
   and again with the cache it filled (warm); the warm run must make no forward pass and be at least
   10 times faster.

Usage: ``python bench/bench_image_extraction.py [--images DIR] [--batch-size N]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from eatkit.encoders.image_models import efficientnet_lite
from eatkit.stimuli.images import resolve_image_set
from eatkit.stimuli.types import StimulusSet

DEFAULT_IMAGES = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ieat" / "images"


def image_sets(root: Path) -> list[StimulusSet]:
    """Every ``<test>/<category>`` folder of an iEAT-layout root, resolved to its files."""
    categories = sorted(p.relative_to(root).as_posix() for p in root.glob("*/*") if p.is_dir())
    return [resolve_image_set(StimulusSet(c, "image", category=c), root) for c in categories]


def extraction(root: Path, batch_size: int) -> None:
    sets = image_sets(root)
    n = sum(len(s.items) for s in sets)
    encoder = efficientnet_lite(0, cache=False, batch_size=batch_size)
    encoder.embed(StimulusSet("warm-up", "image", sets[0].items[:2], sets[0].category))  # builds the model

    start = time.perf_counter()
    for s in sets:
        encoder.embed(s)
    encoder_seconds = time.perf_counter() - start

    # the same batches, preprocessed beforehand (untimed), through the bare network
    batches = [np.stack([encoder.preprocessing.array(p) for p in s.items[i : i + batch_size]])
               for s in sets for i in range(0, len(s.items), batch_size)]
    start = time.perf_counter()
    for batch in batches:
        encoder._encode("image", list(batch))
    forward_seconds = time.perf_counter() - start

    print(f"images: {n} in {len(sets)} categories, batch size {batch_size}, {len(batches)} batches, "
          f"workers {encoder.workers}")
    print(f"encoder (decode + preprocess + forward, no cache): {encoder_seconds:7.2f} s  "
          f"{n / encoder_seconds:6.1f} images/s")
    print(f"bare forward pass on pre-made tensors:             {forward_seconds:7.2f} s  "
          f"{n / forward_seconds:6.1f} images/s")
    print(f"ratio encoder / forward time: {encoder_seconds / forward_seconds:.2f} (target <= 1.5)")


def end_to_end(root: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "EATKIT_CACHE_DIR": str(Path(tmp) / "cache"), "HF_HUB_OFFLINE": "1"}
        times, stats = [], []
        for label in ("cold", "warm"):
            out = Path(tmp) / label
            command = [sys.executable, "-m", "eatkit.cli", "run", "ieat", "--model", "efficientnet_lite0",
                       "--images", str(root), "--output", str(out), "--quiet"]
            start = time.perf_counter()
            subprocess.run(command, env=env, check=True)
            times.append(time.perf_counter() - start)
            stats.append(json.loads((out / "manifest.json").read_text())["source"]["cache"])
            print(f"{label} run (eatkit run ieat, {'empty' if label == 'cold' else 'full'} cache): "
                  f"{times[-1]:7.2f} s  cache {stats[-1]}")
    print(f"ratio cold / warm wall time: {times[0] / times[1]:.1f} (target >= 10); "
          f"warm forward batches: {stats[1]['batches']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=Path, default=DEFAULT_IMAGES, help="iEAT-layout image folder")
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    extraction(args.images, args.batch_size)
    end_to_end(args.images)


if __name__ == "__main__":
    main()
