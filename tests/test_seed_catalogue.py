"""Seed-set variants from a catalogue of published seed sets ("Bad Seeds", Antoniak & Mimno 2021;
eatkit.stimuli.seed_catalogue, the dataset ``bad-seeds``): the reader, the pairing rule, the variants' EATs
against the same word lists written as suite sets, OOV and duplicates, the registered file's SHA-256.

Small catalogues in the published format are built here; the published file itself is never copied into
the repository. ``test_the_published_file`` reads it from ``$EATKIT_BAD_SEEDS`` or
``../shared/data/bad-seeds/gathered_seeds.json`` and skips when neither exists."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import SHARED_DATA

from eatkit import run_suite
from eatkit.errors import EatkitError
from eatkit.sources.vectors import load_word_vectors
from eatkit.stats.differential import eat
from eatkit.stimuli.datasets import download_dataset, load_manifest
from eatkit.stimuli.loader import load_suite
from eatkit.stimuli.seed_catalogue import read_seed_catalogue

TARGETS = {"X": ["rose", "lily", "tulip"], "Y": ["ant", "fly", "wasp"], "A": ["good", "love"], "B": ["bad", "war"]}
#: (Seeds ID, Category, words, Used in Paper), in catalogue order; "war" listed twice as published sets do
SETS = [("pleasant-P1", "pleasant", ["love", "peace", "joy"], "P1"),
        ("unpleasant-P1", "unpleasant", ["war", "hate", "pain", "war"], "P1"),
        ("pleasant-P2", "pleasant", ["gentle", "warm"], "P2"),
        ("pleasantness-P1", "pleasantness", ["joy", "cheer"], "P1"),
        ("unpleasant-P2", "unpleasant", ["cruel", "cold"], "P2"),
        ("unpleasantness-P1", "unpleasantness", ["agony", "grief"], "P1"),
        ("empty-P3", "empty", [], "P3")]
WORDS = sorted({w for ws in TARGETS.values() for w in ws} | {w for _, _, ws, _ in SETS for w in ws})
PUBLISHED_SHA256 = "fe8d535eb1d4ca02c2f51db3cf12878e7415551b54ad59b63a9c212366d40ce3"


def _entry(seeds_id: str, category: str, words: list[str], paper: str) -> dict:
    return {"Category": category, "Seeds": repr(words), "Source / Justification": None, "Source Categories": "x",
            "Used in Paper": paper, "Link": None, "Seeds ID": seeds_id}


def _set(name: str, words: list[str]) -> dict:
    return {"name": name, "modality": "word", "items": words}


def _suite(folder: Path, name: str, **test: object) -> Path:
    body = {"id": "t", "title": "T", "kind": "seed-sets", **{r: _set(r, ws) for r, ws in TARGETS.items()}, **test}
    path = folder / name
    path.write_text(json.dumps({"schema": "eatkit.suite/1", "id": "s", "title": "S", "tests": [body]}))
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "cat.json").write_text(json.dumps([_entry(*s) for s in SETS]))
    rng = np.random.default_rng(7)
    (tmp_path / "v.txt").write_text("".join(f"{w} {' '.join(f'{x:.6f}' for x in rng.normal(size=6))}\n" for w in WORDS))
    return tmp_path


def _catalogue_params(**more: object) -> dict:
    return {"params": {"catalogue": "cat.json", "catalogue_a": ["pleasant", "pleasantness"],
                       "catalogue_b": ["unpleasant", "unpleasantness"], **more}}


def test_pairs_by_paper_in_catalogue_order(folder: Path) -> None:
    catalogue = read_seed_catalogue(folder / "cat.json")
    assert [(a.id, b.id) for a, b in catalogue.pairs(["pleasant", "pleasantness"], ["unpleasant", "unpleasantness"])] \
        == [("pleasant-P1", "unpleasant-P1"), ("pleasantness-P1", "unpleasantness-P1"), ("pleasant-P2", "unpleasant-P2")]
    with pytest.raises(EatkitError, match=r"the paper 'P1' has 0 selected A set\(s\) \(none\) and 1 B set\(s\) "
                                          r"\(unpleasant-P1\)"):
        catalogue.pairs(["pleasant-P2"], ["unpleasant"])
    assert [(a.id, b.id) for a, b in catalogue.pairs(["pleasant-P2"], ["unpleasant-P2"])] == [
        ("pleasant-P2", "unpleasant-P2")]
    with pytest.raises(EatkitError, match="the paper 'P1' has 2 selected A set"):
        catalogue.pairs(["pleasant", "pleasantness"], ["unpleasant"])
    with pytest.raises(EatkitError, match="set 'pleasant-P1' is selected both as A"):
        catalogue.pairs(["pleasant"], ["pleasant-P1", "unpleasant"])
    assert catalogue.sets[1].words == ("war", "hate", "pain", "war") and catalogue.sets[0].source == ""


def test_variants_equal_the_same_lists_written_as_suite_sets(folder: Path) -> None:
    """The issue's acceptance test: each catalogue variant's d and p are those of the same word lists written
    as suite sets A_<id>, B_<id> (1e-12), and of the EAT computed directly on the vectors."""
    vectors = load_word_vectors(folder / "v.txt")
    from_catalogue = run_suite(_suite(folder, "cat-suite.json", **_catalogue_params()), vectors, permutations="exact")
    pairs = [("pleasant-P1", "unpleasant-P1"), ("pleasantness-P1", "unpleasantness-P1"), ("pleasant-P2", "unpleasant-P2")]
    words = {s[0]: s[2] for s in SETS}
    written = {f"{r}_{a.replace('-', '_')}": _set(name, words[name]) for a, b in pairs for r, name in (("A", a), ("B", b))}
    by_hand = run_suite(_suite(folder, "hand-suite.json", **written), vectors, permutations="exact")
    (got,), (expected,) = [r.record for r in from_catalogue.outcomes], [r.record for r in by_hand.outcomes]
    variants = [a.replace("-", "_") for a, _ in pairs]
    assert list(got.effect_sizes) == ["suite", *variants] == list(expected.effect_sizes)
    for name in got.effect_sizes:
        assert abs(got.effect_sizes[name] - expected.effect_sizes[name]) <= 1e-12
        assert got.p_values[name] == expected.p_values[name]
    assert got.set_names == expected.set_names and got.set_names["B_pleasant_P1"] == "unpleasant-P1"
    assert got.dropped == expected.dropped == {"B_pleasant_P1": ["war (repeated)"]}
    sha = read_seed_catalogue(folder / "cat.json").sha256
    assert (got.catalogue, got.catalogue_sha256, expected.catalogue) == ("cat.json", sha, "")
    assert from_catalogue.manifest["test_params"]["t"]["catalogue_sha256"] == sha
    assert from_catalogue.manifest["stimuli"]["t"]["A_pleasant_P2"]["name"] == "pleasant-P2"

    def vec(ws: list[str]) -> np.ndarray:
        return np.stack([vectors.vectors[list(vectors.words).index(w)] for w in dict.fromkeys(ws)]).astype(np.float64)

    for (a, b), variant in zip(pairs, variants):
        direct = eat(vec(TARGETS["X"]), vec(TARGETS["Y"]), vec(words[a]), vec(words[b]), permutations="exact")
        assert abs(got.effect_sizes[variant] - direct.effect_size) <= 1e-12
        assert got.p_values[variant] == direct.p_value


def test_catalogue_words_follow_the_oov_policy(folder: Path) -> None:
    rows = [_entry(*s) for s in SETS[:2]]
    rows[0]["Seeds"] = "['love', 'peace', 'serendipity']"
    (folder / "cat.json").write_text(json.dumps(rows))
    suite = _suite(folder, "s.json", params={"catalogue": "cat.json", "catalogue_a": ["pleasant"],
                                             "catalogue_b": ["unpleasant"]})
    with pytest.raises(EatkitError, match="serendipity"):
        run_suite(suite, load_word_vectors(folder / "v.txt", words=WORDS + ["serendipity"]), permutations=100)
    result = run_suite(suite, load_word_vectors(folder / "v.txt", oov="drop", words=WORDS + ["serendipity"]),
                       permutations=100)
    assert result.outcomes[0].record.dropped["A_pleasant_P1"] == ["serendipity"]


@pytest.mark.parametrize(("content", "message"), [
    ({"a": 1}, "expected a non-empty JSON list of seed sets, got dict"),
    ([], "expected a non-empty JSON list of seed sets, got list"),
    ([3], "entry #1: expected an object, got int"),
    ([{**_entry(*SETS[0]), "Used in Paper": None}], "entry #1: 'Used in Paper' is missing or not a string"),
    ([{k: v for k, v in _entry(*SETS[0]).items() if k != "Seeds ID"}], "entry #1: 'Seeds ID' is missing"),
    ([{**_entry(*SETS[0]), "Link": 5}], "entry #1: 'Link' is not a string or null"),
    ([{**_entry(*SETS[0]), "Seeds": "[1, 2]"}], "entry #1 ('pleasant-P1'): its Seeds is not a Python list of strings"),
    ([{**_entry(*SETS[0]), "Seeds": "['a', ' ']"}], "its Seeds is not a Python list of strings"),
    ([{**_entry(*SETS[0]), "Seeds": "'love'"}], "its Seeds is not a Python list of strings (\"'love'\")"),
    ([{**_entry(*SETS[0]), "Seeds": "[" * 5000 + "]" * 5000}], "its Seeds is not a Python list of strings"),
    ([{**_entry(*SETS[0]), "Seeds": "open('x').read()"}], "its Seeds is not a Python list of strings"),
    ([{**_entry(*SETS[0]), "Category": " "}], "entry #1 ('pleasant-P1'): an empty Seeds ID or Category"),
    ([_entry(*SETS[0]), _entry(*SETS[0])], "entries #1 and #2 have the same Seeds ID 'pleasant-P1'"),
])
def test_malformed_catalogue_is_one_line(tmp_path: Path, content: object, message: str) -> None:
    (tmp_path / "c.json").write_text(json.dumps(content))
    with pytest.raises(EatkitError) as err:
        read_seed_catalogue(tmp_path / "c.json")
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(("params", "message"), [
    ({"catalogue_a": ["pleasant"], "catalogue_b": ["unpleasant"]}, "give 'catalogue' too"),
    ({"catalogue": "cat.json", "catalogue_a": ["pleasant"]}, "a catalogue needs catalogue_a and catalogue_b"),
    ({"catalogue": "cat.json", "catalogue_a": ["empty"], "catalogue_b": ["pleasantness"]},
     "the paper 'P3' has 1 selected A set(s) (empty-P3) and 0 B set(s)"),
    ({"catalogue": "cat.json", "catalogue_a": ["pleasant"], "catalogue_b": ["nope"]},
     "catalogue_b entry 'nope' is no Category or Seeds ID of it (5 categories: empty, pleasant, pleasantness, "
     "unpleasant, unpleasantness)"),
    ({"catalogue": "bad-seeds", "catalogue_a": ["pleasant"], "catalogue_b": ["unpleasant"]},
     "seed catalogue 'bad-seeds' is not in the data folder"),
])
def test_bad_selection_is_one_line(folder: Path, params: dict, message: str) -> None:
    with pytest.raises(EatkitError) as err:
        load_suite(_suite(folder, "s.json", params=params))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_an_empty_published_set_is_refused_when_selected(folder: Path) -> None:
    rows = [_entry(*SETS[6]), _entry("other-P3", "other", ["joy"], "P3")]
    (folder / "cat.json").write_text(json.dumps(rows))
    with pytest.raises(EatkitError, match="the catalogue's set 'empty-P3' has no words"):
        load_suite(_suite(folder, "s.json", params={"catalogue": "cat.json", "catalogue_a": ["empty"],
                                                    "catalogue_b": ["other"]}))


def test_a_run_cannot_set_the_catalogue(folder: Path) -> None:
    suite = _suite(folder, "s.json", **_catalogue_params())
    with pytest.raises(EatkitError, match="'catalogue' is read from the test's params in the suite file"):
        run_suite(suite, load_word_vectors(folder / "v.txt"), params={"catalogue": "other.json"})


def _mirror(folder: Path, data: bytes) -> tuple[str, dict]:
    """A file:// mirror holding ``data`` as gathered_seeds.json, and the registry's entry with a stand-in's
    SHA-256 and size."""
    (folder / "mirror").mkdir()
    (folder / "mirror" / "gathered_seeds.json").write_bytes(data)
    manifest = {**load_manifest("bad-seeds")}
    manifest["files"] = {"gathered_seeds.json": {"sha256": hashlib.sha256(data).hexdigest(),
                                                 "size": len(data)}}
    return (folder / "mirror").as_uri(), manifest


def test_bad_seeds_from_the_data_folder_checks_the_registered_sha256(folder: Path, monkeypatch) -> None:
    import eatkit.stimuli.datasets as datasets

    data = (folder / "cat.json").read_bytes()
    base_url, manifest = _mirror(folder, data)
    monkeypatch.setattr(datasets, "load_manifest", lambda name: manifest)  # the stand-in is "registered"
    dest = download_dataset("bad-seeds", base_url=base_url, progress=False)
    params = {"catalogue": "bad-seeds", "catalogue_a": ["pleasant"], "catalogue_b": ["unpleasant"]}
    test = load_suite(_suite(folder, "s.json", params=params)).test("t")
    assert [r for r in test.sets() if "_" in r] == ["A_pleasant_P1", "B_pleasant_P1", "A_pleasant_P2", "B_pleasant_P2"]
    assert dict(test.params)["catalogue_sha256"] == manifest["files"]["gathered_seeds.json"]["sha256"]
    (dest / "gathered_seeds.json").write_bytes(data.replace(b"cold", b"cool"))  # changed after the download
    with pytest.raises(EatkitError, match="has SHA-256 .*, not the expected " + manifest["files"]["gathered_seeds.json"]["sha256"]):
        load_suite(_suite(folder, "s.json", params=params))


def test_registry_entry() -> None:
    entry = load_manifest("bad-seeds")
    assert entry["base_url"] == ("https://raw.githubusercontent.com/maria-antoniak/bad-seeds/"
                                 "aa5f2c72b2482881a0ee1a99e6df2598a4136aa1")
    assert entry["files"] == {"gathered_seeds.json": {"sha256": PUBLISHED_SHA256, "size": 208_381}}


def test_the_published_file(tmp_path: Path) -> None:
    """The real gathered_seeds.json (``$EATKIT_BAD_SEEDS``, or under ../shared/data): fetched through a
    file:// mirror, it passes the registry's pinned SHA-256 and size, and reads as the paper's 178 sets."""
    given = os.environ.get("EATKIT_BAD_SEEDS")
    path = Path(given) if given else SHARED_DATA / "bad-seeds" / "gathered_seeds.json"
    if not path.is_file():
        pytest.skip(f"needs the published gathered_seeds.json ($EATKIT_BAD_SEEDS or {path})")
    (tmp_path / "mirror").mkdir()
    (tmp_path / "mirror" / "gathered_seeds.json").write_bytes(path.read_bytes())
    dest = download_dataset("bad-seeds", tmp_path / "data", base_url=(tmp_path / "mirror").as_uri(), progress=False)
    catalogue = read_seed_catalogue(dest / "gathered_seeds.json")
    assert catalogue.sha256 == PUBLISHED_SHA256 and len(catalogue.sets) == 178
    assert sum(not s.words for s in catalogue.sets) == 13
    weat1 = load_suite("weat").test("weat1")  # the WEAT paper's lists, as the catalogue gathered them
    published = {s.id: s.words for s in catalogue.sets}
    assert [published[f"{c}-Caliskan_et_al_2017"] for c in ("flowers", "insects", "pleasant", "unpleasant")] == [
        weat1.set(r).items for r in ("X", "Y", "A", "B")]
    assert [(a.id, b.id) for a, b in catalogue.pairs(["pleasant", "pleasantness"], ["unpleasant", "unpleasantness"])] \
        == [("pleasant-Caliskan_et_al_2017", "unpleasant-Caliskan_et_al_2017"),
            ("pleasantness-Caliskan_et_al_2017", "unpleasantness-Caliskan_et_al_2017"),
            ("pleasant-Knoche_et_al_2019", "unpleasant-Knoche_et_al_2019")]
