"""Answers as data (eatkit.sources.answers) and the answers kind (eatkit.analyses.answers): the readers on
files the real tools wrote (lm-evaluation-harness 0.4.13 --log_samples; an .xlsx written by openpyxl), the
statistics against independent computations (scipy's binomtest for exact McNemar, random effects by hand),
the CLI on the harness logs in ../shared, the manifest and `eatkit verify`."""

from __future__ import annotations

import csv
import dataclasses
import gzip
import json
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from conftest import shared_path
from eatkit.cli import main
from eatkit.errors import EatkitError
from eatkit.sources.answers import FORMATS, Answer, read_answers

DATA = Path(__file__).parent / "data" / "answers"
LM_EVAL = DATA / "lm-eval"


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


# -- readers ----------------------------------------------------------------------------------------------------


def test_lm_eval_sample_logs_written_by_the_harness_are_read() -> None:
    got = read_answers(LM_EVAL)
    assert [(f.format, f.tool, f.task, f.tool_version, f.answers) for f in got.files] == [
        ("lm-eval", "lm-evaluation-harness", "hiring_gen", "0.4.13", 8),
        ("lm-eval", "lm-evaluation-harness", "hiring_mc", "0.4.13", 8)]
    assert got.files[0].model == "/tmp/answers-lmeval/tiny-gpt2"
    mc = [a for a in got.records if a.file.startswith("samples_hiring_mc")]
    raw = [json.loads(line) for line in next(LM_EVAL.glob("samples_hiring_mc_*")).read_text().splitlines()]
    for answer, row in zip(mc, raw):
        logprobs = [float(r[0]) for r in row["filtered_resps"]]
        assert answer.logprobs == tuple(logprobs)
        assert answer.choice == ["yes", "no"][int(np.argmax(logprobs))]
        assert (answer.item, answer.group, answer.pair, answer.template) == (
            str(row["doc_id"]), row["doc"]["group"], row["doc"]["pair"], row["doc"]["template"])
    gen = [a for a in got.records if a.file.startswith("samples_hiring_gen")]
    assert [a.text for a in gen] == [json.loads(line)["filtered_resps"][0] for line in
                                     next(LM_EVAL.glob("samples_hiring_gen_*")).read_text().splitlines()]
    assert {a.target for a in gen} == {"yes"}


def test_vlmevalkit_xlsx_written_by_openpyxl_reads_as_its_tsv() -> None:
    xlsx = read_answers(DATA / "vlmevalkit" / "TinyVLM_MadeUpBias.xlsx")
    tsv = read_answers(DATA / "vlmevalkit" / "TinyVLM_MadeUpBias.tsv")
    same = [dataclasses.replace(a, file="") for a in xlsx.records]
    assert same == [dataclasses.replace(a, file="") for a in tsv.records] and len(same) == 4
    assert [a.fields for a in xlsx.records] == [a.fields for a in tsv.records]
    assert [(a.item, a.choice, a.text, a.target) for a in xlsx.records][:3] == [
        ("0", "A", "A", "C"), ("1", "C", "C", "C"), ("2", "B", "B", "C")]
    assert xlsx.records[3].choice is None  # a prediction that is no option letter is kept as text
    assert (xlsx.files[0].tool, xlsx.files[0].model, xlsx.files[0].task) == ("VLMEvalKit", "TinyVLM", "MadeUpBias")


def _helm_exact_match(folder: Path) -> dict[tuple[str, str | None], float]:
    """HELM's own exact_match of each (instance, perturbation), from the per_instance_stats.json it wrote."""
    rows = json.loads(gzip.decompress((folder / "per_instance_stats.json.gz").read_bytes()))
    return {(r["instance_id"], (r.get("perturbation") or {}).get("name")):
            next(s["mean"] for s in r["stats"] if s["name"]["name"] == "exact_match") for r in rows}


def _helm_reference_scores(state: dict) -> dict[str, list[float]]:
    """HELM 0.5.16's score of each reference (metrics/basic_metrics.py, compute_logprob_and_length): the last
    len(tokenize(" " + reference)) tokens' log-probabilities summed; separate_original divides by that count,
    separate_calibrated subtracts the calibration request's sum. The tokenizer is the model's own, re-read."""
    Tokenizer = pytest.importorskip("tokenizers").Tokenizer
    tokenizer = Tokenizer.from_file(str(DATA / "helm" / "tiny-gpt2-tokenizer" / "tokenizer.json"))
    sums: dict[str, dict[tuple[int, str], tuple[float, int]]] = {}
    for r in state["request_states"]:
        reference = r["instance"]["references"][r["reference_index"]]["output"]["text"]
        n = len(tokenizer.encode(" " + reference, add_special_tokens=False).tokens)
        total = sum(t["logprob"] for t in r["result"]["completions"][0]["tokens"][-n:])
        sums.setdefault(r["instance"]["id"], {})[(r["reference_index"], r["request_mode"])] = (total, n)
    calibrated = state["adapter_spec"]["method"].endswith("calibrated")
    return {i: [v[(k, "original")][0] - v[(k, "calibration")][0] if calibrated else v[(k, "original")][0] / v[(k, "original")][1]
                for k in range(len(v) // (2 if calibrated else 1))] for i, v in sums.items()}


@pytest.mark.parametrize(("run", "answers"), [("bbq-joint-lower", 8), ("bbq-separate-original", 4),
                                              ("bbq-separate-calibrated", 4)])
def test_helm_scenario_states_written_by_helm_are_read(run: str, answers: int) -> None:
    """crfm-helm 0.5.16 on BBQ (Age) with a tiny GPT-2 (tests/data/answers/helm/README.md): each answer's choice
    is right exactly where HELM's own exact_match says so; asked reference by reference, one answer per
    instance whose logprobs are HELM's reference scores (recomputed here with the model's tokenizer)."""
    folder = DATA / "helm" / run
    got = read_answers(folder)
    (file,) = got.files
    assert (file.format, file.tool, file.model, file.answers) == ("helm", "HELM", "huggingface/tiny-gpt2", answers)
    assert file.task == json.loads((folder / "run_spec.json").read_text())["name"]
    state = json.loads(gzip.decompress((folder / "scenario_state.json.gz").read_bytes()))
    references = {r["instance"]["id"]: [x["output"]["text"] for x in r["instance"]["references"]]
                  for r in state["request_states"]}
    exact = _helm_exact_match(folder)
    assert sorted((a.item, a.condition or "") for a in got.records) == sorted((i, c or "") for i, c in exact)
    assert len(exact) == answers
    for a in got.records:
        mapping = a.fields["output_mapping"] or dict(zip("ABCDEFGH", references[a.item]))
        assert (a.choice is not None and mapping[a.choice] == a.target) == (exact[a.item, a.condition] == 1.0)
    if run != "bbq-joint-lower":
        scores = _helm_reference_scores(state)
        assert sorted(scores) == sorted(a.item for a in got.records)
        for a in got.records:
            assert list(a.logprobs) == pytest.approx(scores[a.item], abs=1e-9)
        assert {e for e in exact.values()} == {0.0, 1.0}  # right and wrong answers: the check can fail
    else:
        assert {a.condition for a in got.records} == {None, "lowercase"}  # HELM's perturbation, read as condition


def test_vlmevalkit_tables_written_by_vlmevalkit_are_read(tmp_path: Path, capsys) -> None:
    """VLMEvalKit (commit e8e78f05, its own infer_data_job and exact-matching evaluation; README.md) on a custom
    multiple-choice dataset: the prediction and evaluated tables are read (the score file and folder skipped), the
    model and dataset named from the file name without the judge; each prediction letter is right exactly where
    VLMEvalKit's hit says so, and the rate of hits from the CLI equals the Overall accuracy VLMEvalKit wrote."""
    folder = DATA / "vlmevalkit-run"
    got = read_answers(folder)
    assert [(f.tool, f.model, f.task, f.answers) for f in got.files] == [("VLMEvalKit", "TinyIdefics3", "MadeUpBiasVQA", 8)] * 2
    judged = [a for a in got.records if "exact_matching_result" in a.file]
    assert [a.choice == a.target for a in judged] == [a.fields["hit"] == "1" for a in judged]
    assert {a.fields["hit"] for a in judged} == {"0", "1"}  # right and wrong answers: the check can fail
    assert [a.text for a in judged] == [a.text for a in got.records if a not in judged]  # the same predictions
    overall = float(next(csv.DictReader(open(folder / "TinyIdefics3_MadeUpBiasVQA_acc.csv")))["Overall"])
    suite = _suite(tmp_path, outcome="hit", values=["1"], group="category")
    code, _, err = _run(["run", str(suite), "--answers", str(folder / "TinyIdefics3_MadeUpBiasVQA_exact_matching_result.xlsx"),
                         "-q", "-o", str(tmp_path / "o")], capsys)
    assert code == 0, err
    (rate,) = [r for r in _records(tmp_path / "o") if r["row"] == "rate"]
    assert (rate["n"], rate["estimate"]) == (8, pytest.approx(overall, abs=1e-15))


def test_helm_scenario_state_from_its_documented_layout(tmp_path: Path) -> None:
    """A scenario_state.json in the layout of HELM's documentation (adapter_spec, request_states with
    instance, output_mapping, result.completions): a completion naming an option."""
    def state(i: int, perturbation: str | None, text: str) -> dict:
        instance = {"id": f"id{i}", "input": {"text": "Who was rude?"}, "split": "test",
                    "references": [{"output": {"text": "Unknown"}, "tags": ["correct"]},
                                   {"output": {"text": "The man"}, "tags": []}]}
        if perturbation:
            instance["perturbation"] = {"name": perturbation}
        return {"instance": instance, "train_trial_index": 0, "output_mapping": {"A": "Unknown", "B": "The man"},
                "request": {"prompt": "..."}, "result": {"completions": [{"text": text, "logprob": -0.5}]}}

    folder = tmp_path / "bbq:subject=all,model=tiny"
    folder.mkdir()
    (folder / "scenario_state.json").write_text(json.dumps({"adapter_spec": {"model": "org/tiny"}, "request_states": [
        state(1, None, " A"), state(1, "gender", " B")]}))
    got = read_answers(folder / "scenario_state.json")
    assert [(a.item, a.pair, a.condition, a.choice, a.score, a.target) for a in got.records] == [
        ("id1", "id1", None, "A", -0.5, "Unknown"), ("id1", "id1", "gender", "B", -0.5, "Unknown")]
    assert (got.files[0].format, got.files[0].model) == ("helm", "org/tiny")


def test_plain_files_and_field_names(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"id": "q1", "race": "Black", "answer": "yes", "p": 0.7}\n'
                                      '{"id": "q2", "race": "white", "answer": "no", "p": 0.2}\n')
    got = read_answers(tmp_path / "a.jsonl", fields={"group": "race", "choice": "answer", "score": "p"})
    assert [(a.item, a.group, a.choice, a.score, a.line) for a in got.records] == [
        ("q1", "Black", "yes", 0.7, 1), ("q2", "white", "no", 0.2, 2)]
    (tmp_path / "b.csv.gz").write_bytes(gzip.compress(b"item,group,score\n1,a,0.5\n"))
    assert read_answers(tmp_path / "b.csv.gz").records[0].score == 0.5


@pytest.mark.parametrize(("name", "content", "fragment"), [
    ("empty.jsonl", b"", "is empty"),
    ("binary.jsonl", b"\x00\x01\x02\x03", "is binary, not text"),
    ("truncated.jsonl", b'{"item": "1", "choice": "yes"}\n{"item": "2", "cho', "line 2"),
    ("truncated.jsonl.gz", gzip.compress(b'{"item": "1", "choice": "yes"}\n')[:-12], "truncated"),
    ("nofield.csv", b"item,group\n1,a\n", "line 2: no answer (field choice, logprobs, score, text missing or empty)"),
    ("short.csv", b"item,choice\n1\n", "line 2 has 1 fields, the header 2"),
    ("badscore.csv", b"item,score\n1,high\n", "line 2: field score: not a number: 'high'"),
    ("answers.txt", b"hello\n", "format not recognised"),
    ("samples_t_2026-01-01T00-00-00.0.jsonl", b'{"doc_id": 0, "resps": [], "filtered_resps": []}\n',
     "line 1: field filtered_resps is not a non-empty list"),
])
def test_a_malformed_file_is_one_line_naming_file_line_and_field(tmp_path: Path, capsys, name: str, content: bytes,
                                                                 fragment: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(EatkitError, match=None) as err:
        read_answers(path)
    assert fragment in str(err.value) and "\n" not in str(err.value)
    code, out, err_text = _run(["run", str(_suite(tmp_path)), "--answers", str(path), "-q", "-o",
                                str(tmp_path / "out")], capsys)
    assert code == 2 and err_text.count("\n") == 1 and fragment in err_text
    assert not (tmp_path / "out").exists()


def test_every_format_is_named_in_the_docs() -> None:
    docs = (Path(__file__).parents[1] / "docs" / "answers.md").read_text()
    assert all(f"`{name}`" in docs for name in FORMATS)


# -- statistics against independent computations ------------------------------------------------------------------


def _suite(folder: Path, **params) -> Path:
    """A made-up answer benchmark: one test of the answers kind."""
    path = folder / "madeup.json"
    tests = [{"id": "t", "title": "T", "kind": "answers", "params": {"values": ["yes"], **params}}]
    path.write_text(json.dumps({"schema": "eatkit.suite/1", "id": "madeup", "title": "Made-up", "alternative": "two-sided",
                                "tests": tests}))
    return path


def _records(out: Path) -> list[dict]:
    return json.loads((out / "results.json").read_text())


def test_paired_choices_equal_exact_mcnemar_by_binomtest(tmp_path: Path, capsys) -> None:
    rng = np.random.default_rng(3)
    first, second = rng.random(60) < 0.55, rng.random(60) < 0.35
    rows = [{"item": f"{i}{g}", "pair": str(i), "group": "fam", "condition": g, "choice": "yes" if y else "no"}
            for i, (a, b) in enumerate(zip(first, second)) for g, y in (("x", a), ("y", b))]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    suite = _suite(tmp_path, measure="paired", paired="condition", levels=["x", "y"])
    code, out, err = _run(["run", str(suite), "--answers", str(tmp_path / "a.jsonl"), "-q", "-o",
                           str(tmp_path / "o")], capsys)
    assert code == 0, err
    (record,) = _records(tmp_path / "o")
    b, c = int(np.sum(first & ~second)), int(np.sum(~first & second))
    assert record["p_value"] == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, abs=1e-12)
    assert record["estimate"] == pytest.approx((b - c) / 60, abs=1e-15)
    assert record["row"] == "paired" and record["n"] == 60 and record["q_value"] is not None


def test_rates_and_group_differences(tmp_path: Path, capsys) -> None:
    rows = [{"item": str(i), "group": g, "choice": "yes" if i % k == 0 else "no"}
            for g, k in (("a", 2), ("b", 5)) for i in range(40)]
    (tmp_path / "a.csv").write_text("item,group,choice\n" + "".join(f"{r['item']},{r['group']},{r['choice']}\n"
                                                                  for r in rows))
    code, _, err = _run(["run", str(_suite(tmp_path)), "--answers", str(tmp_path / "a.csv"), "-q", "-o",
                         str(tmp_path / "o")], capsys)
    assert code == 0, err
    by = {(r["row"], r["group"]): r for r in _records(tmp_path / "o")}
    assert by["rate", "a"]["successes"] == 20 and by["rate", "b"]["successes"] == 8
    z = stats.norm.isf(0.025)  # Wilson 1927, independently
    p, n = 0.5, 40
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert (by["rate", "a"]["ci_low"], by["rate", "a"]["ci_high"]) == pytest.approx((centre - half, centre + half), abs=1e-12)
    assert by["difference", "a"]["p_value"] == pytest.approx(stats.fisher_exact([[20, 20], [8, 32]]).pvalue, abs=1e-12)
    assert by["difference", "a"]["estimate"] == pytest.approx(0.5 - 0.2)


def test_decision_effects_are_random_effects_of_per_question_logit_differences(tmp_path: Path, capsys) -> None:
    from eatkit.stats.meta_analysis import random_effects

    rng = np.random.default_rng(0)
    rows, by_q = [], {}
    for q in range(6):
        for gender in ("male", "female"):
            for k in range(5):
                yes = -1.0 + 0.4 * (gender == "female") + 0.3 * q / 6 + rng.normal(0, 0.5)
                rows.append({"item": f"{q}-{gender}-{k}", "question": q, "gender": gender,
                             "logprobs": [yes, 0.0]})
                by_q.setdefault(q, {}).setdefault(gender, []).append(yes)
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    suite = _suite(tmp_path, measure="decision", values=[], reference=["gender=male"], cluster="question")
    code, _, err = _run(["run", str(suite), "--answers", str(tmp_path / "d.jsonl"), "-q", "-o", str(tmp_path / "o")],
                        capsys)
    assert code == 0, err
    (record,) = _records(tmp_path / "o")
    d = [np.mean(v["female"]) - np.mean(v["male"]) for v in by_q.values()]
    var = [np.var(v["female"], ddof=1) / 5 + np.var(v["male"], ddof=1) / 5 for v in by_q.values()]
    expected = random_effects(d, var)
    assert (record["group"], record["compared"], record["n"]) == ("female", "male", 6)
    assert (record["estimate"], record["se"], record["p_value"]) == pytest.approx(
        (expected.estimate, expected.se, expected.p_value), abs=1e-12)
    assert (record["ci_low"], record["ci_high"]) == pytest.approx(expected.ci, abs=1e-12)


# -- the manifest and verify --------------------------------------------------------------------------------------


def test_manifest_records_each_answer_file_and_verify_reports_a_change(tmp_path: Path, capsys) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(LM_EVAL, logs)
    suite = _suite(tmp_path, measure="rate", values=["yes"], select=["file=" + next(logs.glob("samples_hiring_mc*")).name])
    code, _, err = _run(["run", str(suite), "--answers", str(logs), "-q", "-o", str(tmp_path / "o")], capsys)
    assert code == 0, err
    source = json.loads((tmp_path / "o" / "manifest.json").read_text())["source"]
    files = {Path(f["path"]).name: f for f in source["answer_files"]}
    mc = next(logs.glob("samples_hiring_mc*"))
    assert files[mc.name]["tool"] == "lm-evaluation-harness" and files[mc.name]["task"] == "hiring_mc"
    assert files[mc.name]["model"] == "/tmp/answers-lmeval/tiny-gpt2"
    code, out, err = _run(["verify", str(tmp_path / "o")], capsys)
    assert code == 0, out + err
    mc.write_text(mc.read_text().replace('"acc": 0.0', '"acc": 1.0', 1))
    code, out, err = _run(["verify", str(tmp_path / "o")], capsys)
    assert code != 0 and f"answer file {mc.name}" in out + err and "changed" in out + err


# -- the harness logs in ../shared ----------------------------------------------------------------------------------


def test_shaikh_cot_lowers_unknown_answers_paired_within_items(tmp_path: Path, capsys) -> None:
    root = shared_path("harness-logs/cot-bias-shaikh2023")
    model = tmp_path / "outputs" / "flan-t5-small"
    model.mkdir(parents=True)
    (tmp_path / "items").mkdir()
    for name in ("ablation_bbq_q9.json.gz", "ablation_bbq_cot_q9.json.gz"):
        (model / name).symlink_to(root / "outputs" / "flan-t5-small" / name)
    (tmp_path / "items" / "rand_sample.csv.gz").symlink_to(root / "items" / "rand_sample.csv.gz")
    code, out, err = _run(["run", "shaikh-cot", "--answers", str(model), "--tests", "bbq-cot-vs-direct", "-q", "-o",
                           str(tmp_path / "o")], capsys)
    assert code == 0, err
    pooled = next(r for r in _records(tmp_path / "o") if r["group"] == "all")
    answers = read_answers(model).records
    mean = {c: np.array([np.mean([a.choice == "unknown" for a in answers if a.pair == p and a.condition == c])
                         for p in sorted({a.pair for a in answers})]) for c in ("cot", "direct")}
    assert pooled["n"] == 1100 and pooled["estimate"] == pytest.approx(float(np.mean(mean["cot"] - mean["direct"])))


def test_decodingtrust_agreement_per_group_and_system_prompt(tmp_path: Path, capsys) -> None:
    root = shared_path("harness-logs/decodingtrust-stereotype")
    (tmp_path / "dataset").mkdir()
    (tmp_path / "dataset" / "user_prompts.csv.gz").symlink_to(root / "dataset" / "user_prompts.csv.gz")
    for condition in ("benign", "targeted"):
        folder = tmp_path / "generations" / "gpt-4-0314" / condition
        folder.mkdir(parents=True)
        (folder / "gpt-4-0314_hiv.csv.gz").symlink_to(root / "generations" / "gpt-4-0314" / condition /
                                                      "gpt-4-0314_hiv.csv.gz")
    code, out, err = _run(["run", "decodingtrust-stereotype", "--answers", str(tmp_path / "generations" / "gpt-4-0314"),
                           "--tests", "agreement,targeted-vs-benign", "-q", "-o", str(tmp_path / "o")], capsys)
    assert code == 0, err
    records = _records(tmp_path / "o")
    rates = [r for r in records if r["row"] == "rate"]
    assert {r["split"] for r in rates} == {"benign", "targeted"} and len(rates) == 48
    assert all(r["n"] == 75 and r["clusters"] == 3 for r in rates)  # 3 templates x 25 samples per group
    raw = [a for a in read_answers(tmp_path / "generations" / "gpt-4-0314").records
           if a.condition == "targeted" and a.group == "Homosexuals"]
    homosexuals = next(r for r in rates if r["split"] == "targeted" and r["group"] == "Homosexuals")
    assert homosexuals["estimate"] == pytest.approx(np.mean([a.score == 1 for a in raw]))
    pooled = next(r for r in records if r["row"] == "paired" and r["group"] == "all")
    assert pooled["n"] == 72 and pooled["compared"] == "targeted - benign"


def test_visbias_descriptions_name_race_per_group(tmp_path: Path, capsys) -> None:
    path = shared_path("harness-logs/visbias/image_description/Gemini/doctor.csv.gz")
    code, out, err = _run(["run", "visbias-descriptions", "--answers", str(path), "--answer-field", "group=race",
                           "--tests", "race-mentioned", "-q", "-o", str(tmp_path / "o")], capsys)
    assert code == 0, err
    from eatkit.stimuli.lexicon import load_lexicon

    lexicon = load_lexicon("race-ethnicity")
    answers = read_answers(path, fields={"group": "race"}).records
    for r in _records(tmp_path / "o"):
        if r["row"] == "rate":
            mine = [a for a in answers if a.group == r["group"]]
            assert r["successes"] == sum(lexicon.match(a.text) is not None for a in mine) and r["n"] == len(mine)


# -- the recipe: a new answer benchmark is a suite file plus at most a declared scorer ---------------------------


SCORER = '''"""A made-up benchmark's scorer: does the answer say please."""


def politeness(argument):
    return lambda answer: "polite" if "please" in (answer.text or "").lower() else "curt"
'''


def test_a_new_answer_benchmark_is_a_suite_file_and_a_scorer(tmp_path: Path, capsys, monkeypatch) -> None:
    (tmp_path / "polite_scorer.py").write_text(SCORER)  # the benchmark's one declared scorer, a module of its own
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}:{os.environ.get('PYTHONPATH', '')}")  # sweep cells' processes
    suite = tmp_path / "polite-requests.json"
    suite.write_text(json.dumps({"schema": "eatkit.suite/1", "id": "polite-requests", "title": "Polite requests",
                                 "alternative": "two-sided", "tests": [
        {"id": "politeness", "title": "Polite answers per addressee", "kind": "answers",
         "params": {"measure": "rate", "outcome": "score", "values": ["polite"], "scorer": "polite_scorer:politeness"}},
        {"id": "swap", "title": "Polite answers: the same request to a woman minus to a man", "kind": "answers",
         "params": {"measure": "paired", "outcome": "score", "values": ["polite"], "scorer": "polite_scorer:politeness",
                    "paired": "group", "levels": ["woman", "man"], "group": "template"}}]}))
    for model, polite_to_women in (("m1", 18), ("m2", 9)):
        rows = ["item,pair,template,group,text"]
        for i in range(20):
            rows += [f"{i}w,{i},ask,woman,{'Please sit.' if i < polite_to_women else 'Sit.'}",
                     f"{i}m,{i},ask,man,{'Please sit.' if i < 5 else 'Sit.'}"]
        (tmp_path / f"{model}.csv").write_text("\n".join(rows) + "\n")
    code, out, err = _run(["run", str(suite), "--answers", str(tmp_path / "m1.csv"), "-o", str(tmp_path / "run")],
                          capsys)
    assert code == 0, err
    assert "politeness" in out and "woman - man" in out  # the console table
    table = (tmp_path / "run" / "results.csv").read_text()
    assert "polite-requests" in table and "paired" in table
    paired = next(r for r in _records(tmp_path / "run") if r["row"] == "paired")
    assert paired["estimate"] == pytest.approx((18 - 5) / 20)
    assert paired["p_value"] == pytest.approx(stats.binomtest(13, 13, 0.5).pvalue, abs=1e-12)
    code, _, err = _run(["report", str(tmp_path / "run"), "--html", str(tmp_path / "report.html")], capsys)
    assert code == 0, err
    html = (tmp_path / "report.html").read_text()
    assert "Answers" in html and "politeness" in html and "woman - man" in html and "q_value" in html
    (tmp_path / "sweep.toml").write_text(
        f'models = [{{ label = "m1", answers = "m1.csv" }}, {{ label = "m2", answers = "m2.csv" }}]\n'
        f'suites = ["polite-requests.json"]\n')
    code, out, err = _run(["sweep", str(tmp_path / "sweep.toml"), "-o", str(tmp_path / "sweep")], capsys)
    assert code == 0, out + err
    rankings = (tmp_path / "sweep" / "rankings.csv").read_text()
    assert "answers" in rankings and "m1" in rankings and "m2" in rankings
    import pandas as pd

    table = pd.read_csv(tmp_path / "sweep" / "rankings.csv")
    ranks = dict(zip(table["model"], table["rank_answers"]))
    assert ranks["m1"] > ranks["m2"]  # m1 is polite to women in 18 of 20 requests, m2 in 9: the larger bias
    values = dict(zip(table["model"], table["answers"]))
    assert values["m1"] == pytest.approx((18 - 5) / 20) and values["m2"] == pytest.approx((9 - 5) / 20)


def test_the_run_help_names_every_format(capsys) -> None:
    code, out, _ = _run(["run", "--help"], capsys)
    assert code == 0
    flat = " ".join(out.split())
    assert all(name in flat[flat.index("--answer-format"):] for name in FORMATS)


def test_lmms_eval_sample_log_written_by_the_harness_is_read() -> None:
    """lmms-eval 0.7.3 (its `dummy` model answering "yes"); its samples hold no document, only doc_id."""
    got = read_answers(DATA / "lmms-eval")
    (file,) = got.files
    assert (file.format, file.tool, file.task, file.model, file.answers) == (
        "lmms-eval", "lmms-eval", "hiring_lmms", "dummy response=yes", 8)
    raw = [json.loads(line) for line in next((DATA / "lmms-eval").glob("*_samples_*")).read_text().splitlines()]
    assert [(a.item, a.text, a.target) for a in got.records] == [(str(r["doc_id"]), r["filtered_resps"], r["target"])
                                                                 for r in raw]
    assert got.records[0].fields["input"].startswith("Question: Maria applied")
