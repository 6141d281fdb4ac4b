"""load_run: reading a run folder, and the exact errors for folders that are not run folders."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_report_support import make_run, record, write_run

from eatkit.errors import EatkitError
from eatkit.report import Run, load_run
from eatkit.report.run import run_labels


def test_load_run_reads_records_manifest_and_similarities(tmp_path):
    run = load_run(make_run(tmp_path))
    assert [r.test for r in run.records] == [f"weat{i}" for i in range(1, 11)]
    assert run.records[0].effect_size == 1.5 and run.records[2].n_y == 30
    assert run.model == "glove.840B.300d.weat-items.txt"
    assert run.suite_title == "WEAT 1-10 (Caliskan, Bryson & Narayanan 2017)"
    assert set(run.similarities) == {r.test for r in run.records}
    xa = run.similarities["weat1"]["xa"]
    assert xa.shape == (625,) and xa.dtype == np.float64
    assert run.similarities["weat9"]["xb"].shape == (6 * 7,)


def test_similarities_are_optional(tmp_path):
    run = load_run(make_run(tmp_path, similarities=False))
    assert run.similarities is None and len(run.records) == 10


def test_model_is_the_sources_id_first_then_other_keys_then_the_folder_name(tmp_path):
    # eatkit's model id (source.id) wins over a library's model name
    source = {"model": "tf_efficientnet_lite0", "name": "EfficientNet-Lite0", "id": "efficientnet_lite0"}
    assert load_run(write_run(tmp_path, [record()], {"source": source}, "id")).model == "efficientnet_lite0"
    del source["id"]
    assert load_run(write_run(tmp_path, [record()], {"source": source}, "model")).model == "tf_efficientnet_lite0"
    assert load_run(write_run(tmp_path, [record()], {"source": {"model_id": "m", "name": "n"}}, "mid")).model == "m"
    assert load_run(write_run(tmp_path, [record()], {"source": {"name": "n", "id": ""}}, "name")).model == "n"
    assert load_run(write_run(tmp_path, [record()], {"source": {}}, "b")).model == "b"
    assert load_run(write_run(tmp_path, [record()], {}, "c")).suite_title == "demo"


def test_run_labels_add_the_folder_where_models_repeat():
    runs = [Run(Path("x/layer6"), (), {"source": {"model": "gpt2"}}),
            Run(Path("x/layer12"), (), {"source": {"model": "gpt2"}}),
            Run(Path("x/clip"), (), {"source": {"model": "clip"}})]
    assert run_labels(runs) == ["gpt2 (layer6)", "gpt2 (layer12)", "clip"]


def _error(path) -> str:
    with pytest.raises(EatkitError) as info:
        load_run(path)
    return str(info.value)


def test_missing_folder_and_files_are_named(tmp_path):
    assert _error(tmp_path / "nope") == f"run folder {tmp_path / 'nope'} does not exist or is not a folder"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _error(empty) == f"run folder {empty} has no results.json (is it an eatkit run folder?)"
    (empty / "results.json").write_text(json.dumps([record()]))
    assert _error(empty) == f"run folder {empty} has no manifest.json (is it an eatkit run folder?)"


def test_malformed_json_and_records_are_named(tmp_path):
    run_dir = write_run(tmp_path, [record()])
    (run_dir / "results.json").write_text("[{")
    assert _error(run_dir).startswith(f"{run_dir / 'results.json'}: invalid JSON at line 1, column 3: ")
    (run_dir / "results.json").write_text("{}")
    assert _error(run_dir) == f"{run_dir / 'results.json'} must be a non-empty JSON list of results"
    (run_dir / "results.json").write_text(json.dumps([record(), record()]))
    assert _error(run_dir) == f"{run_dir / 'results.json'} holds test 't1' more than once"
    broken = record()
    del broken["q_value"], broken["level3"], broken["n_a"], broken["p_method"], broken["level2_y_alternative"]
    (run_dir / "results.json").write_text(json.dumps([broken]))
    assert _error(run_dir) == (f"{run_dir / 'results.json'}: test 't1' lacks 'n_a', 'p_method', "
                               "'level2_y_alternative'")
    (run_dir / "results.json").write_text(json.dumps([record("BY-Singular", level2_y_effect_size=0.3)]))
    assert _error(run_dir) == (f"{run_dir / 'results.json'}: test 't1' has level2_y_association='B' but "
                               "level2_y_effect_size=0.3 (an association with A needs d > 0, with B d < 0)")
    (run_dir / "results.json").write_text(json.dumps([3]))
    assert _error(run_dir) == f"{run_dir / 'results.json'}: every result must be a JSON object, got int"
    (run_dir / "results.json").write_text(json.dumps([record()]))
    (run_dir / "manifest.json").write_text("[]")
    assert _error(run_dir) == f"{run_dir / 'manifest.json'} must be a JSON object"


def test_similarities_must_cover_every_test(tmp_path):
    run_dir = make_run(tmp_path)
    with np.load(run_dir / "similarities.npz") as npz:
        arrays = {k: npz[k] for k in npz.files if k not in ("weat3/ya", "weat3/yb")}
    np.savez(run_dir / "similarities.npz", **arrays)
    assert _error(run_dir) == f"{run_dir / 'similarities.npz'} lacks the arrays weat3/ya, weat3/yb"
    (run_dir / "similarities.npz").write_bytes(b"not a zip")
    assert _error(run_dir).startswith(f"similarities file {run_dir / 'similarities.npz'} is not a readable .npz "
                                      "archive (it does not start as an .npz (zip) file does)")
