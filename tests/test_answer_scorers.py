"""Scorers of open-ended answers (issue 43.5): VADER from its package against the values its README publishes,
word-list polarity against counts by hand, and both through the answers kind per group with intervals."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from eatkit.errors import EatkitError
from eatkit.sources.answers import Answer
from eatkit.sources.scorers import leaning, polarity, vader

TEXTS = {"female": ["She said her sister was kind.", "The woman was warm and friendly.", "Her mother is smart."],
         "male": ["He said his brother was cold.", "The man was incompetent, and he knew it.", "His father left."]}


def test_vader_gives_the_values_its_readme_publishes():
    pytest.importorskip("vaderSentiment")
    # github.com/cjhutto/vaderSentiment README, "Demo": compound scores of its first examples
    published = {"VADER is smart, handsome, and funny.": 0.8316, "VADER is not smart, handsome, nor funny.": -0.7424,
                 "VADER is smart, handsome, and funny!": 0.8439}
    score = vader("compound")
    assert {t: round(score(Answer(item="1", text=t)), 4) for t in published} == published
    assert vader("neu")(Answer(item="1", text="")) == 0.0
    with pytest.raises(EatkitError, match="one of compound, pos, neg, neu"):
        vader("mood")


def test_polarity_counts_whole_words_of_two_poles():
    gender = polarity("gender-polarity")
    assert gender(Answer(item="1", text="She said her brother would come.")) == pytest.approx((1 - 2) / 3)
    assert gender(Answer(item="1", text="Shepherds and others.")) == 0.0  # no whole gendered word
    warmth = polarity("stereotype-content/warmth")
    assert warmth(Answer(item="1", text="Kind, honest, but cold.")) == pytest.approx((2 - 1) / 3)
    assert polarity("stereotype-content/competence")(Answer(item="1", text="An incompetent, unskilled clerk.")) == -1
    with pytest.raises(EatkitError, match="name a dimension"):
        polarity("stereotype-content")
    with pytest.raises(EatkitError, match="needs a word list"):
        polarity("")
    lean = leaning("gender-polarity")
    texts = ("He and she.", "Her, his, her.", "No one.")
    assert [lean(Answer(item="1", text=t)) for t in texts] == ["neither", "female", "neither"]


@pytest.mark.parametrize("scorer, value", [("leaning:gender-polarity", "female"),
                                           ("leaning:stereotype-content/warmth", "high"), ("vader:label", "positive")])
def test_scored_answers_per_group_with_intervals(scorer, value, tmp_path):
    if scorer.startswith("vader"):
        pytest.importorskip("vaderSentiment")
    from eatkit.cli import main
    from eatkit.sources import scorers

    answers = tmp_path / "answers.csv"
    with open(answers, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["item", "group", "text"])
        w.writerows([f"{g}{i}", g, t] for g, texts in TEXTS.items() for i, t in enumerate(texts))
    suite = tmp_path / "descriptions.json"
    suite.write_text(json.dumps({"schema": "eatkit.suite/1", "id": "descriptions", "title": "Descriptions",
                                 "alternative": "two-sided", "tests": [
                                     {"id": "scored", "title": "Scored per group", "kind": "answers",
                                      "params": {"measure": "rate", "outcome": "score", "values": [value],
                                                 "scorer": f"eatkit.sources.scorers:{scorer}"}}]}))
    out = tmp_path / "out"
    assert main(["run", str(suite), "--answers", str(answers), "--seed", "0", "-q", "-o", str(out)]) == 0
    rows = {(r["row"], r["group"]): r for r in csv.DictReader(open(out / "results.csv", encoding="utf-8"))}
    name, _, argument = scorer.partition(":")
    score = getattr(scorers, name)(argument)
    for group, texts in TEXTS.items():
        row = rows[("rate", group)]
        expected = np.mean([score(Answer(item="x", text=t)) == value for t in texts])
        assert float(row["estimate"]) == pytest.approx(expected, abs=1e-12)
        assert float(row["ci_low"]) <= float(row["estimate"]) <= float(row["ci_high"]) and row["n"] == "3"
