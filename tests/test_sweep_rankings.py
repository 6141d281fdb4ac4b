"""Sweep rankings that mean what they say (issue 46): a test's magnitude aggregates all its records as its
kind declares, and models are ranked only against models that share their tests (run/sweep_tables.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from eatkit.run.sweep_tables import rank_groups


def _depiction_results() -> pd.DataFrame:
    """A depiction sweep's results.csv: two models, two tests, each test 3 prompt groups x 2 attributes."""
    rng = np.random.default_rng(4)
    rows = [{"model": m, "suite": "occupations", "setting": "default", "kind": "depiction", "test": t,
             "group": g, "attribute": a, "mad": float(rng.uniform(0, 0.6)), "p_value": float(rng.random())}
            for m in ("sd-a", "sd-b") for t in ("occ1", "occ2") for g in ("Doctor", "Nurse", "Cashier")
            for a in ("gender", "age")]
    return pd.DataFrame(rows)


def test_a_depiction_ranking_is_the_mean_of_every_record_not_the_last():
    results = _depiction_results()
    rankings = rank_groups(results)[0].set_index("model")
    expected = results.groupby("model")["mad"].mean()  # |MAD - 0|: every prompt group and attribute
    for model in ("sd-a", "sd-b"):
        assert rankings.loc[model, "mad"] == pytest.approx(expected[model], rel=1e-12)
        last = results[results.model == model].groupby("test")["mad"].last().mean()
        assert rankings.loc[model, "mad"] != pytest.approx(last)  # what keying by (suite, test) gave
    assert set(rankings.group) == {"all models"} and rankings.tests.iloc[0] == "occupations/occ1 occupations/occ2"


def test_an_image_model_on_ieat_and_word_models_on_weat_are_two_ranking_groups():
    rows = [{"model": m, "suite": suite, "setting": "default", "kind": "eat", "test": t,
             "effect_size": d, "p_value": 0.5}
            for m, suite, tests, d in (("igpt", "ieat", ("insect-flower", "race"), 1.2),
                                       ("simclr", "ieat", ("insect-flower", "race"), 0.3),
                                       ("glove", "weat", ("weat1", "weat2"), -0.8),
                                       ("fasttext", "weat", ("weat1", "weat2"), 0.5))
            for t in tests]
    rankings = rank_groups(pd.DataFrame(rows))[0]
    groups = {g: sorted(part.model) for g, part in rankings.groupby("group", sort=False)}
    assert sorted(groups.values()) == [["fasttext", "glove"], ["igpt", "simclr"]], groups
    image = rankings[rankings.model == "igpt"].iloc[0]
    assert image.tests == "ieat/insect-flower ieat/race" and image.d == pytest.approx(1.2)
    assert rankings.set_index("model").loc["glove", "overall_rank"] == 2.0  # |-0.8| > |0.5|
    # an image model alone is its own group: ranked against nothing, never against the word models
    alone = rank_groups(pd.DataFrame([r for r in rows if r["model"] != "simclr"]))[0]
    assert sorted(alone.group.unique()) == ["models on ieat (2 tests)", "models on weat (2 tests)"]
    assert "one model: nothing to rank it against" in alone[alone.model == "igpt"].basis.item()


def test_a_member_ranks_by_its_distance_from_its_declared_chance_level():
    """Clustering's chance level is 0.5: an accuracy of 0.5 is no bias (magnitude 0)."""
    from eatkit.kinds import get_kind

    assert get_kind("clustering").ranking.chance == 0.5 and get_kind("ect").ranking.chance == 1.0
    rows = [{"model": m, "suite": "weat", "setting": "s", "kind": "clustering", "test": "weat1:clustering",
             "value": v, "p_value": 0.5} for m, v in (("a", 0.5), ("b", 0.9), ("c", 0.7))]
    rankings = rank_groups(pd.DataFrame(rows))[0].set_index("model")
    assert rankings["clustering"].tolist() == pytest.approx([0.0, 0.4, 0.2])
    assert rankings["overall_rank"].tolist() == [1.0, 3.0, 2.0]
