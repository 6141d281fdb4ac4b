"""Progress where stderr is not a terminal (a log file, a notebook, CI): a line every few seconds while a
step runs, none with ``--quiet`` or ``run_suite(progress=False)`` (issue 34)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from eatkit import progress as progress_module
from eatkit.registry import build_model
from eatkit.run.runner import run_suite
from eatkit.sources.base import EmbeddingSource


class Slow(EmbeddingSource):
    """GloVe 6B 50-d, a tenth of a second a set (a stand-in for a model's embedding)."""

    id = "slow-glove"
    modalities = frozenset({"word"})

    def __init__(self) -> None:
        self.glove = build_model("glove-6b-50d", oov="drop")

    def embed(self, stimuli):
        time.sleep(0.1)
        return self.glove.embed(stimuli)

    def manifest(self):
        return self.glove.manifest()


def _run_with_stderr_in(path, monkeypatch, **kwargs) -> str:
    monkeypatch.setattr(progress_module, "LOG_EVERY", 0.05)
    with open(path, "w", encoding="utf-8") as log:
        monkeypatch.setattr(sys, "stderr", log)
        run_suite("weat", Slow(), tests=["weat6"], options=None, n_bootstrap=0, **kwargs)
    return path.read_text(encoding="utf-8")


def test_embedding_prints_lines_into_a_log_file(tmp_path, monkeypatch):
    text = _run_with_stderr_in(tmp_path / "log.txt", monkeypatch, progress=True)
    lines = [line for line in text.splitlines() if line.startswith("eatkit: embedding 4 stimulus sets")]
    assert len(lines) >= 3, text  # 4 sets of 0.1 s, a line every 0.05 s, and one when it ends
    assert lines[-1].endswith("s") and "done in" in lines[-1]
    assert "\r" not in text  # no spinner in a file


def test_progress_false_prints_nothing(tmp_path, monkeypatch):
    assert _run_with_stderr_in(tmp_path / "log.txt", monkeypatch, progress=False) == ""


@pytest.mark.parametrize("quiet", [False, True])
def test_cli_run_with_stderr_redirected_to_a_file(tmp_path, quiet):
    log = tmp_path / "stderr.txt"
    env = dict(os.environ, EATKIT_PROGRESS_EVERY="0.01")
    command = [sys.executable, "-m", "eatkit.cli", "run", "weat", "--model", "glove-6b-50d", "--oov", "drop",
               "--tests", "weat6", "--n-bootstrap", "0", "-o", str(tmp_path / "run")] + (["--quiet"] if quiet else [])
    with open(log, "w", encoding="utf-8") as err:
        done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=err)
    text = log.read_text(encoding="utf-8")
    assert done.returncode == 0, text
    assert ("eatkit: embedding" in text) != quiet, text


def test_quiet_silences_progress_only(tmp_path):
    """README: '--quiet silences it' (progress); the results table still prints (issue 46: -q hid it)."""
    env = dict(os.environ, EATKIT_PROGRESS_EVERY="0.01")
    command = [sys.executable, "-m", "eatkit.cli", "run", "weat", "--model", "glove-6b-50d", "--oov", "drop",
               "--tests", "weat6", "--n-bootstrap", "0", "-q", "-o", str(tmp_path / "run")]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "weat6" in done.stdout and "wrote " in done.stdout  # the table and the files written
    assert "eatkit: embedding" not in done.stderr
