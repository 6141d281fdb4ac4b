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
import time
from pathlib import Path

import numpy as np
import pytest

from test_interrupts import interrupt  # pytest puts the tests folder on the path


#: seconds from SIGINT to the command's exit with a core to spare (the issue's limit), scaled by the machine's
#: measured slowdown (``test_interrupts.budget``)
LIMIT = 3.0
#: options that select another code path of a command: each of their values (or the flag) is a mode of
#: its own, as is each sub-command and each choice of a positional argument (``data get``, ``cache clear``)
MODE_OPTIONS = {"sweep": ("executor", "cluster"), "probe generate": ("text_only",), "debias": ("method",)}
#: modes that cannot run for 5 s on their own (they print, or read one small file), with the reason
SHORT = {"list suites": "prints a registry", "list tests": "prints a registry", "list models": "prints a registry",
         "list kinds": "prints a registry", "list presets": "prints a registry",
         "list seeds": "prints a seed catalogue (one file of at most a few MB, through the one reader)",
         "cache info": "lists cache files", "cache clear": "removes cache files",
         "data list": "prints the dataset registry",
         "report": "renders a run folder already computed (tables, a page)",
         "analysis-set folders": "lists the class folders and writes one suite file (no file read)"}
#: modes whose long runs need torch, a model or a server: interrupted in the test named (file::function)
ELSEWHERE = {"probe ranking": "test_interrupts.py::test_ctrl_c_stops_a_probe",
             "probe vqa": "test_interrupts.py::test_ctrl_c_stops_a_probe",
             "probe caption": "test_interrupts.py::test_ctrl_c_stops_a_probe",
             "probe retrieval": "test_interrupts.py::test_ctrl_c_stops_a_probe",
             "probe generate": "test_interrupts.py::test_ctrl_c_stops_generation",
             "probe generate --text-only": "test_interrupts.py::test_ctrl_c_stops_generation",
             "finetune": "test_interrupts.py::test_ctrl_c_stops_finetuning",
             "data get": "test_interrupts.py::test_ctrl_c_stops_a_stalled_download",
             }
#: modes that need what CI does not have, with the reason
NEEDS = {"sweep --cluster slurm": "a SLURM cluster (sbatch); without one the sweep is refused at once "
                                 "(test_sweep_slurm.py::test_slurm_without_sbatch_is_one_line_and_writes_nothing)"}


def cli_modes() -> set[str]:
    """Every mode of the command line, read from :func:`eatkit.cli.build_parser`: ``"<command>"``,
    ``"<command> <sub-command or positional choice>"`` and ``"<command> [<sub-command>] --<option>
    [<value>]"`` for the options of :data:`MODE_OPTIONS`."""
    import argparse

    from eatkit.cli import build_parser

    def modes(prefix: str, parser: argparse.ArgumentParser) -> set[str]:
        found = {prefix}
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                found.discard(prefix)  # a command with sub-commands is its sub-commands
                for name, sub in action.choices.items():
                    found |= modes(f"{prefix} {name}", sub)
            elif not action.option_strings and action.choices:
                found.discard(prefix)
                found |= {f"{prefix} {choice}" for choice in action.choices}
            elif action.dest in MODE_OPTIONS.get(prefix, ()):
                flag = action.option_strings[0]
                found |= ({f"{prefix} {flag} {choice}" for choice in action.choices} if action.choices
                          else {f"{prefix} {flag}"})
        return found

    root = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return set().union(*(modes(name, sub) for name, sub in root.choices.items()))


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
    # 100,000 more words: hard debiasing, double-hard and HSR run ~7-10 s on them
    more = "".join(f"w{i} " + " ".join(row) + "\n"
                   for i, row in enumerate(g.normal(size=(100_000, 50)).round(3).astype(str).tolist(), start=20_000))
    (root / "v-big.txt").write_text((root / "v.txt").read_text() + more)
    test = {"id": "t1", "title": "t1", **{r: {"name": r, "modality": "word", "items": ws} for r, ws in roles.items()}}
    (root / "suite.json").write_text(json.dumps({"schema": "eatkit.suite/1", "id": "s", "title": "s", "tests": [test]}))
    # a sweep whose second cell (10^7 bootstrap resamples of sets of 30 words) runs for about a minute
    big = {"id": "t30", "title": "t30", **{r: {"name": r, "modality": "word", "items": [f"w{i}" for i in range(30 * k, 30 * k + 30)]}
                                           for k, r in enumerate("XYAB")}}
    (root / "suite30.json").write_text(json.dumps({"schema": "eatkit.suite/1", "id": "s30", "title": "s30", "tests": [big]}))
    (root / "sweep.toml").write_text(
        f'models = [{{ vectors = "{root}/v.txt", label = "v" }}]\nsuites = ["{root}/suite30.json"]\n'
        'settings = [{ permutations = 10, n_bootstrap = 0 }, { permutations = 99, n_bootstrap = 10000000 }]\n')
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
    # analysis sets from 150,000 annotated COCO images and 1.2 million Open Images boxes: ~10 s each
    n = 150_000
    images = [{"id": i, "file_name": f"{i:07d}.jpg", "width": 8, "height": 8} for i in range(n)]
    categories = [{"id": 1, "name": "person"}, {"id": 3, "name": "car"}, {"id": 13, "name": "stop sign"}]
    (root / "instances.json").write_text(json.dumps({"images": images, "categories": categories, "annotations": [
        {"id": i, "image_id": i, "category_id": (1, 3, 13)[i % 3], "bbox": [0, 0, 1, 1]} for i in range(n)]}))
    (root / "captions.json").write_text(json.dumps({"images": images, "annotations": [
        {"id": i, "image_id": i, "caption": ("a man in a car", "a woman in a car")[i % 2]} for i in range(n)]}))
    (root / "classes.csv").write_text("/m/0k4j,Car\n/m/04yx4,Man\n/m/03bt1vf,Woman\n/m/02pv19,Stop sign\n")
    labels = ("/m/0k4j", "/m/04yx4", "/m/03bt1vf", "/m/02pv19")
    (root / "boxes.csv").write_text("ImageID,Source,LabelName,Confidence\n" + "".join(
        f"{i // 2:08x},x,{labels[i % 4]},1\n" for i in range(1_200_000)))
    (root / "images").mkdir()
    manifest = json.loads((root / "run" / "manifest.json").read_text())
    sparse = root / "sparse.bin"
    with open(sparse, "wb") as handle:
        handle.truncate(50 << 30)
    manifest["source"].update(path=str(sparse), sha256="0" * 64)
    (root / "run" / "manifest.json").write_text(json.dumps(manifest))
    return root


#: case -> argv ; {w}: the workspace, {o}: a new folder. A case covers each mode whose words are all in its argv
CASES: dict[str, list[str]] = {
    "run": ["run", "{w}/suite.json", "--vectors", "{w}/v.txt", "--specificity", "1000000", "-q", "-o", "{o}"],
    "sweep": ["sweep", "{w}/sweep.toml", "--executor", "local", "--jobs", "1", "-q", "-o", "{o}"],
    # submitit's local cluster: its tasks are processes of this machine; no folder named '%j' left (#7)
    "sweep-slurm-local": ["sweep", "{w}/sweep.toml", "--executor", "slurm", "--cluster", "local", "--jobs", "1",
                          "-q", "-o", "{o}"],
    "sweep-slurm-debug": ["sweep", "{w}/sweep.toml", "--executor", "slurm", "--cluster", "debug", "--jobs", "1",
                          "-q", "-o", "{o}"],
    # a local Ray instance of the sweep's own: its raylet, agents and workers go with it
    "sweep-ray": ["sweep", "{w}/sweep.toml", "--executor", "ray", "-q", "-o", "{o}"],
    "verify": ["verify", "{w}/run"],
    **{f"debias-{method}": ["debias", "--vectors", "{w}/v.txt" if method == "ran" else "{w}/v-big.txt", "--method",
                            method, "--suite", "{w}/suite.json", "--tests", "t1", "-q", "-o", "{o}"]
       for method in ("hard", "double-hard", "hsr", "ran")},
    "compare": ["compare", "{w}/depict", "{w}/depict", "--permutations", "1000000000", "--seed", "0"],
    "meta": ["meta", "{w}/effects.csv", "--method", "reml"],
    "analysis-set-coco": ["analysis-set", "coco", "--instances", "{w}/instances.json", "--captions",
                          "{w}/captions.json", "--images", "{w}/images", "--objects", "car", "-o", "{o}"],
    "analysis-set-open-images": ["analysis-set", "open-images", "--boxes", "{w}/boxes.csv", "--class-descriptions",
                                 "{w}/classes.csv", "--images", "{w}/images", "--objects", "car", "-o", "{o}"],
}


def _covers(argv: list[str], mode: str) -> bool:
    """Whether ``argv`` runs ``mode``: its command words first, its option (and value) anywhere."""
    head, _, option = mode.partition(" --")
    if argv[:len(head.split())] != head.split():
        return False
    flag, *value = f"--{option}".split()
    return not option or (flag in argv and argv[argv.index(flag) + 1:argv.index(flag) + 1 + len(value)] == value)


def test_every_mode_of_the_command_line_is_covered() -> None:
    modes = cli_modes()
    assert {"probe generate --text-only", "sweep --executor slurm", "sweep --cluster local", "data get",
            "analysis-set coco", "list models", "debias --method hsr"} <= modes, sorted(modes)  # the derivation reaches sub-commands and options
    covered = {m for m in modes if any(_covers(argv, m) for argv in CASES.values())}
    declared = [set(SHORT), set(ELSEWHERE), set(NEEDS)]
    missing = modes - covered - set().union(*declared)
    assert not missing, f"modes without a Ctrl-C case or a reason: {sorted(missing)}"
    stale = set().union(*declared) - modes
    assert not stale, f"declared modes the command line no longer has: {sorted(stale)}"
    assert not covered & set().union(*declared), covered & set().union(*declared)
    here = Path(__file__).parent
    for mode, where in ELSEWHERE.items():  # the test named exists
        file, _, function = where.partition("::")
        assert f"def {function}(" in (here / file).read_text(), (mode, where)
    assert all("::" not in reason or f"def {reason.split('::')[1].rstrip(')')}(" in
               (here / reason.split("(")[-1].split("::")[0]).read_text() for reason in NEEDS.values())


def _strays(root: Path) -> list[str]:
    """Command lines of the processes still running that name a path under ``root`` (a SLURM-local
    task, a worker started in its own session)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(root) in line:
                found.append(line)
    return found


def _ready(command: str, out: Path, started: float) -> bool:
    """When the command is past its start-up and busy: a sweep in its second cell (the first written)."""
    if command.startswith("sweep"):
        return any(out.glob("cells/*/cell.json"))
    if command in ("debias-hard", "debias-double-hard", "debias-hsr"):  # past reading the vectors
        return time.monotonic() - started > 4.0
    return time.monotonic() - started > 2.0


def _ray_processes() -> set[int]:
    """Live (not zombie) processes of a Ray instance: raylet, GCS, agents and workers (``ray::...``)."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and (line.startswith("ray::") or "/raylet" in line or "gcs_server" in line):
            found.add(int(entry.name))
    return found


@pytest.mark.parametrize("command", sorted(CASES))
def test_ctrl_c_stops_the_command(w: Path, tmp_path: Path, command: str) -> None:
    if command == "sweep-ray":
        pytest.importorskip("ray")
    ray_before = _ray_processes()
    out = tmp_path / "out"
    argv = [a.replace("{w}", str(w)).replace("{o}", str(out)) for a in CASES[command]]
    started = time.monotonic()
    code, err, seconds, allowed = interrupt(argv, tmp_path, 0.0, ready=lambda pid: _ready(command, out, started),
                                            group_gone=True, limit=LIMIT)
    assert code is not None, f"{command} still running {allowed + 0.5:.1f} s after Ctrl-C"
    assert code == 130 and seconds <= allowed, (code, seconds, allowed, err)
    assert err.strip().splitlines()[-1] == "eatkit: interrupted", err
    assert not _strays(tmp_path), _strays(tmp_path)
    assert not _ray_processes() - ray_before, "a Ray process was left behind"
    leftovers = [p for p in tmp_path.rglob("*") if p.name.endswith((".partial", ".tmp")) or "%j" in p.name]
    assert not leftovers, leftovers
    if not command.startswith("sweep"):  # (a sweep keeps the cells it finished, to resume)
        assert not out.exists() or not any(out.iterdir()), list(out.iterdir())
