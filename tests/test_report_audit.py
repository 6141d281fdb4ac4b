"""The audit report at scale (eatkit.report.audit): 150 synthetic models x 60 tests in headless Chromium (loads in
under 3 s, labels readable, sorting by a test column works, the filter works), rows in the clustering's order,
and the table read from sweep cell folders."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import numpy as np
import pytest
from test_report_browser import CHROMIUM, DevTools

from eatkit.report.audit import audit_html, write_audit_report
from eatkit.run.sweep_tables import profile_order
from eatkit.stats.clustering import cluster_profiles

SUITES = {"weat": 10, "seat": 30, "ieat": 15, "mleat": 5}  # 60 tests


@pytest.fixture(scope="module")
def big() -> dict:
    """audit.json data: 150 models in three planted profile families x 60 tests in 4 suites, some results
    missing, one setting, rows in the order the run layer computes (profile_order)."""
    rng = np.random.default_rng(0)
    tests = [(s, f"{s}-test-{k:02d}-{'long-name' if k % 7 == 0 else 'x'}") for s, n in SUITES.items()
             for k in range(n)]
    family = rng.integers(0, 3, 150)
    centres = rng.normal(scale=0.8, size=(3, 60))
    d = centres[family] + rng.normal(scale=0.15, size=(150, 60))
    d[rng.random(d.shape) < 0.05] = np.nan
    models = [f"open_clip:ViT-{'BL'[i % 2]}-{16 + i % 3 * 16}/laion-{i:03d}" for i in range(150)]
    metadata = {m: {"architecture": f"ViT-{'BL'[i % 2]}", "parameters": 150_000_000 + i,
                    "training_data": ["LAION-2B", "DataComp-1B", "WIT-400M"][family[i]]}
                for i, m in enumerate(models)}
    rows, how = profile_order(d)
    plain = [[None if np.isnan(v) else float(v) for v in row] for row in d]
    return {"settings": ["default"], "models": models, "metadata": metadata,
            "columns": [{"suite": s, "test": t, "measure": "d"} for s, t in tests],
            "values": {"default": plain}, "p": {"default": [[0.01] * 60 for _ in range(150)]},
            "order": {"default": {"rows": rows, "how": how}}, "cells": [], "d": d}


def test_rows_start_in_the_clustering_order_with_metadata_and_suite_groups(big):
    page = audit_html(big)
    order = cluster_profiles(big["d"]).order
    rows = [line.split('<th class="model" scope="row">', 1)[1].split("<", 1)[0]
            for line in page.split("<tr>")[1:] if 'class="model"' in line]
    assert rows == [big["models"][i] for i in order]
    assert page.count('<th colspan="10" class="suite s0">weat</th>') == 1
    assert page.count('<th colspan="30" class="suite s1">seat</th>') == 1
    assert "training data" in page and "LAION-2B" in page and page.count('<svg class="strip') == 60
    assert "http" not in page.replace("http-equiv", "")  # self-contained: no link, script or font to fetch
    assert "clustered by profile of d (average linkage" in page


def test_extra_rows_per_test_come_from_the_data(big):
    data = {**big, "summaries": {"default": [{"label": "pooled d", "values": [0.25] * 60}]}}
    page = audit_html(data)
    foot = page[page.index("<tfoot>"):page.index("</tfoot>")]
    assert 'scope="row">pooled d</th>' in foot and foot.count(">0.25</td>") == 60


def _write(big: dict, folder: Path) -> Path:
    (folder / "audit.json").write_text(json.dumps({k: v for k, v in big.items() if k != "d"}))
    return write_audit_report(folder)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install chromium)")
def test_150_models_x_60_tests_open_fast_readable_and_sortable_in_chromium(big, tmp_path):
    path = _write(big, tmp_path)
    browser = DevTools(tmp_path / "profile")
    try:
        target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        session = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            browser.send(f"{domain}.enable", session)
        start = time.monotonic()
        browser.send("Page.navigate", session, url=path.resolve().as_uri())
        browser.wait_for("Page.loadEventFired")
        loaded = time.monotonic() - start

        def evaluate(expression: str):
            return browser.send("Runtime.evaluate", session, returnByValue=True, expression=expression)["result"]["value"]

        labels = evaluate("""[...document.querySelectorAll('thead th.test span, tbody th.model')].map(e => {
            const r = e.getBoundingClientRect(), s = getComputedStyle(e);
            return [parseFloat(s.fontSize), r.width, r.height, e.scrollHeight <= e.clientHeight + 1]; })""")
        column = 2 + 3 + 7  # rank, model, 3 metadata columns, then the 8th test
        before = evaluate("[...document.querySelectorAll('tbody th.model')].map(e => e.textContent)")
        evaluate(f"document.querySelector('th[data-col=\"{column}\"]').click(); 1")
        after = evaluate(f"""[...document.querySelectorAll('tbody tr')].map(r =>
            [r.querySelector('th.model').textContent, r.children[{column}].dataset.v])""")
        evaluate(f"document.querySelector('th[data-col=\"{column}\"]').click(); 1")
        ascending = evaluate(f"[...document.querySelectorAll('tbody tr')].map(r => r.children[{column}].dataset.v)")
        evaluate("const f = document.getElementById('filter'); f.value = 'laion-14'; "
                 "f.dispatchEvent(new Event('input')); 1")
        shown = evaluate("[...document.querySelectorAll('tbody tr')].filter(r => r.style.display !== 'none').length")
        shot = browser.send("Page.captureScreenshot", session, format="png")
        (tmp_path / "audit.png").write_bytes(base64.b64decode(shot["data"]))
        browser.send("Runtime.evaluate", session, expression="1")
    finally:
        browser.close()
    problems = [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"
                or (e.get("method") == "Log.entryAdded" and e["params"]["entry"].get("level") == "error")]
    assert problems == []
    assert loaded < 3.0, f"the page took {loaded:.2f} s to load"
    assert len(labels) == 60 + 150
    assert all(size >= 11 and width > 8 and height > 8 and whole for size, width, height, whole in labels), \
        "a label is smaller than 11 px or cut off"
    assert before == [big["models"][i] for i in cluster_profiles(big["d"]).order]
    values = [float(v) if v else np.nan for _, v in after]
    expected = big["d"][:, 7]
    ranked = sorted((i for i in range(150) if np.isfinite(expected[i])), key=lambda i: -expected[i])
    assert [name for name, _ in after][:len(ranked)] == [big["models"][i] for i in ranked]  # descending, NaN last
    assert np.isnan(values[len(ranked):]).all()
    finite = [float(v) for v in ascending if v]
    assert finite == sorted(finite)
    assert shown == 10  # laion-140 ... laion-149
    png = (tmp_path / "audit.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_page_sorts_by_keyboard_filters_tests_and_switches_settings_in_jsdom(tmp_path):
    """audit.html of a 78-cell sweep driven in jsdom (node, with jsdom on NODE_PATH): Enter on a test heading
    sorts it descending, the numeric metadata column sorts as numbers, a test's name shows only its column,
    a model's name only its rows, and the selector shows the other setting."""
    import os
    import shutil
    import subprocess

    from test_sweep_audit import _synthetic_sweep

    from eatkit.run.sweep_tables import write_tables

    node = shutil.which("node")
    if node is None or subprocess.run([node, "-e", "require('jsdom')"], capture_output=True).returncode != 0:
        pytest.skip("node with jsdom on NODE_PATH is needed (npm install jsdom)")
    _synthetic_sweep(tmp_path, 13, {"words": 8, "pictures": 6, "mixed": 10}, ("ddof1", "ddof0"))
    write_tables(tmp_path)
    page = write_audit_report(tmp_path)
    run = subprocess.run([node, str(Path(__file__).parent / "js" / "audit_page.js"), str(page)], capture_output=True,
                         text=True, env=os.environ, timeout=120)
    got = json.loads(run.stdout)
    assert got["errors"] == [] and got["rows"] == 13
    assert got["sorted"] and got["ariaSort"] == "descending" and got["numeric"]
    assert got["testFilter"] == [["mixed / mixed-3 (d)"], 13]
    assert sorted(got["modelFilter"]) == ["model-010", "model-011", "model-012"]
    assert got["hidden"] == [True, False]
