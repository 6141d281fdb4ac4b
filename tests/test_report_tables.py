"""Markdown, CSV and LaTeX tables of a run: exact cells, escaping, and LaTeX that compiles."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess

import pytest
from test_report_support import make_run, record, write_run

from eatkit.errors import EatkitError
from eatkit.report import csv_table, latex_table, load_run, markdown_table, write_tables
from eatkit.report.formatting import fmt_d, fmt_p, fmt_sizes, stars
from eatkit.report.tables import escape_latex, escape_markdown

NASTY = "Names_2 & co. 50% $5 #1 {x} ~y ^z \\w"


@pytest.fixture
def glove(tmp_path):
    return load_run(make_run(tmp_path, similarities=False))


@pytest.fixture
def nasty(tmp_path):
    rec = record(x_name=NASTY, a_name="A_1", test="t_1", n_y=24, n_b=20, effect_size=float("nan"), q_value=None,
                 pattern="AB-Divergent")
    return load_run(write_run(tmp_path, [rec, record(test="t&2", title="T&2")],
                              {"suite": {"id": "s_1", "title": "Suite_1 & more"}, "source": {"model": "m_1%"}}))


def test_number_formats():
    assert [fmt_d(1.5049), fmt_d(-0.005), fmt_d(float("nan")), fmt_d(None)] == ["1.50", "-0.01", "n/a", "n/a"]
    assert [fmt_p(0.05), fmt_p(0.001), fmt_p(0.000999), fmt_p(1e-7)] == ["0.050", "0.001", "1.0e-03", "1.0e-07"]
    assert [stars(0.0009), stars(0.001), stars(0.0099), stars(0.049), stars(0.05), stars(None)] == [
        "***", "**", "**", "*", "", ""]
    assert [fmt_sizes(25, 25), fmt_sizes(32, 30)] == ["25", "32/30"]


def test_markdown_table_rows(glove):
    lines = markdown_table(glove).splitlines()
    assert lines[0] == ("| Test | X | Y | A | B | n\\_t | n\\_a | d | p | d\\_ABX | d\\_ABY | Pattern | q |")
    assert lines[1] == "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|"
    assert lines[2] == ("| weat1 | Flower | Insect | Pleasant | Unpleasant | 25 | 25 | 1.50 | 1.0e-07 | 1.21 | -1.04 "
                        "| AB-Divergent | 3.3e-07 |")
    assert lines[4] == ("| weat3 | European American | African American | Pleasant | Unpleasant - Alt | 32/30 | 25 "
                        "| 1.41 | 1.0e-07 | 0.15 | -0.10 | Non-Directional | 3.3e-07 |")
    assert lines[10] == ("| weat9 | Mental | Physical | Temporary | Permanent | 6 | 7 | 1.38 | 0.008 | 0.04 | -0.98 "
                         "| BY-Singular | 0.009 |")
    assert lines[12] == ""
    assert lines[13].startswith(
        "Table: WEAT 1-10 (Caliskan, Bryson & Narayanan 2017), glove.840B.300d.weat-items.txt. d: level-1")


def test_markdown_escapes_cells(nasty):
    row = markdown_table(nasty).splitlines()[2]
    assert row.startswith("| t\\_1 | Names\\_2 & co. 50% $5 #1 {x} ~y ^z \\\\w | Insects | A\\_1 | Unpleasant | 25/24 "
                          "| 25/20 | n/a | 1.0e-07 |")
    assert row.endswith("| AB-Divergent | n/a |")
    assert escape_markdown("a|b") == "a\\|b"


def test_csv_keeps_full_precision(glove, nasty):
    rows = list(csv.reader(io.StringIO(csv_table(glove))))
    assert rows[0] == ["Test", "Title", "X", "Y", "A", "B", "n_t", "n_a", "d", "p", "d_ABX", "d_ABY", "Pattern", "q"]
    title = "WEAT 1: Flowers vs. insects with pleasant vs. unpleasant (Caliskan, Bryson & Narayanan 2017)"
    assert rows[1][:2] == ["weat1", title]
    assert rows[3][6:] == ["32/30", "25", "1.41", "1e-07", "0.15", "-0.1", "Non-Directional", "3.333333333333333e-07"]
    assert len(rows) == 11
    nasty_rows = list(csv.reader(io.StringIO(csv_table(nasty))))
    assert nasty_rows[1][2] == NASTY and nasty_rows[1][8] == "" and nasty_rows[1][13] == ""


def test_escape_latex_covers_every_special_character():
    assert escape_latex(NASTY) == (r"Names\_2 \& co. 50\% \$5 \#1 \{x\} \textasciitilde{}y \textasciicircum{}z "
                                   r"\textbackslash{}w")


def _unescaped(text: str, char: str) -> list[int]:
    return [m.start() for m in re.finditer(re.escape(char), text) if not (m.start() and text[m.start() - 1] == "\\")]


def _check_compile_ready(tex: str, ncols: int) -> list[str]:
    """Structural checks; returns the data rows."""
    body = re.sub(r"\\[{}]", "", tex)  # escaped braces do not count
    depth = 0
    for ch in body:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    assert re.findall(r"\\begin\{(\w+)\}", tex) == ["table", "tabular"]
    assert re.findall(r"\\end\{(\w+)\}", tex) == ["tabular", "table"]
    lines = tex.splitlines()
    assert lines.count(r"\toprule") == lines.count(r"\midrule") == lines.count(r"\bottomrule") == 1
    rows = lines[lines.index(r"\midrule") + 1:lines.index(r"\bottomrule")]
    for row in rows:
        assert row.endswith(r" \\") and len(_unescaped(row, "&")) == ncols - 1
        # math mode only around numbers; outside it no special character may stand unescaped
        text = re.sub(r"\$-?[\d.]+(\\times10\^\{-?\d+\})?\$|\$[\d]+/[\d]+\$", "", row)
        for char in "_^%#$~":
            assert _unescaped(text, char) == []
    return rows


def test_latex_table_is_compile_ready(glove, nasty):
    tex = latex_table(glove)
    rows = _check_compile_ready(tex, 13)
    assert rows[0] == (r"weat1 & Flower & Insect & Pleasant & Unpleasant & $25$ & $25$ & $1.50$ & $1.0\times10^{-7}$ "
                       r"& $1.21$ & $-1.04$ & AB-Divergent & $3.3\times10^{-7}$ \\")
    assert r"\begin{tabular}{lllllrrrrrrlr}" in tex and r"\label{tab:eatkit-weat-glove.840B.300d.weat-items.txt}" in tex
    nasty_tex = latex_table(nasty)
    nasty_rows = _check_compile_ready(nasty_tex, 13)
    assert nasty_rows[0].startswith(r"t\_1 & Names\_2 \& co. 50\% \$5 \#1 \{x\} \textasciitilde{}y "
                                    r"\textasciicircum{}z \textbackslash{}w & Insects & A\_1 & Unpleasant & "
                                    r"$25/24$ & $25/20$ & n/a & $1.0\times10^{-7}$ &")
    assert nasty_rows[1].startswith(r"t\&2 & ")
    assert r"\caption{Suite\_1 \& more, m\_1\%. $d$: level-1 effect size;" in nasty_tex
    assert r"\label{tab:eatkit-demo-m-1-}" in nasty_tex


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed (texlive-latex-recommended)")
def test_latex_table_compiles_with_pdflatex(tmp_path, glove, nasty):
    document = "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n%s\n%s\n\\end{document}\n"
    (tmp_path / "t.tex").write_text(document % (latex_table(glove), latex_table(nasty)))
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 1000


def test_write_tables(tmp_path):
    run_dir = make_run(tmp_path, similarities=False)
    paths = write_tables(run_dir)
    assert [p.name for p in paths] == ["table.md", "table.csv", "table.tex"]
    assert all(p.parent == run_dir for p in paths)
    run = load_run(run_dir)
    assert paths[2].read_text() == latex_table(run) and paths[0].read_text() == markdown_table(run)
    assert write_tables(run_dir, formats=("csv", "csv"), out_dir=tmp_path / "out") == [tmp_path / "out" / "table.csv"]
    with pytest.raises(EatkitError) as info:
        write_tables(run_dir, formats=("md", "docx"))
    assert str(info.value) == "unknown table format 'docx': choose from md, csv, tex"
