"""Shared look of eatkit figures: a colour-blind-safe palette with hatches for greyscale, and matplotlib
figures that never touch a display (Agg canvas, no pyplot state).

Colours follow Okabe & Ito (2008), "Color Universal Design"; positive effects are vermillion and negative
ones blue, as the ML-EAT seed's tables shade them red and blue. Every colour has a hatch or text partner so
the figures stay readable when printed in greyscale.
"""

from __future__ import annotations

import io
import re
import textwrap
from typing import TYPE_CHECKING

from eatkit.errors import MissingExtraError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

POSITIVE = "#D55E00"  # Okabe-Ito vermillion: significant positive level-2 effect (paper: red)
NEGATIVE = "#0072B2"  # Okabe-Ito blue: significant negative level-2 effect (paper: blue)
NEUTRAL = "#DDDDDD"  # no association (paper: gray)
INK = "#222222"  # text and markers
POSITIVE_HATCH = "//"
NEGATIVE_HATCH = "\\\\"

#: level-3 distributions: (colour, hatch, label) per target-attribute pair, Okabe-Ito
PAIR_STYLES: dict[str, tuple[str, str, str]] = {
    "xa": ("#E69F00", "", "X with A"),
    "xb": ("#56B4E9", "//", "X with B"),
    "ya": ("#009E73", "..", "Y with A"),
    "yb": ("#CC79A7", "xx", "Y with B"),
}

#: diverging map for effect sizes (ColorBrewer RdBu, colour-blind safe), blue < 0 < red
DIVERGING_CMAP = "RdBu_r"


def new_figure(width: float, height: float, constrained: bool = True) -> Figure:
    """A matplotlib Figure on the Agg canvas (no pyplot, no display), by default with constrained layout."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise MissingExtraError("eatkit.report", "report", "matplotlib") from exc
    fig = Figure(figsize=(width, height), layout="constrained" if constrained else None)
    FigureCanvasAgg(fig)
    return fig


def wrap(text: str, width: int, split_words: bool = False) -> str:
    """Wrap ``text`` into lines of at most ``width`` characters, also after hyphens; words longer than a
    line stay whole unless ``split_words``.

    >>> wrap("Flowers vs. insects with pleasant vs. unpleasant", 20)
    'Flowers vs. insects\\nwith pleasant vs.\\nunpleasant'
    >>> wrap("X: European-American names", 12), wrap("A: Unpleasantness", 12, split_words=True)
    ('X: European-\\nAmerican\\nnames', 'A: Unpleasan\\ntness')
    """
    return textwrap.fill(str(text), width, break_long_words=split_words) or str(text)


#: matplotlib's SVG metadata block (creator URL, licence and Dublin Core namespaces) is left out
_NO_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}


def to_svg(fig: Figure) -> str:
    """The figure as an ``<svg>`` element for inlining into HTML: no XML prolog, no metadata, no date, stable
    ids, and no ``xmlns`` attributes (HTML's parser puts inline SVG in its namespace), so no URL at all.

    >>> "://" in to_svg(new_figure(1, 1))
    False
    """
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    buffer = io.StringIO()
    canvas, dpi = fig.canvas, fig.dpi
    try:  # (savefig draws a figure with a layout engine twice, once without rendering: the same SVG, ~1.3x the CPU)
        with matplotlib.rc_context({"svg.hashsalt": "eatkit", "svg.fonttype": "path"}):
            FigureCanvasSVG(fig).print_svg(buffer, metadata=_NO_METADATA)  # one layout, one draw
    finally:
        fig.set_canvas(canvas)
        fig.dpi = dpi  # (print_svg leaves it at 72)
    svg = buffer.getvalue()
    tag = re.search(r"<svg\b[^>]*>", svg)
    return re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", tag.group()) + svg[tag.end():]


def figure_html(fig: "Figure", label: str, text: str) -> str:
    """A figure as an HTML ``<figure>``: inline SVG labelled for screen readers, and its caption ``text``
    (already HTML)."""
    from html import escape

    svg = to_svg(fig).replace("<svg ", f'<svg role="img" aria-label="{escape(label)}" ', 1)
    return f"<figure>{svg}<figcaption>{text}</figcaption></figure>"
