"""A report of several runs lists what they share once (issue 34): the stimuli's checksums of runs on the
same stimuli, and its tables scroll inside the page instead of overflowing it."""

from __future__ import annotations

import json

from eatkit.cli import main
from eatkit.report import write_html_report


def test_two_runs_on_the_same_stimuli_list_their_checksums_once(tmp_path):
    folders = []
    for seed in ("1", "2"):
        folders.append(tmp_path / f"run{seed}")
        assert main(["run", "weat", "--model", "glove-6b-50d", "--tests", "weat6,weat7", "--n-bootstrap", "0",
                     "--seed", seed, "-q", "-o", str(folders[-1])]) == 0
    one = write_html_report(folders[:1], tmp_path / "one.html").read_text(encoding="utf-8")
    two = write_html_report(folders, tmp_path / "two.html").read_text(encoding="utf-8")
    digest = json.loads((folders[0] / "manifest.json").read_text())["stimuli"]["weat6"]["X"]["items"][0][1]
    assert one.count(digest) == 1 and two.count(digest) == 1
    assert two.count('<section id="stimuli-1"><h2>Stimuli of run 1, run 2</h2>') == 1
    assert two.count('href="#stimuli-1"') == 2
    assert "display: block; max-width: 100%;" in two  # every table scrolls within the page
