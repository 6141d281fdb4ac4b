"""One self-contained HTML report of one or more run folders.

Figures are inline SVG, styles inline, no scripts, and a Content-Security-Policy that forbids every
request, so the file opens offline and can be archived or mailed as is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from eatkit._version import __version__
from eatkit.errors import EatkitError, one_line
from eatkit.io import atomic_write_bytes, check_replaceable
from eatkit.progress import warn
from eatkit.report.formatting import STARS_NOTE, is_missing
from eatkit.report.kinds import by_renderer
from eatkit.report.plots import effect_size_heatmap
from eatkit.report.run import MODEL_KEYS, Run, load_run, run_labels
from eatkit.report.series import Series, is_series, load_series, series_html
from eatkit.report.style import figure_html

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #222;
       margin: 0; background: #fff; line-height: 1.45; }
main { max-width: 1180px; margin: 0 auto; padding: 1.5rem 2rem 3rem; }
h1 { font-size: 1.7rem; margin-bottom: .2rem; }
h2 { font-size: 1.35rem; border-bottom: 2px solid #222; padding-bottom: .2rem; margin-top: 2.5rem; }
h3 { font-size: 1.1rem; margin-top: 1.8rem; }
p.lead { color: #444; margin-top: 0; }
.note { color: #444; font-size: .92rem; }
nav ul { padding-left: 1.2rem; }
.scroll { overflow-x: auto; }
img.thumb { display: block; max-width: 64px; max-height: 64px; margin: 2px 0; }
.contact-sheet { display: grid; grid-template-columns: repeat(auto-fill, minmax(104px, 1fr)); gap: 6px; }
figure.sheet { margin: 0; font-size: 11px; } figure.sheet img.thumb { max-width: 96px; max-height: 96px; }
table { border-collapse: collapse; font-size: .88rem; margin: .4rem 0; display: block; max-width: 100%;
        overflow-x: auto; }
th, td { padding: .28rem .45rem; border-bottom: 1px solid #ddd; text-align: left; vertical-align: top; }
thead th { border-bottom: 2px solid #222; background: #f4f4f4; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th[scope=row] { min-width: 9rem; }
th .title { display: block; color: #555; font-size: .8rem; font-weight: normal; max-width: 20em; }
td.pattern { white-space: nowrap; }
td.es-small { background: #fde0c5; } td.es-medium { background: #f9a870; } td.es-large { background: #e8703a; }
table.manifest th { width: 14em; font-weight: 600; }
table.manifest td { word-break: break-word; }
table.manifest tr.group th { background: #f4f4f4; border-bottom: 2px solid #222; padding-top: .8rem; }
code, pre { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .82rem; }
pre { background: #f6f6f6; padding: .7rem; overflow-x: auto; white-space: pre; }
details { margin: .5rem 0; }
summary { cursor: pointer; font-weight: 600; }
figure { margin: 1rem 0 1.5rem; }
figure svg { display: block; max-width: 100%; height: auto; }
figcaption { color: #444; font-size: .9rem; max-width: 60rem; margin-top: .4rem; }
footer { margin-top: 3rem; color: #666; font-size: .85rem; border-top: 1px solid #ddd; padding-top: .6rem; }
"""

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

#: manifest sections shown as groups: (heading, manifest key, rows shown first where present)
_GROUPS = (
    ("Embedding source", "source", (*MODEL_KEYS, "layer", "pooling", "preprocessing")),
    ("Statistics", "statistics", ("seed", "permutations")),
    ("Suite", "suite", ("id", "title")),
)
#: top-level manifest keys shown elsewhere (stimuli checksums under Checksums, dropped words under Results)
_ELSEWHERE = frozenset({"source", "statistics", "suite", "stimuli", "dropped"})

def _is_checksum(path: str) -> bool:
    last = path.rsplit(".", 1)[-1].lower()
    return path.startswith("stimuli.") or any(word in last for word in ("sha256", "checksum", "md5", "hash"))


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, Mapping):
        items: list[tuple[str, Any]] = []
        for key, inner in value.items():
            items += _flatten(inner, f"{prefix}.{key}" if prefix else str(key))
        return items
    return [(prefix, value)]


def _is_empty(value: Any) -> bool:
    return is_missing(value) or (isinstance(value, (str, list, tuple, Mapping)) and not value)


def _text(value: Any) -> str:
    return ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def _rows(section: Mapping[str, Any], first: Iterable[str], prefix: str) -> list[tuple[str, str]]:
    """(label, value) rows of a manifest section: ``first`` keys, then every other; no checksum, no empty value."""
    ordered = {key: section[key] for key in first if key in section} | dict(section)
    return [(path.removeprefix(f"{prefix}."), _text(value)) for path, value in _flatten(ordered, prefix)
            if not _is_checksum(path) and not _is_empty(value)]


def _manifest_html(run: Run, shared: str = "") -> str:
    """The manifest as tables; ``shared``: where the stimulus checksums are shown instead (the same in several
    runs: once, in their own section)."""
    m = run.manifest
    groups = {
        heading: _rows(m[key] if isinstance(m.get(key), Mapping) else {}, first, key)
        for heading, key, first in _GROUPS
    }
    groups["Run"] = _rows({k: v for k, v in m.items() if k not in _ELSEWHERE}, (), "")
    body = []
    for group, rows in groups.items():
        if not rows:
            continue
        body.append(f'<tr class="group"><th colspan="2">{escape(group)}</th></tr>')
        body += [f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows]
    checksums = [(p, v) for p, v in _flatten({k: v for k, v in m.items() if not (shared and k == "stimuli")})
                 if _is_checksum(p)]
    full = {k: v for k, v in m.items() if k != "stimuli"} | {"stimuli": "(the checksums above)"}
    return (
        f'<table class="manifest">{"".join(body)}</table>'
        + (f'<p class="note">Stimulus checksums: as in <a href="#{shared}">the stimuli shared by these runs</a>.</p>'
           if shared else "")
        + _checksums_html(checksums)
        + f"<details><summary>manifest.json</summary><pre>{escape(json.dumps(full, indent=2))}</pre></details>"
    )


def _checksums_html(checksums: list[tuple[str, Any]]) -> str:
    sums = "".join(f"<tr><th>{escape(p)}</th><td><code>{escape(_text(v))}</code></td></tr>" for p, v in checksums)
    return (f"<details><summary>Checksums ({len(checksums)})</summary>"
            f'<div class="scroll"><table class="manifest">{sums}</table></div></details>')


def _shared_stimuli(runs: Sequence[Run]) -> tuple[dict[int, str], str]:
    """Runs whose manifests record the same stimuli (same items, same checksums: e.g. one suite's images
    through several models): each run's anchor of the section that lists them once, and those sections."""
    groups = _runs_by_stimuli(runs)
    anchors: dict[int, str] = {}
    sections = []
    for k, (text, members) in enumerate((t, m) for t, m in groups.items() if len(m) > 1):
        anchor = f"stimuli-{k + 1}"
        anchors |= {i: anchor for i in members}
        which = ", ".join(f"run {i}" for i in members)
        sums = [(p, v) for p, v in _flatten({"stimuli": json.loads(text)}) if _is_checksum(p)]
        sections.append(f'<section id="{anchor}"><h2>Stimuli of {which}</h2><p class="note">The same stimuli, '
                        f"with the same checksums, in each of these runs; listed once.</p>{_checksums_html(sums)}"
                        "</section>")
    return anchors, "".join(sections)


def _runs_by_stimuli(runs: Sequence[Run]) -> dict[str, list[int]]:
    """The runs (numbered from 1) by the stimuli their manifests record (canonical JSON), runs without any left out."""
    groups: dict[str, list[int]] = {}
    for i, run in enumerate(runs, 1):
        stimuli = run.manifest.get("stimuli")
        if isinstance(stimuli, Mapping) and stimuli:
            groups.setdefault(json.dumps(stimuli, sort_keys=True), []).append(i)
    return groups


def _run_section(index: int, run: Run, label: str, shared: str = "") -> str:
    title = f"Run {index}: {run.suite_title} \u2014 {label}"
    kinds = "".join(shown.html_section(run, records, label) for shown, records in by_renderer(run.records))
    return (
        f'<section id="run-{index}"><h2>{escape(title)}</h2>'
        f'<p class="note">Folder: <code>{escape(str(run.path))}</code></p>'
        f"{kinds}<h3>Manifest</h3>{_manifest_html(run, shared)}</section>"
    )


def render_html(runs: Sequence[Run], series: Sequence[Series] = (), failed: Mapping[str, str] | None = None) -> str:
    """The report of ``runs`` as one HTML document (see :func:`write_html_report`); each of ``series``
    (whose runs are among ``runs``) opens with its own section; ``failed`` (name: one-line error, e.g. a
    sweep's failed cells) is listed first, so that nothing asked for is silently missing."""
    if not runs:
        raise EatkitError("the HTML report needs at least one run folder")
    labels = run_labels(runs)
    suites = list(dict.fromkeys(run.suite_title for run in runs))
    nav = "".join(f'<li><a href="#run-{i}">{escape(run.suite_title)} \u2014 {escape(label)}</a></li>'
                  for i, (run, label) in enumerate(zip(runs, labels), 1))
    comparison = ""
    if sum(1 for run in runs if run.headlined) > 1:
        nav = '<li><a href="#comparison">Comparison of runs</a></li>' + nav
        comparison = (
            '<section id="comparison"><h2>Comparison of runs</h2>'
            + figure_html(effect_size_heatmap(runs), "Effect sizes by model and test",
                      "Each test's headline value (EAT: the level-1 effect size d) by model (rows) and test "
                      "(columns); hatched n/a: the run lacks the test. " + escape(STARS_NOTE) + ".")
            + "</section>"
        )
    grounded = [(label, [r for r in run.records if r.kind == "grounded"]) for run, label in zip(runs, labels)]
    grounded = [(label, records) for label, records in grounded if records]
    if len(grounded) > 1:
        from eatkit.report.grounded import comparison_html

        nav = '<li><a href="#grounded-comparison">Grounded-WEAT/SEAT by model</a></li>' + nav
        comparison = ('<section id="grounded-comparison"><h2>Grounded-WEAT/SEAT by model</h2>'
                      f"{comparison_html(grounded)}</section>") + comparison
    for k, one in enumerate(series, 1):
        what = "Prompts compared" if one.kind == "prompts" else "Series"
        nav = f'<li><a href="#series-{k}">{what}: {escape(", ".join(one.labels))}</a></li>' + nav
        comparison = (f'<section id="series-{k}"><h2>{what}: {escape(one.runs[0].suite_title)}</h2>'
                      f"{series_html(one)}</section>") + comparison
    anchors, shared = _shared_stimuli(runs)
    sections = "".join(_run_section(i, run, label, anchors.get(i, ""))
                       for i, (run, label) in enumerate(zip(runs, labels), 1)) + shared
    if failed:
        nav = f'<li><a href="#failed">Failed: {len(failed)}</a></li>' + nav
        items = "".join(f"<li><b>{escape(name)}</b>: {escape(error)}</li>" for name, error in failed.items())
        comparison = (f'<section id="failed"><h2>Not in this report: {len(failed)} failed</h2><ul>{items}</ul>'
                      "</section>") + comparison
    heading = f"{'; '.join(suites)} \u2014 {', '.join(labels)}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="generator" content="eatkit {escape(__version__)}">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>eatkit report: {escape(heading)}</title><style>{_CSS}</style></head>\n"
        f"<body><main><h1>eatkit report</h1><p class=\"lead\">{escape(heading)}</p>"
        f"<nav><ul>{nav}</ul></nav>{comparison}{sections}"
        f"<footer>Written by eatkit {escape(__version__)} from the run folders listed above; every number "
        "comes from their results.json, manifest.json and similarities.npz.</footer></main></body></html>\n"
    )


def write_html_report(run_dirs: Sequence[str | Path], out: str | Path, failed: Mapping[str, str] | None = None) -> Path:
    """Write one self-contained HTML report of the run folders to ``out`` and return its path (``failed``:
    what could not be run, by name, with its error; see :func:`render_html`).

    With two or more folders the report opens with a models x tests heatmap of effect sizes. A series
    folder (``series.json``, :mod:`eatkit.report.series`) adds its section and all of its runs.

    >>> write_html_report(["out/igpt", "out/simclr"], "report.html")   # doctest: +SKIP
    PosixPath('report.html')
    """
    out = check_replaceable(out, "html", "report path")  # never over a file eatkit did not write
    seen: dict[Path, str] = {}
    for folder in map(str, run_dirs):  # the same folder twice is reported once, with a word
        first = seen.setdefault(Path(folder).resolve(), folder)
        if first is not folder:
            warn(f"run folder {folder} is given twice (also as {first}): it is reported once")
    run_dirs = list(seen.values())
    loaded = [load_series(d) if is_series(d) else load_run(d) for d in run_dirs]
    series = [one for one in loaded if isinstance(one, Series)]
    runs = [run for one in loaded for run in (one.runs if isinstance(one, Series) else [one])]
    document = render_html(runs, series, failed)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(out, document.encode("utf-8"))
    except OSError as err:
        raise EatkitError(f"cannot write the report {out}: {one_line(err.strerror or err)}") from None
    return out
