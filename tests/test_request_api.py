"""What ``eatkit run`` does, called from Python: a series, a prompt comparison and a compare model built by
``eatkit.run.request.build_request`` and run by ``run_request`` (the request API the command line calls)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import eatkit
from eatkit.analyses.base import RunOptions
from eatkit.errors import EatkitError
from eatkit.run.request import build_request, geometry_params, run_request
from test_histwords import _roles, write_series

WORDS = {"X": ["rose", "tulip", "daisy"], "Y": ["ant", "wasp", "moth"], "A": ["good", "nice", "kind"],
         "B": ["bad", "ugly", "mean"]}


def _word_suite(tmp_path):
    suite = {"schema": "eatkit.suite/1", "id": "flowers", "title": "Flowers", "tests": [
        {"id": "f1", "title": "F1", "kind": "eat",
         **{r: {"name": r, "modality": "word", "items": w} for r, w in WORDS.items()}}]}
    path = tmp_path / "flowers.json"
    path.write_text(json.dumps(suite))
    return path


def test_a_series_of_word_vector_files_from_python(tmp_path):
    decades = write_series(tmp_path / "hw")
    files = []
    for year in (1830, 1810):  # the order given is the series order
        words, matrix = decades[year]
        files.append(tmp_path / f"step{year}.txt")
        files[-1].write_text("".join(" ".join([w, *(f"{v:.9g}" for v in row)]) + "\n" for w, row in zip(words, matrix)))
    request = build_request("mleat-histwords", {}, RunOptions(seed=0, permutations=50, n_bootstrap=0), series=files)
    assert request.series == "series" and [label for label, _ in request.points] == ["step1830", "step1810"]
    done = run_request(request, tmp_path / "out")
    assert done.series == "series" and (done.out / "series.json").is_file()
    roles = _roles()
    for year, run in zip((1830, 1810), done.runs):
        words, m = decades[year]
        direct = eatkit.eat(*(m[[words.index(w) for w in roles[r]]] for r in "XYAB"), permutations=1, rng=0)
        assert run.records[0].effect_size == pytest.approx(direct.effect_size, abs=1e-5)


def test_options_are_named_as_their_caller_gave_them(tmp_path):
    from eatkit.cli.run import model_flag

    vectors = tmp_path / "v.txt"
    vectors.write_text("".join(f"{w} 1 0\n" for ws in WORDS.values() for w in ws))
    with pytest.raises(EatkitError, match=r"^'compare_prompts' applies to 'name' only$"):
        build_request(_word_suite(tmp_path), {"vectors": vectors}, compare_prompts=["", "a {x}"])
    with pytest.raises(EatkitError, match=r"^--compare-prompts applies to --model only$"):
        build_request(_word_suite(tmp_path), {"vectors": vectors}, compare_prompts=["", "a {x}"], flag=model_flag)
    with pytest.raises(EatkitError, match=r"^--layer applies to --model, not to --vectors$"):
        build_request(_word_suite(tmp_path), {"vectors": vectors, "layer": 0}, flag=model_flag)
    with pytest.raises(EatkitError, match=r"^'decades' applies to 'series' only$"):
        build_request(_word_suite(tmp_path), {"vectors": vectors}, decades="1810-1990")


def test_geometry_params_name_the_run_model_and_the_compare_models_options():
    class Test:
        kind = "geometry"

    model = {"name": "timm:test_resnet", "checkpoint": "ft.safetensors", "images": "imgs", "batch_size": 4,
             "cache": False, "layer": 2}
    assert geometry_params(model, [Test()]) == {
        "label": "timm:test_resnet@ft.safetensors",
        "compare_options": {"images": "imgs", "batch_size": 4, "cache": False}}
    assert geometry_params(model, []) == {}
    with pytest.raises(EatkitError, match="geometry tests need 'name'"):
        geometry_params({"vectors": "v.txt"}, [Test()])


@pytest.mark.slow
def test_a_prompt_comparison_from_python(tmp_path):
    pytest.importorskip("open_clip")
    from tiny_vl import tiny_open_clip

    from eatkit.registry import build_model
    from eatkit.run.runner import run_suite

    (tmp_path / "clip").mkdir()
    model = tiny_open_clip(tmp_path / "clip", "eatkit-request-tiny")
    suite = _word_suite(tmp_path)
    options = RunOptions(seed=0, permutations=100, n_bootstrap=0)
    prompts = ["", "a photo of {x}"]
    request = build_request(suite, {"name": model, "cache": False}, options, compare_prompts=prompts)
    done = run_request(request, tmp_path / "out")
    assert done.series == "prompts" and [r.manifest["source"]["prompt"] for r in done.runs] == [None, prompts[1]]
    for prompt, run in zip(prompts, done.runs):  # each point is the run of the model with that prompt
        alone = run_suite(suite, build_model(model, prompt=prompt or None, cache=False), options=options)
        assert run.records[0].effect_size == alone.records[0].effect_size
    assert done.runs[0].records[0].effect_size != done.runs[1].records[0].effect_size


@pytest.mark.slow
def test_a_compare_model_from_python(tmp_path):
    timm = pytest.importorskip("timm")
    Image = pytest.importorskip("PIL.Image")
    from eatkit.encoders.checkpoints import save_checkpoint
    from eatkit.stimuli.analysis_sets import folder_analysis_set

    rng = np.random.default_rng(0)
    for name in ("a", "b", "random"):
        (tmp_path / "classes" / name).mkdir(parents=True)
        for i in range(3):
            Image.fromarray(rng.integers(0, 256, (20, 20, 3), dtype=np.uint8)).save(tmp_path / "classes" / name / f"{i}.png")
    aset = folder_analysis_set(tmp_path / "classes")
    (tmp_path / "suite.json").write_text(json.dumps(aset.suite()))
    ckpts = [tmp_path / "one.safetensors", tmp_path / "two.safetensors"]
    for seed, path in enumerate(ckpts):
        import torch

        torch.manual_seed(seed)
        save_checkpoint(path, timm.create_model("test_resnet", pretrained=False, num_classes=2),
                        {"model": "timm:test_resnet", "architecture": "timm:test_resnet", "num_classes": 2})
    model = {"name": "timm:test_resnet", "checkpoint": ckpts[0], "images": tmp_path / "classes", "cache": False}
    options = RunOptions(seed=0, params={"compare": [f"timm:test_resnet@{ckpts[1]}"], "iterations": 20})
    request = build_request(tmp_path / "suite.json", model, options)
    (record,) = run_request(request, tmp_path / "run").records
    assert record.models == [f"timm:test_resnet@{ckpts[0]}", f"timm:test_resnet@{ckpts[1]}"]
    assert request.options.params["compare_options"] == {"images": str(tmp_path / "classes"), "cache": False}
