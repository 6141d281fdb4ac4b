"""The forest plot of a random-effects meta-analysis draws the result's own numbers."""

from __future__ import annotations

import numpy as np
import pytest

from eatkit.errors import EatkitError
from eatkit.report.meta_analysis import random_effects_forest, summary_line
from eatkit.stats.meta_analysis import random_effects

pytest.importorskip("matplotlib")


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
