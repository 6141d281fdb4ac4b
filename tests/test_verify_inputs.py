"""``eatkit verify`` checks every input whose SHA-256 a run records, through one table
(:data:`eatkit.run.verify.CHECKSUMMED`): for each kind of input a small run, one byte of the input changed, and
verify names that file (exit status 1, one line); a checksum the table does not know fails verify."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eatkit.cli import main
from eatkit.run.verify import CHECKSUMMED, CHECKED_OTHERWISE, unchecked_fields, verify_run

from test_ceat import CORPUS, WORDS, tiny_bert  # noqa: F401  (the module's tiny BERT fixture)

ITEMS = {"X": ["rose", "lily"], "Y": ["ant", "fly"], "A": ["love", "peace"], "B": ["war", "hate"]}


def _vectors(d: Path) -> Path:
    words = [w for ws in ITEMS.values() for w in ws] + ["joy", "pain", "calm", "fear"]
    path = d / "v.txt"
    path.write_text("".join(f"{w} {i % 5 + 1} {i % 3} {(i * 7) % 4 + 1}\n" for i, w in enumerate(words)), encoding="utf-8")
    return path


def _suite(d: Path, **test) -> Path:
    sets = {r: {"name": r, "modality": "word", "items": ws} for r, ws in ITEMS.items()}
    body = {"schema": "eatkit.suite/1", "id": "v", "title": "V", "tests": [{"id": "t", "title": "T", **sets, **test}]}
    (d / "suite.json").write_text(json.dumps(body), encoding="utf-8")
    return d / "suite.json"


def _vectors_run(d: Path) -> tuple[list[str], Path]:
    return ["run", str(_suite(d)), "--vectors", str(_vectors(d)), "--bootstrap", "0"], d / "v.txt"


def _answers_run(d: Path) -> tuple[list[str], Path]:
    rows = [{"id": f"q{i}/{g}", "item": f"q{i}", "answer": "x", "score": float((i + (g == "b")) % 2), "group": g}
            for i in range(6) for g in ("a", "b")]
    path = d / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    suite = {"schema": "eatkit.suite/1", "id": "ans", "title": "ans", "tests": [
        {"id": "t", "title": "t", "kind": "answers",
         "params": {"measure": "rate", "outcome": "score", "values": ["1.0"], "group": "group"}}]}
    (d / "suite.json").write_text(json.dumps(suite), encoding="utf-8")
    return ["run", str(d / "suite.json"), "--answers", str(path)], path


def _catalogue_run(d: Path) -> tuple[list[str], Path]:
    catalogue = d / "seeds.json"
    catalogue.write_text(json.dumps([{"Category": c, "Seeds": repr(w), "Used in Paper": "P", "Seeds ID": f"{c}-P"}
                                     for c, w in (("good", ["joy", "calm"]), ("bad", ["pain", "fear"]))]),
                         encoding="utf-8")
    suite = _suite(d, kind="seed-sets", params={"catalogue": "seeds.json", "catalogue_a": ["good"],
                                                "catalogue_b": ["bad"]})
    return ["run", str(suite), "--vectors", str(_vectors(d)), "--bootstrap", "0"], catalogue


def _corpus_run(d: Path, bert: str) -> tuple[list[str], Path]:
    (d / "corpus.txt").write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    suite = {"schema": "eatkit.suite/1", "id": "ceat", "title": "CEAT", "tests": [
        {"id": "c", "title": "c", "kind": "ceat", **{r: {"name": r, "modality": "word", "items": ws}
                                                      for r, ws in WORDS.items()}}]}
    (d / "suite.json").write_text(json.dumps(suite), encoding="utf-8")
    return ["run", str(d / "suite.json"), "--model", f"hf:{bert}", "--pooling", "token", "--corpus",
            str(d / "corpus.txt"), "--contexts", "3", "--no-cache"], d / "corpus.txt"


#: each row of CHECKSUMMED: the run that records such an input here, or the test that covers it elsewhere
CASES = {"source files": _vectors_run, "answer files": _answers_run, "seed catalogues": _catalogue_run,
         "CEAT corpora": _corpus_run}
ELSEWHERE = {
    "embedding files": "tests/test_verify.py::test_a_run_on_published_embeddings_checks_their_files_and_recorded_names",
    "vocabulary files": "not run here: a HistWords decade's vocabulary pickle (the row reads source.vocabulary)",
    "generator folders": "not run here: a local diffusers folder (tests/test_generation.py builds one)",
    "annotation files": "test_annotation_files_an_analysis_set_recorded_are_checked (a manifest given them)",
    "items files": "tests/test_answers_model.py::test_verify_reports_a_changed_items_file",
}


def test_every_checksummed_input_has_its_case():
    assert {c.what for c in CHECKSUMMED} == set(CASES) | set(ELSEWHERE)


def _flip_one_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("what", sorted(CASES))
def test_a_changed_input_is_named_by_verify(what, tmp_path, capsys, request):
    make = CASES[what]
    args, changed = make(tmp_path, request.getfixturevalue("tiny_bert")) if what == "CEAT corpora" else make(tmp_path)
    out = tmp_path / "run"
    assert main([*args, "-q", "--seed", "0", "-o", str(out)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0, capsys.readouterr().out
    counted = capsys.readouterr().out
    assert f"1 {what}" in counted, counted
    _flip_one_byte(changed)
    assert main(["verify", str(out)]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("changed: ")]
    label = next(c.label for c in CHECKSUMMED if c.what == what)
    assert len(lines) == 1 and lines[0].startswith(f"changed: {label} {changed.name}: ") and \
        lines[0].endswith("recorded)") and str(changed) in lines[0], lines


def test_a_checksum_verify_does_not_know_fails_verify(tmp_path, capsys):
    """A new input recorded with its SHA-256 in a field no row of the table reads cannot pass as unchanged."""
    args, _ = _vectors_run(tmp_path)
    out = tmp_path / "run"
    assert main([*args, "-q", "-o", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert unchecked_fields(manifest, json.loads((out / "results.json").read_text())) == []
    manifest["source"]["table"] = {"path": "t.csv", "sha256": "ab" * 32}  # an input verify does not know
    (out / "manifest.json").write_text(json.dumps(manifest))
    capsys.readouterr()
    assert main(["verify", str(out)]) == 1
    assert ("changed: source.table.sha256: a SHA-256 of an input that verify does not check (verify cannot tell "
            "whether it changed)") in capsys.readouterr().out.splitlines()
    assert verify_run(out).changes == ["source.table.sha256: a SHA-256 of an input that verify does not check "
                                       "(verify cannot tell whether it changed)"]


def test_every_field_checked_otherwise_says_why():
    assert all(reason.strip() for reason in CHECKED_OTHERWISE.values())


def test_annotation_files_an_analysis_set_recorded_are_checked(tmp_path, capsys):
    """A geometry suite made by ``eatkit analysis-set`` records its annotation files in the test's
    ``params.source`` (path and ``<name>_sha256``), which the manifest's ``test_params`` carries: verify
    checks each (shown on a run's manifest given such a test's parameters)."""
    from eatkit.io import file_sha256

    args, _ = _vectors_run(tmp_path)
    out = tmp_path / "run"
    assert main([*args, "-q", "-o", str(out)]) == 0
    boxes = tmp_path / "boxes.csv"
    boxes.write_text("ImageID,LabelName\nc1,/m/0k4j\n", encoding="utf-8")
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["test_params"] = {"t": {"source": {"from": "open-images", "boxes": str(boxes),
                                                "boxes_sha256": file_sha256(boxes)}}}
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert verify_run(out).ok and verify_run(out).what["annotation files"] == 1
    _flip_one_byte(boxes)
    assert verify_run(out).changes == [f"annotation file boxes.csv: {boxes} changed (sha256 "
                                       f"{manifest['test_params']['t']['source']['boxes_sha256'][:12]}... recorded)"]
