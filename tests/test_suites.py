"""Suite files: the schema's validation messages, the loader, and the bundled WEAT / iEAT suites."""

from __future__ import annotations

import copy
import csv
import json
import re
from pathlib import Path

import pytest
from published_values import IEAT_TABLE1

import eatkit.stimuli
from eatkit.errors import EatkitError
from eatkit.stimuli.loader import list_suites, load_suite
from eatkit.stimuli.schema import parse_suite
from eatkit.stimuli.types import StimulusSet

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SUITES_DIR = Path(eatkit.stimuli.__file__).parent / "suites"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "suite-schema.md"


def shared(relative: str) -> Path:
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"shared data {path} is absent")
    return path


# --- bundled suites -------------------------------------------------------------------------------


def test_list_suites_finds_every_bundled_file():
    stems = sorted(p.stem for p in SUITES_DIR.glob("*.json"))
    assert {"weat", "ieat", "ieat-intersectional"} <= set(stems)
    suites = list_suites()
    assert [s.id for s in suites] == stems  # each file's id is its name
    assert [s.source for s in suites] == [f"bundled:{stem}.json" for stem in stems]
    assert all(load_suite(s.id) == s for s in suites)


WEAT_SIZES = {  # (|X|, |Y|, |A|, |B|), Caliskan et al. (2017) as listed in the ML-EAT appendix
    "weat1": (25, 25, 25, 25), "weat2": (25, 25, 25, 25), "weat3": (32, 32, 25, 25),
    "weat4": (16, 16, 25, 25), "weat5": (16, 16, 8, 8), "weat6": (8, 8, 8, 8), "weat7": (8, 8, 8, 8),
    "weat8": (8, 8, 8, 8), "weat9": (6, 6, 7, 7), "weat10": (8, 8, 8, 8),
}


def test_weat_has_ten_word_tests_of_the_published_sizes():
    suite = load_suite("weat")
    assert {t.id: tuple(len(s.items) for s in t.sets().values()) for t in suite.tests} == WEAT_SIZES
    assert all(s.modality == "word" for t in suite.tests for s in t.sets().values())
    assert suite.citation.startswith("Caliskan, A., Bryson, J. J. & Narayanan, A. (2017).")
    weat1, weat3 = suite.test("weat1"), suite.test("weat3")
    assert weat1.title == "WEAT 1: Flowers vs. insects, pleasant vs. unpleasant"
    assert [s.name for s in weat1.sets().values()] == ["Flowers", "Insects", "Pleasant", "Unpleasant"]
    assert weat1.set("X").items[:3] == ("aster", "clover", "hyacinth")
    assert weat1.citation == suite.citation  # inherited
    # WEAT 3 and 4 swap two unpleasant words; the pleasant list is shared by WEAT 1-4.
    assert set(weat1.set("B").items) - set(weat3.set("B").items) == {"agony", "prison"}
    assert set(weat3.set("B").items) - set(weat1.set("B").items) == {"bomb", "evil"}
    assert weat1.set("A") is suite.test("weat4").set("A")


@pytest.mark.shared_data
def test_weat_word_lists_equal_the_shared_weat_stimuli():
    folder = shared("weat-stimuli")
    suite = load_suite("weat")
    for number in range(1, 11):
        expected = json.loads((folder / f"weat_{number}.json").read_text())
        test = suite.test(f"weat{number}")
        assert {role: list(s.items) for role, s in test.sets().items()} == {r: expected[r] for r in "XYAB"}


@pytest.mark.shared_data
def test_weat_word_sets_equal_the_glove_items_table():
    with shared("glove840b-weat/items.csv").open(newline="") as f:
        table: dict[tuple[str, str], set[str]] = {}
        for row in csv.DictReader(f):
            table.setdefault((row["Study"], row["Condition"]), set()).add(row["Word"])
    suite = load_suite("weat")
    for number in range(1, 11):
        conditions = {frozenset(words) for (study, _), words in table.items() if study == f"WEAT{number}"}
        sets = {frozenset(s.items) for s in suite.test(f"weat{number}").sets().values()}
        assert sets == conditions, f"weat{number}"


IEAT = {  # Steed & Caliskan (2021), Table 1, as iEAT image-layout categories
    "age": ("age/young", "age/old", "valence"),
    "arab-muslim": ("arab-muslim/other-people", "arab-muslim/arab-muslim", "valence"),
    "asian": ("asian/european-american", "asian/asian-american", "asian/american", "asian/foreign"),
    "disability": ("disabled/disabled", "disabled/abled", "valence"),
    "gender-career": ("gender/male", "gender/female", "gender/career", "gender/family"),
    "gender-science": ("gender/male", "gender/female", "gender/science", "gender/liberal-arts"),
    "insect-flower": ("insect-flower/flower", "insect-flower/insect", "valence"),
    "native": ("native/euro", "native/native", "native/us", "native/world"),
    "race": ("race/european-american", "race/african-american", "valence"),
    "religion": ("religion/christianity", "religion/judaism", "valence"),
    "sexuality": ("sexuality/gay", "sexuality/straight", "valence"),
    "skin-tone": ("skin-tone/light", "skin-tone/dark", "valence"),
    "weapon": ("weapon/white", "weapon/black", "weapon/tool", "weapon/weapon"),
    "weapon-modern": ("weapon/white", "weapon/black", "weapon/tool-modern", "weapon/weapon-modern"),
    "weight": ("weight/thin", "weight/fat", "valence"),
    # the four tests the authors' code also runs (ryansteed/ieat, output/results-full.csv)
    **{f"president-{p}-trump": (f"presidents/{p}", "presidents/trump", "valence")
       for p in ("kennedy", "clinton", "bush", "lincoln")},
}
VALENCE = ("valence/pleasant", "valence/unpleasant")


def categories(test) -> tuple[str | None, ...]:
    return tuple(s.category for s in test.sets().values())


def test_ieat_has_the_fifteen_table1_tests_and_the_presidents():
    suite = load_suite("ieat")
    expected = {k: v[:2] + VALENCE if v[2] == "valence" else v for k, v in IEAT.items()}
    assert {t.id: categories(t) for t in suite.tests} == expected
    assert [t.id for t in suite.tests][:15] == list(IEAT_TABLE1)
    # Table 1's human IAT d (None: N/A) as each test's params.iat_d
    assert {t.id: t.param("iat_d") for t in suite.tests[:15]} == {k: v["iat_d"] for k, v in IEAT_TABLE1.items()}
    assert all(s.modality == "image" and not s.items for t in suite.tests for s in t.sets().values())
    assert suite.test("insect-flower").title == "Insect-Flower: Flower vs. Insect, Pleasant vs. Unpleasant"
    assert suite.test("native").title == "Native: European American vs. Native American, U.S. vs. World"


INTERSECTIONAL_XY = {
    "gender-career-mf": ("male", "female"), "gender-career-wmbf": ("white-male", "black-female"),
    "gender-career-wmbm": ("black-male", "white-male"), "gender-career-wmwf": ("white-male", "white-female"),
    "gender-science-mf": ("male", "female"), "gender-science-wmbf": ("white-male", "black-female"),
    "gender-science-wmbm": ("white-male", "black-male"),
    "gender-science-wmwf": ("white-male", "white-female"),
    "valence-bfbm": ("black-female", "black-male"), "valence-bw": ("white", "black"),
    "valence-fm": ("female", "male"), "valence-wfbf": ("white-female", "black-female"),
    "valence-wfbm": ("white-female", "black-male"), "valence-wmbf": ("white-male", "black-female"),
    "valence-wmbm": ("white-male", "black-male"), "valence-wmwf": ("white-female", "white-male"),
    # the comparisons the authors' code also runs
    "gender-science-bmbf": ("black-male", "black-female"), "gender-science-bmwf": ("black-male", "white-female"),
    "gender-career-bmbf": ("black-male", "black-female"), "gender-career-bmwf": ("black-male", "white-female"),
}
INTERSECTIONAL_AB = {
    "gender-career": ("gender/career", "gender/family"),
    "gender-science": ("gender/science", "gender/liberal-arts"),
    "valence": VALENCE,
}


def test_ieat_intersectional_has_the_sixteen_tests_and_four_more():
    suite = load_suite("ieat-intersectional")
    expected = {
        test_id: (f"intersectional/{x}", f"intersectional/{y}") + INTERSECTIONAL_AB[test_id.rsplit("-", 1)[0]]
        for test_id, (x, y) in INTERSECTIONAL_XY.items()
    }
    assert {t.id: categories(t) for t in suite.tests} == expected
    assert suite.test("gender-career-wmbm").title == (
        "Intersectional Gender-Career: Black Male vs. White Male, Career vs. Family"
    )


def image_files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.is_file()} if folder.is_dir() else set()


@pytest.mark.shared_data
@pytest.mark.parametrize("suite_id", ["ieat", "ieat-intersectional"])
def test_every_image_category_exists_in_the_shared_images(suite_id):
    images = shared("ieat/images")
    for test in load_suite(suite_id).tests:
        for role, s in test.sets().items():
            assert image_files(images / s.category), f"{test.id} {role}: {s.category} missing or empty"


@pytest.mark.shared_data
def test_ieat_image_counts_match_table1():
    images = shared("ieat/images")
    for test in load_suite("ieat").tests:
        counts = [len(image_files(images / c)) for c in categories(test)]
        if test.id not in IEAT_TABLE1:  # the presidents: 6 images each (the authors' outputs' n_t), valence
            assert counts == [6, 6, 55, 55], test.id
            continue
        n_t, n_a = IEAT_TABLE1[test.id]["n_t"], IEAT_TABLE1[test.id]["n_a"]
        # One career image (professional2_google.jpg) is missing from the distributed data.
        expected = [n_t, n_t, n_a - 1, n_a] if test.id == "gender-career" else [n_t, n_t, n_a, n_a]
        assert counts == expected, test.id


@pytest.mark.shared_data
def test_intersectional_gender_and_race_folders_are_unions_of_the_four_groups():
    folder = shared("ieat/images/intersectional")
    files = {g: image_files(folder / g) for g in ("white-male", "white-female", "black-male", "black-female")}
    assert [len(f) for f in files.values()] == [20, 20, 20, 20]
    unions = {"male": ("white-male", "black-male"), "female": ("white-female", "black-female"),
              "white": ("white-male", "white-female"), "black": ("black-male", "black-female")}
    for group, parts in unions.items():
        assert image_files(folder / group) == files[parts[0]] | files[parts[1]], group


# --- the schema -----------------------------------------------------------------------------------


def word_set(name: str, *items: str) -> dict:
    return {"name": name, "modality": "word", "items": list(items)}


BASE = {
    "schema": "eatkit.suite/1",
    "id": "mini",
    "title": "Mini",
    "citation": "Suite citation",
    "sets": {"pleasant": {"modality": "word", "items": ["love", "peace"]}},
    "tests": [
        {
            "id": "weat3",
            "title": "T",
            "X": word_set("Flowers", "rose", "tulip"),
            "Y": {"name": "Insects", "modality": "image", "category": "insect-flower/insect"},
            "A": "pleasant",
            "B": {"name": "Unpleasant", "modality": "word", "items": ["bad"], "templates": ["This is {x}."]},
        }
    ],
}


def test_a_valid_suite_resolves_references_and_defaults():
    suite = parse_suite(json.dumps(BASE), "mini.json", source="here")
    test = suite.test("weat3")
    assert test.set("A") == StimulusSet("pleasant", "word", ("love", "peace"))  # name defaults to the key
    assert test.set("Y") == StimulusSet("Insects", "image", (), "insect-flower/insect")
    assert test.set("B").templates == ("This is {x}.",)
    assert (test.citation, test.notes, suite.description, suite.source) == ("Suite citation", "", "", "here")


def mutated(path: str, value=None, delete: bool = False) -> dict:
    """BASE with the value at the dotted ``path`` (list indices as numbers) replaced or deleted."""
    data = copy.deepcopy(BASE)
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    target = data
    for key in parents:
        target = target[key]
    if delete:
        del target[last]
    else:
        target[last] = value
    return data


W = "suite file weat.json"
T = f"{W}: test 'weat3'"
MALFORMED = [
    (mutated("tests.0.X.items", []), f"{T}: set 'X' has no items"),
    (mutated("tests.0.X.items", ["rose", 3]),
     f"{T}: set 'X': items[1] must be a non-empty string, got number"),
    (mutated("tests.0.X.items", ["rose", ""]),
     f"{T}: set 'X': items[1] must be a non-empty string, got an empty string"),
    (mutated("tests.0.X.items", ["rose "]), f"{T}: set 'X': item 'rose ' has leading or trailing whitespace"),
    (mutated("tests.0.X.items", "rose"), f"{T}: set 'X': 'items' must be an array, got string"),
    (mutated("tests.0.X.modality", "text"),
     f"{T}: set 'X': unknown modality 'text' (known: word, sentence, image, image-caption, prompt)"),
    (mutated("tests.0.Y.category", delete=True), f"{T}: set 'Y': image sets need 'category'"),
    (mutated("tests.0.Y.items", ["a.jpg"]), f"{T}: set 'Y': image sets take no 'items' (only category)"),
    (mutated("tests.0.X.category", "x/y"),
     f"{T}: set 'X': word sets take no 'category' (only items and templates)"),
    (mutated("tests.0.Y.category", "../etc"),
     f"{T}: set 'Y': category '../etc' must be a relative folder path like 'gender/male'"),
    (mutated("tests.0.B.templates", ["This is x."]),
     f"{T}: set 'B': template 'This is x.' has no '{{x}}' placeholder"),
    (mutated("tests.0.X.item", ["a"]),
     f"{T}: set 'X': unknown key 'item' (allowed: name, modality, items, category, templates, captions, images)"),
    (mutated("tests.0.X.name", delete=True), f"{T}: set 'X': missing key 'name'"),
    (mutated("tests.0.note", "n"),
     f"{T}: unknown key 'note' (allowed: id, title, kind, citation, notes, params, X, Y, A, B)"),
    (mutated("tests.0.B", delete=True), f"{T}: missing key 'B'"),
    (mutated("tests.0.title", 3), f"{T}: 'title' must be a string, got number"),
    (mutated("tests.0.title", ""), f"{T}: 'title' is empty"),
    (mutated("tests.0.X", 3), f"{T}: 'X' must be a set object or the name of an entry of 'sets', got number"),
    (mutated("tests.0.A", "pleasnt"),
     f"{T}: set 'A' refers to unknown set 'pleasnt' in 'sets' (known: pleasant)"),
    (mutated("sets", delete=True),
     f"{T}: set 'A' refers to unknown set 'pleasant' in 'sets' (known: none defined)"),
    (mutated("tests.0.id", "weat 3"),
     f"{W}: test #1: test id 'weat 3' must be letters, digits, '_', '.' or '-', "
     "starting with a letter or digit"),
    (mutated("tests.0.id", delete=True), f"{W}: test #1: missing key 'id'"),
    (mutated("tests.0", "weat3"), f"{W}: test #1 must be an object, got string"),
    (mutated("tests", BASE["tests"] * 2), f"{W}: duplicate test id 'weat3' (test #1 and test #2)"),
    (mutated("tests", []), f"{W}: 'tests' is empty"),
    (mutated("tests", {}), f"{W}: 'tests' must be an array, got object"),
    (mutated("sets.pleasant.items", []), f"{W}: set 'pleasant' has no items"),
    (mutated("sets.pleasant", ["love"]), f"{W}: set 'pleasant' must be an object, got array"),
    (mutated("schema", "eatkit.suite/2"),
     f"{W}: unsupported schema 'eatkit.suite/2' (expected 'eatkit.suite/1')"),
    (mutated("schema", delete=True), f"{W}: missing key 'schema'"),
    (mutated("id", "my suite"),
     f"{W}: suite id 'my suite' must be letters, digits, '_', '.' or '-', starting with a letter or digit"),
    (mutated("test", []),
     f"{W}: unknown key 'test' (allowed: schema, id, title, citation, description, alternative, sets, tests, $schema)"),
    (mutated("citation", None), f"{W}: 'citation' must be a string, got null"),
    ([BASE], f"{W} must be an object, got array"),
]


@pytest.mark.parametrize(
    ("data", "message"), MALFORMED, ids=[m.removeprefix(W).lstrip(": ") for _, m in MALFORMED]
)
def test_malformed_suites_raise_one_precise_line(data, message):
    with pytest.raises(EatkitError) as info:
        parse_suite(json.dumps(data, indent=2), "weat.json")
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{\n  "schema": "eatkit.suite/1",\n  "id": "x"\n  "title": "t"\n}',
         f"{W}: invalid JSON at line 4, column 3: Expecting ',' delimiter"),
        ("", f"{W}: invalid JSON at line 1, column 1: Expecting value"),
        ('{"schema": "eatkit.suite/1", "schema": "eatkit.suite/1"}',
         f"{W}: duplicate key 'schema' in a JSON object"),
    ],
)
def test_unparsable_json_names_the_place(text, message):
    with pytest.raises(EatkitError) as info:
        parse_suite(text, "weat.json")
    assert str(info.value) == message


def test_the_documented_example_is_a_valid_suite():
    example = re.search(r"```json\n(.*?)```", DOCS.read_text(), re.S).group(1)
    suite = parse_suite(example, "suite-schema.md")
    assert (suite.id, [t.id for t in suite.tests]) == ("my-suite", ["flowers"])
    assert suite.test("flowers").set("B").name == "Unpleasant"


# --- the loader -----------------------------------------------------------------------------------


def test_load_suite_reads_a_users_file(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(BASE), encoding="utf-8")
    assert load_suite(path).test("weat3").set("X").items == ("rose", "tulip")
    assert load_suite(str(path)).source == str(path.resolve())


def test_unknown_suite_lists_the_bundled_ones():
    known = ", ".join(sorted(p.stem for p in SUITES_DIR.glob("*.json")))
    with pytest.raises(EatkitError) as info:
        load_suite("wheat")
    assert str(info.value) == (
        f"unknown suite 'wheat' (bundled: {known}; or give the path of a .json suite file)"
    )


def test_unreadable_suite_files(tmp_path):
    missing, binary = tmp_path / "missing.json", tmp_path / "binary.json"
    binary.write_bytes(b"\xff{}")
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "eatkit.suite/1",}')
    cases = {
        missing: f"suite file {missing} does not exist",
        binary: f"suite file {binary} is not UTF-8 text (invalid start byte at byte 0)",
        tmp_path: f"suite file {tmp_path} is a folder, not a regular file",
        bad: f"suite file {bad}: invalid JSON at line 1, column 29: "
        "Expecting property name enclosed in double quotes",
    }
    for path, message in cases.items():
        with pytest.raises(EatkitError) as info:
            load_suite(path)
        assert str(info.value) == message
