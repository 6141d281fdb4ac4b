"""Tables of a run's EAT records in the formats papers use: Markdown, CSV and LaTeX (booktabs); part of the
EAT renderer (:mod:`eatkit.report.eat_html`). Other kinds are shown by their own renderers or their
:class:`~eatkit.kinds.Presentation` (:mod:`eatkit.report.kinds`).

The columns follow the iEAT seed's Table 1 (X, Y, A, B, n_t, n_a, d, p; sizes written ``n_X/n_Y`` where the
two sets differ) plus the Benjamini-Hochberg q-value, the ML-EAT level-2 effect sizes d_{A,B,X} and
d_{A,B,Y} with their p-values, and the EAT pattern. Sampled permutation p-values carry the marks of
:func:`~eatkit.report.formatting.fmt_p_marked`, explained in the caption.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from eatkit.errors import EatkitError
from eatkit.report.formatting import (
    AT_FLOOR,
    SAMPLED,
    TEX_SYMBOLS,
    TEXT_SYMBOLS,
    fmt_d,
    fmt_p,
    fmt_p_marked,
    fmt_sizes,
    is_missing,
    p_note,
)
from eatkit.report.run import Run, load_run

#: column keys of every table, in order; values of the keys in NUMERIC are right-aligned numbers
COLUMNS: tuple[str, ...] = (
    "test", "x", "y", "a", "b", "n_t", "n_a", "d", "p", "q", "d_x", "p_x", "d_y", "p_y", "pattern",
)
NUMERIC = frozenset({"n_t", "n_a", "d", "iat_d", "p", "q", "d_x", "p_x", "d_y", "p_y"})

_HEADERS = {  # (Markdown/CSV, LaTeX) header of each column
    "test": ("Test", "Test"), "x": ("X", "$X$"), "y": ("Y", "$Y$"), "a": ("A", "$A$"), "b": ("B", "$B$"),
    "n_t": ("n_t", "$n_t$"), "n_a": ("n_a", "$n_a$"), "d": ("d", "$d$"), "iat_d": ("IAT d", "IAT $d$"), "p": ("p", "$p$"), "q": ("q", "$q$"),
    "d_x": ("d_ABX", "$d_{A,B,X}$"), "p_x": ("p_ABX", "$p_{A,B,X}$"),
    "d_y": ("d_ABY", "$d_{A,B,Y}$"), "p_y": ("p_ABY", "$p_{A,B,Y}$"), "pattern": ("Pattern", "Pattern"),
}
#: the column legend; {names} are the symbols of TEXT_SYMBOLS/TEX_SYMBOLS or the headers of _HEADERS
_LEGEND = (
    "{d}: level-1 effect size; {p_note}; {q}: {p} after Benjamini-Hochberg correction among the tests of its kind in the run; "
    "{d_x}, {d_y}: level-2 (ML-EAT) effect sizes of {x} and {y} with {a} {vs} {b}; {p_x}, {p_y}: their "
    "{p}-values, one-sided towards the sign of the level-2 {d} ({a} when {d} {ge} 0, else {b}), not corrected "
    "for multiple testing; {n_t}, {n_a}: stimuli per target and attribute set ({sizes} where they differ)"
)
_TEX_SPECIALS = re.compile(r"[\\{}_&%$#~^<>|]")
_TEX_REPLACEMENTS = {
    "\\": r"\textbackslash{}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
    ">": r"\textgreater{}", "|": r"\textbar{}",
}
_MD_SPECIALS = re.compile(r"([\\`*_\[\]<>|])")
FORMATS = {"md": "table.md", "csv": "table.csv", "tex": "table.tex"}


def columns(records: Sequence[Any]) -> tuple[str, ...]:
    """:data:`COLUMNS`, with the human IAT's d beside d (``iat_d``, as in the iEAT seed's Table 1) when a
    record has one (its suite gives ``params.iat_d``)."""
    if not any(getattr(r, "iat_d", None) is not None for r in records):
        return COLUMNS
    at = COLUMNS.index("d") + 1
    return (*COLUMNS[:at], "iat_d", *COLUMNS[at:])


def table_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The cells of each record as display strings (not yet escaped for any format), keyed by COLUMNS.

    >>> row = table_rows([record])[0]                                  # doctest: +SKIP
    >>> row["n_t"], row["d"], row["p"], row["pattern"]                 # doctest: +SKIP
    ('32/30', '1.41', '≤1.0e-05', 'Non-Directional')
    """
    return [
        {
            "test": str(r.test), "x": str(r.x_name), "y": str(r.y_name), "a": str(r.a_name),
            "b": str(r.b_name), "n_t": fmt_sizes(r.n_x, r.n_y), "n_a": fmt_sizes(r.n_a, r.n_b),
            "d": fmt_d(r.effect_size), "iat_d": fmt_d(getattr(r, "iat_d", None)), "p": fmt_p_marked(r),
            "q": fmt_p(r.q_value),
            "d_x": fmt_d(r.level2_x_effect_size), "p_x": fmt_p_marked(r, "x"),
            "d_y": fmt_d(r.level2_y_effect_size), "p_y": fmt_p_marked(r, "y"), "pattern": str(r.pattern),
        }
        for r in records
    ]


def legend(records: Sequence[Mapping[str, Any]], tex: bool = False) -> str:
    """The legend of the table's columns and p-value marks, as plain text or LaTeX (``tex``)."""
    symbols, column = (TEX_SYMBOLS, 1) if tex else (TEXT_SYMBOLS, 0)
    headers = {key: names[column] for key, names in _HEADERS.items()}
    sizes = "$n_X/n_Y$" if tex else "n_X/n_Y"
    text = _LEGEND.format_map({**symbols, **headers, "p_note": p_note(records, symbols), "sizes": sizes})
    if "iat_d" in columns(records):
        text += f"; {headers['iat_d']}: the effect size of the human IAT the test replicates (n/a: none)"
    return text


def caption(run: Run) -> str:
    """The table's caption: suite, model and a legend of the columns."""
    return f"{run.suite_title}, {run.model}. {legend(run.eat_records)}."


def escape_latex(text: str) -> str:
    r"""Escape LaTeX's special characters ``\ { } _ & % $ # ~ ^`` in ``text``.

    >>> escape_latex("a_b & 50% {x} ~ ^ \\")
    'a\\_b \\& 50\\% \\{x\\} \\textasciitilde{} \\textasciicircum{} \\textbackslash{}'
    """
    return _TEX_SPECIALS.sub(lambda m: _TEX_REPLACEMENTS.get(m.group(), "\\" + m.group()), text)


def escape_markdown(text: str) -> str:
    r"""Backslash-escape the characters that would break or restyle a Markdown table cell.

    >>> escape_markdown("a|b *c* d_e")
    'a\\|b \\*c\\* d\\_e'
    """
    return _MD_SPECIALS.sub(r"\\\1", text)


def _tex_number(text: str) -> str:
    """A formatted number in math mode (a true minus sign, ``1.0e-07`` as ``1.0\\times10^{-7}``, the marks
    of a sampled p as ``\\leq`` and ``^\\dagger``); "n/a" stays text."""
    match = re.fullmatch(rf"({AT_FLOOR}?)(-?[\d./]+)(?:e([+-]\d+))?({SAMPLED}?)", text)
    if not match:
        return escape_latex(text)
    floor, mantissa, exponent, sampled = match.groups()
    power = "" if exponent is None else rf"\times10^{{{int(exponent)}}}"
    return "$" + (r"\leq " if floor else "") + mantissa + power + (r"{}^{\dagger}" if sampled else "") + "$"


def markdown_table(run: Run) -> str:
    """The run as a GitHub/pandoc Markdown table followed by a ``Table:`` caption line.

    >>> print(markdown_table(load_run("out/weat")))                   # doctest: +SKIP
    | Test | X | Y | A | B | n\\_t | ...
    """
    cols = columns(run.eat_records)
    header = [escape_markdown(_HEADERS[c][0]) for c in cols]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if c in NUMERIC else "---" for c in cols) + "|"]
    lines += ["| " + " | ".join(escape_markdown(row[c]) for c in cols) + " |" for row in table_rows(run.eat_records)]
    return "\n".join(lines) + f"\n\nTable: {escape_markdown(caption(run))}\n"


def csv_table(run: Run) -> str:
    """The run's table as CSV: the same columns plus the title, numbers unmarked at full precision,
    n/a empty (whether a p-value was sampled is in results.csv).

    >>> csv_table(load_run("out/weat")).splitlines()[0]              # doctest: +SKIP
    'Test,Title,X,Y,A,B,n_t,n_a,d,p,q,d_ABX,p_ABX,d_ABY,p_ABY,Pattern'
    """
    raw = {"d": "effect_size", "iat_d": "iat_d", "p": "p_value", "q": "q_value", "d_x": "level2_x_effect_size",
           "p_x": "level2_x_p_value", "d_y": "level2_y_effect_size", "p_y": "level2_y_p_value"}
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    cols = columns(run.eat_records)
    writer.writerow(["Test", "Title", *(_HEADERS[c][0] for c in cols[1:])])
    for record, row in zip(run.eat_records, table_rows(run.eat_records)):
        exact = {c: "" if is_missing(getattr(record, key)) else repr(float(getattr(record, key)) + 0.0)
                 for c, key in raw.items()}
        writer.writerow([row["test"], record.title, *(exact.get(c, row[c]) for c in cols[1:])])
    return buffer.getvalue()


def latex_table(run: Run) -> str:
    r"""The run as a LaTeX ``table`` with a booktabs ``tabular``, shrunk to the line width where it is wider
    (needs ``\usepackage{booktabs,graphicx}``).

    >>> print(latex_table(load_run("out/weat")))                      # doctest: +SKIP
    """
    label = re.sub(r"[^A-Za-z0-9:.-]+", "-", f"tab:eatkit-{run.eat_records[0].suite}-{run.model}")
    cols = columns(run.eat_records)
    spec = "".join("r" if c in NUMERIC else "l" for c in cols)
    cell = {c: (_tex_number if c in NUMERIC else escape_latex) for c in cols}
    rows = [" & ".join(cell[c](row[c]) for c in cols) + r" \\" for row in table_rows(run.eat_records)]
    return "\n".join([
        r"% eatkit table; needs \usepackage{booktabs,graphicx}",
        r"\begin{table}[htbp]",
        r"\centering",
        rf"\caption{{{escape_latex(run.suite_title)}, {escape_latex(run.model)}. {legend(run.eat_records, tex=True)}.}}",
        rf"\label{{{label}}}",
        r"\small",
        r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(_HEADERS[c][1] for c in cols) + r" \\",
        r"\midrule",
        *rows,
        r"\bottomrule",
        r"\end{tabular}}",
        r"\end{table}",
    ]) + "\n"


_WRITERS = {"md": markdown_table, "csv": csv_table, "tex": latex_table}


def write_tables(run_dir: str | Path, formats: Sequence[str] = ("md", "csv", "tex"),
                 out_dir: str | Path | None = None) -> list[Path]:
    """Write ``table.md``, ``table.csv`` and/or ``table.tex`` of a run (into the run folder by default).

    >>> write_tables("out/weat", formats=("tex",))                    # doctest: +SKIP
    [PosixPath('out/weat/table.tex')]
    """
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise EatkitError(f"unknown table format {unknown[0]!r}: choose from {', '.join(FORMATS)}")
    run = load_run(run_dir)
    if not run.eat_records:
        raise EatkitError(f"run folder {run.path} has no EAT records: the paper tables show EAT tests (its kinds: "
                          f"{', '.join(run.by_kind())}; report.html shows every kind)")
    out = Path(out_dir) if out_dir is not None else run.path
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in dict.fromkeys(formats):
        path = out / FORMATS[fmt]
        path.write_text(_WRITERS[fmt](run), encoding="utf-8")
        paths.append(path)
    return paths
