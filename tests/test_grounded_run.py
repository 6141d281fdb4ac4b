"""Grounded-WEAT/SEAT end to end: a grounded suite, a tiny ViLT built offline, ``eatkit run`` and its table,
records and bad input (one line, exit 2)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_cli import assert_one_line_error, run_cli
from test_encoders_joint import TOWER, VOCAB, _tokenizer

from eatkit.analyses import record_from_json
from eatkit.stats.grounded import QUESTIONS

from conftest import lazy_module
torch = lazy_module("torch")
transformers = lazy_module("transformers")
Image = lazy_module("PIL.Image")

WORDS = ["John", "Amy", "lawyer", "teacher"]


def pairs(name, captions, images):
    return {"name": name, "modality": "image-caption", "captions": captions, "images": images}


def grounded_test(test_id, sentence, missing_word=False):
    """A C6-like test: men's vs women's names, lawyer vs teacher, with images of men (m*) and women (w*)."""
    def cap(word):
        return f"This is {word}." if sentence else word

    last = "This is a man." if missing_word else cap("teacher")
    return {
        "id": test_id, "title": f"Toy ({'sentence' if sentence else 'word'})", "kind": "grounded",
        "params": {"family": "Toy", "embeddings": ["sentence", "contextual"] if sentence else ["word"],
                   "contextual_words": WORDS, "dataset": "toy"},
        "X": pairs("Men", [cap("John")] * 3, ["m1.png", "m2.png", "m3.png"]),
        "Y": pairs("Women", [cap("Amy")] * 3, ["w1.png", "w2.png", "w3.png"]),
        "A_x": pairs("Lawyer (men)", [cap("lawyer")] * 2, ["m1.png", "m2.png"]),
        "A_y": pairs("Lawyer (women)", [cap("lawyer")] * 2, ["w1.png", "w2.png"]),
        "B_x": pairs("Teacher (men)", [cap("teacher"), last], ["m3.png", "m1.png"]),
        "B_y": pairs("Teacher (women)", [cap("teacher")] * 2, ["w3.png", "w2.png"]),
    }


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("grounded-run")
    images, regions, model = root / "images", root / "regions", root / "vilt"
    (images / "men").mkdir(parents=True)
    (images / "women").mkdir()
    regions.mkdir()
    rng = np.random.default_rng(1)
    for name in ("m1.png", "m2.png", "m3.png", "w1.png", "w2.png", "w3.png"):
        coarse = rng.integers(0, 256, size=(4, 4, 3), dtype=np.uint8)
        Image.fromarray(coarse).resize((48, 32), Image.NEAREST).save(images / ("men" if name[0] == "m" else "women") / name)
        label = "dog" if name == "w3.png" else "person"
        np.savez(regions / name.replace(".png", ".npz"), features=np.ones((1, 4)), boxes=np.array([[0, 0, 24, 32]]),
                 labels=np.array([label]), image_size=np.array([32, 48]))
    torch.manual_seed(0)
    transformers.ViltModel(transformers.ViltConfig(**TOWER, vocab_size=len(VOCAB), max_position_embeddings=40,
                                                   image_size=32, patch_size=16, max_image_length=-1)
                           ).save_pretrained(model)
    transformers.ViltImageProcessor(size={"shortest_edge": 32}, size_divisor=16).save_pretrained(model)
    _tokenizer(model)
    suite = {"schema": "eatkit.suite/1", "id": "toy-grounded", "title": "Toy grounded suite",
             "tests": [grounded_test("toy", False), grounded_test("sent-toy", True)]}
    (root / "suite.json").write_text(json.dumps(suite))
    bad = {**suite, "tests": [grounded_test("sent-toy", True, missing_word=True)]}
    (root / "bad.json").write_text(json.dumps(bad))
    return root, images, regions, f"hf-vilt:{model}"


def test_run_every_experiment_and_embedding(capsys, setup):
    root, images, _, model = setup
    args = ("run", str(root / "suite.json"), "--model", model, "--images", str(images), "--seed", "0", "--no-cache")
    code, out, err = run_cli(capsys, *args, "-o", str(root / "out"), "--report")
    assert code == 0, err
    records = [record_from_json(r) for r in json.loads((root / "out" / "results.json").read_text())]
    # one record per (test, embedding, experiment): the report reads them all (it once refused repeated tests)
    code, _, err = run_cli(capsys, "report", str(root / "out"), "--html", str(root / "report.html"))
    assert code == 0, err
    for html in ((root / "out" / "report.html").read_text(), (root / "report.html").read_text()):
        assert all(f"<th>Experiment {e}</th>" in html for e in (1, 2, 3))
        # one row per family and level (W, S, C), a cell per experiment: all 9 records shown
        assert [html.count(f"<td>Toy</td><td>{level}</td>") for level in "WSC"] == [1, 1, 1]
    # the word test: W x 3 experiments; the sentence test: S and C x 3 experiments
    assert sorted((r.test, r.embedding, r.experiment) for r in records) == sorted(
        [("toy", "word", e) for e in (1, 2, 3)] + [("sent-toy", k, e) for k in ("sentence", "contextual")
                                                    for e in (1, 2, 3)])
    for r in records:
        assert r.n == {"X": 3, "Y": 3, "A_x": 2, "A_y": 2, "B_x": 2, "B_y": 2} and r.p_value_exact
        assert (r.d_x is None) == (r.experiment != 3) and 0 < r.p_value <= 1 and r.q_value is not None
        assert r.n_partitions == (20 if r.experiment < 3 else 36)
    # the seed's layout: one row per test family and level, one column per experiment, the questions below
    lines = out.splitlines()
    assert lines[0].split() == ["test", "level", "experiment", "1", "experiment", "2", "experiment", "3"]
    assert [line.split()[:2] for line in lines[2:5]] == [["Toy", "W"], ["Toy", "S"], ["Toy", "C"]]
    for e in (1, 2, 3):
        assert f"Experiment {e}: {QUESTIONS[e]}" in out
    # reproducible to the digit
    assert run_cli(capsys, *args, "-o", str(root / "again"))[0] == 0
    assert (root / "out" / "results.json").read_text() == (root / "again" / "results.json").read_text()
    manifest = json.loads((root / "out" / "manifest.json").read_text())
    assert manifest["source"]["id"] == model and manifest["source"]["missing"] == "error"
    stimuli = manifest["stimuli"]["sent-toy"]["contextual/A_x"]
    assert [i for i, _ in stimuli["items"]] == ["m1.png|This is lawyer.", "m2.png|This is lawyer."]


def test_masking_runs_experiment_2(capsys, setup):
    root, images, regions, model = setup
    code, out, err = run_cli(capsys, "run", str(root / "suite.json"), "--model", model, "--images", str(images),
                             "--mask", "language", "--seed", "0", "--no-cache", "-o", str(root / "masked"), "--report")
    assert code == 0, err
    html = (root / "masked" / "report.html").read_text()
    assert "Grounded-WEAT/SEAT" in html and "Masked inputs (--mask language)" in html
    records = [record_from_json(r) for r in json.loads((root / "masked" / "results.json").read_text())]
    assert sorted((r.embedding, r.experiment, r.mask) for r in records) == [("sentence", 2, "language"),
                                                                            ("word", 2, "language")]
    assert "S (language masked)" in out and "Masked inputs (--mask language)" in out


def test_masking_runs_experiment_1_as_the_authors_code_did(capsys, setup):
    """Table 5 of seed 001 came from the authors' code running the masked inputs through experiment 1 (images
    integrated out); the paper's text says experiment 2: both run, one record each, told apart by experiment."""
    root, images, regions, model = setup
    code, _, err = run_cli(capsys, "run", str(root / "suite.json"), "--model", model, "--images", str(images),
                           "--mask", "language", "--experiment", "all", "--seed", "0", "--no-cache",
                           "-o", str(root / "masked-all"))
    assert code == 0, err
    records = [record_from_json(r) for r in json.loads((root / "masked-all" / "results.json").read_text())]
    assert sorted((r.embedding, r.experiment, r.mask) for r in records) == [
        ("sentence", 1, "language"), ("sentence", 2, "language"), ("word", 1, "language"), ("word", 2, "language")]
    code, _, err = run_cli(capsys, "run", str(root / "suite.json"), "--model", model, "--images", str(images),
                           "--mask", "language", "--experiment", "1", "--seed", "0", "--no-cache",
                           "-o", str(root / "masked-1"))
    assert code == 0, err
    one = [record_from_json(r) for r in json.loads((root / "masked-1" / "results.json").read_text())]
    assert [r.effect_size for r in one] == [r.effect_size for r in records if r.experiment == 1]


@pytest.mark.parametrize(("extra", "fragments"), [
    (("--embedding", "contextual"), ("caption 'This is a man.' of set B_x ('Teacher (men)') contains none of the "
                                     "test's contextual words",)),
    (("--mask", "language", "--embedding", "sentence"), ("contains none of the test's contextual words",
                                                         "--mask language masks")),
])
def test_caption_without_its_contextual_word(capsys, setup, extra, fragments):
    root, images, _, model = setup
    code, _, err = run_cli(capsys, "run", str(root / "bad.json"), "--model", model, "--images", str(images),
                           *extra, "-o", str(root / "bad-out"))
    assert_one_line_error(code, err, *fragments)


def test_missing_image(capsys, setup):
    root, images, _, model = setup
    code, _, err = run_cli(capsys, "run", str(root / "suite.json"), "--model", model, "--images",
                           str(images / "men"), "--no-cache", "-o", str(root / "missing"))
    assert_one_line_error(code, err, "3 of 3 images of set 'Women' are missing under", "(first: w1.png, w2.png, "
                          "w3.png); pass --missing drop")


def test_region_file_without_a_person_box(capsys, setup):
    root, images, regions, model = setup
    code, _, err = run_cli(capsys, "run", str(root / "suite.json"), "--model", model, "--images", str(images),
                           "--regions", str(regions), "--mask", "vision", "--no-cache", "-o", str(root / "vision"))
    assert_one_line_error(code, err, "w3.npz has no person box: --mask vision masks the people in every image")


def test_non_joint_model_and_bad_options(capsys, setup, tmp_path):
    root, images, _, model = setup
    vectors = tmp_path / "v.txt"
    vectors.write_text("john 1 0\namy 0 1\n")
    code, _, err = run_cli(capsys, "run", str(root / "suite.json"), "--vectors", str(vectors), "-o", str(tmp_path / "o"))
    assert_one_line_error(code, err, "is image-caption stimuli, which", "cannot embed")
    code, _, err = run_cli(capsys, "run", str(root / "suite.json"), "--model", model, "--mask", "vision",
                           "--experiment", "3", "-o", str(tmp_path / "o"))
    assert_one_line_error(code, err, "--mask vision is the masking variant of experiment 3",
                          "pass --experiment 2 or 1")
    code, _, err = run_cli(capsys, "run", "weat", "--vectors", str(vectors), "--experiment", "1",
                           "-o", str(tmp_path / "o"))
    assert_one_line_error(code, err, "--experiment applies to grounded tests only")


def test_bias_types_cover_the_google_families_as_table_7_counts_them():
    from eatkit.report.grounded import BIAS_TYPES
    from eatkit.stimuli.loader import load_suite

    families = {t.param("family", t.id) for t in load_suite("grounded-google").tests}
    assert families == set(BIAS_TYPES)
    assert sorted(BIAS_TYPES.values()).count("gender") == 6 and sorted(BIAS_TYPES.values()).count("race") == 7


def test_grounded_runs_side_by_side_and_significant_counts():
    from types import SimpleNamespace

    from eatkit.report.grounded import comparison_html, models_rows, significant_counts

    def rec(family, embedding, experiment, p, mask=None):
        return SimpleNamespace(family=family, embedding=embedding, mask=mask, experiment=experiment, effect_size=0.4,
                               p_value=p, p_method="permutation", p_value_exact=True)

    vilt = [rec("C6", "word", 1, 0.01), rec("C8", "word", 1, 0.03), rec("C3", "word", 1, 0.5),
            rec("C6", "sentence", 2, 0.2)]
    lxmert = [rec("C6", "word", 1, 0.2), rec("C3", "word", 1, 0.001), rec("C6", "sentence", 2, 0.01, mask="vision")]
    labelled = [("vilt", vilt), ("lxmert", lxmert)]
    header, rows = models_rows(labelled)
    assert header == ["test", "level", "experiment", "vilt", "lxmert"]
    assert [r[:3] for r in rows] == [["C6", "W", "1"], ["C6", "S", "2"], ["C6", "S (vision masked)", "2"],
                                     ["C8", "W", "1"], ["C3", "W", "1"]]
    assert rows[0][3].endswith("*") and not rows[0][4].endswith("*") and rows[3][4] == ""
    counts = significant_counts(labelled)
    assert counts["gender"][(1, "W")] == {"vilt": "2 / 2", "lxmert": "0 / 1"}
    assert counts["gender"][(2, "S (vision masked)")] == {"lxmert": "1 / 1"}
    assert counts["race"][(1, "W")] == {"vilt": "0 / 1", "lxmert": "1 / 1"}
    html = comparison_html(labelled)
    assert "Significant gender bias tests" in html and "Significant race bias tests" in html


def test_verify_an_unchanged_grounded_run_then_a_changed_image(capsys, setup, tmp_path):
    """issue 36: verify re-hashes each (image, caption) pair's files; an unchanged run is unchanged."""
    import shutil

    from eatkit.run.verify import verify_run

    root, images, regions, model = setup
    mine = tmp_path / "images"
    shutil.copytree(images, mine)
    code, _, err = run_cli(capsys, "run", str(root / "suite.json"), "--tests", "toy", "--model", model, "--images",
                           str(mine), "--no-cache", "-q", "-o", str(tmp_path / "run"))
    assert code == 0, err
    check = verify_run(tmp_path / "run")
    assert check.ok and check.checked > 12, check.changes
    code, out, _ = run_cli(capsys, "verify", str(tmp_path / "run"))
    assert code == 0, out
    Image.fromarray(np.zeros((32, 48, 3), dtype=np.uint8)).save(mine / "men" / "m1.png")
    changes = verify_run(tmp_path / "run").changes
    assert changes and all("m1.png" in line and "changed" in line for line in changes), changes
