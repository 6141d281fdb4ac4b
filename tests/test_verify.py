"""Image runs are traceable: the manifest lists every file with its SHA-256, a changed image changes its
set's hash, and ``eatkit verify`` names it (issue 10); a run's source files are checked too."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from eatkit.cli import main
from eatkit.encoders.base import NeuralEncoder
from eatkit.io import file_sha256
from eatkit.run.runner import run_suite
from eatkit.stimuli.loader import load_suite
from eatkit.run.verify import verify_run

CATEGORIES = {"X": "t/flowers", "Y": "t/insects", "A": "t/pleasant", "B": "t/unpleasant"}


class Pixels(NeuralEncoder):
    """A toy image encoder (no model): the first bytes of the file as a vector."""

    id = "pixels"
    modalities = frozenset({"image"})

    def config(self):
        return {"model": "pixels"}

    def _image_transform(self):
        return _file_bytes  # picklable: images are decoded in worker processes

    def _encode(self, modality, inputs):
        return np.array([[b[0] + 1.0, b[1] + 2.0, len(b)] for b in inputs])


def _file_bytes(path):
    return Path(path).read_bytes()


@pytest.fixture
def image_run(tmp_path: Path) -> tuple[Path, Path, Path]:
    images = tmp_path / "images"
    for k, category in enumerate(CATEGORIES.values()):
        (images / category).mkdir(parents=True)
        for i in range(3):
            (images / category / f"{i}.png").write_bytes(bytes([k * 40 + i * 7, 200 - k * 30 - i, i, k]))
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps({"schema": "eatkit.suite/1", "id": "toy", "title": "Toy", "tests": [{
        "id": "t", "title": "T", **{r: {"name": r, "modality": "image", "category": c} for r, c in CATEGORIES.items()}}]}))
    out = tmp_path / "run"
    run_suite(load_suite(suite), Pixels(images=images, cache=False), seed=0, permutations=10, n_bootstrap=0).save(out)
    return images, suite, out


def test_the_manifest_lists_every_image_with_its_sha256(image_run) -> None:
    images, _, out = image_run
    stimuli = json.loads((out / "manifest.json").read_text())["stimuli"]["t"]
    assert stimuli["X"]["items"] == [[f"t/flowers/{i}.png", file_sha256(images / "t/flowers" / f"{i}.png")]
                                     for i in range(3)]
    assert json.loads((out / "manifest.json").read_text())["source"]["images"] == str(images.resolve())
    assert verify_run(out).ok and verify_run(out).checked == 4 * (3 + 1)


def test_changing_one_image_changes_its_sets_hash_and_verify_names_it(image_run, tmp_path, capsys) -> None:
    images, suite, out = image_run
    before = json.loads((out / "manifest.json").read_text())["stimuli"]["t"]
    changed = images / "t" / "pleasant" / "1.png"
    changed.write_bytes(b"\x01\x02\x03\x04")
    assert main(["verify", str(out)]) == 1
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("changed: test 't' set A (A): t/pleasant/1.png changed (sha256 ")
    assert printed[-1] == f"{out}: 16 checksums checked (4 set fingerprints, 12 image files), 1 changed"
    rerun = tmp_path / "rerun"
    run_suite(load_suite(suite), Pixels(images=images, cache=False), seed=0, permutations=10, n_bootstrap=0).save(rerun)
    after = json.loads((rerun / "manifest.json").read_text())["stimuli"]["t"]
    assert after["A"]["sha256"] != before["A"]["sha256"]
    assert [after[r]["sha256"] for r in "XYB"] == [before[r]["sha256"] for r in "XYB"]
    changed.unlink()
    assert any("t/pleasant/1.png is missing" in c for c in verify_run(out).changes)
    # a file added to a category folder is a change too (issue 26): a re-run would embed it
    (images / "t" / "insects" / "9.png").write_bytes(b"\x09\x08\x07\x06")
    (images / "t" / "insects" / "copy.png").write_bytes((images / "t" / "insects" / "0.png").read_bytes())
    added = [c for c in verify_run(out).changes if "added" in c]
    assert added == [f"test 't' set Y (Y): t/insects/9.png was added to {images.resolve()} (a re-run would embed it)"]


def test_verify_checks_an_edited_manifest_and_the_vectors_file(tmp_path: Path, capsys) -> None:
    vectors = tmp_path / "v.txt"
    vectors.write_text("".join(f"{w} {i} 1 {i % 3}\n" for i, w in enumerate("a b c d e f g h".split())))
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps({"schema": "eatkit.suite/1", "id": "w", "title": "W", "tests": [{
        "id": "t", "title": "T", **{r: {"name": r, "modality": "word", "items": list(ws)}
                                    for r, ws in zip("XYAB", ("ab", "cd", "ef", "gh"))}}]}))
    out = tmp_path / "run"
    assert main(["run", str(suite), "--vectors", str(vectors), "-q", "--n-bootstrap", "0", "-o", str(out)]) == 0
    capsys.readouterr()  # the run's results table (-q silences progress only)
    assert main(["verify", str(out)]) == 0
    assert capsys.readouterr().out.strip() == (f"{out}: 13 checksums checked (4 set fingerprints, 8 stimulus strings, "
                                               "1 source files), unchanged")
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["stimuli"]["t"]["X"]["items"][0][0] = "z"
    (out / "manifest.json").write_text(json.dumps(manifest))
    vectors.write_text(vectors.read_text() + "z 0 0 1\n")
    changes = verify_run(out).changes
    assert changes[0] == "test 't' set X (X): the recorded items do not match the set's sha256 (manifest edited)"
    assert changes[1] == "test 't' set X (X): 'z' does not match its sha256"
    assert changes[2].startswith("source file v.txt: ") and "changed" in changes[2]


@pytest.mark.parametrize(("setup", "message"), [
    (lambda d: None, "run folder {d}/nothing does not exist"),
    (lambda d: (d / "nothing").mkdir(), "has no manifest.json"),
    (lambda d: ((d / "nothing").mkdir(), (d / "nothing" / "manifest.json").write_text("{")),
     "manifest.json: invalid JSON at line 1, column 2"),
    (lambda d: ((d / "nothing").mkdir(), (d / "nothing" / "manifest.json").write_text('{"stimuli": {"t": {"X": '
                                                                                       '{"items": 3}}}}')),
     "stimuli.t.X has no list of [id, sha256] items"),
    (lambda d: ((d / "nothing").mkdir(), (d / "nothing" / "manifest.json").write_text(
        '{"source": {"images": "' + str(d) + '"}, "stimuli": {"t": {"X": {"modality": "image", '
        '"items": [["../../etc/passwd", "0"]], "sha256": "0"}}}}')), "must stay inside"),
])
def test_verify_bad_run_folders_are_one_line_errors(tmp_path: Path, capsys, setup, message) -> None:
    setup(tmp_path)
    assert main(["verify", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("eatkit: error: ") and "\n" not in err
    assert message.format(d=tmp_path) in err


def test_a_run_on_published_embeddings_checks_their_files_and_recorded_names(tmp_path: Path, capsys) -> None:
    # iEAT layout: {test}_{category}_{model}.csv, one row per image name; no image folder at all
    folder, rng = tmp_path / "embeddings", np.random.default_rng(0)
    folder.mkdir()
    sets = {r: {"name": r, "modality": "image", "category": f"t/{r.lower()}"} for r in "XYAB"}
    for role in "XYAB":
        rows = [",".join([str(i), *(f"{v:.5f}" for v in rng.normal(size=4)), f"{role}{i}.jpg"]) for i in range(4)]
        (folder / f"t_{role.lower()}_m.csv").write_text(",0,1,2,3,img\n" + "\n".join(rows) + "\n")
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps({"schema": "eatkit.suite/1", "id": "p", "title": "P",
                                 "tests": [{"id": "t", "title": "T", **sets}]}))
    out = tmp_path / "run"
    assert main(["run", str(suite), "--embeddings", str(folder), "--embeddings-model", "m", "-q",
                 "--n-bootstrap", "0", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    assert capsys.readouterr().out.strip() == (f"{out}: 24 checksums checked (4 set fingerprints, 16 image names "
                                               "recorded from the embedding files, 4 embedding files), unchanged")
    renamed = folder / "t_x_m.csv"
    renamed.write_text(renamed.read_text().replace("X0.jpg", "X9.jpg"))
    assert main(["verify", str(out)]) == 1
    assert "changed: source file t_x_m.csv:" in capsys.readouterr().out
