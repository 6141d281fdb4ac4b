"""Issue 36: the numeric options of the commands (eatkit.command_options) declare a legal range (a one-line
error, exit 2: tests/test_bad_inputs.py) and a useful range: a legal value outside it runs, with a warning
printed once and recorded where the command records its settings (one test per command family here)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from eatkit.cli import build_parser, main
from eatkit.command_options import COMMAND_OPTIONS, option_warnings
from tiny_coco import write_coco


def _command_parsers() -> dict[str, list[argparse.ArgumentParser]]:
    """Each command's parser, or its sub-commands' (probe vqa, caption, ...)."""
    def below(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return [p for s in subs for child in s.choices.values() for p in below(child)] if subs else [parser]

    root = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {name: below(sub) for name, sub in root.choices.items()}


def test_every_declared_option_is_its_commands_flag_with_both_ranges() -> None:
    parsers = _command_parsers()
    for command, params in COMMAND_OPTIONS.items():
        for name, param in params.items():
            assert param.type in (int, float) and param.useful is not None, (command, name)
            for parser in parsers[command]:
                (action,) = [a for a in parser._actions if a.dest == name]
                assert action.option_strings == [param.option] and action.default == param.default
                value = next(str(v) for v in (param.useful[1], param.low, 1) if v is not None)  # a legal value
                assert action.help == param.describe() and action.type(value) == param.convert(value)


def test_useful_values_give_no_warning_and_the_defaults_are_unchanged() -> None:
    defaults = {"finetune": {"val_fraction": 0.2, "epochs": 15, "batch_size": 32, "momentum": 0.9,
                             "weight_decay": 0.0, "workers": 0, "lr": 0.001, "seed": 0},
                "debias": {"n_words": 1000, "n_components": 4, "alpha": 60.0, "seed": 0}, "sweep": {"jobs": 1},
                "compare": {"permutations": 10_000, "seed": 0}, "meta": {"confidence_level": 0.95}}
    for command, values in defaults.items():
        assert {n: p.default for n, p in COMMAND_OPTIONS[command].items()} == values
    assert option_warnings("probe", {"num_beams": 20, "repetition_penalty": 1.0, "top_k": 0, "batch_size": 1024}) == []
    assert option_warnings("run", {"layer": -3, "workers": 64}) == []
    assert option_warnings("probe", {"num_beams": 21, "repetition_penalty": 0.5}) == [
        "num_beams=21 is outside its useful range (<= 20): the result may mean little",
        "repetition_penalty=0.5 is outside its useful range (>= 1 and <= 2): the result may mean little"]


def _warned(capsys: pytest.CaptureFixture[str], code: int, warning: str) -> None:
    err = capsys.readouterr().err
    assert code == 0, err
    assert err.count(warning) == 1, err  # printed once


def test_run_records_a_model_option_outside_its_useful_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    word = lambda *w: {"name": w[0], "modality": "word", "items": list(w)}  # noqa: E731
    suite = {"schema": "eatkit.suite/1", "id": "u", "title": "u", "tests": [
        {"id": "t", "title": "t", "X": word("rose", "tulip"), "Y": word("spider", "moth"),
         "A": word("love", "peace"), "B": word("hatred", "war")}]}
    (tmp_path / "s.json").write_text(json.dumps(suite), encoding="utf-8")
    out = tmp_path / "r"
    code = main(["run", str(tmp_path / "s.json"), "--model", "all-minilm-l6-v2", "--batch-size", "2000", "--no-cache",
                 "--device", "cpu", "--n-bootstrap", "0", "--permutations", "exact", "-q", "-o", str(out)])
    warning = "batch_size=2000 is outside its useful range (<= 1024): the result may mean little"
    _warned(capsys, code, warning)
    records = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert records and all(warning in r["warnings"] for r in records)
    assert warning in json.loads((out / "manifest.json").read_text(encoding="utf-8"))["statistics"]["warnings"]


def test_probe_records_a_decoding_option_outside_its_useful_range(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("transformers")
    from tiny_vl import group_images, tiny_blip

    blip = tiny_blip(tmp_path / "blip", "BlipForQuestionAnswering")
    images = group_images(tmp_path / "img", {"a": 2, "b": 2})
    out = tmp_path / "vqa"
    code = main(["probe", "vqa", "--model", f"hf-blip-vqa:{blip}", "--images", str(images), "--question",
                 "is this a doctor ?", "--yes", "yes", "--num-beams", "21", "--max-new-tokens", "2", "--seed", "0",
                 "--no-cache", "-q", "-o", str(out)])
    warning = "num_beams=21 is outside its useful range (<= 20): the result may mean little"
    _warned(capsys, code, warning)
    (record,) = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert warning in record["warnings"]
    assert warning in json.loads((out / "manifest.json").read_text(encoding="utf-8"))["statistics"]["warnings"]


def test_finetune_records_its_options_outside_their_useful_range(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("timm")
    split = {1 + i: ([c for c, on in (("person", i % 2 == 0), ("car", i % 3 == 0)) if on], ["x"]) for i in range(6)}
    instances, _, images = write_coco(tmp_path, split, split="train", size=24)
    out = tmp_path / "ft.safetensors"
    code = main(["finetune", "--model", "timm:test_resnet", "--instances", str(instances), "--images", str(images),
                 "--no-pretrained", "--epochs", "1", "--batch-size", "3", "--momentum", "0.995", "--val-fraction",
                 "0.6", "--device", "cpu", "-q", "-o", str(out)])
    warnings = ["val_fraction=0.6 is outside its useful range (>= 0.05 and <= 0.5): the result may mean little",
                "momentum=0.995 is outside its useful range (<= 0.99): the result may mean little"]
    err = capsys.readouterr().err
    assert code == 0, err
    assert [err.count(w) for w in warnings] == [1, 1]
    assert json.loads(Path(f"{out}.json").read_text(encoding="utf-8"))["options"]["warnings"] == warnings


def test_debias_records_its_options_outside_their_useful_range(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from conftest import shared_path

    vectors = shared_path("glove840b-weat", "glove.840B.300d.weat-items.txt")
    out = tmp_path / "debiased"
    code = main(["debias", "--vectors", str(vectors), "--method", "hard", "--n-components", "30", "--tests", "weat6",
                 "--seed", "0", "-q", "-o", str(out)])
    warning = "n_components=30 is outside its useful range (<= 20): the result may mean little"
    _warned(capsys, code, warning)
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["warnings"] == [warning]


def test_analysis_set_records_a_class_size_outside_its_useful_range(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from test_analysis_sets import OI_IMAGES, write_open_images

    root = write_open_images(tmp_path / "oi", OI_IMAGES)
    out = tmp_path / "oi-set"
    code = main(["analysis-set", "open-images", "--boxes", str(root / "boxes.csv"), "--class-descriptions",
                 str(root / "class-descriptions-boxable.csv"), "--images", str(root), "--objects", "car",
                 "--per-class", "2", "-o", str(out)])
    warning = "per_class=2 is outside its useful range (>= 10): the result may mean little"
    _warned(capsys, code, warning)
    (test,) = json.loads((out / "suite.json").read_text(encoding="utf-8"))["tests"]
    assert test["params"]["source"]["warnings"] == [warning]
    from eatkit.stimuli.loader import load_suite

    assert load_suite(out / "suite.json").tests[0].kind == "geometry"  # a suite still


def test_sweep_records_its_jobs_outside_their_useful_range(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import eatkit.run.sweep as sweep

    (tmp_path / "v.txt").write_text("".join(f"{w}{i} {i} {ord(w)}\n" for w in "abxy" for i in (1, 2)), encoding="utf-8")
    word = lambda *w: {"name": w[0], "modality": "word", "items": list(w)}  # noqa: E731
    suite = {"schema": "eatkit.suite/1", "id": "u", "title": "u", "tests": [
        {"id": "t", "title": "t", "X": word("x1", "x2"), "Y": word("y1", "y2"), "A": word("a1", "a2"),
         "B": word("b1", "b2")}]}
    (tmp_path / "s.json").write_text(json.dumps(suite), encoding="utf-8")
    (tmp_path / "sweep.toml").write_text(f'models = [{{ vectors = "{tmp_path / "v.txt"}" }}]\n'
                                         f'suites = ["{tmp_path / "s.json"}"]\n', encoding="utf-8")
    argv = ["sweep", str(tmp_path / "sweep.toml"), "-o", str(tmp_path / "sw"), "--no-report", "-q", "--jobs"]
    assert main([*argv, "0"]) == 0
    capsys.readouterr()
    monkeypatch.setattr(sweep, "_executor", lambda *args: iter(()))  # no 65 processes for no cell left to run
    code = main([*argv, "65"])
    warning = "jobs=65 is outside its useful range (<= 64): the result may mean little"
    err = capsys.readouterr().err
    assert err.count(warning) == 1, err
    assert code == 0
    assert json.loads((tmp_path / "sw" / "sweep.json").read_text(encoding="utf-8"))["warnings"] == [warning]
