"""Benchmark of fine-tuning throughput (issue 14; run by hand, not a test).

    python bench/bench_finetune.py [--model efficientnet_lite0] [--images 48] [--batch-size 16]

Writes a synthetic COCO-format data set (random 320 x 256 JPEGs, two labels) to a temporary folder and
compares, in one run, the training images/s of ``eatkit.encoders.finetune.finetune`` (decoding,
preprocessing, forward, BCE loss, backward, SGD step; validation excluded) with the bare
forward + backward + step of the same network on the same batches already in memory. The ratio is the
cost of eatkit's data pipeline. Each side is the median of 3 epochs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from tiny_coco import CATEGORIES  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="efficientnet_lite0")
    parser.add_argument("--images", type=int, default=48)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()

    import torch
    from PIL import Image

    from eatkit.encoders.finetune import classifier, finetune

    root = Path(tempfile.mkdtemp())
    (root / "train").mkdir()
    rng = np.random.default_rng(0)
    images, anns = [], []
    for i in range(args.images):
        Image.fromarray(rng.integers(0, 255, size=(256, 320, 3)).astype(np.uint8)).save(root / "train" / f"{i}.jpg")
        images.append({"id": i, "file_name": f"{i}.jpg"})
        anns += [{"id": len(anns) + 1, "image_id": i, "category_id": c} for c in (1, 3) if (i + c) % 2]
    (root / "inst.json").write_text(json.dumps({"images": images, "annotations": anns, "categories": CATEGORIES}))

    result = finetune(args.model, root / "inst.json", root / "train", root / "ft.safetensors", epochs=3,
                      batch_size=args.batch_size, val_fraction=0.25, device=args.device, categories=["person", "car"])
    pipeline = statistics.median(h.train_images_per_s for h in result.history)
    n_train = result.options["train_images"]

    dev = torch.device(result.device)
    net, prep, _, _ = classifier(args.model, 2)
    net = net.to(dev).train()
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    x_all = torch.from_numpy(rng.normal(size=(n_train, 3, prep.size, prep.size)).astype(np.float32))
    y_all = torch.from_numpy(rng.integers(0, 2, size=(n_train, 2)).astype(np.float32))
    rates = []
    for _ in range(3):
        start = time.perf_counter()
        for b in range(0, n_train, args.batch_size):
            x, t = x_all[b:b + args.batch_size].to(dev), y_all[b:b + args.batch_size].to(dev)
            optimizer.zero_grad(set_to_none=True)
            loss_fn(net(x), t).backward()
            optimizer.step()
        if dev.type == "cuda":
            torch.cuda.synchronize()
        rates.append(n_train / (time.perf_counter() - start))
    bare = statistics.median(rates)
    print(f"{args.model} on {result.device}, {n_train} training images of 320x256 -> {prep.size}x{prep.size}, "
          f"batch {args.batch_size}, torch threads {torch.get_num_threads()}")
    print(f"eatkit finetune (decode + preprocess + train step): {pipeline:.1f} images/s (median of 3 epochs)")
    print(f"bare forward + backward + SGD step on in-memory tensors: {bare:.1f} images/s (median of 3)")
    print(f"ratio finetune / bare: {pipeline / bare:.2f}")


if __name__ == "__main__":
    main()
