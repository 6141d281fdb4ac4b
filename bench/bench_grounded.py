"""Benchmark: joint (image, caption) encoding with ``hf-vilt:`` against the bare forward pass, on CPU.

Both sides do the same work per batch: decode the JPEG files (Pillow, RGB), tokenise the captions and
preprocess the images (the model's ViltImageProcessor), and run ``ViltModel`` once; eatkit adds locating
the files by name, checks, the contextual-token bookkeeping and taking the [CLS] state. The model is
ViLT-shaped (patch 32, images resized to a shorter side of 384) with random weights built from a config,
so that the benchmark runs offline. Each side runs ``--repeats`` times, alternating; the medians are
compared: the ratio should be at most 1.3.

Usage: ``python bench/bench_grounded.py [--pairs N] [--batch-size N] [--repeats N] [--layers N]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import transformers
from PIL import Image

from eatkit.registry import build_model
from eatkit.stimuli.captioned import CaptionedImages

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "this", "is", "a", "the", "lawyer", "teacher", "nurse",
         "doctor", "here", "there", ".", "john", "amy"]


def build(folder: Path, layers: int) -> None:
    """A ViLT-B/32-shaped model (hidden 384 to keep CPU time reasonable) with its processor and tokenizer."""
    torch.manual_seed(0)
    config = transformers.ViltConfig(vocab_size=len(WORDS), hidden_size=384, num_hidden_layers=layers,
                                     num_attention_heads=6, intermediate_size=1536, image_size=384, patch_size=32,
                                     max_position_embeddings=40, max_image_length=-1)
    transformers.ViltModel(config).save_pretrained(folder)
    transformers.ViltImageProcessor(size={"shortest_edge": 384}, size_divisor=32).save_pretrained(folder)
    transformers.BertTokenizerFast(vocab={w: i for i, w in enumerate(WORDS)}).save_pretrained(folder)


def images(folder: Path, n: int) -> list[str]:
    """``n`` 640 x 480 JPEG photographs-like images (smooth colour fields with noise)."""
    rng = np.random.default_rng(0)
    names = []
    for i in range(n):
        coarse = rng.integers(0, 256, size=(6, 8, 3), dtype=np.uint8)
        picture = np.asarray(Image.fromarray(coarse).resize((640, 480), Image.BICUBIC), dtype=np.int16)
        noisy = np.clip(picture + rng.integers(-12, 13, size=picture.shape), 0, 255).astype(np.uint8)
        name = f"img_{i}.jpg"
        Image.fromarray(noisy).save(folder / name, quality=90)
        names.append(name)
    return names


def load(model: Path) -> tuple[object, object]:
    """The processor and model, loaded once (untimed, as the encoder's model is loaded by the warm-up)."""
    processor = transformers.ViltProcessor(transformers.ViltImageProcessor.from_pretrained(model),
                                           transformers.BertTokenizerFast.from_pretrained(model))
    return processor, transformers.ViltModel.from_pretrained(model).eval()


def bare(processor: object, net: object, paths: list[Path], captions: list[str], batch_size: int) -> np.ndarray:
    """The forward pass users would write: decode, process, ViltModel, [CLS] state."""
    out = []
    with torch.inference_mode():
        for i in range(0, len(paths), batch_size):
            pictures = [Image.open(p).convert("RGB") for p in paths[i : i + batch_size]]
            inputs = processor(images=pictures, text=captions[i : i + batch_size], padding=True, return_tensors="pt")
            out.append(net(**inputs).last_hidden_state[:, 0].numpy())
    return np.concatenate(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--layers", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "model").mkdir()
        (root / "images" / "sub").mkdir(parents=True)
        build(root / "model", args.layers)
        names = images(root / "images" / "sub", args.pairs)
        captions = [f"This is {'a lawyer' if i % 2 else 'the teacher'} here." for i in range(args.pairs)]
        stimuli = CaptionedImages("bench", "image-caption", items=tuple(captions), images=tuple(names),
                                  contextual_words=("lawyer", "teacher"))
        encoder = build_model(f"hf-vilt:{root / 'model'}", images=root / "images", cache=False,
                              batch_size=args.batch_size)
        paths = [root / "images" / "sub" / n for n in names]
        encoder.embed(CaptionedImages("warm-up", "image-caption", items=("a",), images=(names[0],)))
        processor, net = load(root / "model")
        bare(processor, net, paths[:1], captions[:1], 1)
        eatkit_times, bare_times = [], []
        for _ in range(args.repeats):
            start = time.perf_counter()
            ours = encoder.embed(stimuli).vectors
            eatkit_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            theirs = bare(processor, net, paths, captions, args.batch_size)
            bare_times.append(time.perf_counter() - start)
        te, tb = statistics.median(eatkit_times), statistics.median(bare_times)
        print(f"pairs: {args.pairs}, batch size {args.batch_size}, ViLT hidden 384 x {args.layers} layers, "
              f"{torch.get_num_threads()} threads, {args.repeats} repeats (medians)")
        print(f"eatkit hf-vilt (find, decode, process, forward, [CLS]; no cache): {te:7.2f} s  "
              f"{args.pairs / te:6.1f} pairs/s")
        print(f"bare ViltProcessor + ViltModel (decode, process, forward):      {tb:7.2f} s  "
              f"{args.pairs / tb:6.1f} pairs/s")
        print(f"max |eatkit - bare| over the [CLS] states: {np.abs(ours - theirs).max():.2e}")
        print(f"ratio eatkit / bare time: {te / tb:.2f} (target <= 1.3)")


if __name__ == "__main__":
    main()
