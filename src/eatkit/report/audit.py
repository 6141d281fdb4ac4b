"""The audit report of a sweep at scale (``audit.html``): models x tests, sortable and filterable, one file.

For a hundred models and dozens of tests the heatmap of ``report.html`` is unreadable; this page is a table
instead: one row per model (with the metadata columns of the sweep file: architecture, parameters, training
data), one column per test grouped under its suite, each cell the effect size d shaded by sign and size. Rows
start in the order of :func:`eatkit.stats.cluster_profiles` (models with similar bias profiles side by side);
a click on a column heading sorts by it (again: the other way), a text box filters the models, and a box per
suite shows or hides its tests. Above the table, one small-multiples figure: a strip per test with a tick for
every model's d. Below it, when the sweep ranked its models (``rankings.csv``, ``ranking-correlations.csv``:
:func:`eatkit.run.sweep.write_rankings`), the ranking by each measure and overall, and the rank correlation
between the measures; and, per test, the random-effects combination of the models' d with its
heterogeneity (``meta-analysis.csv``: :func:`eatkit.run.meta_analysis.write_meta_analysis`). Plain HTML, CSS and a little inline script, no network: one self-contained file.
"""

from __future__ import annotations

import csv
import html
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.report.meta_analysis import meta_analysis_html
from eatkit.stats.clustering import cluster_profiles

#: the metadata columns, in order (keys of a sweep file's model entries)
METADATA_COLUMNS: tuple[tuple[str, str], ...] = (("architecture", "architecture"), ("parameters", "parameters"),
                                                 ("training_data", "training data"))
_D_RANGE = 2.0  # |d| at which shading saturates, and the half-width of the overview strips


@dataclass(frozen=True)
class AuditTable:
    """Models x tests of a sweep: ``d`` and ``p`` (NaN where a model has no result for a test), the tests as
    (suite, test id) pairs in suite order, and each model's metadata."""

    models: tuple[str, ...]
    tests: tuple[tuple[str, str], ...]
    d: np.ndarray
    p: np.ndarray
    metadata: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def audit_table(run_dirs: Sequence[str | Path], metadata: Mapping[str, Mapping[str, Any]] | None = None) -> AuditTable:
    """The models x tests table of sweep cell folders (``cell.json`` names the model and suite; the effect
    size and p-value of each record of ``results.json``)."""
    cells: dict[tuple[str, str, str], tuple[float, float]] = {}
    models: list[str] = []
    tests: list[tuple[str, str]] = []
    for folder in map(Path, run_dirs):
        try:
            state = json.loads((folder / "cell.json").read_text(encoding="utf-8"))
            records = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise EatkitError(f"{folder} is not a finished sweep cell: {exc}") from None
        model, suite = str(state["model"]), str(state["suite"])
        models += [model] if model not in models else []
        for record in records:
            if record.get("bias_type", "all") != "all":  # language-model kinds: the overall record per test
                continue
            key = (suite, str(record.get("test")))
            tests += [key] if key not in tests else []
            cells[(model, *key)] = (_number(record.get("effect_size", _headline(record))),
                                    _number(record.get("p_value")))
    d = np.array([[cells.get((m, *t), (math.nan, math.nan))[0] for t in tests] for m in models], dtype=float)
    p = np.array([[cells.get((m, *t), (math.nan, math.nan))[1] for t in tests] for m in models], dtype=float)
    suites = list(dict.fromkeys(s for s, _ in tests))
    order = sorted(range(len(tests)), key=lambda i: suites.index(tests[i][0]))  # grouped by suite, stable
    return AuditTable(tuple(models), tuple(tests[i] for i in order), d[:, order].reshape(len(models), len(order)),
                      p[:, order].reshape(len(models), len(order)), dict(metadata or {}))


def _headline(record: Mapping[str, Any]) -> Any:
    """A record's headline value where it has no effect size (e.g. the language-model kinds' signed bias)."""
    from eatkit.kinds import KINDS, get_kind

    kind = record.get("kind")
    headline = get_kind(kind).presentation.headline if kind in KINDS else None
    return record.get(headline) if headline else None


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def _order(table: AuditTable) -> tuple[list[int], str]:
    """Rows in the order of the clustering of their profiles (models without any d last)."""
    usable = [i for i in range(len(table.models)) if np.isfinite(table.d[i]).any()]
    rest = [i for i in range(len(table.models)) if i not in usable]
    if len(usable) < 2:
        return usable + rest, "sweep order (fewer than two models to cluster)"
    try:
        clustering = cluster_profiles(table.d[usable])
    except EatkitError as err:
        return usable + rest, f"sweep order (not clustered: {err})"
    return [usable[i] for i in clustering.order] + rest, (
        f"clustered by bias profile ({clustering.method} linkage, {clustering.metric}, {clustering.missing})")


def _shade(d: float) -> str:
    if not math.isfinite(d):
        return ""
    alpha = min(abs(d) / _D_RANGE, 1.0) * 0.85
    rgb = "213,94,0" if d > 0 else "0,114,178"
    return f' style="background:rgba({rgb},{alpha:.2f})"'


def _overview(table: AuditTable, order: list[int]) -> str:
    """Small multiples: per test a strip from -2 to 2 with a tick at each model's d (grouped by suite)."""
    width, height, pad = 132, 40, 6
    panels = []
    for j, (suite, test) in enumerate(table.tests):
        values = [table.d[i, j] for i in order if math.isfinite(table.d[i, j])]
        x = [pad + (min(max(v, -_D_RANGE), _D_RANGE) + _D_RANGE) / (2 * _D_RANGE) * (width - 2 * pad) for v in values]
        ticks = "".join(f'<line x1="{v:.1f}" x2="{v:.1f}" y1="6" y2="24"/>' for v in x)
        zero = width / 2
        panels.append(
            f'<svg class="strip s{_suite_index(table, suite)}" width="{width}" height="{height}" role="img" '
            f'aria-label="{html.escape(test)}"><title>{html.escape(suite)} / {html.escape(test)}: '
            f'{len(values)} models</title><rect x="{pad}" y="6" width="{width - 2 * pad}" height="18" '
            f'class="bg"/><line x1="{zero}" x2="{zero}" y1="2" y2="28" class="zero"/><g class="ticks">{ticks}</g>'
            f'<text x="{width / 2}" y="{height - 2}">{html.escape(_short(test, 20))}</text></svg>')
    return "".join(panels)


def _suite_index(table: AuditTable, suite: str) -> int:
    return list(dict.fromkeys(s for s, _ in table.tests)).index(suite)


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _interval(row: Mapping[str, str]) -> str:
    """A CSV row's ``ci_low``, ``ci_high`` as "[low, high]" ("n/a" where undefined)."""
    values = [row.get("ci_low", ""), row.get("ci_high", "")]
    if any(v in ("", "nan") for v in values):
        return "n/a"
    return f"[{float(values[0]):.2f}, {float(values[1]):.2f}]"


def _csv_number(text: str, spec: str) -> str:
    """A number of a CSV cell formatted, or "n/a" for an empty cell (e.g. Spearman's rho of two models, or of
    a measure that ties every model).

    >>> _csv_number("0.5", ".2f"), _csv_number("", ".2f")
    ('0.50', 'n/a')
    """
    return format(float(text), spec) if text.strip() else "n/a"


def _rankings_html(rankings: Path | None) -> str:
    """The sweep's model rankings (``rankings.csv``) and the Spearman correlations between the measures'
    rankings (``ranking-correlations.csv`` beside it) as two tables; "" when the sweep wrote none."""
    if rankings is None or not rankings.is_file():
        return ""
    rows = sorted(_csv_rows(rankings), key=lambda r: float(r["overall_rank"]))
    measures = [c for c in rows[0] if c.startswith("rank_")] if rows else []
    head = "".join(f"<th>{html.escape(c[5:])}</th>" for c in measures)
    body = "".join(
        f'<tr><td class="rank">{html.escape(r["overall_rank"])}</td><th class="model" scope="row">'
        f'{html.escape(r["model"])}</th><td>{float(r["mean_rank"]):.2f}</td>'
        + "".join(f"<td>{html.escape(r[c])}</td>" for c in measures) + "</tr>" for r in rows)
    out = (f'<h2>Rankings</h2><p class="note">Models ranked by each measure (1: least biased, by |d| for the EAT '
           f'and each metric\'s distance from no bias; docs/metrics.md), their mean rank and the overall rank by '
           f'it (WEFE\'s rankings).</p><table class="rankings"><thead><tr><th>overall</th><th>model</th>'
           f'<th>mean rank</th>{head}</tr></thead><tbody>{body}</tbody></table>')
    pairs = rankings.with_name("ranking-correlations.csv")
    if pairs.is_file() and (corr := _csv_rows(pairs)):
        cells = "".join(f"<tr><td>{html.escape(r['measure_1'])}</td><td>{html.escape(r['measure_2'])}</td>"
                        f"<td>{_csv_number(r['spearman'], '.2f')}</td><td>{_interval(r)}</td>"
                        f"<td>{_csv_number(r['p_value'], '.3g')}</td></tr>" for r in corr)
        out += ('<p class="note">Spearman\'s rho between the measures\' rankings of the models, with its 95% CI '
                '(Fisher z, Bonett &amp; Wright 2000).</p><table class="rankings"><thead><tr><th>measure</th>'
                f'<th>measure</th><th>rho</th><th>95% CI</th><th>p</th></tr></thead><tbody>{cells}</tbody></table>')
    agreement = rankings.with_name("measure-agreement.csv")
    if agreement.is_file() and (rows := _csv_rows(agreement)):
        r = rows[0]
        out += (f'<p class="note">Do the measures rank the models alike? ICC({html.escape(r["form"])}) of the ranks '
                f'(consistency; Shrout &amp; Fleiss 1979): {_csv_number(r["icc"], ".2f")}, 95% CI {_interval(r)}, '
                f'F({r["df1"]}, {_csv_number(r["df2"], "g")}) = {_csv_number(r["f"], ".2f")}, '
                f'p = {_csv_number(r["p_value"], ".3g")} ({r["models"]} models, {r["measures"]} measures).</p>')
    return out


def audit_html(table: AuditTable, title: str = "Audit: models x tests", rankings: Path | None = None) -> str:
    """The self-contained HTML page of ``table`` and the sweep's ``rankings`` (module docstring)."""
    order, how = _order(table)
    suites = list(dict.fromkeys(s for s, _ in table.tests))
    meta = [(k, label) for k, label in METADATA_COLUMNS if any(k in m for m in table.metadata.values())]
    first = 2 + len(meta)  # columns before the tests: rank, model, metadata
    group_row = "".join(f'<th colspan="{sum(s == t[0] for t in table.tests)}" class="suite s{i}">'
                        f"{html.escape(s)}</th>" for i, s in enumerate(suites))
    heads = "".join(f'<th class="sort meta" data-col="{2 + k}" data-type="text">{html.escape(label)}</th>'
                    for k, (_, label) in enumerate(meta))
    heads += "".join(f'<th class="sort test s{suites.index(s)}" data-col="{first + j}" data-type="num" '
                     f'title="{html.escape(s)} / {html.escape(t)}"><span>{html.escape(_short(t, 28))}</span></th>'
                     for j, (s, t) in enumerate(table.tests))
    rows = []
    for rank, i in enumerate(order, start=1):
        model = table.models[i]
        info = table.metadata.get(model, {})
        cells = [f'<td class="rank" data-v="{rank}">{rank}</td>', f'<th class="model" scope="row">{html.escape(model)}</th>']
        cells += [f'<td class="meta">{html.escape(str(info.get(k, "")))}</td>' for k, _ in meta]
        for j, (suite, test) in enumerate(table.tests):
            d, p = table.d[i, j], table.p[i, j]
            text = f"{d:.2f}" if math.isfinite(d) else ""
            tip = f"{model} / {test}: d = {d:.4f}" + (f", p = {p:.3g}" if math.isfinite(p) else "") if text else \
                f"{model} / {test}: no result"
            cells.append(f'<td class="s{suites.index(suite)}" data-v="{d if text else ""}"{_shade(d)} '
                         f'title="{html.escape(tip)}">{text}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    toggles = "".join(f'<label><input type="checkbox" checked data-suite="{i}"> {html.escape(s)}</label> '
                      for i, s in enumerate(suites))
    hide = "".join(f"table.hide-s{i} .s{i}{{display:none}} .hide-s{i} svg.s{i}{{display:none}}"
                   for i in range(len(suites)))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{{font:13px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:16px;color:#222}}
h1{{font-size:20px;margin:0 0 4px}} .note{{color:#555;margin:2px 0 10px}}
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
thead th{{position:sticky;background:#fff;z-index:2}} thead tr.groups th{{top:0;height:18px;border-bottom:1px solid #999}}
thead tr.heads th{{top:23px;vertical-align:bottom;border-bottom:1px solid #999}}
th.test span{{writing-mode:vertical-rl;transform:rotate(180deg);display:inline-block;max-height:160px;
font-weight:normal;font-size:11px}}
th.sort{{cursor:pointer}} th.sort:hover{{background:#eef}} th.sorted-desc::after{{content:" ▼"}}
th.sorted-asc::after{{content:" ▲"}}
tbody th.model{{position:sticky;left:0;background:#fff;text-align:left;font-weight:600;z-index:1}}
td.meta{{text-align:left;color:#444}} td.rank{{color:#888}}
tbody tr:hover td,tbody tr:hover th{{outline:1px solid #bbb}}
{hide}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p class="note">{len(table.models)} models x {len(table.tests)} tests in {len(suites)} suites; cells: effect size d
(vermillion: towards A, blue: towards B; full shade at |d| ≥ {_D_RANGE:g}); hover a cell for d and p. Rows:
{html.escape(how)}. Click a heading to sort; click again to reverse.</p>
<figure><div class="multiples" id="multiples">{_overview(table, order)}</div>
<figcaption class="note">Each strip: one test, from d = -{_D_RANGE:g} to {_D_RANGE:g} (grey line: 0), a tick per model.</figcaption></figure>
<div class="controls"><input type="search" id="filter" placeholder="filter models (name, metadata)"
aria-label="filter models"> <span>suites: {toggles}</span> <span id="shown"></span></div>
<div class="wrap"><table id="audit"><thead><tr class="groups"><th colspan="{first}"></th>{group_row}</tr>
<tr class="heads"><th class="sort" data-col="0" data-type="num">#</th><th class="sort" data-col="1" data-type="text">model</th>{heads}</tr></thead>
<tbody>{"".join(rows)}</tbody></table></div>
{_rankings_html(rankings)}
{meta_analysis_html(rankings.with_name("meta-analysis.csv") if rankings is not None else None)}
<script>
(function () {{
  const table = document.getElementById('audit'), body = table.tBodies[0];
  const value = (row, col, type) => {{
    const cell = row.children[col], v = type === 'num' ? cell.dataset.v : cell.textContent;
    return type === 'num' ? (v === '' || v === undefined ? NaN : parseFloat(v)) : v.toLowerCase();
  }};
  table.querySelectorAll('th.sort').forEach(th => th.addEventListener('click', () => {{
    const col = +th.dataset.col, type = th.dataset.type;
    const desc = !(th.classList.contains('sorted-desc')) && col !== 0;
    table.querySelectorAll('th.sort').forEach(h => h.classList.remove('sorted-asc', 'sorted-desc'));
    th.classList.add(desc ? 'sorted-desc' : 'sorted-asc');
    const rows = [...body.rows], sign = desc ? -1 : 1;
    rows.sort((a, b) => {{
      const x = value(a, col, type), y = value(b, col, type);
      if (type === 'num') {{
        if (isNaN(x) || isNaN(y)) return isNaN(x) - isNaN(y);
        return sign * (x - y);
      }}
      return sign * (x < y ? -1 : x > y ? 1 : 0);
    }});
    rows.forEach(r => body.appendChild(r));
  }}));
  const filter = document.getElementById('filter'), shown = document.getElementById('shown');
  const apply = () => {{
    const q = filter.value.trim().toLowerCase(); let n = 0;
    [...body.rows].forEach(r => {{
      const text = [...r.querySelectorAll('th.model, td.meta')].map(c => c.textContent).join(' ').toLowerCase();
      const ok = !q || text.includes(q); r.style.display = ok ? '' : 'none'; n += ok;
    }});
    shown.textContent = n + ' of ' + body.rows.length + ' models shown';
  }};
  filter.addEventListener('input', apply); apply();
  document.querySelectorAll('input[data-suite]').forEach(box => box.addEventListener('change', () => {{
    table.classList.toggle('hide-s' + box.dataset.suite, !box.checked);
    document.getElementById('multiples').classList.toggle('hide-s' + box.dataset.suite, !box.checked);
  }}));
}})();
</script>
</body></html>
"""


def write_audit_report(runs: Sequence[str | Path] | AuditTable, path: str | Path,
                       metadata: Mapping[str, Mapping[str, Any]] | None = None,
                       title: str = "Audit: models x tests", rankings: str | Path | None = None) -> Path:
    """Write the audit page of sweep cell folders (or of an :class:`AuditTable`) to ``path``, with the
    sweep's ``rankings.csv`` when given; return it.

    >>> t = AuditTable(("m1", "m2"), (("weat", "weat1"),), np.array([[0.5], [1.2]]), np.array([[0.01], [0.2]]))
    >>> import tempfile; write_audit_report(t, tempfile.mkdtemp() + "/audit.html").name
    'audit.html'
    """
    table = runs if isinstance(runs, AuditTable) else audit_table(runs, metadata)
    path = Path(path)
    path.write_text(audit_html(table, title, Path(rankings) if rankings is not None else None), encoding="utf-8")
    return path
