"""Forest plot, level-3 distributions and the models x tests heatmap: what each figure draws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_report_support import PAIRS, eat_record, make_run, record
from conftest import lazy_module, require

require("matplotlib", reason="plots need matplotlib (eatkit[report])")
colors = lazy_module("matplotlib.colors")

from eatkit.errors import EatkitError
from eatkit.report import effect_size_heatmap, forest_plot, level3_plot, load_run
from eatkit.report.formatting import STARS_NOTE
from eatkit.report.style import INK, PAIR_STYLES, wrap


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runs")
    return load_run(make_run(tmp, "glove-like")), load_run(make_run(tmp, "anisotropic"))


def test_forest_plot_marks_significance_after_correction():
    records = [
        eat_record(test="a", title="A", effect_size=1.5, q_value=0.0005, ci=[1.2, 1.7]),
        eat_record(test="b", title="B", effect_size=0.8, q_value=0.005, ci=[0.3, 1.1]),
        eat_record(test="c", title="C", effect_size=-0.6, q_value=0.03, ci=[-1.0, -0.1]),
        eat_record(test="d", title="D", effect_size=0.1, q_value=0.4, ci=None),
        eat_record(test="e", title="E", effect_size=float("nan"), q_value=None, ci=[float("nan")] * 2),
    ]
    fig = forest_plot(records, title="Demo suite")
    (ax,) = fig.axes
    markers = [line for line in ax.lines if line.get_marker() == "o"]
    assert [(line.get_xdata()[0], line.get_ydata()[0]) for line in markers] == [
        (1.5, 0), (0.8, 1), (-0.6, 2), (0.1, 3)]
    assert [colors.to_hex(line.get_markerfacecolor()) for line in markers] == [INK.lower()] * 3 + ["#ffffff"]
    intervals = [list(line.get_xdata()) for line in ax.lines
                 if line.get_marker() == "None" and line.get_ydata()[0] == line.get_ydata()[-1]]
    assert intervals == [[1.2, 1.7], [0.3, 1.1], [-1.0, -0.1]]
    assert [t.get_text() for t in ax.texts] == ["1.50 ***", "0.80 **", "-0.60 *", "0.10", "n/a", "d, q"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["A", "B", "C", "D", "E"]
    assert ax.get_ylim() == (4.5, -0.5)  # first test on top
    assert ax.get_title() == "Demo suite"
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["q < 0.05", "q \u2265 0.05", "bootstrap CI (targets resampled)"]
    assert legend.get_title().get_text() == wrap(STARS_NOTE, 90)
    assert "Benjamini-Hochberg" in STARS_NOTE


def test_forest_plot_of_long_titles_stays_inside_the_figure(runs):
    fig = forest_plot(runs[0].records, ci_level=0.95)
    assert fig.legends[0].get_texts()[2].get_text() == "95% bootstrap CI (targets resampled)"
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [wrap(r.title, 44) for r in runs[0].records]
    for artist in [*ax.get_yticklabels(), *ax.texts, fig.legends[0]]:
        box = artist.get_window_extent(renderer)
        assert box.x0 >= 0 and box.x1 <= fig.bbox.width and box.y0 >= 0 and box.y1 <= fig.bbox.height
    labels = [t.get_window_extent(renderer) for t in ax.get_yticklabels()]
    assert not any(a.overlaps(b) for i, a in enumerate(labels) for b in labels[i + 1:])


def test_level3_plot_draws_the_four_distributions_of_every_test(runs):
    glove = runs[0]
    fig = level3_plot(glove.records[:3], glove.similarities)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(fig.axes) == 4 and len(visible) == 3  # two columns, the fourth slot hidden
    assert len({ax.get_xlim() for ax in visible}) == 1  # one shared similarity axis
    for ax, rec in zip(visible, glove.records):
        boxes = ax.patches
        assert [(colors.to_hex(b.get_facecolor()).upper(), b.get_hatch() or "") for b in boxes] == [
            (PAIR_STYLES[p][0], PAIR_STYLES[p][1]) for p in PAIRS]
        medians = [line for line in ax.lines if line.get_color() == INK and len(line.get_xdata()) == 2
                   and line.get_xdata()[0] == line.get_xdata()[1]]
        assert [m.get_xdata()[0] for m in medians] == pytest.approx(
            [np.median(glove.similarities[rec.test][p]) for p in PAIRS])
        (means,) = [line for line in ax.lines if line.get_marker() == "D"]
        assert list(means.get_xdata()) == [rec.level3[p]["mean"] for p in PAIRS]
        assert ax.get_title() == wrap(rec.title, 60)
    assert [t.get_text() for t in visible[0].get_yticklabels()] == [
        "Flower \u00b7 Pleasant", "Flower \u00b7 Unpleasant", "Insect \u00b7 Pleasant", "Insect \u00b7 Unpleasant"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "X with A", "X with B", "Y with A", "Y with B", "mean (results.json)"]


def test_level3_plot_needs_the_similarities_of_every_test(runs):
    with pytest.raises(EatkitError) as info:
        level3_plot(runs[0].records, {"weat1": runs[0].similarities["weat1"]})
    assert str(info.value) == "level3_plot: no similarities for test 'weat2'"
    with pytest.raises(EatkitError, match=r"^level3_plot needs at least one result record$"):
        level3_plot([], {})


def test_heatmap_rows_are_models_and_columns_tests(runs):
    fig = effect_size_heatmap(runs)
    ax = fig.axes[0]
    (image,) = ax.images
    values = image.get_array()
    expected = [[r.effect_size for r in runs[0].records], [r.effect_size for r in runs[1].records] + [math.nan]]
    assert values.shape == (2, 10)
    np.testing.assert_allclose(values.filled(np.nan), expected)
    assert values.mask[1, 9] and not values.mask[0].any()
    assert image.get_cmap().name == "RdBu_r" and image.get_clim() == (-2.0, 2.0)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["glove.840B.300d.weat-items.txt", "gpt2"]
    assert [t.get_text() for t in ax.get_xticklabels()] == [wrap(r.title, 16) for r in runs[0].records]
    texts = {(t.get_position()): t.get_text() for t in ax.texts}
    assert texts[(0, 0)] == "1.50\n***" and texts[(1, 1)] == "-0.35\n" and texts[(9, 1)] == "n/a"
    assert texts[(5, 0)] == "1.81\n***" and texts[(0, 1)] == "0.92\n**"
    # dark cells get white text, light ones dark text, so every value reads in greyscale
    colours = {t.get_position(): colors.to_hex(t.get_color()) for t in ax.texts}
    assert colours[(5, 0)] == "#ffffff" and colours[(2, 1)] == INK.lower()
    assert fig.get_supxlabel() == wrap(STARS_NOTE, 120)


def test_heatmap_needs_a_run():
    with pytest.raises(EatkitError, match=r"^effect_size_heatmap needs at least one run$"):
        effect_size_heatmap([])
