"""Data for the "American == White" probes: census shares, region prompts, caption lexicon, image groups
(folder per group, Chicago Face Database file-name codes)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import shared_path
from eatkit.errors import EatkitError
from eatkit.stimuli.image_groups import SEED_COUNTS, cfd_layout, group_sets
from eatkit.stimuli.lexicon import load_lexicon
from eatkit.stimuli.regions import load_region_table, region_prompts


def test_bundled_census_table_equals_the_shared_csv() -> None:
    table = load_region_table("us-states-2019")
    csv = pd.read_csv(shared_path("census", "state-race-proportions-2019.csv"), index_col=0)
    pd.testing.assert_frame_equal(table.frame.loc[csv.index], csv, check_names=False)
    assert len(table.regions) == 51 and "District of Columbia" in table.regions
    np.testing.assert_allclose(table.frame.sum(axis=1), 1.0, atol=1e-12)


def test_region_prompt_sets_and_overrides() -> None:
    p = region_prompts(["Texas", "District of Columbia"])
    assert p == {"Texas": "a photo of someone who lives in Texas",
                 "District of Columbia": "a photo of someone who lives in Washington, D.C."}
    own = region_prompts(["Texas"], "people of {region}", {"Texas": "a Texan"})
    assert own == {"Texas": "a Texan"}
    with pytest.raises(EatkitError, match="nor a template containing {region}"):
        region_prompts(["Texas"], "a photo of someone who lives in {state}".replace("{state}", "there"))
    with pytest.raises(EatkitError, match="only the placeholder"):
        region_prompts(["Texas"], "{region} and {other}")
    with pytest.raises(EatkitError, match="not in the table: Atlantis"):
        region_prompts(["Texas"], "lives-in", {"Atlantis": "x"})


def test_user_region_table_csv(tmp_path) -> None:
    path = tmp_path / "iat.csv"
    path.write_text("state,iat\nOhio,0.4\nTexas,0.3\n")
    t = load_region_table(path)
    assert t.frame.loc["Ohio", "iat"] == 0.4
    path.write_text("state,iat\nOhio,high\n")
    with pytest.raises(EatkitError, match="non-numeric column"):
        load_region_table(path)


def test_lexicon_matches_the_seed_rule() -> None:
    lex = load_lexicon()
    assert lex.match("an asian woman with long hair") == "asian"
    assert lex.match("A Black man wearing a tie") == "black"
    assert lex.match("an african american person smiling") == "african american"
    assert lex.match("a man in a white shirt") is None
    assert lex.match("a black and white photo of a woman") is None
    assert lex.match("a blackman") is None


def test_a_lexicon_that_does_not_parse_is_one_line(tmp_path) -> None:
    bad = tmp_path / "lex.json"
    bad.write_text("{descriptors: [asian")
    with pytest.raises(EatkitError, match="invalid JSON at line 1") as err:
        load_lexicon(bad)
    assert "\n" not in str(err.value)
    bad.write_text(json.dumps({"schema": "eatkit.lexicon/1", "descriptors": [], "nouns": ["man"]}))
    with pytest.raises(EatkitError, match="'descriptors' must be a non-empty list"):
        load_lexicon(bad)


def test_cfd_layout_reads_race_gender_and_expression_from_file_names(tmp_path) -> None:
    cfd = tmp_path / "CFD Version 3.0" / "Images" / "CFD"
    names = ["CFD-WF-001-001-N.jpg", "CFD-WM-002-003-N.jpg", "CFD-WM-002-004-HC.jpg", "CFD-AF-200-228-N.jpg",
             "CFD-BM-010-011-N.jpg", "CFD-LF-210-001-N.jpg", "CFD-IM-300-001-N.jpg", "notes.jpg"]
    for n in names:
        folder = cfd / n[4:10]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / n).write_bytes(b"x")
    out = cfd_layout(tmp_path, tmp_path / "groups")
    assert out.counts == {"asian": 1, "black": 1, "latino": 1, "white": 2}
    assert out.skipped == {"of other expressions": 1, "of other race codes": 1, "files without a CFD name code": 1}
    assert "differ from the 'American == White' study's" in out.message()
    assert sorted(p.name for p in (tmp_path / "groups" / "white").iterdir()) == names[:2]
    assert [s.category for s in group_sets(tmp_path / "groups")] == ["asian", "black", "latino", "white"]
    by_gender = cfd_layout(tmp_path, tmp_path / "g2", by_gender=True, expressions=("N", "HC"))
    assert by_gender.counts["white-male"] == 2 and by_gender.differences == ""
    with pytest.raises(EatkitError, match="is not empty"):
        cfd_layout(tmp_path, tmp_path / "groups")
    assert SEED_COUNTS == {"asian": 109, "black": 197, "latino": 108, "white": 183}


def test_group_sets_bad_input(tmp_path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "1.png").write_bytes(b"")
    with pytest.raises(EatkitError, match="at least 2 group folders"):
        group_sets(tmp_path)
    with pytest.raises(EatkitError, match="no group folder with images named zz"):
        group_sets(tmp_path, ["a", "zz"])


@pytest.mark.parametrize(("caption", "descriptor"), [
    # the forms the study (seed 003, section 5) quotes BLIP producing, and the authors' hyphenated forms
    ("a close up of an oriental woman with long hair", None),  # not in the authors' list (see the extended one)
    ("an african-american man in a grey shirt", "african-american"),
    ("an African American woman with short hair", "african american"),
    ("an asian-american person", "asian-american"),
    ("an asian man with a black shirt", "asian"),
    ("a latina woman smiling", "latina"),
    # the study: men described as wearing a black tie, Black individuals as having an afro: no race named
    ("a man wearing a black tie", None),
    ("a woman with an afro and a grey shirt", None),
    ("a photo of a man wearing a grey shirt", None),
])
def test_lexicon_matches_the_authors_rule_on_the_studys_phrases(caption, descriptor) -> None:
    lex = load_lexicon()
    assert lex.match_mode == "substring" and lex.match(caption) == descriptor
    # the authors' test itself: f'{desc} person|man|woman' in the lower-cased caption
    theirs = any(f"{d} {n}" in caption.lower() for d in lex.descriptors for n in ("person", "man", "woman"))
    assert theirs == (descriptor is not None)


def test_lexicon_match_modes(tmp_path) -> None:
    path = tmp_path / "lex.json"
    for mode, expected in (("substring", "black"), ("words", None)):
        path.write_text(json.dumps({"schema": "eatkit.lexicon/1", "descriptors": ["black"], "nouns": ["man"],
                                    "match": mode}))
        assert load_lexicon(path).match("a black manikin") == expected
    path.write_text(json.dumps({"schema": "eatkit.lexicon/1", "descriptors": ["black"], "nouns": ["man"],
                                "match": "fuzzy"}))
    with pytest.raises(EatkitError, match="'match' must be one of words, substring, got 'fuzzy'"):
        load_lexicon(path)
