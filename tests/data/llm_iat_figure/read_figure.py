"""Read Bai et al.'s implicit-bias figure: the numbers behind FIGURE_GPT4 and FIGURE_EIGHT_MODELS in
tests/test_language_models.py and the comparison in docs/language-models.md.

The figure is `figure/implicit_bias.pdf` of github.com/baixuechunzi/llm-implicit-bias (drawn by Matplotlib 3.7.3
from `analysis/analysis_implicit.ipynb`: eight panels, one per model, a point and a 95% CI per stereotype):

    git clone https://github.com/baixuechunzi/llm-implicit-bias /tmp/llm-implicit-bias
    python3 tests/data/llm_iat_figure/read_figure.py /tmp/llm-implicit-bias/figure/implicit_bias.pdf

It decompresses the page's content stream (zlib) and follows its operators: each point is a marker object
placed by `cm` translations, each CI a vertical line segment, each y gridline a grey horizontal line followed
by its tick label (a minus sign is a separate glyph object). A straight line through a panel's ticks maps
heights to values (the right-hand panels share their row's ticks). The points run left to right in the
notebook's `cat_order`. It prints, as JSON, each panel's mean and CI per stereotype, the mean of the eight
panels, and the t over the eight models' 200 answers each implied by the points and CIs (a CI's width taken
as 2 x 1.96 sd / sqrt(200)), to compare with the t the notebook prints (its cell 8).
"""

from __future__ import annotations

import json
import re
import sys
import zlib

import numpy as np

#: the notebook's order of the x axis (analysis_implicit.ipynb, `cat_order`)
CAT_ORDER = ("racism", "guilt", "skintone", "weapon", "black", "hispanic", "asian", "arab", "english", "career",
             "science", "power", "sexuality", "islam", "judaism", "buddhism", "disability", "weight", "age",
             "mentalill", "eating")
ANSWERS = 200  # per model and stereotype: 4 prompt variants x 50
GRID_GREY = (0.8, 0.8, 0.8)
TOKEN = re.compile(r"\((?:\\.|[^\\)])*\)|\[|\]|/[^\s/\[\]()<>]+|[-+]?\d*\.?\d+|[A-Za-z*'\"]+")


def content_stream(pdf: bytes) -> str:
    """The page's drawing operators (the figure has one page and one content stream)."""
    objects = dict(re.findall(rb"(\d+) 0 obj(.*?)endobj", pdf, re.S))
    page = next(body for body in objects.values() if b"/Type /Page " in body)
    body = objects[re.search(rb"/Contents (\d+) 0 R", page).group(1)]
    return zlib.decompress(re.search(rb"stream\r?\n(.*?)\r?\nendstream", body, re.S).group(1)).decode("latin-1")


def events(stream: str) -> list[tuple]:
    """Stroked line segments, text strings and placed objects, in drawing order, in page coordinates."""
    ctm, clip, rect, stroke, stack, operands, path, out = np.eye(3), None, None, None, [], [], [], []
    for token in TOKEN.findall(stream):
        if token[0] in "([]/" or token[0].isdigit() or token[0] in "-+.":
            operands.append(token)
            continue
        nums = [float(x) for x in operands if x[0] not in "([]/"]
        if token == "q":
            stack.append((ctm, clip, stroke))
        elif token == "Q":
            ctm, clip, stroke = stack.pop()
        elif token == "cm":
            a, b, c, d, e, f = nums[-6:]
            ctm = np.array([[a, b, 0], [c, d, 0], [e, f, 1]]) @ ctm
        elif token == "re":
            rect = tuple(nums[-4:])
        elif token == "W":
            clip = rect
        elif token == "RG":
            stroke = tuple(nums[-3:])
        elif token == "G":
            stroke = (nums[-1],) * 3
        elif token == "m":
            path = [(nums[-2], nums[-1])]
        elif token == "l":
            path.append((nums[-2], nums[-1]))
        elif token == "S":
            out.append(("line", path[0], path[-1], clip, stroke))
        elif token == "TJ":
            out.append(("text", "".join(x[1:-1] for x in operands if x[0] == "("), ctm[2, 0], ctm[2, 1]))
        elif token == "Do":
            out.append(("object", operands[-1], ctm[2, 0], ctm[2, 1], clip))
        operands = []
    return out


def ticks(drawn: list[tuple], panel: tuple) -> list[tuple[float, float | None]]:
    """(height, value) of each y gridline of a panel; value None where the panel shows no tick labels."""
    out = []
    for i, e in enumerate(drawn):
        if e[0] == "line" and e[3] == panel and e[4] == GRID_GREY and e[1][1] == e[2][1]:
            j, label = next((j, f) for j, f in enumerate(drawn[i + 1:], i + 1) if f[0] == "text")
            minus = j + 1 < len(drawn) and drawn[j + 1][0] == "object" and "minus" in drawn[j + 1][1]
            value = float(label[1]) * (-1 if minus else 1) if label[2] < panel[0] else None
            out.append((e[1][1], value))
    return out


def read(pdf: bytes) -> dict[str, dict[str, list[float]]]:
    """Each panel's (title's) [mean, CI low, CI high] per stereotype."""
    drawn = events(content_stream(pdf))
    panels = sorted({e[4] for e in drawn if e[0] == "object" and e[1].startswith("/P")}, key=lambda r: (-r[1], r[0]))
    scales, out = {}, {}
    for panel in panels:
        x0, y0, width, height = panel
        grid = ticks(drawn, panel)
        if grid[0][1] is None:  # a right-hand panel: its row's left panel has the same gridlines and the labels
            left = next(scales[p] for p in scales if p[1] == y0)
            assert [g[0] for g in grid] == [g[0] for g in left[0]]
            grid = left[0]
        slope, intercept = np.polyfit([g[1] for g in grid], [g[0] for g in grid], 1)
        scales[panel] = (grid, slope, intercept)
        value = lambda y: (y - intercept) / slope  # noqa: E731
        title = " ".join(e[1] for e in drawn if e[0] == "text" and x0 <= e[2] <= x0 + width
                         and y0 + height <= e[3] <= y0 + height + 40)
        points = sorted((e[2], e[3]) for e in drawn if e[0] == "object" and e[4] == panel and e[1].startswith("/P"))
        bars = {round(e[1][0], 3): sorted((e[1][1], e[2][1])) for e in drawn
                if e[0] == "line" and e[3] == panel and e[4] != GRID_GREY and e[1][0] == e[2][0]}
        assert len(points) == len(CAT_ORDER)
        out[title] = {c: [value(y), *(value(b) for b in bars[round(x, 3)])] for c, (x, y) in zip(CAT_ORDER, points)}
    return out


def main(path: str) -> None:
    panels = read(open(path, "rb").read())
    means = np.array([[panel[c][0] for c in CAT_ORDER] for panel in panels.values()])
    # sd within a model from its CI's width; the eight models' answers pooled: within + between variance
    sd = np.array([[(panel[c][2] - panel[c][1]) / (2 * 1.96) * np.sqrt(ANSWERS) for c in CAT_ORDER]
                   for panel in panels.values()])
    n = ANSWERS * len(panels)
    variance = (sd ** 2 * (ANSWERS - 1) / ANSWERS).mean(axis=0) + means.var(axis=0)
    t = means.mean(axis=0) / np.sqrt(variance * n / (n - 1) / n)
    json.dump({"panels": {k: {c: [round(v, 4) for v in p[c]] for c in CAT_ORDER} for k, p in panels.items()},
               "mean_of_panels": dict(zip(CAT_ORDER, np.round(means.mean(axis=0), 4).tolist())),
               "t_implied": dict(zip(CAT_ORDER, np.round(t, 2).tolist()))}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
