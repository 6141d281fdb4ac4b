"""The eatkit command line: outputs, manifest, and one-line errors with a non-zero exit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import shared_path
from eatkit.cli import main

REQUIRED_FIELDS = {
    "test", "effect_size", "p_value", "p_value_exact", "n_permutations", "n_x", "n_y", "n_a", "n_b",
    "level2_x_effect_size", "level2_x_p_value", "level2_y_effect_size", "level2_y_p_value", "level3",
    "pattern", "q_value",
}


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse --help / usage errors
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code: int, err: str, *fragments: str) -> None:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("eatkit: error: ")
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["list", "--help"], ["report", "--help"],
                                  ["data", "--help"], ["cache", "--help"]])
def test_help_on_every_command(capsys, argv):
    code, out, _ = run_cli(capsys, *argv)
    assert code == 0 and "usage: eatkit" in out


def test_run_weat_on_glove_6b_with_oov_drop(capsys, tmp_path):
    out_dir = tmp_path / "run"
    code, out, err = run_cli(capsys, "run", "weat", "--model", "glove-6b-50d", "--oov", "drop",
                             "--seed", "5", "--n-bootstrap", "200", "-o", str(out_dir))
    assert code == 0, err
    assert "weat1: dropped from X (Flowers): gladiola" in err
    assert "AB-Divergent" in out  # WEAT 2 (instruments/weapons) on GloVe 6B
    records = json.loads((out_dir / "results.json").read_text())
    assert [r["test"] for r in records] == [f"weat{i}" for i in range(1, 11)]
    for r in records:
        assert REQUIRED_FIELDS <= r.keys()
        assert set(r["level3"]) == {"xa", "xb", "ya", "yb"}
        assert 0 < r["p_value"] <= 1 and r["p_value"] <= r["q_value"] <= 1
    weat1 = records[0]
    assert weat1["dropped"] == {"X": ["gladiola"]} and weat1["n_x"] == 24
    low, high = weat1["ci"]
    assert low < weat1["effect_size"] < high
    manifest = json.loads((out_dir / "manifest.json").read_text())
    assert manifest["source"]["id"] == "glove-6b-50d"
    assert manifest["statistics"]["seed"] == 5 and manifest["statistics"]["permutations"] == "auto"
    assert manifest["stimuli"]["weat1"]["X"]["dropped"] == ["gladiola"]
    assert len(manifest["suite"]["content_sha256"]) == 64
    csv_header = (out_dir / "results.csv").read_text().splitlines()[0].split(",")
    assert {"level3_xa_mean", "ci_low", "pattern"} <= set(csv_header)


def test_same_seed_same_results(capsys, tmp_path):
    args = ["run", "weat", "--model", "glove-6b-50d", "--oov", "drop", "--tests", "weat1,weat3",
            "--seed", "11", "--n-bootstrap", "100", "-q"]
    assert run_cli(capsys, *args, "-o", str(tmp_path / "a"))[0] == 0
    assert run_cli(capsys, *args, "-o", str(tmp_path / "b"))[0] == 0
    a = json.loads((tmp_path / "a" / "results.json").read_text())
    b = json.loads((tmp_path / "b" / "results.json").read_text())
    assert a == b
    # WEAT 1 (24 + 25 targets) is counted exactly under "auto" with the compiled kernels, WEAT 3 (about 30 +
    # 30 after OOV) is sampled: Monte Carlo, yet identical under one seed
    assert not a[1]["p_value_exact"]


def test_list_commands(capsys):
    code, out, _ = run_cli(capsys, "list", "suites")
    assert code == 0 and {"weat", "ieat", "ieat-intersectional"} <= {l.split()[0] for l in out.splitlines()}
    code, out, _ = run_cli(capsys, "list", "tests", "ieat")
    assert code == 0 and len(out.splitlines()) == 19  # Table 1 and the four presidents tests
    code, out, _ = run_cli(capsys, "list", "models")
    assert code == 0 and "glove-6b-50d" in out


@pytest.mark.parametrize(
    "argv,fragments",
    [
        (["run", "nosuch", "--model", "glove-6b-50d"], ["unknown suite 'nosuch'"]),
        (["run", "weat", "--model", "glove-6b-50d", "--tests", "weat99"], ["unknown test 'weat99'"]),
        (["run", "weat", "--model", "nosuch-model"], ["unknown model 'nosuch-model'"]),
        (["run", "weat", "--model", "glove-6b-50d", "--permutations", "lots"], ["--permutations", "permutations must be auto, exact or an integer >= 1, got 'lots'"]),
        (["run", "weat", "--model", "glove-6b-50d", "--alternative", "up"], ["--alternative"]),
        (["run", "weat", "--model", "glove-6b-50d", "--frobnicate"], ["unrecognized arguments: --frobnicate"]),
        (["run", "weat"], ["one of the arguments --model --vectors --embeddings --answers --series is required"]),
        (["run", "weat", "--vectors", "/no/such/vectors.txt"], ["/no/such/vectors.txt does not exist"]),
        (["run", "weat", "--model", "glove-6b-50d"], ["out-of-vocabulary", "gladiola", "--oov drop"]),
        (["list", "tests"], ["needs a suite name"]),
        (["run", "weat", "--model", "glove-6b-50d", "--tests", ","], ["the list of tests to run is empty"]),
        (["run", "weat", "--model", "glove-6b-50d", "--tests", "weat7,weat7"], ["more than once: weat7"]),
        (["run", "weat", "--model", "glove-6b-50d", "--seed", "-1"], ["seed must be random or an integer in [0, 9007199254740991], got -1"]),
        (["run", "weat", "--model", "glove-6b-50d", "--n-bootstrap", "-1"], ["--n-bootstrap"]),
        (["run", "weat", "--model", "glove-6b-50d", "--permutations", "0"], ["--permutations", "permutations must be auto, exact or an integer >= 1, got 0"]),
        (["run", "weat", "--model", "glove-6b-50d", "--sd", "pooled", "--ddof", "2"], ["ddof must be 0 or 1 with the pooled SD"]),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, fragments):
    code, _, err = run_cli(capsys, *argv)
    assert_one_line_error(code, err, *fragments)


@pytest.mark.shared_data
def test_infeasible_exact_test_is_refused_before_any_statistics(capsys, tmp_path, monkeypatch):
    # without the compiled kernels (the "fast" extra) the exact limit is 26 + 26, so WEAT 3 (32 + 32) is
    # refused up front, saying what it would cost
    monkeypatch.setattr("eatkit.stats._kernels.AVAILABLE", False)
    vectors = shared_path("glove840b-weat", "glove.840B.300d.weat-items.txt")
    code, _, err = run_cli(capsys, "run", "weat", "--vectors", str(vectors), "--permutations", "exact",
                           "-o", str(tmp_path))
    assert_one_line_error(code, err, "test 'weat3'", "32 + 32", "would take about", "GB", "eatkit[fast]")
    assert not (tmp_path / "results.json").exists()


def test_output_folder_that_is_a_file(capsys, tmp_path):
    afile = tmp_path / "out"
    afile.write_text("not a folder")
    code, _, err = run_cli(capsys, "run", "weat", "--model", "glove-6b-50d", "--oov", "drop", "-o", str(afile))
    assert_one_line_error(code, err, "exists and is not a folder")


def test_manifest_records_the_command_given_to_main(capsys, tmp_path):
    code, _, err = run_cli(capsys, "run", "weat", "--model", "glove-6b-50d", "--oov", "drop", "--tests", "weat7",
                           "--n-bootstrap", "0", "-q", "-o", str(tmp_path))
    assert code == 0, err
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["command"].startswith("eatkit run weat --model glove-6b-50d --oov drop --tests weat7")
    record = json.loads((tmp_path / "results.json").read_text())[0]
    assert record["level2_x_alternative"] == ("greater" if record["level2_x_effect_size"] >= 0 else "less")


def test_malformed_vectors_file(capsys, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("rose 0.1 0.2 0.3\ntulip 0.1 0.2\n")
    code, _, err = run_cli(capsys, "run", "weat", "--vectors", str(bad), "-o", str(tmp_path / "o"))
    assert_one_line_error(code, err, "bad.txt", "line 2")


def test_malformed_suite_file(capsys, tmp_path):
    suite = tmp_path / "mine.json"
    suite.write_text('{"schema": "eatkit.suite/1", "id": "mine", "title": "t", "tests": [}')
    code, _, err = run_cli(capsys, "run", str(suite), "--model", "glove-6b-50d")
    assert_one_line_error(code, err, "mine.json")


def test_embeddings_folder_missing_a_category(capsys, tmp_path):
    folder = tmp_path / "emb"
    folder.mkdir()
    (folder / "age_young_tiny.csv").write_text("0,1,img\n0.1,0.2,a.jpg\n0.3,0.1,b.jpg\n")
    code, _, err = run_cli(capsys, "run", "ieat", "--embeddings", str(folder), "--embeddings-model", "tiny",
                           "--tests", "age", "-o", str(tmp_path / "o"))
    assert_one_line_error(code, err, "age/old")


@pytest.mark.shared_data
def test_run_ieat_published_embeddings_writes_outputs(capsys, tmp_path):
    emb = shared_path("ieat", "embeddings")
    code, out, err = run_cli(capsys, "run", "ieat", "--embeddings", str(emb), "--embeddings-model", "igpt_l_32",
                             "--tests", "weight,native", "--seed", "1", "--n-bootstrap", "0", "-o", str(tmp_path))
    assert code == 0, err
    records = {r["test"]: r for r in json.loads((tmp_path / "results.json").read_text())}
    assert records["weight"]["effect_size"] == pytest.approx(1.67, abs=0.01)
    assert records["native"]["p_value_exact"] and records["native"]["n_permutations"] == 12870
    assert "weight" in out and "native" in out


def test_report_and_cache_commands(capsys, tmp_path):
    run_dir = tmp_path / "run"
    code, _, err = run_cli(capsys, "run", "weat", "--model", "glove-6b-50d", "--oov", "drop", "--tests",
                           "weat6,weat7", "--n-bootstrap", "50", "--report", "-q", "-o", str(run_dir))
    assert code == 0, err
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert "BY-Singular" in html and ("<svg" in html or "data:image/png" in html)
    code, out, _ = run_cli(capsys, "report", str(run_dir), str(run_dir), "--html", str(tmp_path / "two.html"))
    assert code == 0 and (tmp_path / "two.html").exists()
    code, _, err = run_cli(capsys, "report", str(tmp_path / "nothing-here"), "--html", str(tmp_path / "x.html"))
    assert_one_line_error(code, err, "nothing-here")
    code, out, _ = run_cli(capsys, "cache", "info")
    assert code == 0 and "path" in out


def test_data_get_unknown_dataset(capsys):
    code, _, err = run_cli(capsys, "data", "get", "nosuch")
    assert_one_line_error(code, err, "unknown dataset 'nosuch'")


def test_results_written_by_eatkit_0_1_0_load_and_render(capsys, tmp_path):
    """tests/data/report/glove-like holds results.json and manifest.json as eatkit 0.1.0 wrote them
    (no kind, no schema_version): they load as EAT records and render."""
    from eatkit.report import load_run

    legacy = Path(__file__).parent / "data" / "report" / "glove-like"
    assert "kind" not in json.loads((legacy / "results.json").read_text())[0]
    run = load_run(legacy)
    assert {r.kind for r in run.records} == {"eat"} and run.records[0].to_json()["schema_version"] == 2
    code, _, err = run_cli(capsys, "report", str(legacy), "--html", str(tmp_path / "old.html"))
    assert code == 0, err
    assert "EAT-Maps" in (tmp_path / "old.html").read_text(encoding="utf-8")
