"""--validity end to end: the record's validity field, the manifest, similarities.npz, the report panel,
and docs/validity.md (its command, its numbers, its Python example)."""

from __future__ import annotations

import doctest
import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from conftest import shared_path
from eatkit.cli import main
from eatkit.errors import EatkitError

DOC = Path(__file__).resolve().parents[1] / "docs" / "validity.md"
ROLES = ("X", "Y", "A", "B")


def _panel_checks(record: dict, arrays: np.lib.npyio.NpzFile) -> None:
    v = record["validity"]
    assert set(v) == {"influence", "stability", "power", "sets"}
    loo = {r: arrays[f"{record['test']}/validity_loo_{r}"] for r in ROLES}
    for r in ROLES:
        assert loo[r].shape == (record[f"n_{r.lower()}"],)
    top = v["influence"]["most_influential"]
    changes = np.concatenate([loo[r] for r in ROLES]) - record["effect_size"]
    assert abs(top[0]["change"]) == pytest.approx(np.abs(changes).max(), rel=1e-12)
    assert [abs(t["change"]) for t in top] == sorted((abs(t["change"]) for t in top), reverse=True)
    st = v["stability"]
    assert st["significant"] == (record["p_value"] < 0.05)
    assert 0 <= st["verdict_kept"] <= 1 and 0 <= st["bootstrap_same_sign"] <= 1
    assert v["power"]["power"] == 0.8 and v["power"]["effect_size"] < v["power"]["cohens_d"]
    assert set(v["sets"]) == set(ROLES)


def test_run_with_validity_offline(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["run", "weat", "--model", "glove-6b-50d", "--oov", "drop", "--tests", "weat7,weat9", "--validity",
                 "--seed", "3", "--n-bootstrap", "100", "-o", str(out), "--report"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "how far to trust (--validity)" in printed.out
    records = json.loads((out / "results.json").read_text())
    arrays = np.load(out / "similarities.npz")
    for record in records:
        _panel_checks(record, arrays)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["statistics"]["validity"] is True
    html = (out / "report.html").read_text()
    assert "How far to trust each test" in html
    for record in records:
        top = record["validity"]["influence"]["most_influential"][0]["stimulus"]
        assert top in html and f"  {record['test']}: {top} (" in printed.out
    # without --validity: no panel, validity null
    code = main(["run", "weat", "--model", "glove-6b-50d", "--oov", "drop", "--tests", "weat7", "--seed", "3",
                 "--n-bootstrap", "0", "-q", "-o", str(tmp_path / "plain"), "--report"])
    assert code == 0
    assert json.loads((tmp_path / "plain" / "results.json").read_text())[0]["validity"] is None
    assert "How far to trust" not in (tmp_path / "plain" / "report.html").read_text()


def test_validity_needs_an_eat_test(tmp_path):
    from eatkit import run_suite
    from eatkit.sources.vectors import load_word_vectors
    from eatkit.stimuli.loader import load_suite

    words = {"T": ["rose", "tulip"], "A": ["good", "nice"], "B": ["bad", "ugly"]}
    suite = {"schema": "eatkit.suite/1", "id": "sc", "title": "SC", "tests": [
        {"id": "s1", "title": "S1", "kind": "sc-eat",
         **{r: {"name": r, "modality": "word", "items": w} for r, w in words.items()}}]}
    (tmp_path / "sc.json").write_text(json.dumps(suite))
    rng = np.random.default_rng(0)
    (tmp_path / "v.txt").write_text("".join(f"{w} {' '.join(map(str, rng.normal(size=3)))}\n"
                                            for ws in words.values() for w in ws))
    with pytest.raises(EatkitError, match="validity applies to tests of kinds 'eat', 't2iat'; none of the selected tests is one"):
        run_suite(load_suite(tmp_path / "sc.json"), load_word_vectors(tmp_path / "v.txt"), validity=True)


def test_docs_python_example():
    result = doctest.testfile(str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 4 and result.failed == 0


def _doc_command() -> list[str]:
    commands = [line for line in DOC.read_text().splitlines() if line.startswith("eatkit run ")]
    assert len(commands) == 1
    return shlex.split(commands[0])[1:]


def test_docs_command_on_weat_1_to_10(tmp_path, monkeypatch, capsys):
    """The command of docs/validity.md on GloVe 840B items: the worked example's numbers and, for every
    test, the most influential word and whether the verdict survives, as the docs' table says."""
    shared_path("glove840b-weat", "glove.840B.300d.weat-items.txt")
    argv = _doc_command()
    argv[argv.index("-o") + 1] = str(tmp_path / "weat-validity")
    monkeypatch.chdir(DOC.parents[1])  # the repository root (the command reads ../shared/data)
    assert main(argv + ["-q"]) == 0, capsys.readouterr().err
    records = {r["test"]: r for r in json.loads((tmp_path / "weat-validity" / "results.json").read_text())}
    arrays = np.load(tmp_path / "weat-validity" / "similarities.npz")
    rows = re.findall(r"^\| (weat\d+) \| (\S+) \((\w)\) \| (\d+)% \| (\d+)% \| (.+) \|$", DOC.read_text(), re.M)
    assert [r[0] for r in rows] == [f"weat{i}" for i in range(1, 11)]
    html = (tmp_path / "weat-validity" / "report.html").read_text()
    for test, word, role, kept, sign, flips in rows:
        record = records[test]
        _panel_checks(record, arrays)
        v = record["validity"]
        top = v["influence"]["most_influential"][0]
        assert (top["stimulus"], top["role"]) == (word, role)
        assert round(100 * v["stability"]["verdict_kept"]) == int(kept)
        assert round(100 * v["stability"]["bootstrap_same_sign"]) == int(sign)
        assert (", ".join(f["stimulus"] for f in v["influence"]["flips"]) or "none") == flips
        # the report names the word and says whether the verdict survives
        row = re.search(rf'<th scope="row">{test} .*?</tr>', html, re.S).group(0)
        assert word in row and f"verdict kept {int(kept)}%" in row
    weat7 = records["weat7"]
    v = weat7["validity"]
    assert round(weat7["effect_size"], 2) == 1.06 and round(weat7["p_value"], 3) == 0.016
    named = {m["stimulus"]: round(m["effect_size"], 2) for m in v["influence"]["most_influential"]}
    assert (named["woman"], named["symphony"], named["son"]) == (0.82, 1.29, 0.87)
    assert v["influence"]["flips"][0]["p_value"] == 660 / 12870 and v["influence"]["loo_p_value_exact"]
    st = v["stability"]
    assert [round(x, 2) for x in st["bootstrap_interval"]] == [-0.40, 1.64]
    assert [round(x, 2) for x in st["subsample_interval"]] == [0.62, 1.37]
    assert round(st["split_half"], 2) == 0.28 and round(st["cronbach_alpha"], 2) == 0.92
    p = v["power"]
    assert (round(p["effect_size"], 2), round(p["cohens_d"], 2), round(p["t_test_cohens_d"], 2)) == (1.13, 1.35, 1.31)
    assert [round(v["sets"][r]["effective_size"], 1) for r in ROLES] == [3.5, 5.7, 4.5, 4.4]


def test_image_sets_get_image_diagnostics(tmp_path):
    """An image EAT with --validity: a resized copy planted in X is named, and X (dark) vs Y (light) is
    unbalanced in brightness; the report's panel says both."""
    from PIL import Image
    from test_encoders_image import MeanColour

    from eatkit import run_suite
    from eatkit.report import write_html_report
    from eatkit.stimuli.loader import load_suite

    rng = np.random.default_rng(0)
    levels = {"x": (0, 90), "y": (160, 256), "a": (0, 256), "b": (0, 256)}
    for cat, (low, high) in levels.items():
        (tmp_path / "toy" / cat).mkdir(parents=True)
        for k in range(4):
            pixels = rng.integers(low, high, (8, 8, 3), dtype=np.uint8)
            Image.fromarray(pixels).resize((48, 40), Image.Resampling.NEAREST).save(tmp_path / "toy" / cat / f"{cat}{k}.png")
    with Image.open(tmp_path / "toy/x/x0.png") as image:
        image.resize((30, 25)).save(tmp_path / "toy/x/x9-small.png")
    suite = {"schema": "eatkit.suite/1", "id": "toy", "title": "Toy", "tests": [
        {"id": "t", "title": "T", **{r: {"name": r, "modality": "image", "category": f"toy/{r.lower()}"}
                                     for r in ROLES}}]}
    (tmp_path / "toy.json").write_text(json.dumps(suite))
    result = run_suite(load_suite(tmp_path / "toy.json"), MeanColour(images=tmp_path, cache=False), validity=True,
                       seed=0, n_bootstrap=0)
    images = result.records[0].validity["images"]
    assert images["sets"]["X"]["near_duplicates"][0][:2] == ["toy/x/x0.png", "toy/x/x9-small.png"]
    assert all(not images["sets"][r]["near_duplicates"] for r in "YAB")
    assert images["imbalance"]["X-Y"]["brightness"] < -3 and "brightness" in images["unbalanced"]["X-Y"]
    assert images["sets"]["Y"]["properties"]["width"] == {"mean": 48.0, "sd": 0.0}
    out = result.save(tmp_path / "run")
    write_html_report([out], tmp_path / "r.html")
    html = (tmp_path / "r.html").read_text()
    assert "image toy/x/x0.png \u2248 toy/x/x9-small.png" in html and "X-Y: brightness d" in html
    # the most influential images as thumbnails (the files they came from are recorded with them)
    top = result.records[0].validity["influence"]["most_influential"]
    assert all(Path(row["file"]).name == Path(row["stimulus"]).name for row in top)
    assert html.count('<img class="thumb"') == min(len(top), 3) > 0  # the report shows the top 3
    (tmp_path / "toy").rename(tmp_path / "moved")  # files gone: the names alone, no error
    write_html_report([out], tmp_path / "r2.html")
    assert '<img class="thumb"' not in (tmp_path / "r2.html").read_text() and "toy/x/x0.png" in html


def test_validity_option_is_a_boolean():
    from eatkit import RunOptions

    assert RunOptions(validity=True).validated().manifest()["validity"] is True
    with pytest.raises(EatkitError, match="validity must be true or false, got 'yes'"):
        RunOptions(validity="yes").validated()
