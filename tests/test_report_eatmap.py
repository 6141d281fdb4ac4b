"""EAT-Maps: every ML-EAT pattern shades exactly its cells, coloured by the sign of the level-2 d."""

from __future__ import annotations

import pytest
from test_report_support import PATTERN_ASSOCIATIONS, eat_record, record
from conftest import lazy_module, require

require("matplotlib", reason="EAT-Maps need matplotlib (eatkit[report])")
colors = lazy_module("matplotlib.colors")

from eatkit.analyses.eat import EATRecord
from eatkit.errors import EatkitError
from eatkit.report import eat_map, eat_map_grid
from eatkit.report.style import NEGATIVE, NEUTRAL, POSITIVE, new_figure, wrap

GREY = (NEUTRAL, "")


def cells(ax) -> dict[str, tuple[str, str]]:
    """(facecolor, hatch) of the four cells, keyed "AX", "BX", "AY", "BY"."""
    found = {p.get_gid().rsplit("-", 1)[1]: p for p in ax.patches if (p.get_gid() or "").startswith("eatmap-")}
    assert sorted(found) == ["AX", "AY", "BX", "BY"]
    return {k: (colors.to_hex(p.get_facecolor()).upper(), p.get_hatch() or "") for k, p in found.items()}


def texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


# pattern -> the expected (facecolor, hatch) of cells AX, BX, AY, BY; eat_record() gives an associated X the
# level-2 d +0.85 towards A and -0.85 towards B, Y +0.62 / -0.62, unassociated targets +0.085 / +0.062
POS, NEG = (POSITIVE, "//"), (NEGATIVE, "\\\\")
EXPECTED = {
    "AB-Divergent": (POS, GREY, GREY, NEG),
    "BA-Divergent": (GREY, NEG, POS, GREY),
    "A-Uniform": (POS, GREY, POS, GREY),
    "B-Uniform": (GREY, NEG, GREY, NEG),
    "AX-Singular": (POS, GREY, GREY, GREY),
    "BX-Singular": (GREY, NEG, GREY, GREY),
    "AY-Singular": (GREY, GREY, POS, GREY),
    "BY-Singular": (GREY, GREY, GREY, NEG),
    "Non-Directional": (GREY, GREY, GREY, GREY),
}
LABELS = {
    "AB-Divergent": ["d=0.85", "d=-0.62"], "BA-Divergent": ["d=-0.85", "d=0.62"],
    "A-Uniform": ["d=0.85", "d=0.62"], "B-Uniform": ["d=-0.85", "d=-0.62"],
    "AX-Singular": ["d=0.85", "d=0.06"], "BX-Singular": ["d=-0.85", "d=0.06"],
    "AY-Singular": ["d=0.09", "d=0.62"], "BY-Singular": ["d=0.09", "d=-0.62"],
    "Non-Directional": ["d=0.09", "d=0.06"],
}


def test_the_expectations_cover_all_nine_patterns():
    assert set(EXPECTED) == set(PATTERN_ASSOCIATIONS) == set(LABELS) and len(EXPECTED) == 9


@pytest.mark.parametrize("pattern", list(EXPECTED))
def test_eat_map_shades_the_cells_of_each_pattern(pattern):
    fig = eat_map(eat_record(pattern))
    (ax,) = fig.axes
    assert cells(ax) == dict(zip(("AX", "BX", "AY", "BY"), EXPECTED[pattern]))
    # d of X then Y; shaded ones bold on a white box, an unassociated column's d italic on grey
    labels = texts(ax)
    assert labels == LABELS[pattern]
    for text, association in zip(ax.texts, PATTERN_ASSOCIATIONS[pattern]):
        assert (text.get_fontweight() == "bold") is (association is not None)
        assert (text.get_style() == "italic") is (association is None)
    assert ax.get_xlabel() == f"{pattern}\nd = 1.50, p \u2264 1.0e-05"  # p = 1/(99999 + 1): the Monte Carlo floor
    assert ax.get_title() == "Flowers vs. insects,\npleasant vs. unpleasant"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["X: Flowers", "Y: Insects"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["A: Pleasant", "B: Unpleasant"]
    assert ax.yaxis_inverted()  # row A on top


@pytest.mark.parametrize(("p_value", "exact", "method", "caption"), [
    (1e-05, False, "permutation", "p \u2264 1.0e-05"),  # no draw as extreme: the floor 1/(n + 1)
    (0.0123, False, "permutation", "p = 0.012\u2020"),  # sampled
    (0.0123, True, "permutation", "p = 0.012"),  # counted exactly
    (1e-05, False, "welch", "p = 1.0e-05"),  # Welch's t-test: nothing sampled
])
def test_the_caption_marks_sampled_p_values(p_value, exact, method, caption):
    fig = eat_map(eat_record(p_value=p_value, p_value_exact=exact, p_method=method))
    assert fig.axes[0].get_xlabel() == f"AB-Divergent\nd = 1.50, {caption}"


@pytest.mark.parametrize(("overrides", "message"), [
    ({"level2_x_effect_size": -0.4},  # associated with A, but the level-2 d points to B
     "level2_x_association='A' but level2_x_effect_size=-0.4 (an association with A needs d > 0, with B d < 0)"),
    ({"level2_y_effect_size": None},
     "level2_y_association='B' but level2_y_effect_size=nan (an association with A needs d > 0, with B d < 0)"),
    ({"level2_y_association": None},  # the pattern says AB-Divergent, the associations say otherwise
     "pattern='AB-Divergent', but its level-2 associations (X: 'A', Y: None) make 'AX-Singular'"),
    ({"level2_x_alternative": "less"},
     "level2_x_alternative='less' with level2_x_effect_size=0.85 (expected 'greater' when d >= 0, 'less' when d < 0)"),
    ({"level2_y_alternative": "two-sided"},
     ("level2_y_alternative='two-sided' with level2_y_effect_size=-0.62 (expected 'greater' when d >= 0, 'less' "
      "when d < 0)")),
    ({"p_method": "bootstrap"}, "p_method='bootstrap'; expected 'permutation' or 'welch'"),
])
def test_contradictory_records_are_refused(overrides, message):
    with pytest.raises(EatkitError) as info:
        eat_map(EATRecord.from_json(record(**overrides)))
    assert str(info.value) == f"record: test 't1' has {message}"


def test_eat_map_draws_into_a_given_axes():
    fig = new_figure(4, 4)
    ax = fig.add_subplot()
    assert eat_map(eat_record("BY-Singular"), ax=ax) is fig
    assert cells(ax)["BY"] == (NEGATIVE, "\\\\")


def test_grid_draws_one_map_per_record_with_a_legend():
    records = [eat_record(p, test=f"t{i}", title=f"Test {i}") for i, p in enumerate(EXPECTED)]
    fig = eat_map_grid(records, ncols=4)
    assert [ax.get_title() for ax in fig.axes] == [f"Test {i}" for i in range(9)]
    assert [cells(ax) for ax in fig.axes] == [dict(zip(("AX", "BX", "AY", "BY"), e)) for e in EXPECTED.values()]
    # 4 columns, 3 rows: the first map sits top left, the fifth starts the second row
    x0, y0 = fig.axes[0].get_position().x0, fig.axes[0].get_position().y0
    assert fig.axes[4].get_position().x0 == pytest.approx(x0)
    assert fig.axes[4].get_position().y0 < y0 and fig.axes[3].get_position().x0 > x0
    (note,) = fig.texts  # the legend of the p-values under the maps: records sit at the floor of 99999 draws
    assert note.get_text() == wrap(
        "p: level-1 permutation p-value (alternative: greater); \u2264: none of the n = 99999 random partitions was "
        "as extreme as the observed one, so p is the Monte Carlo floor 1/(n + 1)", 162)
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "associated, d > 0", "associated, d < 0", "not associated (|d| < 0.2 or p \u2265 0.05)"]
    assert [p.get_hatch() for p in legend.get_patches()] == ["//", "\\\\", None]
    assert eat_map_grid(records, ncols=4, p_legend=False).texts == []  # explained in a caption instead


def test_grid_maps_never_overlap_even_with_long_titles():
    long = "A very long test title that wraps over several lines, as the WEAT titles of a suite do " * 2
    records = [eat_record(p, test=f"t{i}", title=long) for i, p in enumerate(EXPECTED)]
    fig = eat_map_grid(records, ncols=5)
    renderer = fig.canvas.get_renderer()
    boxes = [ax.get_tightbbox(renderer) for ax in fig.axes]
    for i, a in enumerate(boxes):
        assert 0 <= a.x0 and a.x1 <= fig.bbox.width and 0 <= a.y0 and a.y1 <= fig.bbox.height
        assert not any(a.overlaps(b) for b in boxes[i + 1:])


@pytest.mark.parametrize(("records", "ncols", "message"), [
    ([], 5, "eat_map_grid needs at least one result record"),
    ([eat_record()], 0, "eat_map_grid: ncols must be a positive integer, got 0"),
])
def test_grid_rejects_bad_input(records, ncols, message):
    with pytest.raises(EatkitError) as info:
        eat_map_grid(records, ncols=ncols)
    assert str(info.value) == message


def test_eat_map_rejects_a_malformed_record():
    with pytest.raises(EatkitError) as info:
        EATRecord.from_json(record(level2_x_association="X"))
    assert str(info.value) == "record: test 't1' has level2_x_association='X'; expected 'A', 'B' or null"
    broken = record()
    del broken["pattern"]
    with pytest.raises(EatkitError, match=r"^record: test 't1' lacks 'pattern'$"):
        EATRecord.from_json(broken)
