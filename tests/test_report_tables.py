"""Markdown, CSV and LaTeX tables of a run: exact cells, escaping, and LaTeX that compiles."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess

import pytest
from dataclasses import replace
from test_report_support import eat_record, make_run, record, write_run

from eatkit.errors import EatkitError
from eatkit.report import csv_table, latex_table, load_run, markdown_table, write_tables
from eatkit.report.formatting import (
    fmt_d,
    fmt_p,
    fmt_p_marked,
    fmt_sizes,
    sampled_draws,
    stars,
)
from eatkit.report.tables import escape_latex, escape_markdown, legend

NASTY = "Names_2 & co. 50% $5 #1 {x} ~y ^z \\w <v|w>"


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
    assert [fmt_d(-0.004), fmt_d(-0.0), fmt_d(-1e-12), fmt_d(0.004)] == ["0.00"] * 4  # never "-0.00"
    assert [fmt_p(0.05), fmt_p(0.001), fmt_p(0.000999), fmt_p(1e-7)] == ["0.050", "0.001", "1.0e-03", "1.0e-07"]
    assert [stars(0.0009), stars(0.001), stars(0.0099), stars(0.049), stars(0.05), stars(None)] == [
        "***", "**", "**", "*", "", ""]
    assert [fmt_sizes(25, 25), fmt_sizes(32, 30)] == ["25", "32/30"]


def test_sampled_p_values_are_marked():
    floor = 1 / 100001
    sampled = eat_record(p_value=floor, n_permutations=100000)
    assert [fmt_p_marked(sampled), fmt_p_marked(replace(sampled, p_value=2 / 100001))] == ["\u22641.0e-05", "2.0e-05\u2020"]
    assert fmt_p_marked(replace(sampled, p_value=0.5)) == "0.500\u2020"
    assert fmt_p_marked(replace(sampled, p_value_exact=True)) == "1.0e-05"  # an exact p is never marked
    assert fmt_p_marked(replace(sampled, p_method="welch")) == "1.0e-05"  # nor is Welch's
    assert fmt_p_marked(replace(sampled, p_value=float("nan"))) == "n/a"
    # level 2 draws as many partitions as a sampled level 1; after an exact level 1, the default 100000
    level2 = eat_record(p_value=0.004, p_value_exact=True, n_permutations=12870, level2_x_p_value=floor,
                    level2_x_p_value_exact=False, level2_y_p_value=floor, level2_y_p_value_exact=True)
    assert [sampled_draws(level2), sampled_draws(level2, "x"), sampled_draws(level2, "y")] == [None, 100000, None]
    assert [fmt_p_marked(level2, t) for t in ("", "x", "y")] == ["0.004", "\u22641.0e-05", "1.0e-05"]
    assert sampled_draws(eat_record(level2_y_p_value_exact=False), "y") == 99999


def test_legend_explains_the_marks_that_occur():
    floor_only = legend([eat_record()])  # level 1 at the floor of 99999 draws, level 2 exact
    assert ("p: level-1 permutation p-value (alternative: greater); \u2264: none of the n = 99999 random partitions was "
            "as extreme as the observed one, so p is the Monte Carlo floor 1/(n + 1); q: p after") in floor_only
    assert "\u2020" not in floor_only
    assert ("p_ABX, p_ABY: their p-values, one-sided towards the sign of the level-2 d (A when d \u2265 0, else B), "
            "not corrected for multiple testing") in floor_only
    both = legend([eat_record(), eat_record(test="t2", p_value=0.02)], tex=True)
    assert (r"$p$: level-1 permutation $p$-value (alternative: greater); $^\dagger$: sampled $p$-value, a Monte Carlo "
            r"estimate from $n$ = 99999 random partitions (unmarked ones are exact); $\leq$: none of the $n$ = 99999 "
            r"random partitions") in both
    welch = legend([eat_record(p_method="welch", p_value_exact=False)])
    assert welch.startswith("d: level-1 effect size; p: level-1 p-value of Welch's t-test (alternative: greater); q: ")
    assert "\u2264" not in welch.split("(A when d")[0] and "\u2020" not in welch


def test_markdown_table_rows(glove):
    lines = markdown_table(glove).splitlines()
    assert lines[0] == ("| Test | X | Y | A | B | n\\_t | n\\_a | d | p | q | d\\_ABX | p\\_ABX | d\\_ABY | p\\_ABY "
                        "| Pattern |")
    assert lines[1] == "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    # sampled level 1 at the floor 1/100001 (level 2 of X too), sampled level 2 of Y
    assert lines[3] == ("| weat2 | Instrument | Weapon | Pleasant | Unpleasant | 25 | 25 | 1.53 | \u22641.0e-05 | 3.3e-05 "
                        "| 1.33 | \u22641.0e-05 | -0.81 | 2.0e-04\u2020 | AB-Divergent |")
    assert lines[4] == ("| weat3 | European American | African American | Pleasant | Unpleasant - Alt | 32/30 | 25 "
                        "| 1.41 | \u22641.0e-05 | 3.3e-05 | 0.15 | 0.230\u2020 | -0.10 | 0.310\u2020 | Non-Directional |")
    assert lines[6] == ("| weat5 | European American 2 | African American 2 | Pleasant 2 | Unpleasant 2 | 16 | 8 | 1.28 "
                        "| 8.2e-04\u2020 | 0.001 | 0.74 | 0.032 | 0.05 | 0.440 | AX-Singular |")  # level 2 exact
    assert lines[10] == ("| weat9 | Mental | Physical | Temporary | Permanent | 6 | 7 | 1.38 | 0.008 | 0.009 | 0.04 "
                         "| 0.480 | -0.98 | 0.030 | BY-Singular |")  # all exact
    assert lines[12] == ""
    assert lines[13].startswith(
        "Table: WEAT 1-10 (Caliskan, Bryson & Narayanan 2017), glove.840B.300d.weat-items.txt. d: level-1 effect "
        "size; p: level-1 permutation p-value (alternative: greater); \u2020: sampled p-value, a Monte Carlo "
        "estimate from n = 100000 random partitions (unmarked ones are exact); \u2264: none of the n = 100000")


def test_markdown_escapes_cells(nasty):
    row = markdown_table(nasty).splitlines()[2]
    assert row.startswith("| t\\_1 | Names\\_2 & co. 50% $5 #1 {x} ~y ^z \\\\w \\<v\\|w\\> | Insects | A\\_1 "
                          "| Unpleasant | 25/24 | 25/20 | n/a | \u22641.0e-05 | n/a |")
    assert row.endswith("| AB-Divergent |")
    assert escape_markdown("a|b") == "a\\|b"


def test_csv_keeps_full_precision(glove, nasty, tmp_path):
    rows = list(csv.reader(io.StringIO(csv_table(glove))))
    assert rows[0] == ["Test", "Title", "X", "Y", "A", "B", "n_t", "n_a", "d", "p", "q", "d_ABX", "p_ABX", "d_ABY",
                       "p_ABY", "Pattern"]
    title = "WEAT 1: Flowers vs. insects with pleasant vs. unpleasant (Caliskan, Bryson & Narayanan 2017)"
    assert rows[1][:2] == ["weat1", title]
    assert rows[3][6:] == ["32/30", "25", "1.41", "9.99990000099999e-06", "3.3333000003333306e-05", "0.15",
                           "0.22999770002299977", "-0.1", "0.30999690003099967", "Non-Directional"]
    assert len(rows) == 11
    nasty_rows = list(csv.reader(io.StringIO(csv_table(nasty))))
    assert nasty_rows[1][2] == NASTY and nasty_rows[1][8] == "" and nasty_rows[1][10] == ""
    negative_zero = load_run(write_run(tmp_path, [record("AX-Singular", level2_y_effect_size=-0.0)], name="zero"))
    assert list(csv.reader(io.StringIO(csv_table(negative_zero))))[1][13] == "0.0"


def test_escape_latex_covers_every_special_character():
    assert escape_latex(NASTY) == (r"Names\_2 \& co. 50\% \$5 \#1 \{x\} \textasciitilde{}y \textasciicircum{}z "
                                   r"\textbackslash{}w \textless{}v\textbar{}w\textgreater{}")


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
    assert lines[0] == r"% eatkit table; needs \usepackage{booktabs,graphicx}"
    # the tabular is shrunk to the line width where it is wider (13+ columns overflow a page otherwise)
    start = lines.index(r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%")
    assert lines[start + 1].startswith(r"\begin{tabular}") and lines[-2:] == [r"\end{tabular}}", r"\end{table}"]
    assert lines.count(r"\toprule") == lines.count(r"\midrule") == lines.count(r"\bottomrule") == 1
    rows = lines[lines.index(r"\midrule") + 1:lines.index(r"\bottomrule")]
    for row in rows:
        assert row.endswith(r" \\") and len(_unescaped(row, "&")) == ncols - 1
        # math mode only around numbers; outside it no special character may stand unescaped
        text = re.sub(r"\$(\\leq )?-?[\d.]+(\\times10\^\{-?\d+\})?(\{\}\^\{\\dagger\})?\$|\$[\d]+/[\d]+\$", "", row)
        for char in "_^%#$~":
            assert _unescaped(text, char) == []
    return rows


def test_latex_table_is_compile_ready(glove, nasty):
    tex = latex_table(glove)
    rows = _check_compile_ready(tex, 15)
    assert rows[0] == (r"weat1 & Flower & Insect & Pleasant & Unpleasant & $25$ & $25$ & $1.50$ "
                       r"& $\leq 1.0\times10^{-5}$ & $3.3\times10^{-5}$ & $1.21$ & $1.0\times10^{-4}{}^{\dagger}$ & $-1.04$ "
                       r"& $1.0\times10^{-4}{}^{\dagger}$ & AB-Divergent \\")
    assert rows[4].split(" & ")[7:] == ["$1.28$", r"$8.2\times10^{-4}{}^{\dagger}$", "$0.001$", "$0.74$", "$0.032$",
                                        "$0.05$", "$0.440$", r"AX-Singular \\"]
    assert r"\begin{tabular}{lllllrrrrrrrrrl}" in tex and r"\label{tab:eatkit-weat-glove.840B.300d.weat-items.txt}" in tex
    assert (r"$^\dagger$: sampled $p$-value, a Monte Carlo estimate from $n$ = 100000 random partitions (unmarked ones "
            r"are exact); $\leq$: none of the $n$ = 100000 random partitions was as extreme") in tex
    nasty_tex = latex_table(nasty)
    nasty_rows = _check_compile_ready(nasty_tex, 15)
    assert nasty_rows[0].startswith(r"t\_1 & Names\_2 \& co. 50\% \$5 \#1 \{x\} \textasciitilde{}y "
                                    r"\textasciicircum{}z \textbackslash{}w \textless{}v\textbar{}w\textgreater{} & "
                                    r"Insects & A\_1 & Unpleasant & $25/24$ & $25/20$ & n/a & $\leq 1.0\times10^{-5}$ & n/a &")
    assert nasty_rows[1].startswith(r"t\&2 & ")
    assert r"\caption{Suite\_1 \& more, m\_1\%. $d$: level-1 effect size;" in nasty_tex
    assert r"\label{tab:eatkit-demo-m-1-}" in nasty_tex


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed (texlive-latex-recommended)")
def test_latex_table_compiles_with_pdflatex(tmp_path, glove, nasty):
    # a plain article with the packages the header comment names; the 15-column tables must fit the page
    document = "\\documentclass{article}\n\\usepackage{booktabs,graphicx}\n\\begin{document}\n%s\n%s\n\\end{document}\n"
    (tmp_path / "t.tex").write_text(document % (latex_table(glove), latex_table(nasty)))
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 1000
    log = (tmp_path / "t.log").read_text(encoding="latin-1")
    assert "Overfull \\hbox" not in log and "Missing character" not in log


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



def _toy_run(folder, tests):
    """A run folder of word tests on random 4-d vectors (``tests``: id -> extra test keys)."""
    import json

    import numpy as np

    from eatkit import RunOptions, run_suite
    from eatkit.sources.vectors import WordVectors
    from eatkit.stimuli.loader import load_suite

    sets = {r: {"name": r, "modality": "word", "items": [f"{r.lower()}1", f"{r.lower()}2"]} for r in "XYAB"}
    suite = {"schema": "eatkit.suite/1", "id": "s", "title": "S",
             "tests": [{"id": test, "title": test, **extra, **sets} for test, extra in tests.items()]}
    folder.mkdir()
    (folder / "s.json").write_text(json.dumps(suite))
    words = [w for s in sets.values() for w in s["items"]]
    source = WordVectors(words, np.random.default_rng(0).normal(size=(8, 4)))
    run = run_suite(load_suite(folder / "s.json"), source, options=RunOptions(seed=0, n_bootstrap=0))
    return run, load_run(run.save(folder / "out"))


def test_human_iat_d_beside_d_when_the_suite_gives_it(tmp_path):
    """The iEAT seed's Table 1 prints the human IAT's d beside the model's: a suite's params.iat_d reaches
    the record and every table format; a test without one shows n/a."""
    run, loaded = _toy_run(tmp_path / "a", {"with": {"params": {"iat_d": 1.23}}, "without": {}})
    assert [r.iat_d for r in run.records] == [1.23, None]
    md = markdown_table(loaded).splitlines()
    assert md[0].startswith("| Test | X | Y | A | B | n\\_t | n\\_a | d | IAT d | p |")
    assert " | 1.23 | " in md[2] and " | n/a | " in md[3]
    assert csv_table(loaded).splitlines()[1].split(",")[9] == "1.23"
    assert "IAT $d$" in latex_table(loaded) and "IAT d: the effect size of the human IAT" in md[-1]
    # without params.iat_d the columns stay as they were
    assert "IAT" not in markdown_table(_toy_run(tmp_path / "b", {"t": {}})[1])
    with pytest.raises(EatkitError, match="test 't': iat_d must be a number"):
        _toy_run(tmp_path / "c", {"t": {"params": {"iat_d": "large"}}})
