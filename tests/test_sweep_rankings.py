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


@pytest.mark.parametrize("published", ["igpt_l_32", "simclr_152_3x_sk1", "igpt-logit_l_32"])
def test_published_embeddings_declare_images_and_word_tests_are_planned_as_not_applicable(published):
    """Issue 46: published iEAT embeddings embed images only, so a WEAT test is planned out (never run, never
    a failure), an iEAT test is kept."""
    from eatkit.run.sweep_file import _cell

    model = {"label": published, "embeddings": "ieat/embeddings", "embeddings_model": published}
    plan = ("sha", [("weat1", frozenset({"word"})), ("insect-flower", frozenset({"image"}))])
    cell = _cell(model, {"label": "mixed"}, {"label": "default"}, plan)
    assert cell.tests == ("insect-flower",)
    assert cell.inapplicable == (("weat1", f"needs word stimuli; {published} embeds image"),)


def test_the_audit_page_marks_failed_cells_and_empty_intervals(tmp_path):
    """A model whose cell failed is marked failed on the audit page (not a blank row), and the prediction
    interval of k = 2 models (undefined) is "-", not a bare ","."""
    import json

    from eatkit.cli import main
    from eatkit.run.sweep_tables import write_tables
    from test_sweep_audit import _synthetic_sweep

    _synthetic_sweep(tmp_path, 3, {"words": 2}, ("s",))
    index = json.loads((tmp_path / "sweep.json").read_text())
    broken = index["cells"][2]
    broken.update(status="failed", error="CUDA out of memory", tests=["words-0", "words-1"])
    (tmp_path / "sweep.json").write_text(json.dumps(index))
    write_tables(tmp_path)
    assert main(["report", str(tmp_path), "-q"]) == 0
    page = (tmp_path / "audit.html").read_text(encoding="utf-8")
    assert f'{broken["model"]} <span class="failed">(failed: words)</span>' in page
    assert page.count('title="model-002 / words: CUDA out of memory">failed</td>') == 8  # 2 tests x (d + 3 metrics)
    from eatkit.report.meta_analysis import meta_analysis_html
    from eatkit.run.meta_analysis import COLUMNS

    row = dict.fromkeys(COLUMNS, "") | {"suite": "weat", "test": "weat6", "setting": "s", "k": 2, "estimate": 0.5,
                                        "ci_low": 0.1, "ci_high": 0.9, "q": 0.3, "q_df": 1, "q_p_value": 0.6}
    pd.DataFrame([row]).to_csv(tmp_path / "meta.csv", index=False)  # k = 2: no prediction interval
    html = meta_analysis_html(tmp_path / "meta.csv")
    assert "<td>-</td></tr>" in html and "<td>, </td>" not in html and "0.50 [0.10, 0.90]" in html
