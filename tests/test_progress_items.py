"""Progress counts items, not sets, and says how long is left (issue 46): ``eatkit: generating 1,200/3,200
images, ETA 4m10s``; one module (eatkit.progress), a line every LOG_EVERY s off a terminal."""

from __future__ import annotations

import re
import sys
import time

import numpy as np
import pytest

from eatkit import progress as progress_module
from eatkit.encoders.base import NeuralEncoder
from eatkit.progress import counted, duration, tracker
from eatkit.stimuli.types import StimulusSet

#: a progress line off a terminal: desc, done, total, unit, the ETA when given
LINE = re.compile(r"^eatkit: (?P<desc>.+?) (?P<done>[\d,]+)/(?P<total>[\d,]+) (?P<unit>[a-z -]+?)"
                  r"(?:, ETA (?P<eta>\w+))? (?:done in )?\d+s$")


def lines_of(text: str, desc: str) -> list[re.Match]:
    found = [LINE.match(line) for line in text.splitlines() if line.startswith(f"eatkit: {desc}")]
    assert all(found), text
    return found


def _int(text: str) -> int:
    return int(text.replace(",", ""))


@pytest.fixture(autouse=True)
def _progress_on():
    """Progress on in these tests, whatever an earlier in-process command's ``-q`` left for the process
    (``eatkit.progress.set_enabled``)."""
    with progress_module.enabled(True):
        yield


def test_the_count_and_the_eta_in_closed_form():
    # 1,200 of 3,200 in 150 s: 2,000 left at 8 per second = 250 s
    assert counted(1200, 3200, "images", 150.0) == "1,200/3,200 images, ETA 4m10s"
    assert counted(0, 3200, "images", 5.0) == "0/3,200 images"  # no pace yet
    assert counted(3200, 3200, "images", 5.0) == "3,200/3,200 images"  # nothing left
    assert [duration(s) for s in (0, 59.4, 60, 3599, 3600, 7500)] == ["0s", "59s", "1m00s", "59m59s", "1h00m", "2h05m"]


def test_a_tracker_writes_counted_lines_into_a_log_file(tmp_path, monkeypatch):
    monkeypatch.setattr(progress_module, "LOG_EVERY", 0.02)
    log = tmp_path / "log.txt"
    with open(log, "w", encoding="utf-8") as stream:
        monkeypatch.setattr(sys, "stderr", stream)
        with tracker("scoring", 3016, "sentences") as tick:
            for start in range(0, 3016, 32):
                tick.advance(min(32, 3016 - start))
                time.sleep(0.002)
    found = lines_of(log.read_text(encoding="utf-8"), "scoring")
    assert len(found) >= 3
    done = [_int(m["done"]) for m in found]
    assert done == sorted(done) and done[-1] == 3016 and {m["total"] for m in found} == {"3,016"}
    assert {m["unit"] for m in found} == {"sentences"}
    assert any(m["eta"] for m in found[:-1]) and found[-1]["eta"] is None  # the last line: "done in"
    assert "done in" in log.read_text(encoding="utf-8").splitlines()[-1]


def test_a_silenced_tracker_counts_and_prints_nothing(capsys):
    with progress_module.enabled(False), tracker("scoring", 10, "pairs") as tick:
        tick.advance(4)
    assert tick.done == 4 and capsys.readouterr().err == ""


class Slow(NeuralEncoder):
    """A word as its length, a hundredth of a second a batch."""

    id = "slow-length"
    modalities = frozenset({"word"})

    def config(self):
        return {"model": "slow-length"}

    def _encode(self, modality, inputs):
        time.sleep(0.01)
        return np.array([[float(len(w))] for w in inputs])


def test_an_encoder_counts_the_stimuli_it_embeds(tmp_path, monkeypatch):
    monkeypatch.setattr(progress_module, "LOG_EVERY", 0.02)
    words = tuple(f"w{i}" for i in range(1, 41))
    log = tmp_path / "log.txt"
    with open(log, "w", encoding="utf-8") as stream:
        monkeypatch.setattr(sys, "stderr", stream)
        Slow(cache=False, batch_size=3).embed_many([StimulusSet("A", "word", words[:20]),
                                                    StimulusSet("B", "word", words[20:])])
    found = lines_of(log.read_text(encoding="utf-8"), "slow-length: embedding 2 sets")
    assert {m["total"] for m in found} == {"40"} and {m["unit"] for m in found} == {"words"}
    assert _int(found[-1]["done"]) == 40
    batches = {*range(0, 20, 3), *range(20, 40, 3), 40}  # each set's batches of 3: whole batches counted
    assert {_int(m["done"]) for m in found} <= batches


def test_a_sweep_counts_its_cells(tmp_path, monkeypatch):
    from eatkit.run.sweep import load_sweep, run_sweep

    monkeypatch.setattr(progress_module, "LOG_EVERY", 0.0)
    (tmp_path / "sweep.toml").write_text(
        'models = [{ name = "glove-6b-50d", oov = "drop" }]\n'
        'suites = [{ suite = "weat", tests = ["weat6"] }, { suite = "weat", tests = ["weat7"], label = "weat7" }]\n'
        'settings = [{ n_bootstrap = 0, permutations = 99 }]\n', encoding="utf-8")
    log = tmp_path / "log.txt"
    with open(log, "w", encoding="utf-8") as stream:
        monkeypatch.setattr(sys, "stderr", stream)
        run_sweep(load_sweep(tmp_path / "sweep.toml"), tmp_path / "out")
    found = lines_of(log.read_text(encoding="utf-8"), "sweep ")
    assert found and {m["unit"] for m in found} == {"cells"} and found[-1]["done"] == found[-1]["total"]


def test_the_eta_counts_from_the_first_item_not_the_set_up(monkeypatch):
    """A model that loads for 40 s, then an image every second: after 11 images, 89 left take 89 s (not
    the 6m at the pace of 51 s for 11 images)."""
    import types

    clock = [0.0]
    monkeypatch.setattr(progress_module, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    indicator = progress_module._Indicator("generating", 100, "images")  # not entered: no thread
    clock[0] = 40.0
    indicator.advance()  # the first image, after the load
    assert indicator._count() == "1/100 images "  # no pace yet
    clock[0] = 50.0
    indicator.advance(10)
    assert indicator._count() == "11/100 images, ETA 1m29s "
