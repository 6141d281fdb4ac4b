"""The sentence-template engine and the bundled SEAT suite, checked against May et al.'s released files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eatkit.errors import EatkitError
from eatkit.stimuli.loader import load_suite
from eatkit.stimuli.schema import parse_suite
from eatkit.stimuli.templates import (
    SEAT_TEMPLATES,
    Lex,
    build_seat_suite,
    expand_templates,
    fill,
    indefinite_article,
    plural,
    seat_sentences,
)
from eatkit.stimuli.types import StimulusSet

SEAT_IDS = ["1", "2", "3", "3b", "4", "5", "5b", "6", "6b", "7", "7b", "8", "8b", "9", "10"]
ROLES = {"targ1": "X", "targ2": "Y", "attr1": "A", "attr2": "B"}

# The one systematic difference from May et al.'s sent-weat*.jsonl: where one target set made more
# sentences than the other, they randomly subsampled it to the other's size (the sample is not
# reproducible); eatkit keeps every sentence. Each such set must be an order-preserving sample of ours.
SUBSAMPLED_BY_MAY = {("2", "targ1"), ("7", "targ2"), ("7b", "targ2"), ("8", "targ2"), ("8b", "targ2"),
                     ("9", "targ2")}


@pytest.fixture
def sent_bias(shared_data: Path) -> dict[str, tuple[dict[str, list[str]], dict[str, list[str]]]]:
    """May et al.'s word lists and sentences by SEAT test: ({role key: words}, {role key: sentences})."""

    def read(name: str) -> dict[str, list[str]]:
        data = json.loads((shared_data / "sent-bias" / name).read_text(encoding="utf-8"))
        return {key: data[key]["examples"] for key in ROLES}

    return {n: (read(f"weat{n}.jsonl"), read(f"sent-weat{n}.jsonl")) for n in SEAT_IDS}


def _is_subsequence(short: list[str], long: tuple[str, ...]) -> bool:
    rest = iter(long)
    return all(item in rest for item in short)


@pytest.mark.shared_data
@pytest.mark.parametrize("number", SEAT_IDS)
def test_engine_reproduces_may_et_al_sentences(sent_bias, number):
    words, sentences = sent_bias[number]
    for key in ROLES:
        ours = seat_sentences(words[key])
        theirs = sentences[key]
        if (number, key) in SUBSAMPLED_BY_MAY:
            other = sentences["targ2" if key == "targ1" else "targ1"]
            assert len(theirs) == len(other) < len(ours), (number, key)
            assert _is_subsequence(theirs, ours), (number, key)
        else:
            assert ours == tuple(theirs), (number, key)


@pytest.mark.shared_data
def test_overlap_with_may_et_al_in_numbers(sent_bias):
    ours_total = theirs_total = shared = 0
    for words, sentences in sent_bias.values():
        for key in ROLES:
            ours = set(seat_sentences(words[key]))
            ours_total += len(ours)
            theirs_total += len(sentences[key])
            shared += len(ours & set(sentences[key]))
    # Every sentence of theirs is ours; ours has 135 more, all in the six subsampled sets.
    assert (shared, theirs_total, ours_total) == (7757, 7757, 7892)


@pytest.mark.shared_data
def test_bundled_seat_suite_is_the_engine_applied_to_may_et_al_word_lists(sent_bias):
    # Set equality: the bundled weat suite lists WEAT 3-4's unpleasant words in another order than May et al.
    suite = load_suite("seat")
    for number, (words, _) in sent_bias.items():
        test = suite.test(f"sent-weat{number}")
        for key, role in ROLES.items():
            stimuli = test.set(role)
            assert stimuli.modality == "sentence"
            assert set(stimuli.items) == set(seat_sentences(words[key])), (number, role)
            assert len(stimuli.items) == len(seat_sentences(words[key])), (number, role)


def test_bundled_seat_json_is_up_to_date():
    built = parse_suite(json.dumps(build_seat_suite()), "built")
    bundled = load_suite("seat")
    assert bundled.tests[: len(built.tests)] == built.tests
    assert (bundled.id, bundled.title, bundled.citation) == (built.id, built.title, built.citation)
    assert [t.id for t in bundled.tests[len(built.tests):]] == MAY_TESTS  # data, not templates


MAY_TESTS = [
    "angry_black_woman_stereotype", "angry_black_woman_stereotype_b", "sent-angry_black_woman_stereotype",
    "sent-angry_black_woman_stereotype_b",
    *(f"{prefix}heilman_double_bind_{trait}{suffix}" for trait in ("competent", "likable")
      for prefix, suffix in (("", "_one_word"), ("sent-", "_one_word"), ("", "_one_sentence"), ("", "_1"),
                             ("", "_1-"), ("", "_1p3-"))),
]


def test_may_et_al_tests_in_the_seat_suite():
    """The angry Black woman and Heilman double bind tests of May et al. (2019), sizes as released."""
    suite = load_suite("seat")
    sizes = {t.id: tuple(len(s.items) for s in t.sets().values()) for t in suite.tests}
    assert sizes["angry_black_woman_stereotype"] == (15, 15, 18, 18)
    assert sizes["sent-angry_black_woman_stereotype"] == (120, 120, 54, 54)
    assert sizes["sent-angry_black_woman_stereotype_b"] == (52, 52, 54, 54)
    assert sizes["sent-heilman_double_bind_competent_one_word"] == (64, 64, 30, 30)
    assert sizes["sent-heilman_double_bind_likable_one_word"] == (64, 64, 24, 24)
    assert sizes["heilman_double_bind_likable_1p3-"] == (8, 8, 8, 8)
    test = suite.test("heilman_double_bind_competent_one_sentence")
    assert (test.set("X").name, test.set("A").name) == ("Male", "CompetentAchievementOriented")
    assert test.set("X").items[0] == "John is an engineer." and test.set("B").items[0] == "The engineer is incompetent."
    assert suite.test("angry_black_woman_stereotype").set("B").items[:3] == ("shrill", "loud", "argumentative")


def test_seat_suite_contents():
    suite = load_suite("seat")
    assert suite.title == "SEAT: Sentence Encoder Association Tests (May et al. 2019)"
    assert "On Measuring Social Biases in Sentence Encoders. NAACL-HLT 2019" in suite.citation
    assert [t.id for t in suite.tests] == [f"sent-weat{n}" for n in SEAT_IDS] + MAY_TESTS
    assert suite.test("sent-weat1").title == "SEAT 1: Flowers vs. insects, pleasant vs. unpleasant"
    assert suite.test("sent-weat7b").title == "SEAT 7b: Math vs. arts, male vs. female names"
    sizes = {t.id: tuple(len(s.items) for s in t.sets().values()) for t in suite.tests}
    assert sizes["sent-weat1"] == (350, 350, 215, 250)
    assert sizes["sent-weat3b"] == (195, 195, 215, 249)
    assert sizes["sent-weat9"] == (18, 73, 21, 23)
    assert suite.test("sent-weat9").notes == (
        "Sentences from the word lists of weat9. May et al. randomly subsampled the Y sentences to the size "
        "of the other target set (18 of 73); eatkit keeps all 73, so its effect size can differ from theirs."
    )
    assert suite.test("sent-weat6b").set("X") == suite.test("sent-weat7").set("A")


def test_seat_templates_by_kind():
    assert seat_sentences(["man"]) == (
        "This is a man.", "That is a man.", "There is a man.", "Here is a man.", "The man is here.",
        "The man is there.", "A man is a person.", "These are men.", "Those are men.", "They are men.",
        "The men are here.", "The men are there.", "Men are people.",
    )
    assert seat_sentences(["children"])[6:9] == ("A child is a thing.", "It is a child.", "These are children.")
    assert seat_sentences(["honor"])[0] == "This is an honor."
    assert seat_sentences(["freedom", "kill"]) == (
        "This is freedom.", "That is freedom.", "There is freedom.", "It is freedom.",
        "This will kill.", "This did kill.", "This can kill.", "This may kill.",
        "That will kill.", "That did kill.", "That can kill.", "That may kill.",
    )
    assert seat_sentences(["he", "him", "hers"]) == (
        "He is here.", "He is there.", "Here he is.", "There he is.", "He is a person.",
        "It is him.", "This is him.", "That is him.",
        "This is hers.", "That is hers.", "There is hers.", "Here is hers.", "It is hers.", "Hers is there.",
        "Hers is here.",
    )
    assert {kind: len(t) for kind, t in SEAT_TEMPLATES.items()} == {
        "count-noun": 14, "person-noun": 13, "mass-noun": 4, "name": 8, "adjective": 3, "verb": 8,
        "subject-pronoun": 5, "object-pronoun": 3, "possessive-pronoun": 7,
    }


def test_seat_sentences_with_caller_kinds():
    assert seat_sentences(["Ukrainian American"])[6] == "A Ukrainian American is a person."
    assert seat_sentences(["ox"], {"ox": Lex("count-noun", plural="oxen")})[-1] == "Oxen are things."
    assert seat_sentences(["Zed"], {"Zed": "name"})[4] == "Zed is here."
    assert seat_sentences(["rose"], {"rose": "verb"})[0] == "This will rose."  # caller kinds win


def test_seat_sentences_errors():
    kinds = ", ".join(SEAT_TEMPLATES)
    with pytest.raises(EatkitError) as err:
        seat_sentences(["aster", "zyzzyva"])
    assert str(err.value) == f"no SEAT word kind for 'zyzzyva': give it one of {kinds}"
    with pytest.raises(EatkitError) as err:
        seat_sentences(["ox"], {"ox": "noun"})
    assert str(err.value) == f"unknown SEAT word kind 'noun' for 'ox' (known: {kinds})"


@pytest.mark.parametrize(
    ("phrase", "article"),
    [("aster", "an"), ("clover", "a"), ("uncle", "an"), ("honor", "an"), ("hour", "an"),
     ("European American", "a"), ("Ukrainian American", "a"), ("Egyptian American", "an"),
     ("university", "a"), ("one", "a"), ("", "a")],
)
def test_indefinite_article(phrase, article):
    assert indefinite_article(phrase) == article


@pytest.mark.parametrize(
    ("noun", "plural_form"),
    [("aster", "asters"), ("poppy", "poppies"), ("boy", "boys"), ("caress", "caresses"), ("axe", "axes"),
     ("box", "boxes"), ("cockroach", "cockroaches"), ("bush", "bushes"), ("waltz", "waltzes"),
     ("knife", "knifes"), ("mosquito", "mosquitos"), ("South African American", "South African Americans")],
)
def test_plural(noun, plural_form):
    assert plural(noun) == plural_form


def test_fill_keeps_unknown_placeholders_and_capitalises():
    assert fill("{x} and {xs} cost {a} {y}.", {"x": "rose"}) == "Rose and {xs} cost {a} {y}."
    assert fill("{a} {x}", {"x": "iris", "a": "an", "xs": "irises"}) == "An iris"
    assert fill("", {"x": "a"}) == ""


def test_expand_templates_order_capitalisation_and_duplicates():
    words = StimulusSet("Flowers", "word", ("rose", "Iris"), templates=("{x} is here.", "This is {x}.", "{x} is here."))
    expanded = expand_templates(words)
    assert expanded == StimulusSet(
        "Flowers", "sentence", ("Rose is here.", "This is rose.", "Iris is here.", "This is Iris.")
    )


def test_expand_templates_needs_a_word_set_with_templates():
    for stimuli in (StimulusSet("Plain", "word", ("rose",)),
                    StimulusSet("Plain", "sentence", ("A rose.",), templates=("{x}",))):
        with pytest.raises(EatkitError) as err:
            expand_templates(stimuli)
        assert str(err.value) == "set 'Plain' has no templates to expand (only word sets with templates do)"


@pytest.mark.shared_data
def test_may_et_al_tests_equal_their_released_files():
    from conftest import shared_path

    suite = load_suite("seat")
    for test_id in MAY_TESTS:
        source = json.loads(shared_path("grounded", "tests-may", test_id.replace("_1p3-", "_1+3-") + ".jsonl").read_text())
        test = suite.test(test_id)
        for role, key in zip("XYAB", ("targ1", "targ2", "attr1", "attr2")):
            assert list(test.set(role).items) == source[key]["examples"], (test_id, role)
            assert test.set(role).name == source[key]["category"]
