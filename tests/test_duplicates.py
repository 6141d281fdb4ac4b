"""One rule for duplicate stimuli, for every kind (eatkit.stimuli.duplicates, docs/duplicates.md): a stimulus
enters a set once; later copies are dropped and recorded in Embedded.dropped (so in results and manifest)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from eatkit.encoders.base import NeuralEncoder
from eatkit.sources.precomputed import IEATEmbeddings, PrecomputedEmbeddings
from eatkit.sources.vectors import WordVectors, load_word_vectors
from eatkit.stimuli.loader import load_suite
from eatkit.stimuli.types import StimulusSet


def words(*items: str) -> StimulusSet:
    return StimulusSet("Flowers", "word", items)


class Bytes(NeuralEncoder):
    """A toy encoder: a text's length, or an image file's first bytes (no model, no torch)."""

    id = "bytes"
    modalities = frozenset({"word", "sentence", "image"})

    def config(self):
        return {"model": "bytes"}

    def _image_transform(self):
        return _first_bytes  # picklable: images are decoded in worker processes

    def _encode(self, modality, inputs):
        return np.array([[len(x), x[-1] if modality == "image" else 0] for x in inputs], dtype=float)


def _first_bytes(path):
    return Path(path).read_bytes()[:3]


def test_a_word_repeated_in_a_suite_set_is_dropped_and_recorded(tmp_path: Path) -> None:
    sets = {role: {"name": role, "modality": "word", "items": [f"{role.lower()}1", f"{role.lower()}2"]}
            for role in "XYAB"}
    sets["A"]["items"] = ["good", "nice", "good"]
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"schema": "eatkit.suite/1", "id": "s", "title": "S",
                                "tests": [{"id": "t", "title": "T", **sets}]}))
    a = load_suite(path).test("t").set("A")
    wv = WordVectors(["good", "nice"], np.eye(2), id="toy")
    e = wv.embed(a)
    assert (e.ids, e.dropped, e.vectors.tolist()) == (("good", "nice"), ("good (repeated)",), [[1, 0], [0, 1]])
    e = Bytes(cache=False).embed(a)
    assert (e.ids, e.dropped, e.vectors[:, 0].tolist()) == (("good", "nice"), ("good (repeated)",), [4, 4])


def test_a_word_listed_twice_in_a_vectors_file_uses_the_first_and_records_it(tmp_path: Path) -> None:
    path = tmp_path / "v.txt"
    path.write_text("rose 1 0\nant 0 1\nrose 2 0\nbee 1 1\nbee 1 1\n")
    for wv in (load_word_vectors(path), load_word_vectors(path, words=["rose", "ant"])):
        e = wv.embed(words("ant", "rose"))
        assert e.vectors.tolist() == [[0.0, 1.0], [1.0, 0.0]]
        assert e.dropped == ("rose (listed 2 times in v.txt; the first used)",)
        assert wv.embed(words("ant")).dropped == ()  # duplicates of words no set uses are not recorded
    assert load_word_vectors(path).manifest()["duplicated_words"] == 2


def test_a_word_listed_twice_in_a_binary_vectors_file_uses_the_first(tmp_path: Path) -> None:
    path = tmp_path / "v.bin"
    body = b"".join(w + b" " + struct.pack("<2f", *v) + b"\n" for w, v in
                    [(b"rose", (1, 0)), (b"rose", (2, 0)), (b"ant", (0, 1))])
    path.write_bytes(b"3 2\n" + body)
    e = load_word_vectors(path).embed(words("rose"))
    assert (e.vectors.tolist(), e.dropped) == ([[1.0, 0.0]], ("rose (listed 2 times in v.bin; the first used)",))


def test_two_items_looked_up_as_one_entry_keep_the_first() -> None:
    wv = WordVectors(["rose", "ant"], np.eye(2), cased=False, id="toy", oov="drop")
    e = wv.embed(words("Rose", "ant", "rose", "aster"))
    assert e.ids == ("Rose", "ant")
    assert e.dropped == ("aster", "rose (the same entry of toy as Rose)")
    cased = WordVectors(["rose", "Rose"], np.eye(2), cased=True, id="toy")
    assert cased.embed(words("Rose", "rose")).vectors.tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_two_byte_identical_images_in_a_set_keep_the_first_name(tmp_path: Path) -> None:
    folder = tmp_path / "t" / "c"
    folder.mkdir(parents=True)
    (folder / "b.png").write_bytes(b"\x89PN1")
    (folder / "c.png").write_bytes(b"\x89PN2")
    stimuli = StimulusSet("C", "image", category="t/c")
    assert Bytes(cache=False, images=tmp_path).embed(stimuli).dropped == ()
    (folder / "a-copy.png").write_bytes(b"\x89PN2")
    for cache in (False, True):
        e = Bytes(cache=cache, images=tmp_path).embed(stimuli)
        assert e.ids == ("t/c/a-copy.png", "t/c/b.png")
        assert e.dropped == ("t/c/c.png (byte-identical to t/c/a-copy.png)",)


def test_an_id_listed_twice_in_embeddings_files_uses_the_first(tmp_path: Path) -> None:
    path = tmp_path / "e.npz"
    np.savez(path, ids=np.array(["rose", "ant", "rose"]), vectors=np.array([[1.0, 0], [0, 1], [2, 0]]))
    e = PrecomputedEmbeddings(path).embed(words("rose", "ant", "ant"))
    assert e.vectors.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert e.dropped == ("ant (repeated)", "rose (listed 2 times in e.npz; the first used)")
    (tmp_path / "age_young_m.csv").write_text(",0,1,img\n0,1.0,2.0,a.jpg\n1,3.0,4.0,a.jpg\n2,5,6,b.jpg\n")
    young = IEATEmbeddings(tmp_path, "m").embed(StimulusSet("Young", "image", category="age/young"))
    assert (young.ids, young.vectors.tolist()) == (("a.jpg", "b.jpg"), [[1.0, 2.0], [5.0, 6.0]])
    assert young.dropped == ("a.jpg (listed 2 times in age_young_m.csv; the first used)",)


def test_the_rule_is_documented() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "duplicates.md").read_text(encoding="utf-8")
    for kind in ("listed twice in a set", "byte-identical", "vectors file", "embeddings file", "dropped"):
        assert kind in doc
