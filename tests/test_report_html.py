"""The HTML report: self-contained (no scripts, no requests), with manifest, tables and figures."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from test_report_support import make_run, record, write_run
from conftest import require

require("matplotlib", reason="the HTML report's figures need matplotlib (eatkit[report])")
from eatkit.errors import EatkitError
from eatkit.report import write_html_report


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text of headings and summaries."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.headings: list[str] = []
        self._open: str | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in ("h1", "h2", "h3", "summary"):
            self._open, self._text = tag, ""

    def handle_data(self, data):
        if self._open:
            self._text += data

    def handle_endtag(self, tag):
        if tag == self._open:
            self.headings.append(f"{tag}:{self._text}")
            self._open = None


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("html")
    runs = [make_run(tmp, "glove-like"), make_run(tmp, "anisotropic")]
    out = write_html_report(runs, tmp / "nested" / "report.html")
    return out, out.read_text(encoding="utf-8"), runs


def test_report_is_written_where_asked(two_runs):
    out, text, _ = two_runs
    assert out.name == "report.html" and out.parent.name == "nested"
    assert text.startswith("<!DOCTYPE html>\n<html lang=\"en\">")


def test_report_is_self_contained(two_runs):
    _, text, _ = two_runs
    tags = Elements(text).tags
    assert not [t for t, _ in tags if t in ("script", "link", "iframe", "object", "embed", "img")]
    # only in-page anchors; every embedded image is data; no stylesheet fetches anything
    links = [a.get("href") or a.get("xlink:href") for t, a in tags if "href" in a or "xlink:href" in a]
    assert links and all(link.startswith(("#", "data:image/png;base64,")) for link in links)
    assert not re.search(r"url\(\s*['\"]?(?!#)", text) and "@import" not in text
    assert ('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; img-src data:\">") in text
    assert not [a for _, a in tags if any(k.startswith("on") for k in a)]  # no event handlers
    # not even a namespace or metadata URL (matplotlib's creator, licence and Dublin Core links)
    assert "://" not in text and "<metadata" not in text and "xmlns" not in text


def test_report_sections_and_figures(two_runs):
    _, text, _ = two_runs
    parser = Elements(text)
    assert parser.headings[:4] == [
        "h1:eatkit report", "h2:Comparison of runs",
        "h2:Run 1: WEAT 1-10 (Caliskan, Bryson & Narayanan 2017) \u2014 glove.840B.300d.weat-items.txt", "h3:Results"]
    # results first, then the pictures, the manifest last
    assert [h for h in parser.headings if h.startswith("h3:")] == [
        "h3:Results", "h3:EAT-Maps", "h3:Effect sizes", "h3:Level 3: cosine similarities", "h3:Manifest"] * 2
    labels = [a["aria-label"] for t, a in parser.tags if t == "svg" and "aria-label" in a]
    per_run = ("EAT-Maps, {}", "Forest plot of effect sizes, {}", "Level-3 similarity distributions, {}")
    assert labels == ["Effect sizes by model and test", *(f.format("glove.840B.300d.weat-items.txt") for f in per_run),
                      *(f.format("gpt2") for f in per_run)]
    assert text.count("<figcaption>") == 7
    # the titles are in the results table (figure text is drawn as paths, so not searchable)
    for title in ("WEAT 10: Young vs. old people&#x27;s names with pleasant vs. unpleasant",
                  "WEAT 3: European American vs. African American names with pleasant vs. unpleasant"):
        assert title in text


def test_report_manifest_table(two_runs):
    _, text, _ = two_runs
    assert ('<h3>Manifest</h3><table class="manifest"><tr class="group"><th colspan="2">Embedding source</th></tr>'
            "<tr><th>model</th><td>gpt2</td></tr><tr><th>layer</th><td>12</td></tr><tr><th>pooling</th><td>last token</td></tr>"
            "<tr><th>preprocessing.tokenizer</th><td>gpt2</td></tr>"
            "<tr><th>preprocessing.max_length</th><td>256</td></tr>"
            "<tr><th>weights</th><td>openai-community/gpt2@607a30d783dfa663caf39e06633721c8d4cfcd7e</td></tr>"
            "<tr><th>library</th><td>transformers 4.57.1</td></tr><tr><th>prompt</th><td>This is {x}.</td></tr>"
            '<tr class="group"><th colspan="2">Statistics</th></tr><tr><th>seed</th><td>0</td></tr>'
            "<tr><th>permutations</th><td>auto</td></tr><tr><th>alternative</th><td>greater</td></tr>") in text
    # GloVe: the model id is the source's id, shown first; no empty layer, pooling or preprocessing rows
    assert ('<tr class="group"><th colspan="2">Embedding source</th></tr><tr><th>id</th>'
            "<td>glove.840B.300d.weat-items.txt</td></tr><tr><th>source</th><td>word-vectors</td></tr>"
            "<tr><th>kind</th><td>file</td></tr>") in text
    for row in ("<tr><th>oov</th><td>drop</td></tr>", "<tr><th>environment.python</th><td>3.11.7</td></tr>",
                "<tr><th>title</th><td>WEAT 1-10 (Caliskan, Bryson &amp; Narayanan 2017)</td></tr>",
                "<tr><th>confidence_level</th><td>0.95</td></tr>"):
        assert row in text
    parser = Elements(text)
    assert "summary:Checksums (42)" in parser.headings and "summary:Checksums (38)" in parser.headings
    checksums = text.split("<summary>Checksums (38)</summary>", 1)[1].split("</details>", 1)[0]
    assert "<tr><th>source.weights_sha256</th>" in checksums and "<tr><th>stimuli.weat1.X</th>" in checksums
    main_table = text.split("<summary>Checksums (38)</summary>", 1)[0].rsplit('<table class="manifest">', 1)[1]
    assert "sha256" not in main_table


def test_report_results_table(two_runs):
    _, text, _ = two_runs
    assert ('<th class="num">d</th><th class="num">p</th><th class="num">q</th><th class="num">d<sub>A,B,X</sub></th>'
            '<th class="num">p<sub>A,B,X</sub></th><th class="num">d<sub>A,B,Y</sub></th>'
            '<th class="num">p<sub>A,B,Y</sub></th><th class="pattern">Pattern</th></tr>') in text
    assert ('<tr><th scope="row">weat3<span class="title">WEAT 3: European American vs. African American names with '
            'pleasant vs. unpleasant (Greenwald et al. 1998)</span></th><td>European American</td>'
            '<td>African American</td><td>Pleasant</td><td>Unpleasant - Alt</td><td class="num">32/30</td>'
            '<td class="num">25</td><td class="num es-large">1.41</td><td class="num">\u22641.0e-05</td><td class="num">3.3e-05</td>'
            '<td class="num">0.15</td><td class="num">0.230\u2020</td><td class="num">-0.10</td>'
            '<td class="num">0.310\u2020</td><td class="pattern">Non-Directional</td></tr>') in text
    assert ("\u2020: sampled p-value, a Monte Carlo estimate from n = 100000 random partitions (unmarked ones are "
            "exact); \u2264: none of the n = 100000 random partitions was as extreme as the observed one, so p is the "
            "Monte Carlo floor 1/(n + 1); q: p after Benjamini-Hochberg correction among the tests of its kind in the run; d_ABX, d_ABY: "
            "level-2 (ML-EAT) effect sizes of X and Y with A vs. B; p_ABX, p_ABY: their p-values, one-sided towards "
            "the sign of the level-2 d (A when d \u2265 0, else B), not corrected for multiple testing;") in text
    assert "<li>weat3 Y: Tashika, Ebony</li>" in text
    assert ('<tr><th scope="row">weat1</th><td class="num">0.21 (0.08)</td><td class="num">0.12 (0.08)</td>'
            '<td class="num">0.11 (0.08)</td><td class="num">0.19 (0.08)</td>'
            '<td class="num">n/a</td><td class="num">n/a</td></tr>') in text  # no anisotropy diagnostic
    assert "<summary>LaTeX (booktabs)</summary><pre>% eatkit table; needs \\usepackage{booktabs,graphicx}" in text


def test_report_captions_explain_the_marks_and_the_interval(two_runs):
    _, text, _ = two_runs
    glove, gpt2 = text.split('<section id="run-2">')
    maps = "Under each map: the EAT pattern, and the level-1 effect size d with its p-value. p: level-1 permutation " \
        "p-value (alternative: greater); \u2020: sampled p-value, a Monte Carlo estimate from n = 100000 random " \
        "partitions (unmarked ones are exact)"
    assert maps + "; \u2264: none of the n = 100000 random partitions" in glove
    assert maps + ".</figcaption>" in gpt2  # no p of that run sits at the floor
    assert ("<figcaption>Level-1 effect sizes d with 95% percentile bootstrap confidence intervals (2000 resamples). "
            "The bootstrap resamples the target stimuli within X and within Y and keeps the attribute sets A and B "
            "fixed, so the interval is conditional on the attribute sets; it answers a different question than the "
            "permutation p-value (which re-partitions X \u222a Y) and can disagree with it") in text


def test_report_is_reproducible(two_runs, tmp_path):
    _, text, runs = two_runs
    again = write_html_report(runs, tmp_path / "again.html").read_text(encoding="utf-8")
    assert again == text


def test_single_run_has_no_comparison_and_notes_missing_similarities(tmp_path):
    run_dir = write_run(tmp_path, [record(), record("BY-Singular", test="t2")])
    text = write_html_report([run_dir], tmp_path / "one.html").read_text(encoding="utf-8")
    assert "Comparison of runs" not in text and 'id="run-1"' in text and 'id="run-2"' not in text
    assert f"{run_dir / 'similarities.npz'} is absent: the level-3 distributions are not shown" in text
    # the default manifest names only the model: no empty group, and no bootstrap count to state
    assert ('<table class="manifest"><tr class="group"><th colspan="2">Embedding source</th></tr>'
            "<tr><th>model</th><td>demo-model</td></tr></table>") in text
    assert "bootstrap confidence intervals. The bootstrap" in text
    welch = write_run(tmp_path, [record(p_method="welch")], name="welch")
    text = write_html_report([welch], tmp_path / "welch.html").read_text(encoding="utf-8")
    assert "a different question than the p-value and can disagree" in text and "\u2264" not in text.split("<h3>")[1]  # p = 1e-05 unmarked


def test_manifest_rows_with_empty_values_are_dropped(tmp_path):
    manifest = {"source": {"id": "efficientnet_lite0", "model": "tf_efficientnet_lite0", "layer": None, "pooling": "",
                           "preprocessing": {}, "prompt": [], "resize": 224},
                "statistics": {"seed": 3, "permutations": float("nan")}, "note": ""}
    run_dir = write_run(tmp_path, [record()], manifest)
    text = write_html_report([run_dir], tmp_path / "one.html").read_text(encoding="utf-8")
    assert ('<table class="manifest"><tr class="group"><th colspan="2">Embedding source</th></tr>'
            "<tr><th>id</th><td>efficientnet_lite0</td></tr><tr><th>model</th><td>tf_efficientnet_lite0</td></tr>"
            "<tr><th>resize</th><td>224</td></tr>"
            '<tr class="group"><th colspan="2">Statistics</th></tr><tr><th>seed</th><td>3</td></tr></table>') in text
    assert "<h2>Run 1: demo \u2014 efficientnet_lite0</h2>" in text  # labelled by eatkit's model id
    assert text.count("<svg ") == 2  # EAT-Maps and forest plot


def test_errors_name_the_folder(tmp_path):
    good = write_run(tmp_path, [record()])
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "results.json").write_text("[]")
    with pytest.raises(EatkitError) as info:
        write_html_report([good, bare], tmp_path / "r.html")
    assert str(info.value) == f"run folder {bare} has no manifest.json (is it an eatkit run folder?)"
    (bare / "results.json").unlink()
    with pytest.raises(EatkitError) as info:
        write_html_report([bare], tmp_path / "r.html")
    assert str(info.value) == f"run folder {bare} has no results.json (is it an eatkit run folder?)"
    with pytest.raises(EatkitError) as info:
        write_html_report([], tmp_path / "r.html")
    assert str(info.value) == "the HTML report needs at least one run folder"
    with pytest.raises(EatkitError) as info:
        write_html_report([good], tmp_path)
    assert str(info.value) == f"report path {tmp_path} is a folder; give a file name such as {tmp_path / 'report.html'}"
    assert not (tmp_path / "r.html").exists()


def test_effect_sizes_shaded_small_medium_large_and_iat_d_beside_d(tmp_path):
    """The iEAT seed's Table 1 colours d by Cohen's small (0.2), medium (0.5) and large (0.8), and prints the
    human IAT's d beside it."""
    sizes = {"t1": (0.1, None), "t2": (-0.3, 1.35), "t3": (0.5, -0.34), "t4": (-0.9, 0.62)}
    run_dir = write_run(tmp_path, [record("BY-Singular", test=t, effect_size=d, iat_d=iat)
                                   for t, (d, iat) in sizes.items()])
    text = write_html_report([run_dir], tmp_path / "shaded.html").read_text(encoding="utf-8")
    rows = re.findall(r'<tr><th scope="row">(t\d)<span', text)
    assert rows == list(sizes)
    cells = {t: re.search(rf'<th scope="row">{t}<span.*?</tr>', text).group(0) for t in sizes}
    assert '<td class="num">0.10</td><td class="num">n/a</td>' in cells["t1"]
    assert '<td class="num es-small">-0.30</td><td class="num es-large">1.35</td>' in cells["t2"]
    assert '<td class="num es-medium">0.50</td><td class="num es-small">-0.34</td>' in cells["t3"]
    assert '<td class="num es-large">-0.90</td><td class="num es-medium">0.62</td>' in cells["t4"]
    assert "<th class=\"num\">IAT d</th>" in text and "≥ 0.5 medium, ≥ 0.8 large" in text
