"""issue 36: a corpus of bad, odd and hostile inputs over the classes of the issue, each a one-line error
(exit status 2 from the CLI; one line from the API) or a run whose record carries the warning.

Classes: degenerate data (stats.degeneracy), meaningless settings, outputs of one command over another's
(run.folder's owner), unbounded inputs (eatkit.io's reader), work without a cost estimate (stats.cost),
paths leaving their folder, warnings recorded (the exact p-value's floor). Everything runs in-process on
tiny inputs.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eatkit import metrics
from eatkit.cli import main
from eatkit.errors import EatkitError
from eatkit.run.folder import OWNER_FILE, owner_marker, prepare_output
from eatkit.stats import eat
from eatkit.stats.bootstrap import bootstrap_effect_size
from eatkit.stats.debias import double_hard_debias, hard_debias
from eatkit.stats.degeneracy import DegeneracyWarning
from eatkit.stats.false_positives import specificity
from eatkit.stats.meta_analysis import random_effects
from eatkit.stats.metrics import direct_bias, ect, mac, ripa, rnd, rnsb
from eatkit.stats.multigroup import generalized_weat, same
from eatkit.stats.permutation import group_permutation_test
from eatkit.stats.power import minimum_detectable_effect, required_set_size

WORDS = {"X": ["rose", "tulip", "daisy"], "Y": ["ant", "bee", "wasp"], "A": ["good", "nice", "kind"],
         "B": ["bad", "evil", "mean"]}
EXTRA = ["he", "she", "man", "woman", "boy", "girl", "doctor", "nurse", "table"]


def _vectors(dim: int = 5, scale: float = 1.0, same: tuple[str, ...] = (), seed: int = 0) -> str:
    g = np.random.default_rng(seed)
    lines = []
    for w in [w for ws in WORDS.values() for w in ws] + EXTRA:
        v = np.ones(dim) if w in same else g.normal(size=dim)
        lines.append(w + " " + " ".join(repr(float(x * scale)) for x in v))
    return "\n".join(lines) + "\n"


def _suite(**sets: list[str]) -> str:
    roles = {**WORDS, **sets}
    test = {"id": "t1", "title": "t1", "kind": "eat", **{r: {"name": r, "modality": "word", "items": items}
                                                          for r, items in roles.items()}}
    return json.dumps({"schema": "eatkit.suite/1", "id": "s", "title": "s", "tests": [test]})


def _coco(file_names: list[str]) -> str:
    images = [{"id": i, "file_name": f} for i, f in enumerate(file_names)]
    return json.dumps({"images": images, "categories": [{"id": 1, "name": "car"}, {"id": 2, "name": "person"}],
                       "annotations": [{"image_id": i, "category_id": 1 + i % 2, "id": i} for i in range(len(images))]})


def _embeddings(root: Path) -> None:
    """Hostile precomputed-embeddings files (``--embeddings``): a FIFO, a folder, .npy files truncated,
    with a huge header, or whose header declares terabytes; an ids file that is a FIFO; an iEAT folder
    whose category file is a FIFO."""
    import struct

    buffer = io.BytesIO()
    np.save(buffer, np.eye(3))
    whole = buffer.getvalue()

    def npy(header: bytes) -> bytes:
        header += b" " * (-(12 + len(header) + 1) % 64) + b"\n"
        return b"\x93NUMPY\x02\x00" + struct.pack("<I", len(header)) + header + np.eye(3).tobytes()

    files = {"e-trunc.npy": whole[:-10], "e-fifo-ids.npy": whole,
             "e-header.npy": npy(b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 3), " + b" " * 100_000 + b"}"),
             "e-tera.npy": npy(b"{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 3), }")}
    for name, data in files.items():
        (root / name).write_bytes(data)
        if name != "e-fifo-ids.npy":
            (root / name).with_suffix(".ids.txt").write_text("rose\ntulip\ndaisy\n")
    os.mkfifo(root / "e-fifo-ids.ids.txt")
    os.mkfifo(root / "e-fifo.npz")
    (root / "e-folder.npz").mkdir()
    (root / "ieat").mkdir()
    (root / "ieat" / "age_old_m.csv").write_text("0,1,img\n1,2,a.jpg\n")
    os.mkfifo(root / "ieat" / "age_young_m.csv")


@pytest.fixture(scope="module")
def d(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus36")
    files = {
        "suite.json": _suite(), "v.txt": _vectors(), "v2.txt": _vectors(seed=1),
        "v1d.txt": _vectors(dim=1), "vsameX.txt": _vectors(same=("rose", "tulip", "daisy")),
        "vsameA.txt": _vectors(same=("good", "nice", "kind")), "vhuge.txt": _vectors(scale=1e200),
        "vtiny.txt": _vectors(scale=1e-200), "v1e30.txt": _vectors(scale=1e30), "v1e-42.txt": _vectors(scale=1e-42),
        "overlap.json": _suite(Y=["ant", "bee", "rose"]), "xa.json": _suite(A=["rose", "tulip", "daisy"]),
        "xy.json": _suite(Y=["daisy", "rose", "tulip"]), "ab.json": _suite(B=["kind", "nice", "good"]),
        "two.json": _suite(X=["rose", "tulip"], Y=["ant", "bee"]),
        "pairs2.json": _suite(X=["rose", "tulip"], Y=["ant", "bee"], A=["good", "nice"], B=["bad", "evil"]),
        "deep.json": "[" * 100_000 + "]" * 100_000, "bignum.json": '{"schema": ' + "1" * 100_000 + "}",
        "deepobj.json": '{"a":' * 200 + "1" + "}" * 200, "bigfloat.json": '{"schema": 1.' + "5" * 5000 + "}",
        "latin1.txt": "caf\xe9", "longline.txt": "rose " + "1.0 " * 400_000 + "\n",
        "deep.toml": "a = " + "[" * 2000 + "]" * 2000 + "\n", "nested.toml": "a = " + "[" * 100 + "]" * 100 + "\n",
        "sweep.toml": f'models = [{{ vectors = "{root}/v.txt" }}]\nsuites = [{{ suite = "{root}/suite.json" }}]\n',
        "coco-abs.json": _coco(["/etc/hostname", "a.jpg"]), "coco-up.json": _coco(["../../../etc/passwd", "a.jpg"]),
        "coco-win.json": _coco(["C:\\Windows\\x.jpg", "a.jpg"]), "coco-nul.json": _coco(["a\x00.jpg", "b.jpg"]),
        "caps.json": json.dumps({"images": [], "annotations": []}),
        "words-none.json": json.dumps({"schema": "eatkit.debias-words/1", "definitional": [["he", "she"]],
                                       "specific": [w for ws in WORDS.values() for w in ws] + EXTRA}),
        "words-same.json": json.dumps({"schema": "eatkit.debias-words/1", "definitional": [["she", "she"]]}),
        "user.json": "my own notes\n",
        "meta-negse.csv": "effect,se\n0.5,-0.1\n0.2,0.1\n", "meta-huge.csv": "effect,se\n1e200,0.1\n0.2,0.1\n",
        "meta-tiny.csv": "effect,variance\n0.5,1e-320\n0.2,0.1\n",
        "meta-semi.csv": "effect;se\n0,5;0,1\n0,2;0,1\n", "meta-dup.csv": "effect,se,effect\n0.5,0.1,0.4\n0.2,0.1,0.3\n",
        "meta-long.csv": "effect,se\n0.5,0.1,9\n0.2,0.1\n",
    }
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "latin1.txt").write_bytes(b"caf\xe9 1 2 3\n")
    os.mkfifo(root / "fifo.json")
    os.mkfifo(root / "fifo.toml")
    os.mkfifo(root / "fifo.txt")
    os.mkfifo(root / "fifo.csv")
    (root / "folder").mkdir()
    (root / "folder.json").mkdir()
    _embeddings(root)
    images = root / "images"
    for cls in ("a", "b"):
        (images / cls).mkdir(parents=True)
        for k in range(2):
            (images / cls / f"{cls}{k}.jpg").write_bytes(b"\xff\xd8not really")
    # outputs of each command
    assert main(["run", str(root / "suite.json"), "--vectors", str(root / "v.txt"), "--permutations", "10",
                 "--n-bootstrap", "0", "-q", "-o", str(root / "run")]) == 0
    _fifo_outputs(root)
    for command in ("sweep", "series", "debias"):
        (root / command).mkdir()
        (root / command / OWNER_FILE).write_bytes(owner_marker(command))
    (root / "legacy-sweep").mkdir()
    (root / "legacy-sweep" / "cells.csv").write_text("cell,status\n")
    (root / "own").mkdir()
    (root / "own" / "v.txt").write_text(_vectors())
    (root / "own" / "suite.json").write_text(_suite())
    (root / "collide" / "x").mkdir(parents=True)
    (root / "collide" / "y").mkdir()
    for sub in ("x", "y"):
        (root / "collide" / sub / "same.jpg").write_bytes(b"img")
    return root


def _fifo_outputs(root: Path) -> None:
    """eatkit's own outputs with a FIFO in place of one of their files (issue 45: read through eatkit.io, which
    names it, where a plain open blocked): run folders (results.json, manifest.json, similarities.npz), a series
    (series.json) and sweep folders (audit.json, rankings.csv, meta-analysis.csv)."""
    for name in ("results.json", "manifest.json", "similarities.npz"):
        shutil.copytree(root / "run", root / f"run-fifo-{name}")
        (root / f"run-fifo-{name}" / name).unlink()
        os.mkfifo(root / f"run-fifo-{name}" / name)
    (root / "series-fifo").mkdir()
    os.mkfifo(root / "series-fifo" / "series.json")
    audit = {"settings": ["default"], "models": ["m1"], "metadata": {}, "cells": [],
             "columns": [{"suite": "weat", "test": "weat1", "measure": "d"}], "values": {"default": [[0.5]]},
             "p": {"default": [[0.01]]}, "order": {"default": {"rows": [0], "how": "sweep order"}}}
    for name in ("audit.json", "rankings.csv", "meta-analysis.csv"):
        (root / f"sweep-fifo-{name}").mkdir()
        (root / f"sweep-fifo-{name}" / "sweep.json").write_text(json.dumps({"cells": []}))
        (root / f"sweep-fifo-{name}" / "audit.json").write_text(json.dumps(audit))
        (root / f"sweep-fifo-{name}" / name).unlink(missing_ok=True)
        os.mkfifo(root / f"sweep-fifo-{name}" / name)


R = ["run", "{d}/suite.json", "--vectors", "{d}/v.txt", "-q", "-o", "{o}"]


def _r(*extra: str, suite: str = "suite.json", vectors: str = "v.txt", quiet: bool = True) -> list[str]:
    return ["run", "{d}/" + suite, "--vectors", "{d}/" + vectors, *extra, *(["-q"] if quiet else []), "-o", "{o}"]


from eatkit.specs import METRICS as _FAMILY

#: the members of the metrics family and those that read the attribute sets, from their declarations: a new
#: member gets its rows here without another line (issue 44)
METRICS = _FAMILY.names()
READ_ATTRIBUTES = tuple(s.name for s in _FAMILY.members() if "A" in s.member.reads)
#: eatkit debias with a before/after suite the corpus vectors embed (measured before the debiasing)
DEBIAS = ["debias", "--suite", "{d}/suite.json", "--tests", "t1"]

CLI: list[tuple[str, list[str], str]] = [
    # 1. degenerate data, through every kind and metric
    *[("degenerate", _r(*m, vectors="v1d.txt"), "has vectors of dimension 1") for m in
      ([], *(["--metrics", k] for k in METRICS))],
    *[("degenerate", _r(*m, vectors="vsameX.txt"), "set 'X' holds 3 stimuli that all share one vector") for m in
      ([], *(["--metrics", k] for k in METRICS))],
    *[("degenerate", _r(*m, vectors="vsameA.txt"), "set 'A' holds 3 stimuli that all share one vector") for m in
      ([], *(["--metrics", k] for k in READ_ATTRIBUTES))],
    *[("degenerate", _r(*m, suite="xy.json"), "sets 'X' and 'Y' hold the same vectors") for m in
      ([], *(["--metrics", k] for k in METRICS))],
    *[("degenerate", _r(*m, suite="ab.json"), "sets 'A' and 'B' hold the same vectors") for m in
      ([], *(["--metrics", k] for k in READ_ATTRIBUTES))],
    *[("degenerate", _r(*m, suite="xa.json"), "hold the same vectors") for m in
      ([], *(["--metrics", k] for k in READ_ATTRIBUTES))],
    *[("degenerate", _r(*m, vectors="vhuge.txt"), "beyond the float32 range") for m in
      ([], *(["--metrics", k] for k in METRICS))],
    *[("degenerate", _r("--metrics", "rnsb", vectors=v), "rescale the vectors") for v in ("v1e30.txt", "v1e-42.txt")],
    ("degenerate", [*DEBIAS, "--vectors", "{d}/v.txt", "--method", "hard", "--word-lists", "{d}/words-same.json",
                    "-o", "{o}"], "have the same direction in both words"),
    ("degenerate", [*DEBIAS, "--vectors", "{d}/v1d.txt", "--method", "hard", "-o", "{o}"], "dimension 1"),
    ("degenerate", ["meta", "{d}/meta-negse.csv"], "line 2: a standard error must be positive, got -0.1"),
    ("reader", ["meta", "{d}/meta-semi.csv"], "is separated by ';', not commas"),
    ("reader", ["meta", "{d}/meta-dup.csv"], "names the column 'effect' twice"),
    ("reader", ["meta", "{d}/meta-long.csv"], "line 2: 3 fields, the header has 2"),
    ("reader", ["meta", "{d}/fifo.csv"], "is a FIFO"),
    ("degenerate", ["meta", "{d}/meta-huge.csv"], "'effects' has a value of magnitude 1e+200 (entry 0), outside"),
    ("degenerate", ["meta", "{d}/meta-tiny.csv"], "'variances' has a value of magnitude 1e-320 (entry 0)"),
    # 2. meaningless settings
    ("setting", ["analysis-set", "folders", "--images", "{d}/images", "--classes", "a", "-o", "{o}.json"],
     "an analysis set needs at least 2 classes (a geometry test compares classes); got only 'a'"),
    ("setting", ["sweep", "{d}/sweep.toml", "--cluster", "local", "-q", "-o", "{o}"],
     "--cluster applies to --executor slurm only (the executor here is local)"),
    ("setting", ["sweep", "{d}/sweep.toml", "--address", "auto", "-q", "-o", "{o}"],
     "--address applies to --executor ray only (the executor here is local)"),
    ("setting", _r("--specificity", "1"), "n_splits=1"),
    ("setting", _r("--metrics", "rnsb", "--n-fits", "1"), "n_fits must be an integer in [2, 10000], got 1"),
    ("setting", _r("--metrics", "direct-bias", "--direct-bias-c", "1e308"), "c must be a number in (0, 10000], got 1e+308"),
    ("setting", [*DEBIAS, "--vectors", "{d}/v.txt", "--method", "double-hard", "--n-components", "1000", "-o",
                 "{o}"], "n_components must be between 1 and"),
    ("setting", [*DEBIAS, "--vectors", "{d}/v.txt", "--method", "hard", "--word-lists", "{d}/words-none.json",
                 "-o", "{o}"], "no neutral word is left"),
    ("setting", ["finetune", "--model", "efficientnet_lite0", "--instances", "{d}/coco-abs.json", "--images",
                 "{d}/images", "--device", "cuda", "-o", "{o}.safetensors"], "no CUDA GPU is available"),
    # 3. outputs of one command over another's, and over inputs
    ("output", R[:-1] + ["{d}/sweep"], "was made by 'eatkit sweep'; 'eatkit run' does not write into it"),
    ("output", R[:-1] + ["{d}/legacy-sweep"], "was made by 'eatkit sweep'"),
    ("output", R[:-1] + ["{d}/series"], "was made by 'eatkit series'"),
    ("output", R[:-1] + ["{d}/debias"], "was made by 'eatkit debias'"),
    ("output", [*DEBIAS, "--vectors", "{d}/v.txt", "--method", "hard", "-o", "{d}/run"],
     "was made by 'eatkit run'; 'eatkit debias' does not write into it"),
    ("output", [*DEBIAS, "--vectors", "{d}/v.txt", "--method", "hard", "-o", "{d}/sweep"], "made by 'eatkit sweep'"),
    ("output", ["sweep", "{d}/sweep.toml", "-o", "{d}/run"], "was made by 'eatkit run'; 'eatkit sweep'"),
    ("output", ["sweep", "{d}/sweep.toml", "-o", "{d}/debias"], "made by 'eatkit debias'"),
    ("output", ["run", "{d}/suite.json", "--series", "{d}/v.txt", "{d}/v2.txt", "-q", "-o", "{d}/run"],
     "was made by 'eatkit run'; 'eatkit series'"),
    ("output", [*DEBIAS, "--vectors", "{d}/own/v.txt", "--method", "hard", "-o", "{d}/own"], "holds the input"),
    ("output", ["run", "{d}/own/suite.json", "--vectors", "{d}/v.txt", "-q", "-o", "{d}/own"], "holds the input"),
    ("output", ["run", "{d}/suite.json", "--vectors", "{d}/own/v.txt", "-q", "-o", "{d}/own"], "holds the input"),
    ("output", ["finetune", "--model", "efficientnet_lite0", "--instances", "{d}/coco-abs.json", "--images",
                "{d}/images", "-o", "{d}/coco-abs.json"], "is one of the command's inputs"),
    ("output", ["finetune", "--model", "efficientnet_lite0", "--instances", "{d}/coco-abs.json", "--images",
                "{d}/images", "-o", "{d}/user.json"], "is not an eatkit safetensors file"),
    ("output", ["finetune", "--model", "efficientnet_lite0", "--instances", "{d}/coco-abs.json", "--images",
                "{d}/images", "-o", "{d}/folder"], "is a folder"),
    ("output", ["analysis-set", "folders", "--images", "{d}/images", "-o", "{d}/user.json"],
     "eatkit does not write over a file it did not create"),
    ("output", ["analysis-set", "folders", "--images", "{d}/images", "-o", "{d}/suite.json"],
     "eatkit does not write over a file it did not create"),
    ("output", ["analysis-set", "folders", "--images", "{d}/images", "-o", "{d}/folder"], "is a folder"),
    ("output", ["report", "{d}/run", "--html", "{d}/run/manifest.json"], "is not an eatkit html file"),
    ("output", ["report", "{d}/run", "--html", "{d}/user.json"], "is not an eatkit html file"),
    ("output", R[:-1] + ["{d}/user.json"], "exists and is not a folder"),
    # 4. inputs read without bounds
    *[("reader", argv, msg) for argv, msg in [
        (["run", "{d}/fifo.json", "--vectors", "{d}/v.txt"], "is a FIFO (named pipe), not a regular file"),
        (["run", "/dev/zero", "--vectors", "{d}/v.txt"], "is a character device"),
        (["run", "{d}/folder.json", "--vectors", "{d}/v.txt"], "is a folder, not a regular file"),
        (["run", "{d}/deep.json", "--vectors", "{d}/v.txt"], "nested deeper than"),
        (["run", "{d}/deepobj.json", "--vectors", "{d}/v.txt"], "nested deeper than 64 levels"),
        (["run", "{d}/bignum.json", "--vectors", "{d}/v.txt"], "a number of 100000 digits"),
        (["run", "{d}/bigfloat.json", "--vectors", "{d}/v.txt"], "digits (at most 4300)"),
        (["sweep", "{d}/fifo.toml"], "is a FIFO"),
        (["sweep", "/dev/zero"], "is a character device"),
        (["sweep", "{d}/folder"], "is a folder"),
        (["sweep", "{d}/deep.toml"], "sweep file"),
        (["sweep", "{d}/nested.toml"], "nested deeper than 64 levels"),
        (_r(vectors="fifo.txt"), "is a FIFO"),
        (["run", "{d}/suite.json", "--vectors", "/dev/zero", "-q", "-o", "{o}"], "is a character device"),
        (_r(vectors="longline.txt"), "line 1 is longer than 1048576 bytes"),
        ([*DEBIAS, "--vectors", "{d}/v.txt", "--method", "hard", "--word-lists", "{d}/fifo.json", "-o", "{o}"], "is a FIFO"),
        ([*DEBIAS, "--vectors", "{d}/v.txt", "--method", "hard", "--word-lists", "/dev/zero", "-o", "{o}"], "character device"),
        ([*DEBIAS, "--vectors", "{d}/v.txt", "--method", "hard", "--word-lists", "{d}/deep.json", "-o", "{o}"], "nested deeper"),
        ([*DEBIAS, "--vectors", "{d}/fifo.txt", "--method", "hard", "-o", "{o}"], "is a FIFO"),
        (["analysis-set", "open-images", "--boxes", "{d}/fifo.csv", "--class-descriptions", "/dev/zero",
          "--objects", "car", "--images", "{d}/images", "-o", "{o}"], "character device"),
        (["analysis-set", "open-images", "--boxes", "{d}/fifo.csv", "--class-descriptions", "{d}/fifo.csv",
          "--objects", "car", "--images", "{d}/images", "-o", "{o}"], "is a FIFO"),
        (["analysis-set", "coco", "--instances", "{d}/fifo.json", "--captions", "{d}/caps.json", "--objects", "car",
          "--images", "{d}/images", "-o", "{o}"], "is a FIFO"),
        (["analysis-set", "coco", "--instances", "/dev/zero", "--captions", "{d}/caps.json", "--objects", "car",
          "--images", "{d}/images", "-o", "{o}"], "character device"),
        (["analysis-set", "coco", "--instances", "{d}/deep.json", "--captions", "{d}/caps.json", "--objects", "car",
          "--images", "{d}/images", "-o", "{o}"], "nested deeper"),
        (["analysis-set", "coco", "--instances", "{d}/coco-abs.json", "--captions", "{d}/fifo.json", "--objects",
          "car", "--images", "{d}/images", "-o", "{o}"], "is a FIFO"),
        (["analysis-set", "coco", "--instances", "{d}/coco-abs.json", "--captions", "{d}/caps.json", "--objects",
          "car", "--lexicon", "{d}/fifo.json", "--images", "{d}/images", "-o", "{o}"], "is a FIFO"),
        (["finetune", "--model", "efficientnet_lite0", "--instances", "{d}/fifo.json", "--images", "{d}/images",
          "-o", "{o}.safetensors"], "is a FIFO"),
        (["finetune", "--model", "efficientnet_lite0", "--instances", "/dev/zero", "--images", "{d}/images",
          "-o", "{o}.safetensors"], "character device"),
        (["finetune", "--model", "efficientnet_lite0", "--instances", "{d}/bignum.json", "--images", "{d}/images",
          "-o", "{o}.safetensors"], "digits"),
        (["run", "{d}/latin1.txt", "--vectors", "{d}/v.txt"], "is not UTF-8 text"),
        (["run", "{d}/suite.json", "--embeddings", "{d}/e-fifo.npz"], "e-fifo.npz is a FIFO (named pipe)"),
        (["run", "{d}/suite.json", "--embeddings", "/dev/zero"], "embeddings file /dev/zero is a character device"),
        (["run", "{d}/suite.json", "--embeddings", "{d}/e-folder.npz"], "is a folder, not an embeddings file"),
        (["run", "{d}/suite.json", "--embeddings", "{d}/e-trunc.npy"], "shape (3, 3), 72 bytes of data, but the "
                                                                       "file holds 62"),
        (["run", "{d}/suite.json", "--embeddings", "{d}/e-header.npy"], "more than numpy reads safely"),
        (["run", "{d}/suite.json", "--embeddings", "{d}/e-tera.npy"], "24000000000000 bytes of data"),
        (["run", "{d}/suite.json", "--embeddings", "{d}/e-fifo-ids.npy"], "e-fifo-ids.ids.txt is a FIFO"),
        (["run", "ieat", "--tests", "age", "--embeddings", "{d}/ieat", "--embeddings-model", "m"],
         "age_young_m.csv is a FIFO"),
        (["run", "{d}/suite.json", "--model", "hf-vilt:{d}/folder", "--regions", "{d}/fifo.json", "-q", "-o", "{o}"],
         "fifo.json does not exist"),
        # eatkit's own outputs, read back through eatkit.io (a FIFO blocked report and verify)
        *[(["report", "{d}/run-fifo-" + name, "--html", "{o}.html"], f"run-fifo-{name}/{name} is a FIFO")
          for name in ("results.json", "manifest.json", "similarities.npz")],
        (["verify", "{d}/run-fifo-manifest.json"], "run-fifo-manifest.json/manifest.json is a FIFO"),
        (["report", "{d}/series-fifo", "--html", "{o}.html"], "series-fifo/series.json is a FIFO"),
        *[(["report", "{d}/sweep-fifo-" + name], f"sweep-fifo-{name}/{name} is a FIFO")
          for name in ("audit.json", "rankings.csv", "meta-analysis.csv")],
    ]],
    ("setting", ["run", "{d}/suite.json", "--model", "efficientnet_lite0", "--compare-prompts", "a {x}", "b {x}", "-q",
                 "-o", "{o}"], "model 'efficientnet_lite0' does not take the option --compare-prompts"),
    # 5. work without a cost estimate
    ("cost", _r("--specificity", "1000000000"), "specificity splits"),
    ("cost", _r("--specificity", "1000000", "--permutations", "100000"), "would take about"),
    ("cost", _r("--n-bootstrap", "1000000000000"), "bootstrap"),
    ("cost", _r("--metrics", "rnd", "--n-bootstrap", "100000000000"), "bootstrap resamples"),
    ("cost", _r("--metrics", "rnsb", "--n-bootstrap", "100000000000"), "bootstrap resamples"),
    ("cost", _r("--specificity", "100000", "--permutations", "1000000000"), "would take about"),
    ("cost", _r("--metrics", "ripa", "--permutations", "1000000000000000"), "would take about"),
    # 6. paths that leave their folder
    *[("paths", ["analysis-set", "coco", "--instances", "{d}/" + name, "--captions", "{d}/caps.json", "--objects",
                 "car", "--no-control", "--images", "{d}/images", "-o", "{o}"], message) for name, message in
      (("coco-abs.json", "an absolute path"), ("coco-up.json", "no '..' component"),
       ("coco-win.json", "an absolute path"), ("coco-nul.json", "NUL byte"))],
    *[("paths", ["finetune", "--model", "efficientnet_lite0", "--instances", "{d}/" + name, "--images", "{d}/images",
                 "-o", "{o}.safetensors"], message) for name, message in
      (("coco-abs.json", "an absolute path"), ("coco-up.json", "no '..' component"),
       ("coco-win.json", "an absolute path"))],
]

_g = np.random.default_rng(7)
OK = [_g.normal(size=(3, 4)) for _ in range(4)]
X, Y, A, B = OK
ONE_D = [v[:, :1] for v in OK]
SAME = np.ones((3, 4))


#: statistics by name, each taking (X, Y, A, B)
STATS: dict[str, Callable[..., Any]] = {
    "eat": lambda x, y, a, b: eat(x, y, a, b, permutations="exact"),
    "bootstrap": lambda x, y, a, b: bootstrap_effect_size(x, y, a, b, n_bootstrap=50, rng=0),
    "specificity": lambda x, y, a, b: specificity(x, y, a, b, n_splits=5, permutations="exact", rng=0),
    "rnd": lambda x, y, a, b: rnd(x, y, a), "ect": lambda x, y, a, b: ect(x, y, a), "ripa": lambda x, y, a, b: ripa(x, y, a),
    "mac": lambda x, y, a, b: mac([x, y], [a, b]), "rnsb": lambda x, y, a, b: rnsb([x, y], a, b, rng=0),
    "direct_bias": lambda x, y, a, b: direct_bias(x, y, a),
    "metrics.rnd": lambda x, y, a, b: metrics.rnd([x, y], [a]),
}

def _member_call(spec: Any, X: Any, Y: Any, A: Any, B: Any, **options: Any) -> Callable[[], Any]:
    """A call of the member's API function on the sets, by its declared template (targets X, Y; the
    attributes as one set, two, a list, or none)."""
    attributes = {0: None, 1: [A], 2: [A, B], None: [A, B]}[spec.member.template[1]]
    return lambda: getattr(metrics, spec.api_name)([X, Y], attributes, **options)


def member_rows(spec: Any) -> list[tuple[str, Callable[[], Any], str]]:
    """A member's bad inputs, generated from its declaration: dimension 1 and a target set of one vector,
    an attribute set of one vector when it reads the attributes, and a value below the lower bound of each
    numeric parameter (its declaration's message). ``tests/test_families.py`` runs them for a new member."""
    rows = [("degenerate", _member_call(spec, *ONE_D), "dimension 1"),
            ("degenerate", _member_call(spec, SAME, Y, A, B), "share one vector")]
    if "A" in spec.member.reads:
        rows.append(("degenerate", _member_call(spec, X, Y, SAME, B), "share one vector"))
    return rows + [("setting", _member_call(spec, X, Y, A, B, **{p.name: p.low - 1}), f"{p.name} must be")
                   for p in spec.params if p.type in (int, float) and p.low is not None]


API: list[tuple[str, Callable[[], Any], str]] = [
    *[row for spec in _FAMILY.members() for row in member_rows(spec)],
    *[("degenerate", (lambda f=f: f(*ONE_D)), "dimension 1") for f in STATS.values()],
    *[("degenerate", (lambda f=f: f(SAME, Y, A, B)), "share one vector") for name, f in STATS.items()],
    *[("degenerate", (lambda f=f: f(X, Y, SAME, B)), "share one vector") for name, f in STATS.items()],
    *[("degenerate", (lambda f=f: f(X * 1e200, Y * 1e200, A * 1e200, B * 1e200)), "outside [1e-150, 1e+150]")
      for name, f in STATS.items() if name != "rnsb"],
    ("degenerate", lambda: rnsb([X * 1e200, Y], A, B), "outside [1e-06, 1e+06]"),
    # the numeric-range rule for sums and meta-analyses, the degeneracy rules of ECT and the multi-group kinds
    ("degenerate", lambda: group_permutation_test([4.4e307, -4.4e307, 4.4e307], [-4.4e307, 4.4e307, -4.4e307]),
     "'first' has a value of magnitude 4.4e+307 (entry 0), outside [0, 1e+150]"),
    ("degenerate", lambda: random_effects([1e120, 0.1], [0.1, 0.2]), "'effects' has a value of magnitude 1e+120"),
    ("degenerate", lambda: random_effects([0.1, 0.2], [1e-320, 0.1]), "outside [1e-100, 1e+100]"),
    ("degenerate", lambda: ect(X, Y, A[:2]), "ECT needs at least 3 attribute stimuli in A, got 2"),
    ("degenerate", lambda: same(X, [A, A[::-1]]), "sets 'A1' and 'A2' hold the same vectors"),
    ("degenerate", lambda: generalized_weat([X, X[::-1]], [A, B]), "sets 'T1' and 'T2' hold the same vectors"),
    ("degenerate", lambda: rnsb([X * 1e30, Y * 1e30], A * 1e30, B * 1e30, rng=0), "rescale the vectors"),
    ("degenerate", lambda: rnsb([X * 1e-42, Y * 1e-42], A * 1e-42, B * 1e-42, rng=0), "rescale the vectors"),
    ("degenerate", lambda: hard_debias(np.r_[X, Y], [[0, 0]], [3, 4]), "same direction in both words"),
    ("degenerate", lambda: hard_debias(np.r_[X, Y][:, :1], [[0, 1]], [3, 4]), "dimension 1"),
    ("setting", lambda: double_hard_debias(np.r_[X, Y, A, B], [[0, 1]], range(2, 12), bias_words=(0, 1),
                                           n_words=2, n_components=0), "n_components must be between"),
    ("setting", lambda: double_hard_debias(np.r_[X, Y, A, B], [[0, 1]], range(2, 12), bias_words=(0, 1),
                                           n_words=2, n_components=99), "n_components must be between"),
    ("setting", lambda: rnsb([X, Y], A, B, n_fits=1), "n_fits must be an integer in [2, 10000], got 1"),
    ("setting", lambda: direct_bias(X, Y, A, c=1e308), "c must be a number in (0, 10000], got 1e+308"),
    ("setting", lambda: specificity(X, Y, A, B, n_splits=1), "n_splits=1"),
    ("cost", lambda: minimum_detectable_effect(10**9, 10**9), "would take about"),
    ("cost", lambda: minimum_detectable_effect(8, 8, n_simulations=10**9), "would take about"),
    ("cost", lambda: minimum_detectable_effect(100, 100, permutations=10**7), "would take about"),
    ("cost", lambda: minimum_detectable_effect(200, 200, alternative="two-sided", n_simulations=10**6),
     "would take about"),
    ("cost", lambda: required_set_size(0.001), "needs about"),
    ("cost", lambda: required_set_size(0.01), "needs about"),
    ("cost", lambda: required_set_size(0.2, n_simulations=10**8), "would take about"),
    ("cost", lambda: specificity(X, Y, A, B, n_splits=10**9, permutations=10_000), "would take about"),
    ("cost", lambda: bootstrap_effect_size(X, Y, A, B, n_bootstrap=10**12), "bootstrap"),
    ("cost", lambda: rnd(X, Y, A, n_bootstrap=10**12), "would take about"),
    ("cost", lambda: ripa(X, Y, A, n_bootstrap=10**12), "would take about"),
    ("cost", lambda: mac([X, Y], [A], n_bootstrap=10**12), "would take about"),
    ("cost", lambda: rnsb([X, Y], A, B, n_bootstrap=10**12), "would take about"),
    ("cost", lambda: direct_bias(X, Y, A, n_bootstrap=10**12), "would take about"),
]

#: runs that must succeed with a warning recorded in every record
WARNED: list[tuple[list[str], str]] = [
    (_r("--permutations", "exact", suite="two.json", quiet=False), "the smallest p-value this test can reach is 0.167"),
    (_r("--permutations", "exact", "--metrics", "rnd", suite="two.json", quiet=False), "the smallest p-value this test can reach"),
    (_r("--permutations", "exact", "--metrics", "ect", suite="two.json", quiet=False), "the smallest p-value"),
    (_r("--permutations", "exact", "--metrics", "ripa", suite="pairs2.json", quiet=False), "the smallest p-value this test"),
    (_r("--permutations", "auto", suite="pairs2.json", quiet=False), "1 of 6 partitions"),
    # sets sharing a vector (rose in X and Y) are a recorded warning naming the row, not an error (issue 45)
    *[(_r(*m, suite="overlap.json", quiet=False), "sets 'X' and 'Y' share 1 vector(s) (row(s) 0 of 'X')") for m in
      ([], *(["--metrics", k] for k in ("rnd", "ect", "ripa", "direct-bias")))],
]


def _fill(arg: str, d: Path, out: Path) -> str:
    return arg.replace("{d}", str(d)).replace("{o}", str(out))


@pytest.mark.parametrize(("cls", "argv", "message"), CLI, ids=[f"cli-{i}-{c[0]}" for i, c in enumerate(CLI)])
def test_cli_case_is_one_line_and_exit_2(d: Path, tmp_path: Path, capsys, cls: str, argv: list[str],
                                         message: str) -> None:
    code = main([_fill(a, d, tmp_path / "out") for a in argv])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1 and lines[0].startswith("eatkit: error: "), err
    assert message in lines[0], lines[0]
    assert not (tmp_path / "out").exists() or cls == "output"  # nothing written by a refused command


@pytest.mark.parametrize(("cls", "call", "message"), API, ids=[f"api-{i}-{c[0]}" for i, c in enumerate(API)])
def test_api_case_is_one_line(cls: str, call: Callable[[], Any], message: str) -> None:
    with _no_numpy_warnings():
        with pytest.raises(EatkitError) as info:
            call()
    assert "\n" not in str(info.value) and message in str(info.value), str(info.value)


class _no_numpy_warnings:
    """No RuntimeWarning (overflow, division by zero...) may be printed on the way to the error."""

    def __enter__(self) -> None:
        self._state = np.seterr(all="raise")

    def __exit__(self, *exc: Any) -> None:
        np.seterr(**self._state)


@pytest.mark.parametrize(("argv", "warning"), WARNED)
def test_a_run_records_the_warning(d: Path, tmp_path: Path, capsys, argv: list[str], warning: str) -> None:
    out = tmp_path / "out"
    assert main([_fill(a, d, out) for a in argv]) == 0
    assert warning in capsys.readouterr().out  # printed once, with the test's table
    records = json.loads((out / "results.json").read_text())
    assert records and all(any(warning in w for w in r["warnings"]) for r in records)


@pytest.mark.parametrize("name", [n for n in STATS if n not in ("mac", "rnsb")])
def test_every_statistic_warns_of_sets_sharing_a_vector(name: str) -> None:
    with pytest.warns(DegeneracyWarning, match=r"sets 'X' and 'Y' share 1 vector\(s\) \(row\(s\) 0 of 'X'\)"):
        STATS[name](X, np.r_[Y[:2], X[:1]], A, B)


def test_scale_free_p_values_do_not_depend_on_the_vectors_scale() -> None:
    for scale in (1e-42, 1e30, 1e-120):
        assert ripa(X * scale, Y * scale, A * scale, permutations="exact").p_value == \
            ripa(X, Y, A, permutations="exact").p_value
        assert rnd(X * scale, Y * scale, A * scale, permutations="exact").p_value == \
            rnd(X, Y, A, permutations="exact").p_value
        assert ect(X * scale, Y * scale, A * scale, permutations="exact").p_value == \
            ect(X, Y, A, permutations="exact").p_value
        assert eat(X * scale, Y * scale, A * scale, B * scale, permutations="exact").p_value == \
            eat(X, Y, A, B, permutations="exact").p_value


def test_a_new_command_writing_into_another_commands_folder_fails(d: Path, tmp_path: Path) -> None:
    """A command added later (here a stand-in, ``newcmd``) that writes through prepare_output cannot write
    into a run's, a sweep's or a debiasing's folder; its own folder it may."""
    from eatkit.run import folder

    folder.OWNERS["newcmd"] = ()
    try:
        for other in ("run", "sweep", "debias", "series", "legacy-sweep"):
            with pytest.raises(EatkitError, match="does not write into it"):
                prepare_output(d / other, "newcmd")
        mine = tmp_path / "mine"
        folder.claim_output(mine, "newcmd")
        assert prepare_output(mine, "newcmd") == mine
        with pytest.raises(EatkitError, match="was made by 'eatkit newcmd'; 'eatkit run' does not write into it"):
            prepare_output(mine, "run")
    finally:
        del folder.OWNERS["newcmd"]


def test_every_output_folder_names_its_command(d: Path) -> None:
    assert json.loads((d / "run" / OWNER_FILE).read_text())["command"] == "run"


def test_the_corpus_covers_the_classes() -> None:
    classes = [c for c, _, _ in CLI] + [c for c, _, _ in API] + ["warning"] * len(WARNED)
    assert len(classes) >= 150, len(classes)
    assert set(classes) == {"degenerate", "setting", "output", "reader", "cost", "paths", "warning"}


#: numeric command-line options written with argparse rather than declared as a ``Param`` (no useful range):
#: none since issue 36 (they were 23). A new numeric option must be a declared ``Param`` (a run option, a
#: kind's parameter or a command's, ``eatkit.command_options``) or be added here on purpose.
UNDECLARED_OPTIONS: dict[str, set[str]] = {}


def _undeclared_numeric_options(parser: Any) -> dict[str, set[str]]:
    """``{command: {flag}}`` of the numeric options of ``parser``'s commands (sub-commands included) whose
    name is no declared parameter (a run option, a kind's ``Param`` or one of the command's own)."""
    import argparse

    from eatkit.command_options import COMMAND_OPTIONS
    from eatkit.kinds import KINDS, get_kind
    from eatkit.stats.options import OPTIONS

    shared = set(OPTIONS) | {p.name for kind in KINDS for p in get_kind(kind).params}
    found: dict[str, set[str]] = {}

    def walk(command: str, sub: argparse.ArgumentParser) -> None:
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    walk(command, child)
            elif action.option_strings and action.dest not in shared | set(COMMAND_OPTIONS.get(command, ())) and (
                    action.type in (int, float)):
                found.setdefault(command, set()).add(action.option_strings[-1])

    root = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in root.choices.items():
        walk(name, sub)
    return found


#: numeric options whose name is declared (a run option's) but whose flag converts with argparse's ``int`` or
#: ``float``, not through a declaration: the name-based inventory above cannot see them (e.g. a debias
#: ``--alpha``, a ridge penalty, is not the significance level ``alpha``). None are left.
NAMESAKE_OPTIONS: dict[str, set[str]] = {}


def test_a_numeric_option_named_like_a_declared_one_is_found() -> None:
    """A numeric flag converted by argparse alone is found whatever its name (the known ones above)."""
    import argparse

    from eatkit.cli import build_parser

    def numeric(command: str, sub: argparse.ArgumentParser) -> set[str]:
        found = set()
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                found |= {f for child in action.choices.values() for f in numeric(command, child)}
            elif action.option_strings and action.type in (int, float):
                found.add(action.option_strings[-1])
        return found

    parser = build_parser()
    root = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {n: f for n, sub in root.choices.items() if (f := numeric(n, sub))} == NAMESAKE_OPTIONS
    root.choices["run"].add_argument("--seed-offset", dest="seed", type=int)  # a namesake a change might add
    assert numeric("run", root.choices["run"]) == {"--seed-offset"}


def test_a_new_numeric_option_without_a_declaration_fails() -> None:
    """issue 36: a numeric option added to a command with argparse alone (no declared legal and useful
    range) is found; the known ones are the inventory above."""
    import argparse

    from eatkit.cli import build_parser

    parser = build_parser()
    assert _undeclared_numeric_options(parser) == UNDECLARED_OPTIONS
    meta = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["meta"]
    meta.add_argument("--new-threshold", type=float)  # what a later change might add
    assert _undeclared_numeric_options(parser)["meta"] == {"--new-threshold"}


def test_a_csv_with_a_byte_order_mark_reads_as_without(tmp_path: Path, capsys) -> None:
    # Excel's UTF-8 CSV starts with a byte-order mark; the first column is still 'effect' (issue 45: misread)
    plain = "label,effect,se\na,0.5,0.1\nb,0.2,0.2\n"
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + plain.encode())
    (tmp_path / "plain.csv").write_text(plain)
    assert main(["meta", str(tmp_path / "plain.csv")]) == 0
    expected = capsys.readouterr().out
    assert main(["meta", str(tmp_path / "bom.csv")]) == 0
    assert capsys.readouterr().out == expected and "a " in expected


def test_a_refused_pickle_region_file_gives_its_error_alone(tmp_path: Path) -> None:
    # issue 45: torch printed two warnings (pickle protocol) before the one-line error
    import collections
    import pickle
    import warnings

    from eatkit.errors import EatkitError as Refused
    from eatkit.io import load_torch_weights

    pytest.importorskip("torch")
    path = tmp_path / "regions.th"
    path.write_bytes(pickle.dumps({"a.jpg": collections.Counter(a=1)}, protocol=4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(Refused, match="refusing region file"):
            load_torch_weights(path, what="region file")
    assert [str(w.message) for w in caught] == []
