"""The forest plot of a random-effects meta-analysis draws the result's own numbers."""

from __future__ import annotations

import numpy as np
import pytest

from eatkit.errors import EatkitError
from eatkit.report.meta_analysis import random_effects_forest, summary_line
from eatkit.stats.meta_analysis import random_effects
from conftest import require

require("matplotlib")


def test_forest_plot_draws_rows_diamond_and_prediction_interval():
    result = random_effects([0.1, 0.4, 0.35, 0.8], [0.02, 0.01, 0.03, 0.02], method="reml")
    fig = random_effects_forest(result, ["m1", "m2", "m3", "m4"])
    ax = fig.axes[0]
    lines = [line.get_xydata() for line in ax.get_lines()]
    rows = [xy for xy in lines if len(xy) == 2 and xy[0][1] == xy[1][1] and xy[0][1] < 4]
    np.testing.assert_allclose([xy[:, 0] for xy in rows], result.effect_cis)
    squares = [xy for xy in lines if len(xy) == 1]
    np.testing.assert_allclose([xy[0] for xy in squares], np.c_[result.effects, np.arange(4)])
    prediction = [xy for xy in lines if len(xy) == 2 and xy[0][1] == 4]
    np.testing.assert_allclose(prediction[0][:, 0], result.prediction_interval)
    (diamond,) = ax.patches
    xs = diamond.get_xy()[:, 0]
    assert xs.min() == pytest.approx(result.ci[0]) and xs.max() == pytest.approx(result.ci[1])
    assert [t.get_text() for t in ax.get_yticklabels()][-1] == "combined (random effects)"
    assert "REML, k = 4" in summary_line(result.to_dict())


def test_forest_plot_needs_one_label_per_effect():
    with pytest.raises(EatkitError, match="one label per effect"):
        random_effects_forest(random_effects([0.1, 0.2], [0.1, 0.1]), ["a"])


def test_eatkit_meta_from_a_csv_file(tmp_path, capsys):
    from eatkit.cli import main

    effects = [("Aronson", -0.889, 0.326), ("Ferguson", -1.585, 0.195), ("Rosenthal", -1.348, 0.415),
               ("Hart", -1.442, 0.020), ("Frimodt", -0.218, 0.051)]
    (tmp_path / "e.csv").write_text("label,effect,variance\n" + "".join(f"{a},{b},{c}\n" for a, b, c in effects))
    assert main(["meta", str(tmp_path / "e.csv"), "--method", "reml", "--html", str(tmp_path / "f.html")]) == 0
    out = capsys.readouterr().out
    expected = random_effects([e[1] for e in effects], [e[2] for e in effects], method="reml")
    assert summary_line(expected) in out and out.count("weight") == 5
    page = (tmp_path / "f.html").read_text()
    assert '<meta name="generator" content="eatkit' in page and 'aria-label="forest plot: e"' in page
    # the page may be written again (eatkit wrote it); a file eatkit did not write is refused
    assert main(["meta", str(tmp_path / "e.csv"), "--html", str(tmp_path / "f.html")]) == 0
    assert main(["meta", str(tmp_path / "e.csv"), "--html", str(tmp_path / "e.csv")]) == 2
    assert "is one of the command's inputs" in capsys.readouterr().err
    (tmp_path / "mine.html").write_text("<p>mine</p>")
    assert main(["meta", str(tmp_path / "e.csv"), "--html", str(tmp_path / "mine.html")]) == 2
    assert "does not write over it" in capsys.readouterr().err and (tmp_path / "mine.html").read_text() == "<p>mine</p>"


def test_a_forest_plot_of_many_effects_draws_those_of_largest_weight_with_a_note():
    """issue 36: ``eatkit meta --html`` over 1.5 million rows drew one row each (hours); now at most
    MAX_FOREST_ROWS rows, those of largest weight, in their order; the diamond is the combination of all."""
    from eatkit.report.meta_analysis import MAX_FOREST_ROWS

    rng = np.random.default_rng(3)
    k = 20_000
    result = random_effects(rng.normal(size=k), rng.uniform(0.01, 0.1, size=k))
    ax = random_effects_forest(result, [f"s{i}" for i in range(k)]).axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    heaviest = np.sort(np.argsort(result.weights)[::-1][:MAX_FOREST_ROWS])  # the weights are distinct here
    assert labels == [f"s{i}" for i in heaviest] + ["combined (random effects)"]
    squares = [xy[0] for xy in (line.get_xydata() for line in ax.get_lines()) if len(xy) == 1]
    np.testing.assert_allclose([x for x, _ in squares], np.asarray(result.effects)[heaviest])
    xs = ax.patches[0].get_xy()[:, 0]
    assert xs.min() == pytest.approx(result.ci[0]) and xs.max() == pytest.approx(result.ci[1])
    assert f"the {MAX_FOREST_ROWS} of {k} effects of largest weight drawn" in ax.get_title()


def test_the_summary_prints_the_pooled_effects_p_and_labels_q_as_heterogeneity():
    """Issue 46: 'Q(3) = 0.90, p = 0.83' beside an estimate whose own p (0.028) was never printed."""
    from eatkit.stats.meta_analysis import random_effects

    result = random_effects([0.2, 0.5, 0.9], [0.01, 0.02, 0.015])
    line = summary_line(result)
    effect, heterogeneity = line.split("; heterogeneity: ")
    assert effect.endswith(f"p = {result.p_value:.2g}") and result.p_value == pytest.approx(0.0148, abs=5e-4)
    assert f"Q(2) = 19.62, heterogeneity p = {result.q_p_value:.2g}" in heterogeneity


def test_the_audit_pages_svg_forest_plot_draws_the_same_numbers():
    """The audit page's forest plots are written as SVG directly (matplotlib took ~0.16 s of CPU each): its
    squares sit at the effects on the axis its ticks label, the diamond spans the CI, the dotted line the
    prediction interval; of many effects the same rows as random_effects_forest, with the note."""
    import re

    from eatkit.report.meta_analysis import MAX_FOREST_ROWS, drawn_rows, forest_svg, nice_ticks

    result = random_effects([0.1, 0.4, 0.35, 0.8, -0.3], [0.02, 0.01, 0.03, 0.02, 0.05], method="reml")
    svg = forest_svg(result, ["m1", "m2", "m3", "m4", "m<5>"], "forest plot of t")
    ticks = [(float(x), float(v)) for x, v in re.findall(r'<text x="([\d.]+)" y="[\d.]+" text-anchor="middle">'
                                                         r'(-?[\d.]+)</text>', svg)]
    (x0, v0), (x1, v1) = ticks[0], ticks[-1]

    def value(x: float) -> float:
        return v0 + (x - x0) / (x1 - x0) * (v1 - v0)

    squares = [(float(x) + float(w) / 2, float(v)) for v, x, w in
               re.findall(r'class="effect" data-v="([^"]+)" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', svg)]
    np.testing.assert_allclose([v for _, v in squares], result.effects)
    np.testing.assert_allclose([value(x) for x, _ in squares], result.effects, atol=0.01)  # (0.1 px rounding)
    points = [float(x) for x in re.search(r'<polygon points="([^"]+)"', svg)[1].replace(",", " ").split()[::2]]
    assert value(min(points)) == pytest.approx(result.ci[0], abs=0.01)
    assert value(max(points)) == pytest.approx(result.ci[1], abs=0.01)
    dotted = re.search(r'<line x1="([\d.]+)" x2="([\d.]+)" [^>]*stroke-dasharray="2 2"', svg)
    np.testing.assert_allclose([value(float(dotted[1])), value(float(dotted[2]))], result.prediction_interval, atol=0.01)
    assert 'aria-label="forest plot of t"' in svg and "m&lt;5&gt;" in svg and "largest weight" not in svg
    cis = np.asarray(result.effect_cis)
    assert v0 <= min(cis[:, 0].min(), result.prediction_interval[0]) and v1 >= max(cis[:, 1].max(), result.ci[1])
    k = 500
    rng = np.random.default_rng(3)
    many = random_effects(rng.normal(size=k), rng.uniform(0.01, 0.1, size=k))
    svg = forest_svg(many, [f"s{i}" for i in range(k)], "many")
    drawn = [float(v) for v in re.findall(r'class="effect" data-v="([^"]+)"', svg)]
    np.testing.assert_allclose(drawn, np.asarray(many.effects)[drawn_rows(many.weights)])
    assert len(drawn) == MAX_FOREST_ROWS and f"the {MAX_FOREST_ROWS} of {k} effects of largest weight drawn" in svg
    assert nice_ticks(-0.23, 1.4) == [-0.5, 0.0, 0.5, 1.0, 1.5] and nice_ticks(3.0, 3.0)[::5] == [3.0, 4.0]
    with pytest.raises(EatkitError, match="one label per effect"):
        forest_svg(many, ["a"], "x")
