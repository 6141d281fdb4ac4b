"""Every kind's report has a figure (issue 46): the kinds come from the registry (eatkit.kinds.KINDS), so a new
kind whose report shows no ``<svg>`` or ``<img>`` fails here. The word kinds run for real (``eatkit run`` on a
random word-vector file); the others are records built field by field from their types, with the values
their figure reads (a run of them needs a model: the tests of each kind run them); the contact sheet is a grid,
each image once with its labels under it."""

from __future__ import annotations

import dataclasses
import json
import re
import types
import typing
from pathlib import Path

import numpy as np
import pytest

from conftest import require
from eatkit.cli import main
from eatkit.specs import METRICS
from eatkit.kinds import KINDS, get_kind

require("matplotlib", reason="figures need matplotlib (eatkit[report])")

#: the kinds that run on word vectors: a suite with a test of each (every metric by ``--metrics all``), run once
WORD_KINDS = ("eat", "sc-eat", *METRICS.names(), "same", "generalized-weat", "seed-sets")
WORDS = {"X": ["rose", "lily", "tulip", "daisy"], "Y": ["ant", "fly", "wasp", "moth"], "A": ["love", "peace", "joy"],
         "B": ["war", "hate", "pain"], "A_alt": ["warm", "kind", "calm"], "B_alt": ["cruel", "cold", "grim"]}


def _set(role: str) -> dict:
    return {"name": role, "modality": "word", "items": WORDS[role]}


@pytest.fixture(scope="module")
def word_run(tmp_path_factory) -> Path:
    """One ``eatkit run`` with a test of every word kind (the metrics by ``--metrics all``)."""
    root = tmp_path_factory.mktemp("word-kinds")
    rng = np.random.default_rng(0)
    (root / "v.txt").write_text("".join(f"{w} {' '.join(f'{x:.5f}' for x in rng.normal(size=6))}\n"
                                        for ws in WORDS.values() for w in ws))
    eat = {r: _set(r) for r in "XYAB"}
    tests = [{"id": "flowers", "title": "Flowers", "kind": "eat", **eat},
             {"id": "sc", "title": "SC", "kind": "sc-eat", "T": _set("X"), "A": _set("A"), "B": _set("B")},
             {"id": "same", "title": "SAME", "kind": "same", "T1": _set("X"), "A1": _set("A"), "A2": _set("B")},
             {"id": "gweat", "title": "GWEAT", "kind": "generalized-weat", "T1": _set("X"), "T2": _set("Y"),
              "A1": _set("A"), "A2": _set("B")},
             {"id": "seeds", "title": "Seeds", "kind": "seed-sets", **eat, "A_alt": _set("A_alt"),
              "B_alt": _set("B_alt")}]
    (root / "suite.json").write_text(json.dumps({"schema": "eatkit.suite/1", "id": "words", "title": "Words",
                                                 "tests": tests}))
    out = root / "run"
    assert main(["run", str(root / "suite.json"), "--vectors", str(root / "v.txt"), "--metrics", "all",
                 "--seed", "0", "--permutations", "99", "--n-bootstrap", "20", "-q",
                 "-o", str(out)]) == 0
    return out


def _value(annotation: typing.Any) -> typing.Any:
    """A plain value of a record field's type (the first type of a union; containers empty)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return _value(typing.get_args(annotation)[0])
    return {float: 0.25, int: 3, str: "x", bool: False}.get(annotation, None) if origin is None else origin()


def example_record(kind: str, **values: typing.Any):
    """A record of ``kind``: ``values``, every other field without a default by its type."""
    record_type = get_kind(kind).load_analysis().record_type
    hints = typing.get_type_hints(record_type)
    fields = {f.name: _value(hints[f.name]) for f in dataclasses.fields(record_type)
              if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    return record_type(**{**fields, "suite": "s", "test": "t", "title": "T", **values})


def _png(path: Path, shade: int) -> str:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8), (shade, shade, shade)).save(path)
    return f"generated/{path.name}"


def _images(root: Path, n: int) -> list[str]:
    return [_png(root / "generated" / f"{i:064x}.png", 40 * i) for i in range(n)]


#: the records each other kind's figure is drawn from (values from the record types, these overriding)
def _built(kind: str, root: Path) -> list:
    images = _images(root, 4)
    ci = {"ci": [0.1, 0.4]}
    rates = {"groups": ["a", "b"], "n": {"a": 10, "b": 10}, "rates": {"a": 0.3, "b": 0.6},
             "intervals": {"a": [0.1, 0.6], "b": [0.3, 0.8]}}
    made = {
        "crows-pairs": lambda: [example_record(kind, bias_type=b, share=s, bias=2 * s - 1, ci=[s - 0.1, s + 0.1])
                                for b, s in (("age", 0.6), ("race-color", 0.55))],
        "stereoset": lambda: [example_record(kind, bias_type="gender", ss=60.0, ss_ci=[55.0, 65.0])],
        "llm-iat": lambda: [example_record(kind, test=t, bias_score=0.3, association=0.2, **ci)
                            for t in ("racism", "guilt")],
        "ceat": lambda: [example_record(kind, estimate=0.4, ci=[0.1, 0.7])],
        "answers": lambda: [example_record(kind, row=row, group=g, estimate=e, ci=[e - 0.1, e + 0.1])
                            for row, g, e in (("rate", "women", 0.6), ("rate", "men", 0.4), ("difference", "women", 0.2))],
        "retrieval": lambda: [example_record(kind, attribute="gender", max_skew={"doctor": 0.3},
                                             max_skew_ci={"doctor": [0.1, 0.5]})],
        "t2iat": lambda: [example_record(kind, effect_size=0.8, **ci, s_x={"math": 0.1}, s_y={"art": -0.1},
                                         images={"math/N": images[:1], "math/A": images[1:2], "math/B": images[2:3]})],
        "depiction": lambda: [example_record(kind, group="Doctor", attribute=a, mad=0.2, mad_ci=[0.1, 0.3],
                                             images=images, labels=labels)
                              for a, labels in (("gender", ["man", "woman"] * 2), ("age", ["old", "young"] * 2))],
        "grounded": lambda: [example_record(kind, family="C6", experiment=1, embedding="word", effect_size=0.5,
                                            p_value=0.01)],
        "vqa": lambda: [example_record(kind, **rates, question="Is this person a doctor?", yes_answer="yes")],
        "caption": lambda: [example_record(kind, **rates, top_p=0.9)],
        "generation": lambda: [example_record(kind, groups=["a", "b"], n={"a": 2, "b": 2}, steps=[0, 10],
                                              brightness_mean={"a": [0.5, 0.6], "b": [0.5, 0.4]},
                                              brightness_sd={"a": [0.1, 0.1], "b": [0.1, 0.1]},
                                              change_percent={"a": [0.0, 20.0], "b": [0.0, -20.0]}, start="images")],
        "ranking": lambda: [example_record(kind, groups=["a", "b"], k=2, repeats=5, group_size=2, reference="table",
                                           shares={"Ohio": {"a": 0.5, "b": 0.5}, "Iowa": {"a": 0.7, "b": 0.3}},
                                           reference_shares={"Ohio": {"a": 0.4, "b": 0.6}, "Iowa": {"a": 0.6, "b": 0.4}},
                                           reference_columns={"a": "A"}, r={"a": 0.9}, r_squared=0.8)],
        "bbq": lambda: [example_record(kind, category="Age", context=c, accuracy=a, accuracy_ci=[a - 0.05, a + 0.05],
                                       bias_score=b, ci=[b - 0.1, b + 0.1])
                        for c, a, b in (("ambig", 0.6, 0.2), ("disambig", 0.9, 0.05))],
        "geometry": lambda: [example_record(kind, models=["m"], fold="iteration", similarity="cosine",
                                            scores=[{"key": "intra c", "kind": "intra", "model": "m", "mean": 0.5, "sd": 0.1,
                                                     "min": 0.4, "max": 0.6, "exact_mean": 0.5, "iterations": 3,
                                                     "fold": "iteration", "similarity": "cosine"}])],
    }
    if kind not in made:
        pytest.fail(f"kind {kind!r} has no records here: add a way to make them (and a figure to its report)")
    return made[kind]()


def _section(kind: str, records: list, root: Path) -> str:
    from eatkit.report.kinds import renderer

    run = types.SimpleNamespace(path=root)
    return renderer(kind).html_section(run, records, "run")


def _figures(html: str) -> int:
    return len(re.findall(r"<svg\b|<img\b", html))


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_has_a_figure_in_its_report(kind, word_run, tmp_path):
    if kind in WORD_KINDS:
        from eatkit.report.kinds import renderer
        from eatkit.report.run import load_run

        run = load_run(word_run)
        records = [r for r in run.records if r.kind == kind]
        assert records, kind
        html = renderer(kind).html_section(run, records, "run")
    else:
        html = _section(kind, _built(kind, tmp_path), tmp_path)
    assert _figures(html) >= 1, f"the report of {kind!r} has no figure"


def test_the_contact_sheet_is_a_grid_of_each_image_once_with_its_labels(tmp_path):
    records = _built("depiction", tmp_path)
    html = _section("depiction", records, tmp_path)
    sheet = html[html.index('<div class="contact-sheet">'):]
    assert sheet.count("<img") == 4  # 4 images, 2 attributes: each image once
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", sheet)
    assert captions == ["gender: man<br>age: old", "gender: woman<br>age: young"] * 2
    from eatkit.report.html import _CSS as CSS

    assert re.search(r"\.contact-sheet \{ display: grid;", CSS)


def test_t2iat_shows_each_concepts_score_and_a_sample_of_its_images(tmp_path):
    html = _section("t2iat", _built("t2iat", tmp_path), tmp_path)
    assert html.count("<svg") == 3  # d with its CI; s(c) of X's and of Y's concepts
    assert "s(c) of each concept of X" in html and html.count("data:image/jpeg") == 3  # N, A, B of "math"


def test_a_plot_draws_the_records_numbers():
    from eatkit.kinds import Plot
    from eatkit.report.intervals import Row, plot_rows

    records = _built("crows-pairs", Path("."))
    rows = plot_rows(get_kind("crows-pairs").presentation.plots[0], records)
    assert rows == [Row("", "t / age", 0.6, 0.5, 0.7), Row("", "t / race-color", 0.55, pytest.approx(0.45),
                                                                 pytest.approx(0.65))]
    # a dict of values: a point per key, its interval from the dict of intervals; no number: no point
    record = types.SimpleNamespace(test="t", v={"a": 1.0, "b": float("nan")}, ci={"a": [0.5, 1.5]})
    assert plot_rows(Plot("v", ("ci",)), [record]) == [Row("", "t / a", 1.0, 0.5, 1.5)]
