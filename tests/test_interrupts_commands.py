"""issue 36: Ctrl-C stops every command that can run longer than 5 s within 3 s, with exit status 130,
one line on stderr, and no process or partial file left behind.

The commands come from the CLI (:data:`eatkit.cli.COMMANDS`): each is either a case below (a cheap input
that keeps it busy for long: word vectors, huge permutation counts, a sparse file to hash) or named in
``SHORT`` / ``ELSEWHERE`` with the reason; a command added without either fails
:func:`test_every_command_is_covered`. Every case here runs without torch, in seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from test_interrupts import _group_gone  # pytest puts the tests folder on the path

from eatkit.cli import COMMANDS

#: seconds from SIGINT to the command's exit (the issue's limit)
LIMIT = 3.0
#: commands that cannot run for 5 s on their own (they print, or read one small file), with the reason
SHORT = {"listing": "prints the registries", "cache": "lists or removes cache files",
         "report": "renders a run folder already computed (tables, a page)"}
#: commands whose long runs need torch or a network, interrupted in other test files
ELSEWHERE = {"probe": "tests/test_interrupts.py::test_ctrl_c_stops_a_probe (a tiny CLIP; slow)",
             "finetune": "tests/test_finetune.py (torch training loop; each batch sees the signal)",
             "data": "tests/test_datasets.py (pooch downloads with a timeout)",
             "analysis_set": "links or copies files; its readers are bounded (eatkit.io)",
             }


@pytest.fixture(scope="module")
def w(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("interrupt-commands")
    g = np.random.default_rng(0)
    roles = {"X": ["rose", "tulip", "daisy", "lily"], "Y": ["ant", "bee", "wasp", "moth"],
             "A": ["good", "nice", "kind", "fair"], "B": ["bad", "evil", "mean", "foul"]}
    words = [w for ws in roles.values() for w in ws] + ["he", "she", "man", "woman", "girl", "boy"]
    words += [f"w{i}" for i in range(20_000)]
    vectors = g.normal(size=(len(words), 50))
    (root / "v.txt").write_text("".join(w + " " + " ".join(f"{x:.3f}" for x in v) + "\n"
                                        for w, v in zip(words, vectors)))
    test = {"id": "t1", "title": "t1", **{r: {"name": r, "modality": "word", "items": ws} for r, ws in roles.items()}}
    (root / "suite.json").write_text(json.dumps({"schema": "eatkit.suite/1", "id": "s", "title": "s", "tests": [test]}))
    (root / "sweep.toml").write_text(
        f'models = [{{ vectors = "{root}/v.txt", label = "v" }}]\nsuites = ["{root}/suite.json"]\n'
        'settings = [{ permutations = 10, n_bootstrap = 0 }, { permutations = 1000000000, n_bootstrap = 0 }]\n')
    # a run folder whose source file is a sparse file of 50 GB: verify hashes it for long
    from eatkit.cli import main

    assert main(["run", str(root / "suite.json"), "--vectors", str(root / "v.txt"), "--permutations", "10", "-q",
                 "-o", str(root / "run")]) == 0
    # a run folder of depiction records (what compare reads; 40 labelled images, no generation needed)
    shutil.copytree(root / "run", root / "depict")
    record = {"kind": "depiction", "suite": "s", "title": "occ", "test": "occ", "group": "Doctor",
              "prompts": ["a doctor"], "attribute": "gender", "classes": ["man", "woman"],
              "classifier_prompts": {"man": "a photo of a man", "woman": "a photo of a woman"}, "n_images": 40,
              "counts": {"man": 30, "woman": 10}, "shares": {"man": 0.75, "woman": 0.25},
              "reference": {"man": 0.5, "woman": 0.5}, "reference_source": "uniform", "mad": 0.25, "kl": 0.13,
              "labels": ["man"] * 30 + ["woman"] * 10}
    (root / "depict" / "results.json").write_text(json.dumps([record]))
    # 1.5 million effect sizes (22 MB, far below the reader's 256 MB): meta reads and combines them for ~15 s
    block = "".join(f"{e:.4f},{v:.4f}\n" for e, v in zip(g.normal(size=1000), g.uniform(0.01, 0.1, size=1000)))
    (root / "effects.csv").write_text("effect,variance\n" + block * 1500)
    manifest = json.loads((root / "run" / "manifest.json").read_text())
    sparse = root / "sparse.bin"
    with open(sparse, "wb") as handle:
        handle.truncate(50 << 30)
    manifest["source"].update(path=str(sparse), sha256="0" * 64)
    (root / "run" / "manifest.json").write_text(json.dumps(manifest))
    return root


#: command module -> (argv, what must be running before the signal) ; {w}: the workspace, {o}: a new folder
CASES: dict[str, list[str]] = {
    "run": ["run", "{w}/suite.json", "--vectors", "{w}/v.txt", "--specificity", "1000000", "-q", "-o", "{o}"],
    "sweep": ["sweep", "{w}/sweep.toml", "--jobs", "1", "-q", "-o", "{o}"],
    "verify": ["verify", "{w}/run"],
    "debias": ["debias", "--vectors", "{w}/v.txt", "--method", "ran", "-q", "-o", "{o}"],
    "compare": ["compare", "{w}/depict", "{w}/depict", "--permutations", "1000000000", "--seed", "0"],
    "meta": ["meta", "{w}/effects.csv", "--method", "reml"],
}


def test_every_command_is_covered() -> None:
    assert set(CASES) | set(SHORT) | set(ELSEWHERE) == set(COMMANDS)
    assert not (set(CASES) & set(SHORT)) and not (set(CASES) & set(ELSEWHERE))



def _ready(command: str, out: Path, started: float) -> bool:
    """When the command is past its start-up and busy: a sweep in its second cell (the first written)."""
    if command == "sweep":
        return any(out.glob("cells/*/cell.json"))
    return time.monotonic() - started > 2.0


@pytest.mark.parametrize("command", sorted(CASES))
def test_ctrl_c_stops_the_command(w: Path, tmp_path: Path, command: str) -> None:
    out = tmp_path / "out"
    argv = [a.replace("{w}", str(w)).replace("{o}", str(out)) for a in CASES[command]]
    proc = subprocess.Popen([sys.executable, "-m", "eatkit.cli", *argv], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        started = time.monotonic()
        while not _ready(command, out, started) and proc.poll() is None and time.monotonic() - started < 60:
            time.sleep(0.02)
        assert proc.poll() is None, f"{command} ended before it was interrupted: {proc.communicate()}"
        os.killpg(proc.pid, signal.SIGINT)
        sent = time.monotonic()
        try:
            _, err = proc.communicate(timeout=LIMIT + 1)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{command} still running {LIMIT + 1} s after Ctrl-C")
        seconds = time.monotonic() - sent
        assert proc.returncode == 130 and seconds <= LIMIT, (proc.returncode, seconds, err)
        assert err.strip().splitlines()[-1] == "eatkit: interrupted", err
        assert _group_gone(proc.pid), f"{command} left a process behind"
        leftovers = [p for p in tmp_path.rglob("*") if p.name.endswith((".partial", ".tmp")) or "%j" in p.name]
        assert not leftovers, leftovers
        if command != "sweep":  # (a sweep keeps the cells it finished, to resume)
            assert not out.exists() or not any(out.iterdir()), list(out.iterdir())
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
