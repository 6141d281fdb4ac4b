"""The bundled mleat-clip suite end to end on a tiny open_clip model, with and without a prompt."""

from __future__ import annotations

from html import escape

import numpy as np
import pytest

from eatkit.cli import main
from eatkit.report.series import SIGN_CHANGE, load_series, series_html, series_table
from eatkit.stimuli.loader import load_suite

from conftest import lazy_module
torch = lazy_module("torch")
open_clip = lazy_module("open_clip")
Image = lazy_module("PIL.Image")

PROMPT = "a picture that brings to mind {x}"
@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``open_clip:eatkit-mleat-tiny/<weights>``: a random tiny CLIP (create_model with pretrained=None)."""
    from tiny_vl import tiny_open_clip

    return tiny_open_clip(tmp_path_factory.mktemp("tiny-open-clip-mleat"), "eatkit-mleat-tiny")


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory):
    """Every image category of mleat-clip in the iEAT layout, two random 24x24 images each."""
    root = tmp_path_factory.mktemp("mleat-images")
    rng = np.random.default_rng(0)
    for test in load_suite("mleat-clip").tests:
        for stimuli in test.sets().values():
            if stimuli.modality == "image":
                folder = root / stimuli.category
                folder.mkdir(parents=True, exist_ok=True)
                for k in range(2):
                    Image.fromarray(rng.integers(0, 256, (24, 24, 3), dtype=np.uint8)).save(folder / f"{k}.png")
    return root


@pytest.mark.slow
def test_mleat_clip_compares_prompts_side_by_side(capsys, tmp_path, tiny_model, images):
    out = tmp_path / "out"
    code = main(["run", "mleat-clip", "--model", tiny_model, "--images", str(images), "--compare-prompts", "",
                 PROMPT, "--seed", "0", "--permutations", "100", "--n-bootstrap", "0", "-o", str(out)])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    series = load_series(out)
    assert series.kind == "prompts" and series.labels == ["", PROMPT]
    assert [r.manifest["source"]["prompt"] for r in series.runs] == [None, PROMPT]
    assert series.tests() == [t.id for t in load_suite("mleat-clip").tests]
    # the words are embedded differently, the images identically: level 3 moves
    for test in series.tests():
        bare, prompted = (s.level3 for s in series.points(test))
        assert bare["xa"]["mean"] != prompted["xa"]["mean"]
    # a sign change is marked exactly where level 1 changes sign
    table = series_table(series)
    assert table in stdout
    for test in series.tests():
        bare, prompted = series.points(test)
        block = table.split(f"{test}: ", 1)[1].split("\n\n", 1)[0].splitlines()
        row = next(line for line in block if line.startswith(repr(PROMPT)))
        d_cell = row[len(repr(PROMPT)):].split()[0]
        assert d_cell.endswith(SIGN_CHANGE) == (bare.effect_size * prompted.effect_size < 0)
    html = series_html(series)  # the report's section for a series (the full report: test_series.py)
    n = len(load_suite("mleat-clip").tests)  # 11: Tables 9-12
    # the prompt, unquoted: once in each test's figure, and before each of its records' warnings (here the
    # p-floor warning: two images per set cannot reach alpha)
    warned = html.count(f"<li>{escape(PROMPT)}: ")
    assert warned == n and "the smallest p-value this test can reach" in html
    assert html.count("<svg") == n and html.count(escape(repr(PROMPT))) == 0 and html.count(escape(PROMPT)) == n + warned


def test_a_prompt_without_the_placeholder_is_a_one_line_error(capsys, tmp_path, tiny_model, images):
    code = main(["run", "mleat-clip", "--model", tiny_model, "--images", str(images), "--compare-prompts", "",
                 "a picture", "-o", str(tmp_path / "o")])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "must contain the placeholder {x}" in err
