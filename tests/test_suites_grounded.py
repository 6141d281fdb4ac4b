"""The grounded suites (grounded-google, grounded-coco, grounded-concap): seed 001's Table 1 and its sources."""

from __future__ import annotations

import ast
import json

import pytest
from conftest import shared_path

from eatkit.errors import EatkitError
from eatkit.stimuli.captioned import CaptionedImages, captions_without_words
from eatkit.stimuli.loader import load_suite
from eatkit.stimuli.schema import parse_suite

# Seed 001, Table 1: images per bias test (the larger of a test's word and sentence files)
TABLE_1 = {
    "grounded-google": {
        "C3": 1648, "C6": 780, "C8": 718, "C11": 1680, "+C12": 748, "+C13": 522,
        "DB: M/W, Competent": 560, "DB: M/W, Likeable": 480, "+DB: EA/AA, Competent": 440,
        "+DB: EA/AA, Likeable": 360, "M/W, Occupation": 960, "EA/AA, Occupation": 928, "ABW": 760,
    },
    "grounded-coco": {"C6": 254, "M/W, Occupation": 229},
    "grounded-concap": {"C6": 203, "M/W, Occupation": 171},
}
ROLES = ("X", "Y", "A_x", "A_y", "B_x", "B_y")


def image_counts(suite_id: str) -> dict[str, int]:
    """Image entries (distinct images of each set, summed over the six sets) per test family, the larger
    of its word and sentence tests."""
    counts: dict[str, int] = {}
    for test in load_suite(suite_id).tests:
        n = sum(len(set(test.set(role).images)) for role in ROLES)
        family = test.param("family")
        counts[family] = max(counts.get(family, 0), n)
    return counts


@pytest.mark.parametrize("suite_id", sorted(TABLE_1))
def test_table_1_image_counts(suite_id: str) -> None:
    counts = image_counts(suite_id)
    assert {family: counts[family] for family in TABLE_1[suite_id]} == TABLE_1[suite_id]


def test_suites_hold_the_37_source_tests() -> None:
    tests = {s: load_suite(s).tests for s in TABLE_1}
    assert [len(tests[s]) for s in ("grounded-google", "grounded-coco", "grounded-concap")] == [26, 6, 5]
    for suite_tests in tests.values():
        for test in suite_tests:
            assert test.kind == "grounded" and tuple(test.sets()) == ROLES
            assert all(isinstance(s, CaptionedImages) for s in test.sets().values())
            sentence = test.id.startswith("sent-") or test.id.endswith("_one_sentence")
            assert test.param("embeddings") == (["sentence", "contextual"] if sentence else ["word"])
            if sentence:  # contextual embeddings need a contextual word in every caption
                words = tuple(test.param("contextual_words"))
                assert not any(captions_without_words(s, words) for s in test.sets().values()), test.id


def test_known_source_defects_are_recorded_not_fixed() -> None:
    google = load_suite("grounded-google")
    assert "its dataset_dir is 'weat13'" in google.test("weat6").notes
    for suite_id, test_id in (("grounded-google", "weat8"), ("grounded-google", "sent-weat8"),
                              ("grounded-coco", "weat8"), ("grounded-coco", "sent-weat8"),
                              ("grounded-concap", "weat8")):
        test = load_suite(suite_id).test(test_id)
        assert "A_x and A_y list the same images" in test.notes
        assert sorted(test.set("A_x").images) == sorted(test.set("A_y").images)  # kept as the source has it
    assert "no contextual_words" in load_suite("grounded-concap").test("weat8").notes


@pytest.mark.shared_data
@pytest.mark.parametrize("suite_id", sorted(TABLE_1))
def test_suites_equal_their_sources(suite_id: str) -> None:
    """Every (image, caption) pair of every set, in the source's order, and the contextual words."""
    folder = shared_path("grounded", "grounded-tests", suite_id.removeprefix("grounded-"))

    def literal(value):
        return ast.literal_eval(value) if isinstance(value, str) else value

    for test in load_suite(suite_id).tests:
        source = json.loads((folder / f"{test.id}.jsonl").read_text())
        c1, c2 = source["targ1"]["category"], source["targ2"]["category"]
        parts = {"X": ("targ1", "images"), "Y": ("targ2", "images"), "A_x": ("attr1", f"{c1}_Images"),
                 "A_y": ("attr1", f"{c2}_Images"), "B_x": ("attr2", f"{c1}_Images"), "B_y": ("attr2", f"{c2}_Images")}
        for role, (key, images_key) in parts.items():
            captions = {str(k): v for k, v in literal(source[key]["captions"]).items()}
            pairs = [(image, captions[str(i)]) for image, idx in literal(source[key][images_key]).items() for i in idx]
            stimuli = test.set(role)
            assert list(zip(stimuli.images, stimuli.items)) == pairs, (test.id, role)
        assert test.param("contextual_words") == source.get("contextual_words", [])


def test_image_caption_sets_are_validated() -> None:
    def suite(set_object: dict) -> str:
        roles = {role: set_object for role in ROLES}
        return json.dumps({"schema": "eatkit.suite/1", "id": "s", "title": "S", "tests": [
            {"id": "t", "title": "T", "kind": "grounded", **roles}]})

    ok = parse_suite(suite({"name": "P", "modality": "image-caption", "captions": ["a", "a"],
                            "images": ["x.jpg", "y.jpg"]}), "s.json")
    assert ok.test("t").set("A_y").pair_ids() == ("x.jpg|a", "y.jpg|a")
    with pytest.raises(EatkitError, match=r"needs as many images as captions \(at least one\), got 1 and 2$"):
        parse_suite(suite({"name": "P", "modality": "image-caption", "captions": ["a", "b"], "images": ["x.jpg"]}),
                    "s.json")
    with pytest.raises(EatkitError, match=r"image 'd/x\.jpg' must be a file name \(images are found by name\)$"):
        parse_suite(suite({"name": "P", "modality": "image-caption", "captions": ["a"], "images": ["d/x.jpg"]}),
                    "s.json")
    with pytest.raises(EatkitError, match=r"image-caption sets take no 'items' \(only captions and images\)$"):
        parse_suite(suite({"name": "P", "modality": "image-caption", "captions": ["a"], "images": ["x.jpg"],
                           "items": ["a"]}), "s.json")
