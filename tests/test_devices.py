"""Devices, precision and decoding workers of neural encoders, testable without a GPU; and the same bits from
cold, warm and partly cached runs (issue 10, finding 2)."""

from __future__ import annotations

import json
import os
import random
import shutil

import numpy as np
import pytest

from conftest import lazy_module, shared_path
from eatkit.encoders import device as device_module
from eatkit.encoders.cache import EmbeddingCache
from eatkit.encoders.device import check_device, check_precision, device_kind, torch_device
from eatkit.encoders.image_models import ClassifierFeatures
from eatkit.encoders.images import Preprocessing
from eatkit.errors import EatkitError
from eatkit.stimuli.types import StimulusSet

torch = lazy_module("torch")


class TinyConv(ClassifierFeatures):
    """A real ClassifierFeatures path (device placement, autocast, tensors) on a tiny seeded conv net."""

    def __init__(self, **options):
        prep = Preprocessing(size=16, crop="stretch", interpolation="bilinear", mean=(0.5,) * 3, std=(0.5,) * 3)
        super().__init__(id="tiny-conv", model="tiny-conv", weights="seed 0", preprocessing=prep, **options)

    def _build(self):
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Conv2d(8, 8, 3),
                                  torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
        return self._place(net)


@pytest.fixture
def images(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(0)
    folder = tmp_path / "imgs" / "c"
    folder.mkdir(parents=True)
    for i in range(7):
        Image.fromarray(rng.integers(0, 256, (20 + i, 24, 3), dtype=np.uint8)).save(folder / f"{i}.png")
    return tmp_path / "imgs"


SET = StimulusSet("C", "image", category="c")


def test_device_and_precision_spelling():
    for good in ("auto", "cpu", "cuda", "cuda:3", "mps"):
        assert check_device(good) == good
    for bad in ("gpu", "cuda:", "cuda:x", "CPU", 0):
        with pytest.raises(EatkitError, match=r"^unknown device '.*' \(known: auto, cpu, cuda, cuda:N, mps\)$"):
            check_device(bad)
    with pytest.raises(EatkitError, match=r"^unknown precision 'fp8' \(known: fp32, bf16, fp16\)$"):
        check_precision("fp8")
    with pytest.raises(EatkitError, match=r"^unknown precision 'half'"):
        TinyConv(precision="half")


@pytest.mark.skipif("torch.cuda.is_available()", reason="a GPU is present")
def test_cuda_without_a_gpu_is_one_line(images):
    with pytest.raises(EatkitError, match=r"^device 'cuda' was requested but no CUDA GPU is visible: "
                                          r"use --device cpu or auto$"):
        TinyConv(device="cuda")
    with pytest.raises(EatkitError, match=r"^device 'cuda:1' was requested but no CUDA GPU is visible"):
        torch_device(torch, "cuda:1")
    assert device_kind("auto") == "cpu" and TinyConv().cache_config()["device"] == "cpu"


def test_cli_device_cuda_without_a_gpu_is_one_line(capsys, tmp_path):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    from eatkit.cli import main

    code = main(["run", "ieat", "--model", "efficientnet_lite0", "--device", "cuda", "-o", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "no CUDA GPU is visible" in err


def test_auto_probe_reads_the_driver_and_cuda_visible_devices(tmp_path, monkeypatch):
    gpus = tmp_path / "gpus"
    (gpus / "0000:01:00.0").mkdir(parents=True)
    (gpus / "0000:02:00.0").mkdir()
    monkeypatch.setattr(device_module, "_NVIDIA_GPUS", gpus)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert device_module._visible_nvidia_gpus() == 2
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert device_module._visible_nvidia_gpus() == 1
    for hidden in ("", "-1"):
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", hidden)
        assert device_module._visible_nvidia_gpus() == 0
    monkeypatch.setattr(device_module, "_NVIDIA_GPUS", tmp_path / "absent")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert device_module._visible_nvidia_gpus() == 0


def test_a_gpu_run_has_other_cache_keys_and_records_its_device(monkeypatch, images):
    """The GPU path's bookkeeping on the CPU: torch is told a GPU exists; the key and manifest follow."""
    cpu = TinyConv(images=images, device="cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device: "Fake GPU 80GB")
    gpu = TinyConv(images=images)
    assert (cpu.cache_config()["device"], gpu.cache_config()["device"]) == ("cpu", "cuda")
    # defaults sized for the device: a GPU waits for decoding, so it gets the cores and bigger batches
    cores = len(os.sched_getaffinity(0))
    assert (cpu.batch_size, cpu.workers) == (32, 2)
    assert (gpu.batch_size, gpu.workers) == (256, max(2, min(32, cores - 1)))
    given = TinyConv(images=images, batch_size=8, workers=0)
    assert (given.batch_size, given.workers) == (8, 0) and given.manifest()["batch_size"] == 8
    assert torch_device(torch, "auto") == torch.device("cuda", 0)
    assert torch_device(torch, "cuda:1") == torch.device("cuda", 1)
    with pytest.raises(EatkitError, match=r"^device 'cuda:2' does not exist: 2 CUDA GPU\(s\) visible$"):
        torch_device(torch, "cuda:2")
    from eatkit.encoders.device import device_name

    assert device_name(torch, torch.device("cuda", 0)) == "Fake GPU 80GB"
    bf16 = TinyConv(images=images, precision="bf16")
    keys = {e.cache_config()["device"] + "/" + e.cache_config()["precision"] for e in (cpu, gpu, bf16)}
    assert keys == {"cpu/fp32", "cuda/fp32", "cuda/bf16"}


def test_torch_overrules_the_probe_at_load(monkeypatch, images):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # this torch build cannot use a GPU
    encoder = TinyConv(images=images, device="auto")
    encoder.device_kind = "cuda"  # as if the driver listed a GPU that this torch build cannot use
    out = encoder.embed(SET)
    manifest = encoder.manifest()
    assert manifest["device"] == "cpu" and manifest["device_requested"] == "auto"
    again = TinyConv(images=images)
    assert again.embed(SET).vectors.tobytes() == out.vectors.tobytes() and again.stats["misses"] == 0


def test_precision_changes_bits_key_and_manifest(images):
    fp32 = TinyConv(images=images, device="cpu")
    a = fp32.embed(SET).vectors
    results = {}
    for precision in ("bf16", "fp16"):
        encoder = TinyConv(images=images, device="cpu", precision=precision)
        results[precision] = encoder.embed(SET).vectors
        assert encoder.stats["misses"] == 7  # another key: nothing from the fp32 entries
        manifest = encoder.manifest()
        assert (manifest["precision"], manifest["device"]) == (precision, "cpu")
        assert manifest["device_name"] and "not used" not in manifest["device_name"]
    for precision, tol in (("bf16", 3e-2), ("fp16", 3e-3)):
        v = results[precision]
        assert v.dtype == np.float64 and v.tobytes() != a.tobytes()
        np.testing.assert_allclose(v, a, atol=tol * np.abs(a).max())


def test_pixels_normalised_on_the_device_are_the_bits_of_the_float_input(images):
    # the GPU input path (uint8 pixels from the workers, table look-up where the model runs) on the CPU
    encoder = TinyConv(images=images, device="cpu", cache=False)
    files = sorted(str(p) for p in (images / "c").iterdir())[:3]
    prep = encoder.preprocessing
    pixels = [prep.pixels(f) for f in files]
    assert pixels[0].dtype == np.uint8 and pixels[0].shape == (3, 16, 16)
    looked_up = encoder._image_tensor(pixels).numpy()
    assert looked_up.dtype == np.float32
    assert looked_up.tobytes() == np.stack([prep.array(f) for f in files]).tobytes()
    x = np.asarray(prep.load(files[0]), dtype=np.float32).transpose(2, 0, 1) / np.float32(255)
    mean, std = (np.asarray(v, dtype=np.float32).reshape(3, 1, 1) for v in (prep.mean, prep.std))
    assert looked_up[0].tobytes() == ((x - mean) / std).tobytes()  # the formula, pixel by pixel


def test_decoding_workers_give_the_same_bits_as_inline(images):
    inline = TinyConv(images=images, workers=0, cache=False, batch_size=3).embed(SET).vectors
    encoder = TinyConv(images=images, workers=2, cache=False, batch_size=3)
    pooled = encoder.embed(SET).vectors
    assert encoder._pool is not None  # the worker processes did the decoding
    encoder.close()
    assert pooled.tobytes() == inline.tobytes()


def test_embed_many_streams_sets_with_each_sets_own_batches(images):
    # three sets (one a duplicate of another, one text-free subset) through one decoding stream: each set
    # keeps its own batch plan, so the bits equal embedding them one by one (inline decoding)
    files = sorted(str(p) for p in (images / "c").iterdir())
    sets = [StimulusSet("A", "image", tuple(files[:5])), StimulusSet("B", "image", tuple(files[2:])),
            StimulusSet("C", "image", tuple(files[:5]))]
    one_by_one = TinyConv(images=images, workers=0, cache=False, batch_size=2)
    expected = [one_by_one.embed(s) for s in sets]
    encoder = TinyConv(images=images, workers=2, cache=False, batch_size=2)
    streamed = encoder.embed_many(sets)
    encoder.close()
    assert [e.ids for e in streamed] == [e.ids for e in expected]
    assert all(a.vectors.tobytes() == b.vectors.tobytes() for a, b in zip(streamed, expected))
    assert encoder.stats["batches"] == 3 + 3 + 3 and streamed[0].checksums == expected[0].checksums


class Recording(TinyConv):
    """TinyConv that records, for each image batch, the thread it ran on and torch's threads there."""

    def __init__(self, **options):
        super().__init__(**options)
        self.seen = []

    def _encode(self, modality, inputs):
        import threading

        self.seen.append((threading.current_thread().name, torch.get_num_threads()))
        return super()._encode(modality, inputs)


@pytest.mark.parametrize("threads", [1, 2])
def test_cpu_image_batches_run_one_thread_each_whatever_the_callers_threads(images, threads):
    files = sorted(str(p) for p in (images / "c").iterdir())[:5]
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        encoder = Recording(images=images, workers=0, cache=False, batch_size=2)
        got = encoder.embed(StimulusSet("A", "image", tuple(files)))
        assert torch.get_num_threads() == threads  # the caller's setting is left as it was
        reference = Recording(images=images, workers=0, cache=False, batch_size=2)
        reference._load()
        torch.set_num_threads(1)
        expected = np.concatenate([reference._encode("image", [reference.preprocessing.array(f) for f in files[i:i + 2]])
                                   for i in range(0, 5, 2)])
    finally:
        torch.set_num_threads(before)
    assert [n for _, n in encoder.seen] == [1, 1, 1]
    assert all(name.startswith("eatkit-batch") for name, _ in encoder.seen)
    assert got.vectors.tobytes() == expected.astype(np.float64).tobytes()
    assert encoder.manifest()["cpu_image_batches"] == f"one thread each, up to {threads} at once"
    encoder.close()


def test_a_dead_worker_is_one_line(images):
    class Killer(TinyConv):
        def _image_transform(self):
            return _kill_self

    encoder = Killer(images=images, workers=1, cache=False)
    with pytest.raises(EatkitError, match=r"^an image-decoding worker process died"):
        encoder.embed(SET)


def _kill_self(path):
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.skipif("not torch.cuda.is_available()", reason="needs a CUDA GPU (run it on a GPU machine)")
def test_cuda_gives_the_cpu_vectors_in_fp32_and_the_same_bits_on_a_rerun(images):
    # fp32 on the GPU is IEEE float32 (TensorFloat-32 off): the CPU's vectors to float32 rounding, not
    # TF32's 1e-3; deterministic cuDNN: the same bits twice; bf16/fp16 within their rounding
    cpu = TinyConv(images=images, device="cpu", cache=False).embed(SET).vectors
    scale = np.abs(cpu).max()
    for precision, tol in (("fp32", 1e-5), ("bf16", 3e-2), ("fp16", 3e-3)):
        runs = []
        for _ in range(2):
            encoder = TinyConv(images=images, device="cuda", precision=precision, cache=False)
            runs.append(encoder.embed(SET).vectors)
            manifest = encoder.manifest()
            assert (manifest["device"], manifest["precision"]) == ("cuda", precision)
            assert manifest["device_name"] == torch.cuda.get_device_name(0)
        assert runs[0].tobytes() == runs[1].tobytes()
        np.testing.assert_allclose(runs[0], cpu, rtol=0, atol=tol * scale)
    assert torch.backends.cudnn.allow_tf32  # the settings are restored after the forward pass


def test_fully_cached_manifest_says_the_device_was_not_used(images):
    TinyConv(images=images).embed(SET)
    warm = TinyConv(images=images)
    warm.embed(SET)
    assert warm.manifest()["device_name"] == "not used (every embedding came from the cache)"


@pytest.mark.slow
def test_cold_warm_and_half_cached_runs_write_identical_results(capsys, tmp_path):
    """Issue 10 acceptance: byte-identical results.json whatever the cache held (EfficientNet-Lite0, iEAT)."""
    images = shared_path("ieat", "images")
    from eatkit.cli import main

    outputs = []
    for label in ("cold", "warm", "half"):
        if label == "half":
            entries = sorted(EmbeddingCache().entries_dir.glob("*/*.npe"))
            for entry in random.Random(0).sample(entries, len(entries) // 2):
                entry.unlink()
        out = tmp_path / label
        code = main(["run", "ieat", "--model", "efficientnet_lite0", "--images", str(images), "--tests", "asian",
                     "--seed", "7", "--batch-size", "4", "--n-bootstrap", "0", "-o", str(out), "--quiet"])
        assert code == 0, capsys.readouterr().err
        outputs.append(out)
    cache = [json.loads((o / "manifest.json").read_text())["source"]["cache"] for o in outputs]
    assert [c["misses"] for c in cache] == [24, 0, 12] and cache[1]["batches"] == 0
    results = [(o / "results.json").read_bytes() for o in outputs]
    assert results[0] == results[1] == results[2]
    manifest = json.loads((outputs[2] / "manifest.json").read_text())["source"]
    assert (manifest["batch_size"], manifest["device"], manifest["precision"]) == (4, "cpu", "fp32")
    assert "full list" in manifest["batch_plan"]
    shutil.rmtree(tmp_path)


def test_decoding_workers_exit_when_their_process_is_killed(tmp_path):
    import os
    import subprocess
    import sys
    import time

    script = (
        "import os\n"
        "from eatkit.encoders.workers import start_pool\n"
        "pool = start_pool(2)\n"
        "list(pool.map(abs, [1, 2]))\n"
        "print(' '.join(str(p) for p in pool._processes), flush=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    workers = [int(p) for p in run.stdout.split()]
    assert run.returncode == -9 and len(workers) == 2
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in workers):
        time.sleep(0.2)
    assert not any(os.path.exists(f"/proc/{p}") for p in workers)
