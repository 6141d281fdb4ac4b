"""Text-to-image generation as a source (diffusers), T2IAT and who gets generated (depiction), on a tiny
random Stable Diffusion pipeline built offline from configs and a tiny random CLIP embedder.

The statistics are checked against the published definitions written out independently here: T2IAT's
(the authors' notebook, cosine distances and numpy's std; an exact permutation test by brute force) and
DALL-Eval's mean absolute deviation from uniform (and KL against scipy.stats.entropy)."""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import require

require("diffusers")
require("transformers")

from test_cli import run_cli  # noqa: E402
from tiny_t2i import tiny_pipeline  # noqa: E402
from tiny_vl import tiny_clip  # noqa: E402

#: one image per prompt, 2 denoising steps, 16 x 16 images: a few seconds on a CPU
GENERATION = ["--generation", "images_per_prompt=2", "--generation", "steps=2", "--generation", "size=16"]


def tiny_suite() -> dict:
    """A T2IAT test (2 + 2 concepts, one word per attribute set) and a depiction test (2 prompt groups)."""
    w = lambda name, *items: {"name": name, "modality": "word", "items": list(items)}  # noqa: E731
    return {"schema": "eatkit.suite/1", "id": "tiny-t2i", "title": "Tiny text-to-image suite", "sets": {
        "x": w("Science", "math", "physics"), "y": w("Arts", "music", "art"), "a": w("Male", "man"),
        "b": w("Female", "woman"), "n": w("Neutral", "person"),
        "doctor": {"name": "doctor", "modality": "prompt", "items": ["a photo of a doctor"]},
        "nurse": {"name": "nurse", "modality": "prompt", "items": ["a photo of a nurse"]}},
        "tests": [{"id": "gs", "kind": "t2iat", "title": "Gender-science", "X": "x", "Y": "y", "A": "a", "B": "b",
                   "N": "n"},
                  {"id": "occ", "kind": "depiction", "title": "Occupations", "Doctor": "doctor", "Nurse": "nurse",
                   "params": {"attributes": ["gender"]}}]}


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    """Tiny convolutions run fastest on one thread (several only contend on a shared CPU)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("t2i")
    (root / "suite.json").write_text(json.dumps(tiny_suite()))
    return {"pipe": tiny_pipeline(root / "pipe"), "clip": tiny_clip(root / "clip"), "suite": str(root / "suite.json")}


def _run(capsys, models, out: Path, *extra: str) -> dict:
    code, stdout, err = run_cli(capsys, "run", models["suite"], "--model", f"diffusers:{models['pipe']}",
                                "--embedder", f"hf-clip:{models['clip']}", *GENERATION, "--seed", "0",
                                "--n-bootstrap", "100", "-q", "-o", str(out), *extra)
    assert code == 0, err
    return json.loads((out / "manifest.json").read_text())


def test_generation_without_a_cache_leaves_no_temporary_files(models, tmp_path) -> None:
    """--no-cache: the generated images go to a temporary folder for the embedder, removed at exit (the
    run folder keeps its copies)."""
    import subprocess
    import sys

    temp = tmp_path / "tmp"
    temp.mkdir()
    done = subprocess.run([sys.executable, "-m", "eatkit", "run", models["suite"], "--model", f"diffusers:{models['pipe']}",
                           "--embedder", f"hf-clip:{models['clip']}", *GENERATION, "--tests", "occ", "--seed", "0", "--no-cache", "-q", "-o", str(tmp_path / "run")],
                          env={**os.environ, "TMPDIR": str(temp), "HF_HUB_OFFLINE": "1"}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "run" / "generated").iterdir())) == 4  # two images of each of the two prompts
    assert not list(temp.glob("eatkit-generated-*")), list(temp.iterdir())


def test_cli_generation_is_byte_identical_and_cached(capsys, models, tmp_path) -> None:
    first = _run(capsys, models, tmp_path / "run1", "--generation", "seed=5")
    second = _run(capsys, models, tmp_path / "run2", "--generation", "seed=5", "--no-cache")
    third = _run(capsys, models, tmp_path / "run3", "--generation", "seed=5")
    # 2 concepts x 2 targets x 3 prompt sets + 2 depiction prompts = 14 prompts, 2 images each
    assert first["source"]["generator"]["images"] == {"generated": 28, "cached": 0}
    assert second["source"]["generator"]["images"] == {"generated": 28, "cached": 0}
    assert third["source"]["generator"]["images"] == {"generated": 0, "cached": 28}  # the cache, no pipeline call
    images = [{p.name: p.read_bytes() for p in (tmp_path / run / "generated").iterdir()} for run in ("run1", "run2", "run3")]
    assert len(images[0]) == 28 and images[0] == images[1] == images[2]
    results = [(tmp_path / run / "results.json").read_bytes() for run in ("run1", "run2", "run3")]
    assert results[0] == results[1] == results[2]
    # every image's SHA-256 in the manifest, its seed (seed + i) in its id, the file named by its SHA-256
    items = first["stimuli"]["gs"]["X/math/A"]["items"]
    assert [i for i, _ in items] == ["a photo of a man studying math [seed 5]", "a photo of a man studying math [seed 6]"]
    for _, sha in items:
        assert hashlib.sha256(images[0][f"{sha}.png"]).hexdigest() == sha
    settings = first["source"]["generator"]["settings"]
    assert settings == {"images_per_prompt": 2, "seed": 5, "steps": 2, "guidance_scale": 7.5, "scheduler": None,
                        "negative_prompt": None, "size": 16}
    assert first["source"]["generator"]["scheduler"] == "DDIMScheduler"
    assert first["source"]["generator"]["folder_sha256"] == third["source"]["generator"]["folder_sha256"]
    # eatkit verify: every generated image in the run folder against its recorded SHA-256
    from eatkit.run.verify import verify_run

    assert verify_run(tmp_path / "run1").ok
    (tmp_path / "run2" / "generated" / f"{items[0][1]}.png").write_bytes(b"not the image")
    assert [c for c in verify_run(tmp_path / "run2").changes if "changed" in c and "seed 5" in c]


def test_images_are_diffusers_own_pipeline_output(models, tmp_path) -> None:
    """Image i of a prompt equals diffusers' pipeline called alone with generator seed + i (a reference run)."""
    import diffusers
    import torch
    from PIL import Image

    from eatkit.encoders.diffusion import DiffusionGenerator

    gen = DiffusionGenerator(models["pipe"], settings={"images_per_prompt": 2, "seed": 3, "steps": 2, "size": 16,
                                                       "negative_prompt": "blurry", "scheduler": "euler"},
                             device="cpu", cache=False)
    ours = gen.generate("a photo of a person")
    pipe = diffusers.StableDiffusionPipeline.from_pretrained(models["pipe"])
    pipe.scheduler = diffusers.EulerDiscreteScheduler.from_config(pipe.scheduler.config)
    pipe.set_progress_bar_config(disable=True)
    for seed, png in ours:
        reference = pipe("a photo of a person", negative_prompt="blurry", num_inference_steps=2, height=16, width=16,
                         generator=torch.Generator("cpu").manual_seed(seed), output_type="np").images[0]
        pixels = np.asarray(Image.open(io.BytesIO(png)))
        assert np.array_equal(pixels, (reference * 255).round().astype(np.uint8))
    assert [s for s, _ in ours] == [3, 4]
    assert gen.manifest()["scheduler"] == "EulerDiscreteScheduler"


def _notebook_s(neutral, attribute):
    """The authors' notebook: the mean cosine *distance* over every pair (scipy.spatial.distance.cosine)."""
    from scipy.spatial import distance

    return np.mean([distance.cosine(n, a) for n, a in itertools.product(neutral, attribute)])


@pytest.mark.parametrize("ddof", [0, 1])
def test_t2iat_equals_the_papers_equations(ddof) -> None:
    from eatkit.stats.t2iat import t2iat

    rng = np.random.default_rng(7)
    concepts = {role: [[rng.normal(size=(k, 6)) for k in (3, 2, 4)] for _ in range(n)]
                for role, n in (("X", 4), ("Y", 3))}
    sets = [[c[g] for c in concepts[role]] for role in ("X", "Y") for g in range(3)]
    r = t2iat(*sets, permutations="exact", ddof=ddof)
    # the notebook's X_pos - X_neg with distances is -s(c): s(c) = mean cos(n, a) - mean cos(n, b)
    s = {role: np.array([-(_notebook_s(c[0], c[1]) - _notebook_s(c[0], c[2])) for c in concepts[role]])
         for role in ("X", "Y")}
    assert np.allclose(r.s_x, s["X"], atol=1e-12) and np.allclose(r.s_y, s["Y"], atol=1e-12)
    pooled = np.concatenate([s["X"], s["Y"]])
    d = (s["X"].mean() - s["Y"].mean()) / pooled.std(ddof=ddof)
    assert r.test.effect_size == pytest.approx(d, abs=1e-12)
    assert r.test.statistic == pytest.approx(s["X"].sum() - s["Y"].sum(), abs=1e-12)
    # exact permutation p over every re-partition of the 7 concepts (test statistic Σ_X s - Σ_Y s)
    stats = [pooled[list(idx)].sum() - (pooled.sum() - pooled[list(idx)].sum())
             for idx in itertools.combinations(range(7), 4)]
    observed = s["X"].sum() - s["Y"].sum()
    assert r.test.p_value_exact and r.test.n_partitions == 35
    assert r.test.p_value == pytest.approx(np.mean([t >= observed - 1e-12 for t in stats]), abs=1e-12)
    # the notebook's effect size (numpy's std, ddof 0) is -d: it averages distances
    if ddof == 0:
        x = np.array([_notebook_s(c[0], c[1]) - _notebook_s(c[0], c[2]) for c in concepts["X"]])
        y = np.array([_notebook_s(c[0], c[1]) - _notebook_s(c[0], c[2]) for c in concepts["Y"]])
        assert -r.test.effect_size == pytest.approx((x.mean() - y.mean()) / np.concatenate((x, y)).std(), abs=1e-12)


def test_dalleval_mad_and_kl_equal_their_definitions() -> None:
    from scipy.stats import entropy

    from eatkit.stats.depiction import compare_depictions, depiction, kl_divergence, mad_from_uniform

    rng = np.random.default_rng(3)
    for k in (2, 3, 5):
        counts = rng.integers(0, 40, size=(20, k))
        counts[:, 0] += 1
        for row in counts:
            p = row / row.sum()
            # DALL-Eval: the mean over the K classes of |p_k - 1/K|
            mad = sum(abs(p_k - 1 / k) for p_k in p) / k
            assert mad_from_uniform(row) == pytest.approx(mad, abs=1e-12)
            q = rng.uniform(0.1, 1, k)
            assert kl_divergence(row, q) == pytest.approx(entropy(p, q / q.sum()), abs=1e-12)
        assert np.allclose(mad_from_uniform(counts), [mad_from_uniform(r) for r in counts], atol=1e-15)
    d = depiction([0, 0, 0, 1, 1, 2], ["a", "b", "c"], n_bootstrap=500, rng=0)
    assert d.counts == (3, 2, 1) and d.mad == pytest.approx((1 / 6 + 0 + 1 / 6) / 3, abs=1e-12)
    assert d.mad_ci[0] <= d.mad <= d.mad_ci[1]
    # the permutation test between two models against the exact count over every split (7 + 5 labels)
    first, second = [0, 0, 0, 0, 0, 1, 1], [0, 1, 1, 1, 0]
    pooled = np.array(first + second)
    obs = mad_from_uniform(np.bincount(first, minlength=2)) - mad_from_uniform(np.bincount(second, minlength=2))
    diffs = []
    for idx in itertools.combinations(range(12), 7):
        rest = np.setdiff1d(np.arange(12), idx)
        diffs.append(mad_from_uniform(np.bincount(pooled[list(idx)], minlength=2))
                     - mad_from_uniform(np.bincount(pooled[rest], minlength=2)))
    exact = np.mean(np.abs(diffs) >= abs(obs) - 1e-12)
    r = compare_depictions(first, second, 2, permutations=20_000, rng=1)
    assert r.difference == pytest.approx(obs, abs=1e-12)
    assert abs(r.p_value - exact) < 4 * np.sqrt(exact * (1 - exact) / 20_000) + 1e-4


def test_depiction_records_contact_sheet_and_model_comparison(capsys, models, tmp_path) -> None:
    from eatkit.run.generated import compare_depiction_runs

    _run(capsys, models, tmp_path / "a", "--report", "--tests", "occ")
    other = tiny_pipeline(tmp_path / "pipe2", seed=1)
    code, _, err = run_cli(capsys, "run", models["suite"], "--model", f"diffusers:{other}", "--embedder",
                           f"hf-clip:{models['clip']}", *GENERATION, "--seed", "0", "--n-bootstrap", "100", "-q",
                           "-o", str(tmp_path / "b"), "--tests", "occ")
    assert code == 0, err
    records = json.loads((tmp_path / "a" / "results.json").read_text())
    doctor = next(r for r in records if r["group"] == "Doctor")
    assert doctor["classifier_prompts"] == {"man": "a photo of a man", "woman": "a photo of a woman"}
    assert sum(doctor["counts"].values()) == doctor["n_images"] == 2 == len(doctor["labels"])
    assert doctor["mad"] == pytest.approx(abs(doctor["shares"]["man"] - 0.5), abs=1e-12)
    html = (tmp_path / "a" / "report.html").read_text()
    assert html.count('class="contact-sheet"') == 2 and html.count("data:image/jpeg") >= 4
    rows = compare_depiction_runs(tmp_path / "a", tmp_path / "b", permutations=200, seed=0)
    assert [(r["group"], r["attribute"]) for r in rows] == [("Doctor", "gender"), ("Nurse", "gender")]
    assert all(0 < r["p_value"] <= 1 for r in rows)


def test_a_hub_model_is_pinned_to_its_commit_or_refused_offline(monkeypatch) -> None:
    from eatkit.encoders.diffusion import DiffusionGenerator
    from eatkit.errors import EatkitError

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    gen = DiffusionGenerator("eatkit-test/no-such-pipeline", settings={"images_per_prompt": 1})
    with pytest.raises(EatkitError) as info:
        gen.generate("a photo of a person")
    assert "eatkit-test/no-such-pipeline" in str(info.value) and "\n" not in str(info.value)
    assert gen.stats == {"generated": 0, "cached": 0}


def test_t2iat_validity_leaves_each_concept_out() -> None:
    from eatkit.stats.t2iat import t2iat, t2iat_validity

    rng = np.random.default_rng(11)
    concepts = {role: [[rng.normal(size=(2, 5)) for _ in range(3)] for _ in range(5)] for role in ("X", "Y")}
    sets = [[c[g] for c in concepts[role]] for role in ("X", "Y") for g in range(3)]
    r = t2iat(*sets, permutations="exact")
    names = {"X": [f"x{i}" for i in range(5)], "Y": [f"y{i}" for i in range(5)]}
    v = t2iat_validity(r, names["X"], names["Y"], rng=0)
    for i in range(5):  # without x_i: the test over the other 9 concepts, by brute force
        sx, sy = np.delete(r.s_x, i), r.s_y
        pooled = np.concatenate([sx, sy])
        d = (sx.mean() - sy.mean()) / pooled.std(ddof=1)
        observed = sx.sum() - sy.sum()
        stats = [2 * pooled[list(idx)].sum() - pooled.sum() for idx in itertools.combinations(range(9), 4)]
        assert v.leave_one_out[f"x{i}"][0] == pytest.approx(d, abs=1e-12)
        assert v.leave_one_out[f"x{i}"][1] == pytest.approx(np.mean([t >= observed - 1e-12 for t in stats]), abs=1e-12)
    assert v.most_influential == max(v.leave_one_out, key=lambda c: abs(v.leave_one_out[c][0] - r.test.effect_size))
    assert v.minimum_detectable_d is not None and v.minimum_detectable_d > 0


def test_validity_on_a_t2iat_run(capsys, models, tmp_path) -> None:
    _run(capsys, models, tmp_path / "v", "--tests", "gs", "--validity")
    (record,) = json.loads((tmp_path / "v" / "results.json").read_text())
    assert set(record["validity"]["leave_one_out"]) == {"math", "physics", "music", "art"}
    assert record["validity"]["minimum_detectable_d"] is None and "no effect is detectable" in record["validity"]["note"]


def test_generation_progress_counts_images_with_an_eta(capsys, models, tmp_path, monkeypatch) -> None:
    """Off a terminal the run writes ``diffusers:<folder>: generating n/28 images, ETA t`` lines: the images of
    all the run's prompt sets in one count (issue 46: not ``embedding 48 stimulus sets Ns``)."""
    from eatkit import progress

    from test_progress_items import lines_of

    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)
    code, _, err = run_cli(capsys, "run", models["suite"], "--model", f"diffusers:{models['pipe']}", "--embedder",
                           f"hf-clip:{models['clip']}", *GENERATION, "--seed", "0", "--n-bootstrap", "0", "--no-cache",
                           "-o", str(tmp_path / "run"))
    assert code == 0, err
    found = lines_of(err, f"diffusers:{models['pipe']}: generating")
    # 2 concepts x 2 targets x 3 prompt sets + 2 depiction prompts = 14 prompts, 2 images each
    assert {m["total"] for m in found} == {"28"} and {m["unit"] for m in found} == {"images"}
    done = [int(m["done"]) for m in found]
    assert done == sorted(done) and done[-1] == 28 and len(set(done)) > 3
    assert any(m["eta"] for m in found)
    embedded = lines_of(err, f"hf-clip:{models['clip']}: embedding")
    assert "images" in {m["unit"] for m in embedded}  # (and the classifier's prompts: sentences)
