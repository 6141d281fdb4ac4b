"""The audit report of a sweep at scale (``audit.html``): models x tests, per setting, sortable and filterable.

For a hundred models and dozens of tests a heatmap is unreadable; this page is a table instead: one row per
model (with the metadata columns of the sweep file: architecture, parameters, training data), one column
per test and measure grouped under its suite (the EAT's d shaded by sign and size, each metric's value),
one table per setting (a selector shows one: the d of ``ddof = 1`` and ``ddof = 0`` are never merged).
The page computes nothing: it shows the sweep's ``audit.json`` (values, p-values, the rows' order by the
clustering of the models' profiles of d) and ``rankings.csv`` / ``ranking-correlations.csv``, all
written by :func:`eatkit.run.sweep_tables.write_tables`. A click, or Enter, on a column heading sorts by
it (numbers as numbers; again: the other way); a text box filters the models (name, metadata) and the
tests (a test's name shows only its columns); a box per suite shows or hides its tests. Above each table,
small multiples: a strip per EAT test with a tick for every model's d. Below, the rankings of the
setting; after the settings, per test, the random-effects combination of the models' d with its
heterogeneity (``meta-analysis.csv``: :func:`eatkit.run.meta_analysis.write_meta_analysis`); then the cells: each links to its own folder, whose full report ``eatkit report
SWEEP/cells/CELL --html ...`` writes on demand (the audit page stays small: a few MB for 150 models).

Extra rows per test (e.g. a summary across the models) come from ``audit.json``'s ``summaries`` (per
setting, a list of ``{"label", "values"}`` with one value per column) and are shown in the table's foot.
Plain HTML, CSS and a little inline script, no network: one self-contained file.
"""

from __future__ import annotations

import functools
import html
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from eatkit.io import read_csv
from eatkit.report.formatting import fmt_interval
from eatkit.report.meta_analysis import meta_analysis_html

#: the metadata columns, in order (keys of a sweep file's model entries)
METADATA_COLUMNS: tuple[tuple[str, str], ...] = (("architecture", "architecture"), ("parameters", "parameters"),
                                                 ("training_data", "training data"))
AUDIT_FILE = "audit.json"
_D_RANGE = 2.0  # |d| at which shading saturates, and the half-width of the overview strips


def read_audit(sweep_dir: str | Path) -> dict[str, Any]:
    """The ``audit.json`` of a sweep's output folder; a folder without one is a one-line error."""
    from eatkit.run.sweep_tables import read_sweep_json

    return read_sweep_json(sweep_dir, AUDIT_FILE, "a finished sweep")


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def _shade(d: float) -> str:
    if not math.isfinite(d):
        return ""
    alpha = min(abs(d) / _D_RANGE, 1.0) * 0.85
    rgb = "213,94,0" if d > 0 else "0,114,178"
    return f' style="background:rgba({rgb},{alpha:.2f})"'


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _overview(data: Mapping[str, Any], setting: str, suites: list[str]) -> str:
    """Small multiples: per EAT test a strip from -2 to 2 with a tick at each model's d."""
    width, height, pad = 132, 40, 6
    panels = []
    values = data["values"][setting]
    for j, column in enumerate(data["columns"]):
        if column["measure"] != "d":
            continue
        ds = [_num(row[j]) for row in values if math.isfinite(_num(row[j]))]
        x = [pad + (min(max(v, -_D_RANGE), _D_RANGE) + _D_RANGE) / (2 * _D_RANGE) * (width - 2 * pad) for v in ds]
        ticks = "".join(f'<line x1="{v:.1f}" x2="{v:.1f}" y1="6" y2="24"/>' for v in x)
        suite, test = column["suite"], column["test"]
        panels.append(
            f'<svg class="strip s{suites.index(suite)}" width="{width}" height="{height}" role="img" '
            f'aria-label="{html.escape(test)}"><title>{html.escape(suite)} / {html.escape(test)}: '
            f'{len(ds)} models</title><rect x="{pad}" y="6" width="{width - 2 * pad}" height="18" class="bg"/>'
            f'<line x1="{width / 2}" x2="{width / 2}" y1="2" y2="28" class="zero"/><g class="ticks">{ticks}</g>'
            f'<text x="{width / 2}" y="{height - 2}">{html.escape(_short(test, 20))}</text></svg>')
    return "".join(panels)


def _csv_rows(path: Path) -> list[dict[str, str]]:
    """The rows of a sweep's table (eatkit's one reader, :func:`eatkit.io.read_csv`); none when the sweep wrote
    none (no ranking)."""
    return read_csv(path, "sweep table", ()) if path.exists() else []


def _interval(row: Mapping[str, str]) -> str:
    """A CSV row's ``ci_low``, ``ci_high`` as "[low, high]" ("-" where undefined: :func:`fmt_interval`).

    >>> _interval({"ci_low": "0.1", "ci_high": "0.25"}), _interval({"ci_low": "", "ci_high": "0.2"})
    ('[0.10, 0.25]', '-')
    """
    return fmt_interval(row.get("ci_low", ""), row.get("ci_high", ""))


def _csv_number(text: str, spec: str) -> str:
    """A number of a CSV cell formatted, or "n/a" for an empty cell (e.g. Spearman's rho of two models, or of
    a measure that ties every model).

    >>> _csv_number("0.5", ".2f"), _csv_number("", ".2f")
    ('0.50', 'n/a')
    """
    return format(float(text), spec) if text.strip() else "n/a"


def _rankings_html(rankings: list[dict[str, str]], correlations: list[dict[str, str]],
                   agreement: list[dict[str, str]], setting: str) -> str:
    """The setting's rankings (``rankings.csv``: one table per group of comparable models, with the measures
    it shares and over which tests), the Spearman correlations between the measures' rankings with their
    CIs, and the measures' agreement (``measure-agreement.csv``: ICC of the ranks)."""
    out = []
    groups = dict.fromkeys(r["group"] for r in rankings if r["setting"] == setting)
    for group in groups:
        rows = sorted(_of_group(rankings, setting, group), key=lambda r: float(r["overall_rank"]))
        out.append(_group_ranking_html(group, rows))
        corr = _of_group(correlations, setting, group)
        if corr:
            out.append(_correlations_html(corr))
        out += [_agreement_html(a) for a in _of_group(agreement, setting, group)]
    if not out:
        return ""
    return ('<h2>Rankings</h2><p class="note">Models ranked by each measure (1: least biased, by |d| for the EAT '
            "and each metric's distance from no bias; docs/metrics.md), their mean rank and the overall rank by "
            "it (WEFE's rankings), within each group of comparable models on the measures the group shares.</p>"
            + "".join(out))


def _of_group(rows: list[dict[str, str]], setting: str, group: str) -> list[dict[str, str]]:
    return [r for r in rows if r["setting"] == setting and r["group"] == group]


def _group_ranking_html(group: str, rows: list[dict[str, str]]) -> str:
    """One group's rankings table: overall rank, model, mean rank, and the rank by each measure it shares."""
    measures = [c[5:] for c in rows[0] if c.startswith("rank_") and rows[0][c] != ""]
    head = "".join(f'<th class="sort" tabindex="0" data-type="num">{html.escape(m)}</th>' for m in measures)
    body = "".join(
        f'<tr><td data-v="{html.escape(r["overall_rank"])}">{html.escape(r["overall_rank"])}</td>'
        f'<th class="model" scope="row">{html.escape(r["model"])}</th>'
        f'<td data-v="{html.escape(r["mean_rank"])}">{float(r["mean_rank"]):.2f}</td>'
        + "".join(f'<td data-v="{html.escape(r["rank_" + m])}">{html.escape(r["rank_" + m])}</td>'
                  for m in measures) + "</tr>" for r in rows)
    return (f'<h3>{html.escape(group)}</h3><p class="note">Measures: {html.escape(rows[0]["basis"])}.</p>'
            f'<table class="rankings sortable"><thead><tr><th class="sort" tabindex="0" data-type="num">'
            f'overall</th><th class="sort" tabindex="0" data-type="text">model</th><th class="sort" '
            f'tabindex="0" data-type="num">mean rank</th>{head}</tr></thead><tbody>{body}</tbody></table>')


def _correlations_html(corr: list[dict[str, str]]) -> str:
    cells = "".join(f"<tr><td>{html.escape(r['measure_1'])}</td><td>{html.escape(r['measure_2'])}</td>"
                    f"<td>{_csv_number(r['spearman'], '.2f')}</td><td>{_interval(r)}</td>"
                    f"<td>{_csv_number(r['p_value'], '.3g')}</td></tr>" for r in corr)
    return ('<p class="note">Spearman\'s rho between the measures\' rankings of these models, with its '
            '95% CI (Fisher z, Bonett &amp; Wright 2000).</p><table class="rankings"><thead><tr>'
            '<th>measure</th><th>measure</th><th>rho</th><th>95% CI</th><th>p</th>'
            f"</tr></thead><tbody>{cells}</tbody></table>")


def _agreement_html(r: dict[str, str]) -> str:
    return (f'<p class="note">Do the measures rank these models alike? ICC({html.escape(r["form"])}) of '
            f'the ranks (consistency; Shrout &amp; Fleiss 1979): {_csv_number(r["icc"], ".2f")}, 95% CI '
            f'{_interval(r)}, F({r["df1"]}, {_csv_number(r["df2"], "g")}) = {_csv_number(r["f"], ".2f")}, '
            f'p = {_csv_number(r["p_value"], ".3g")} ({r["models"]} models, {r["measures"]} measures).</p>')


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _setting_table(data: Mapping[str, Any], setting: str, k: int, suites: list[str],
                   meta: list[tuple[str, str]]) -> tuple[str, str]:
    """The models x tests table of one setting, and how its rows are ordered."""
    columns = data["columns"]
    order = data["order"][setting]
    first = 2 + len(meta)  # columns before the tests: rank, model, metadata
    group_row = _suite_group_row(columns, suites)
    failed = {(c["model"], c["suite"]): c.get("error") or "failed" for c in data["cells"]
              if c["setting"] == setting and c["status"] == "failed"}
    rows = [_model_row(data, setting, i, rank, suites, meta, failed) for rank, i in enumerate(order["rows"], start=1)]
    foot = _summary_rows(data, setting, first, suites)
    table = (f'<div class="wrap"><table class="audit sortable" id="audit-{k}"><thead><tr class="groups">'
             f'<th colspan="{first}"></th>{group_row}</tr><tr class="heads"><th class="sort" tabindex="0" '
             f'data-col="0" data-type="num">#</th><th class="sort" tabindex="0" data-col="1" data-type="text">'
             f'model</th>{_heads(data, suites, meta)}</tr></thead><tbody>{"".join(rows)}</tbody><tfoot>{foot}</tfoot>'
             "</table></div>")
    return table, order["how"]


def _suite_group_row(columns: list[dict[str, Any]], suites: list[str]) -> str:
    """The header cells naming each suite over its columns."""
    return "".join(f'<th colspan="{sum(s == c["suite"] for c in columns)}" class="suite s{i}">'
                   f"{html.escape(s)}</th>" for i, s in enumerate(suites) if any(s == c["suite"] for c in columns))


def _summary_rows(data: Mapping[str, Any], setting: str, first: int, suites: list[str]) -> str:
    """Extra rows per test (audit.json "summaries"), e.g. a summary across the models."""
    return "".join(
        f'<tr class="summary"><th colspan="{first}" scope="row">{html.escape(row["label"])}</th>'
        + "".join(f'<td class="s{suites.index(c["suite"])}">{html.escape(_cell_text(v))}</td>'
                  for c, v in zip(data["columns"], row["values"])) + "</tr>"
        for row in data.get("summaries", {}).get(setting, []))


def _heads(data: Mapping[str, Any], suites: list[str], meta: list[tuple[str, str]]) -> str:
    """The column headings after # and model: the metadata (numbers sort as numbers), then the tests."""
    first = 2 + len(meta)
    numeric = {key for key, _ in meta
               if all(_is_number(str(m.get(key, ""))) for m in data["metadata"].values() if m.get(key, "") != "")}
    heads = "".join(f'<th class="sort meta" tabindex="0" data-col="{2 + j}" '
                    f'data-type="{"num" if key in numeric else "text"}">{html.escape(label)}</th>'
                    for j, (key, label) in enumerate(meta))
    return heads + "".join(f'<th class="sort test s{suites.index(c["suite"])}" tabindex="0" data-col="{first + j}" '
                           f'data-type="num" title="{html.escape(c["suite"])} / {html.escape(c["test"])} '
                           f'({html.escape(c["measure"])})"><span>{html.escape(_short(c["test"], 28))}</span></th>'
                           for j, c in enumerate(data["columns"]))


def _model_row(data: Mapping[str, Any], setting: str, i: int, rank: int, suites: list[str],
               meta: list[tuple[str, str]], failed: Mapping[tuple[str, str], str]) -> str:
    """One model's row: rank, name (marked when a cell of it failed), metadata, one cell per test."""
    values, pvalues = data["values"][setting], data["p"][setting]
    model = data["models"][i]
    info = data["metadata"].get(model, {})
    gone = [s for (m, s) in failed if m == model]
    mark = f' <span class="failed">(failed: {html.escape(", ".join(gone))})</span>' if gone else ""
    cells = [f'<td class="rank" data-v="{rank}">{rank}</td>',
             f'<th class="model" scope="row">{html.escape(model)}{mark}</th>']
    cells += [f'<td class="meta" data-v="{html.escape(str(info.get(key, "")))}">'
              f'{html.escape(str(info.get(key, "")))}</td>' for key, _ in meta]
    cells += [_value_cell(model, c, suites.index(c["suite"]), values[i][j] if values else None,
                          pvalues[i][j] if pvalues else None, failed.get((model, c["suite"])))
              for j, c in enumerate(data["columns"])]
    return "<tr>" + "".join(cells) + "</tr>"


def _value_cell(model: str, column: Mapping[str, str], s: int, value: Any, p_value: Any, error: str | None) -> str:
    """One models x tests cell: the value (shaded for d) with its p in the tip, empty when the test did not
    run, "failed" (the cell's error in the tip) when the model's cell of that suite failed.

    >>> _value_cell("m", {"suite": "weat", "test": "w1", "measure": "d"}, 0, None, None, "out of memory")
    '<td class="s0 failed" data-v="" title="m / weat: out of memory">failed</td>'
    """
    v, p = _num(value), _num(p_value)
    if not math.isfinite(v):
        if error is not None:
            tip = html.escape(f"{model} / {column['suite']}: {error}")
            return f'<td class="s{s} failed" data-v="" title="{tip}">failed</td>'
        return f'<td class="s{s}" data-v=""></td>'
    tip = f"{model} / {column['test']}: {column['measure']} = {v:.4f}" + (f", p = {p:.3g}" if math.isfinite(p) else "")
    shade = _shade(v) if column["measure"] == "d" else ""
    return f'<td class="s{s}" data-v="{v!r}"{shade} title="{html.escape(tip)}">{v:.2f}</td>'


def _cell_text(value: Any) -> str:
    number = _num(value)
    return f"{number:.2f}" if math.isfinite(number) else ("" if value is None else str(value))


def _cells_html(data: Mapping[str, Any]) -> str:
    """The cells by status, each linked to its folder (its full report is written on demand)."""
    cells = data["cells"]
    counts = {s: sum(c["status"] == s for c in cells) for s in dict.fromkeys(c["status"] for c in cells)}
    rows = "".join(
        f'<tr><td><a href="cells/{html.escape(c["id"])}/">{html.escape(c["id"])}</a></td>'
        f'<td>{html.escape(c["status"])}</td><td class="meta">{html.escape(c.get("error") or "")}</td></tr>'
        for c in cells)
    summary = ", ".join(f"{n} {s}" for s, n in counts.items())
    return (f'<h2>Cells</h2><details><summary>{len(cells)} cells: {html.escape(summary)} (cells.csv; each '
            "test's status and reason: tests.csv; a cell's full report: <code>eatkit report "
            "cells/CELL --html CELL.html</code>)</summary><table><thead><tr><th>cell</th><th>status</th>"
            f"<th>error</th></tr></thead><tbody>{rows}</tbody></table></details>")


def audit_html(data: Mapping[str, Any], title: str = "Audit: models x tests",
               rankings: list[dict[str, str]] | None = None,
               correlations: list[dict[str, str]] | None = None,
               agreement: list[dict[str, str]] | None = None, meta_analysis: Path | None = None) -> str:
    """The self-contained HTML page of a sweep's ``audit.json`` data, its rankings, the measures' agreement
    and (``meta_analysis``: its ``meta-analysis.csv``) each test's random effects across the models (module
    docstring)."""
    settings = list(data["settings"])
    columns = data["columns"]
    suites = list(dict.fromkeys(c["suite"] for c in columns))
    meta = _metadata_columns(data)
    rankings_of = functools.partial(_rankings_html, rankings or [], correlations or [], agreement or [])
    sections = [_setting_section(data, setting, k, suites, meta, rankings_of(setting))
                for k, setting in enumerate(settings)]
    selector = _setting_selector(settings)
    toggles = "".join(f'<label><input type="checkbox" checked data-suite="{i}"> {html.escape(s)}</label> '
                      for i, s in enumerate(suites))
    hide = "".join(f".hide-s{i} .s{i}{{display:none}}" for i in range(len(suites)))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{{font:13px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:16px;color:#222}}
h1{{font-size:20px;margin:0 0 4px}} h2{{font-size:16px;margin:14px 0 4px}} h3{{font-size:14px;margin:10px 0 2px}}
.note{{color:#555;margin:2px 0 10px}}
.controls{{margin:8px 0;display:flex;gap:16px;flex-wrap:wrap;align-items:center}}
.controls input[type=search]{{font-size:13px;padding:3px 6px;width:260px}}
figure{{margin:0 0 12px}} .multiples{{display:flex;flex-wrap:wrap;gap:2px 6px}}
svg.strip .bg{{fill:#f2f2f2}} svg.strip .zero{{stroke:#888;stroke-width:1}}
svg.strip .ticks line{{stroke:#222;stroke-opacity:.45;stroke-width:1}}
svg.strip text{{font-size:10px;text-anchor:middle;fill:#333}}
.wrap{{overflow:auto;max-height:80vh;border:1px solid #ccc}}
table{{border-collapse:separate;border-spacing:0;font-size:11px}}
th,td{{padding:2px 4px;border-bottom:1px solid #eee;white-space:nowrap}}
td{{text-align:right;font-variant-numeric:tabular-nums;min-width:30px}}
table.audit thead th{{position:sticky;background:#fff;z-index:2}}
table.audit thead tr.groups th{{top:0;height:18px;border-bottom:1px solid #999}}
table.audit thead tr.heads th{{top:23px;vertical-align:bottom;border-bottom:1px solid #999}}
table.audit td.failed,table.audit .failed{{color:#a00;font-style:italic}}
th.test span{{writing-mode:vertical-rl;transform:rotate(180deg);display:inline-block;max-height:160px;
font-weight:normal;font-size:11px}}
th.sort{{cursor:pointer}} th.sort:hover,th.sort:focus{{background:#eef}} th.sorted-desc::after{{content:" ▼"}}
th.sorted-asc::after{{content:" ▲"}}
tbody th.model{{position:sticky;left:0;background:#fff;text-align:left;font-weight:600;z-index:1}}
td.meta{{text-align:left;color:#444}} td.rank{{color:#888}} tr.summary th{{text-align:right;font-weight:normal}}
tbody tr:hover td,tbody tr:hover th{{outline:1px solid #bbb}}
{hide}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p class="note">{len(data["models"])} models x {len(columns)} test columns in {len(suites)} suites, {len(settings)}
setting(s); cells: the EAT's effect size d (vermillion: towards A, blue: towards B; full shade at |d| ≥
{_D_RANGE:g}) or a metric's value (the test id ends with the metric); hover a cell for the value and p.
Click (or Enter on) a heading to sort; again to reverse.</p>
<div class="controls">{selector}<input type="search" id="filter" placeholder="filter models or tests"
aria-label="filter models (name, metadata) or tests"> <span>suites: {toggles}</span> <span id="shown"></span></div>
{"".join(sections)}
{meta_analysis_html(meta_analysis)}
{_cells_html(data)}
<script>
(function () {{
  const sections = [...document.querySelectorAll('section.setting')];
  const visible = () => sections.find(s => !s.hidden) || sections[0];
  const sortBy = th => {{
    const table = th.closest('table'), body = table.tBodies[0];
    const col = th.dataset.col !== undefined ? +th.dataset.col : th.cellIndex, type = th.dataset.type;
    const desc = !th.classList.contains('sorted-desc') && col !== 0;
    table.querySelectorAll('th.sort').forEach(h => {{ h.classList.remove('sorted-asc', 'sorted-desc');
      h.removeAttribute('aria-sort'); }});
    th.classList.add(desc ? 'sorted-desc' : 'sorted-asc');
    th.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
    const value = row => {{
      const cell = row.children[col], v = cell.dataset.v !== undefined ? cell.dataset.v : cell.textContent;
      return type === 'num' ? (v === '' ? NaN : parseFloat(v)) : v.toLowerCase();
    }};
    const rows = [...body.rows], sign = desc ? -1 : 1;
    rows.sort((a, b) => {{
      const x = value(a), y = value(b);
      if (type === 'num') {{
        if (isNaN(x) || isNaN(y)) return isNaN(x) - isNaN(y);
        return sign * (x - y);
      }}
      return sign * (x < y ? -1 : x > y ? 1 : 0);
    }});
    rows.forEach(r => body.appendChild(r));
  }};
  document.querySelectorAll('table.sortable th.sort').forEach(th => {{
    th.addEventListener('click', () => sortBy(th));
    th.addEventListener('keydown', e => {{ if (e.key === 'Enter' || e.key === ' ') {{ e.preventDefault(); sortBy(th); }} }});
  }});
  const filter = document.getElementById('filter'), shown = document.getElementById('shown');
  const apply = () => {{
    const q = filter.value.trim().toLowerCase(), table = visible().querySelector('table.audit');
    if (!table) return;
    const body = table.tBodies[0], heads = [...table.querySelectorAll('th.test')];
    const cols = q ? heads.filter(h => h.title.toLowerCase().includes(q)).map(h => +h.dataset.col) : [];
    const rowText = r => [...r.querySelectorAll('th.model, td.meta')].map(c => c.textContent).join(' ').toLowerCase();
    const rowsMatch = q ? [...body.rows].filter(r => rowText(r).includes(q)) : [...body.rows];
    const keepRows = rowsMatch.length || !cols.length ? new Set(rowsMatch) : new Set(body.rows);
    let n = 0;
    [...body.rows].forEach(r => {{ const ok = keepRows.has(r); r.style.display = ok ? '' : 'none'; n += ok; }});
    const hide = new Set(cols.length ? heads.map(h => +h.dataset.col).filter(c => !cols.includes(c)) : []);
    const first = heads.length ? +heads[0].dataset.col : 0;
    [table.querySelector('tr.heads'), ...body.rows].forEach(r => [...r.children].forEach((c, i) => {{
      c.style.display = hide.has(i) ? 'none' : ''; }}));
    [...table.tFoot.rows].forEach(r => [...r.children].forEach((c, i) => {{
      c.style.display = i > 0 && hide.has(first + i - 1) ? 'none' : ''; }}));
    shown.textContent = n + ' of ' + body.rows.length + ' models' + (cols.length ? ', ' + cols.length + ' tests' : '') + ' shown';
  }};
  filter.addEventListener('input', apply);
  const select = document.getElementById('setting');
  if (select) select.addEventListener('change', () => {{
    sections.forEach((s, k) => {{ s.hidden = String(k) !== select.value; }}); apply(); }});
  apply();
  document.querySelectorAll('input[data-suite]').forEach(box => box.addEventListener('change', () => {{
    document.body.classList.toggle('hide-s' + box.dataset.suite, !box.checked);
  }}));
}})();
</script>
</body></html>
"""


def _metadata_columns(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The metadata columns (key, label) some model of the sweep has."""
    return [(k, label) for k, label in METADATA_COLUMNS if any(k in m for m in data["metadata"].values())]


def _setting_section(data: Mapping[str, Any], setting: str, k: int, suites: list[str],
                     meta: list[tuple[str, str]], rankings: str) -> str:
    """One setting's section: its strips of d per test, its models x tests table and its rankings."""
    table, how = _setting_table(data, setting, k, suites, meta)
    return (f'<section class="setting" data-setting="{k}"{"" if k == 0 else " hidden"}>'
            f'<h2 tabindex="-1">Setting: {html.escape(setting)}</h2><p class="note">Rows: {html.escape(how)}.</p>'
            f'<figure><div class="multiples">{_overview(data, setting, suites)}</div><figcaption class="note">'
            f"Each strip: one EAT test, from d = -{_D_RANGE:g} to {_D_RANGE:g} (grey line: 0), a tick per model."
            f"</figcaption></figure>{table}{rankings}</section>")


def _setting_selector(settings: list[str]) -> str:
    if len(settings) < 2:
        return ""
    return ('<label>setting: <select id="setting">' + "".join(
        f'<option value="{k}">{html.escape(s)}</option>' for k, s in enumerate(settings)) + "</select></label>")


def write_audit_report(sweep_dir: str | Path, path: str | Path | None = None,
                       title: str = "Audit: models x tests") -> Path:
    """Write the audit page of a finished sweep's output folder (its ``audit.json`` and rankings) to ``path``
    (default: ``audit.html`` in the folder); return it. ``eatkit report SWEEP_DIR`` calls it.

    >>> import tempfile, pathlib; d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "audit.json").write_text(json.dumps({"settings": ["default"], "models": ["m1"], "metadata": {},
    ...     "columns": [{"suite": "weat", "test": "weat1", "measure": "d"}], "values": {"default": [[0.5]]},
    ...     "p": {"default": [[0.01]]}, "order": {"default": {"rows": [0], "how": "sweep order"}}, "cells": []}))
    >>> write_audit_report(d).name
    'audit.html'
    """
    sweep_dir = Path(sweep_dir)
    data = read_audit(sweep_dir)
    page = audit_html(data, title, _csv_rows(sweep_dir / "rankings.csv"),
                      _csv_rows(sweep_dir / "ranking-correlations.csv"), _csv_rows(sweep_dir / "measure-agreement.csv"),
                      sweep_dir / "meta-analysis.csv")
    path = Path(path) if path is not None else sweep_dir / "audit.html"
    path.write_text(page, encoding="utf-8")
    return path
