"""The ML-EAT study's stimulus variants as bundled suites (issue 25): the eleven CLIP tests of Tables 9-12 as
the authors' notebook runs them, and the Google News word2vec variant of the WEATs (Table 4)."""

from __future__ import annotations

from eatkit.stimuli.loader import load_suite

# the authors' notebook (CLIP cell): image folders X / Y and the WEAT list file of the attributes, in order
CLIP_TESTS = [
    ("flower-insect", "insect-flower/flower", "insect-flower/insect", 1),
    ("young-old", "age/young", "age/old", 1),
    ("arab-muslim", "arab-muslim/other-people", "arab-muslim/arab-muslim", 1),
    ("abled-disabled", "disabled/abled", "disabled/disabled", 1),
    ("white-black", "race/european-american", "race/african-american", 3),
    ("christianity-judaism", "religion/christianity", "religion/judaism", 1),
    ("straight-gay", "sexuality/straight", "sexuality/gay", 1),
    ("light-dark-skin", "skin-tone/light", "skin-tone/dark", 1),
    ("thin-heavy", "weight/thin", "weight/fat", 1),
    ("male-female-career-family", "gender/male", "gender/female", 6),
    ("science-arts-male-female", "gender/science", "gender/liberal-arts", 8),
]


def test_mleat_clip_holds_tables_9_to_12_as_the_authors_ran_them():
    clip, weat = load_suite("mleat-clip"), load_suite("weat")
    assert [t.id for t in clip.tests] == [t[0] for t in CLIP_TESTS]
    for test_id, x, y, attributes in CLIP_TESTS:
        test = clip.test(test_id)
        assert (test.set("X").category, test.set("Y").category) == (x, y)
        source = weat.test(f"weat{attributes}")
        for role in "AB":  # bare words, the WEAT's lists
            assert test.set(role).items == source.set(role).items and test.set(role).modality == "word"
    # White/Black: WEAT 3's unpleasant list ('bomb', 'evil'), not WEAT 1's ('agony', 'prison')
    unpleasant = clip.test("white-black").set("B").items
    assert {"bomb", "evil"} <= set(unpleasant) and not {"agony", "prison"} & set(unpleasant)


def test_weat_w2v_is_weat_with_the_authors_google_news_replacements():
    weat, w2v = load_suite("weat"), load_suite("weat-w2v")
    changed = {("weat2", "X"): (("banjo",), ()), ("weat2", "Y"): (("axe",), ()),
               ("weat5", "X"): ((), ("Jay", "Kristen")), ("weat5", "Y"): ((), ("Tremayne", "Latonya")),
               ("weat9", "A"): (("short-term",), ("short",))}
    assert [t.id for t in w2v.tests] == [t.id for t in weat.tests]
    for test in weat.tests:
        for role in "XYAB":
            drop, add = changed.get((test.id, role), ((), ()))
            expected = tuple(w for w in test.set(role).items if w not in drop) + add
            assert w2v.test(test.id).set(role).items == expected, (test.id, role)
