"""Reports of a run folder: EAT-Maps, plots, tables and a self-contained HTML report.

Presentation only: every number comes from the run folder (``results.json``, ``manifest.json``,
``similarities.npz``) that ``eatkit run ... --output DIR`` writes; nothing is recomputed here.
Figures need the ``report`` extra (matplotlib); tables and :func:`load_run` do not.

>>> from eatkit.report import load_run, eat_map_grid, write_html_report     # doctest: +SKIP
>>> write_html_report(["out/weat"], "weat.html")                            # doctest: +SKIP
"""

from eatkit.report.eatmap import eat_map, eat_map_grid
from eatkit.report.html import render_html, write_html_report
from eatkit.report.plots import effect_size_heatmap, forest_plot, level3_plot
from eatkit.report.run import Run, load_run
from eatkit.report.tables import csv_table, latex_table, markdown_table, write_tables

__all__ = [
    "Run",
    "csv_table",
    "eat_map",
    "eat_map_grid",
    "effect_size_heatmap",
    "forest_plot",
    "latex_table",
    "level3_plot",
    "load_run",
    "markdown_table",
    "render_html",
    "write_html_report",
    "write_tables",
]
