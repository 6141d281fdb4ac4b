"""Inside and outside, matched, on models whose bias is known (issue 43 point 6; docs/bbq.md, "A
demonstration on models whose bias is known"): five tiny causal LMs trained by examples/inside_outside.py on
corpora whose gender/occupation co-occurrence is set by a knob b, one sweep measuring each model's
representations (EAT) and answers (BBQ-style questions), and the correlation of the two levels with its CI in
ranking-correlations.csv and the audit page. The numbers docs/bbq.md prints are the ones this test computes."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import lazy_module

torch = lazy_module("torch")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "inside_outside.py"
DOC = ROOT / "docs" / "bbq.md"
pytestmark = pytest.mark.slow


def _example():
    sys.path.insert(0, str(EXAMPLE.parent))
    import inside_outside

    return inside_outside


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _doc_row(model: str, inside: dict[str, str], outside: dict[str, str], ranks: dict[str, str]) -> str:
    """A row of docs/bbq.md's table, formatted from the sweep's results.csv and rankings.csv."""
    def value(row: dict[str, str], name: str) -> str:
        return f"{float(row[name]):.3f}"

    def interval(row: dict[str, str]) -> str:
        return f"[{float(row['ci_low']):.2f}, {float(row['ci_high']):.2f}]"

    b = model.removeprefix("b=")
    return (f"| {b} | {value(inside, 'estimate')} {interval(inside)} | {float(inside['p_value']):.2g} | "
            f"{value(outside, 'estimate')} {interval(outside)} | {int(float(outside['n']))} | "
            f"{int(float(ranks['rank_d']))} | {int(float(ranks['rank_bbq']))} |")


def _exact_p(ranks: dict[str, dict[str, str]], models: list[str]) -> float:
    """The two-sided permutation p of Spearman's rho between the two rankings: the share of all orderings of
    one ranking whose |rho| reaches the observed one."""
    from itertools import permutations

    from scipy.stats import spearmanr

    first, second = ([float(ranks[m][name]) for m in models] for name in ("rank_d", "rank_bbq"))
    observed = abs(spearmanr(first, second).statistic)
    orderings = list(permutations(second))
    return sum(abs(spearmanr(first, o).statistic) >= observed - 1e-12 for o in orderings) / len(orderings)


def test_training_is_deterministic(tmp_path):
    """The same knob and seed give the same weights, bit for bit (seeded, one thread, deterministic
    algorithms); another knob gives other weights."""
    io = _example()
    states = [_state(io.train_model(tmp_path / name, b, steps=3)) for name, b in (("a", 0.5), ("b", 0.5), ("c", 1.0))]
    assert states[0].keys() == states[1].keys()
    assert all(torch.equal(states[0][k], states[1][k]) for k in states[0])
    assert not all(torch.equal(states[0][k], states[2][k]) for k in states[0])


def _state(folder: str) -> dict:
    import transformers

    return transformers.AutoModelForCausalLM.from_pretrained(folder).state_dict()


def test_the_questions_are_bbq_items_with_the_occupations_stereotyped_answer():
    """Every question reads as a BBQ item; its bias-consistent answer is the person of the occupation's
    stereotyped gender, and every occupation is asked equally often."""
    from eatkit.stimuli.bbq import derived_target, parse_item

    io = _example()
    items = [parse_item(obj, f"item {i}") for i, obj in enumerate(io.bbq_items())]
    assert len(items) == len(io.MALE_JOBS + io.FEMALE_JOBS) * 3 * io.COPIES * 2
    for item in items:
        job = item.question.removeprefix("Who is the ").removesuffix("?")
        want = f"The {io.MALE[0]}" if job in io.MALE_JOBS else f"The {io.FEMALE[0]}"
        assert item.answers[derived_target(item)] == want
    assert {items[i].answers[items[i].label] for i in range(len(items))} == {io.UNKNOWN}


def test_a_sweep_over_the_five_models_correlates_inside_and_outside(tmp_path):
    """The documented commands end to end: the example trains the five models and writes the sweep, the sweep
    measures both levels; the answers differ between models (BBQ's score is not constant), rankings.csv ranks
    the models on both, ranking-correlations.csv holds Spearman's rho of the two levels with its CI, the
    audit page shows both columns and the correlation, and docs/bbq.md prints these numbers."""
    from eatkit.cli import main

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    made = subprocess.run([sys.executable, str(EXAMPLE), str(tmp_path / "demo")], env=env, capture_output=True,
                          text=True, timeout=900)
    assert made.returncode == 0, made.stderr[-2000:]
    sweep = Path(made.stdout.strip().splitlines()[-1])
    assert sweep == tmp_path / "demo" / "inside-outside-gender.toml"
    assert main(["sweep", str(sweep), "--jobs", "0", "-q"]) == 0
    out = tmp_path / "demo" / "results"
    results = {(r["model"], r["test"]): r for r in _rows(out / "results.csv")}
    ranks = {r["model"]: r for r in _rows(out / "rankings.csv")}
    models = [f"b={b:g}" for b in _example().KNOBS]
    assert sorted(ranks) == sorted(models)
    outside = [float(results[m, "occupation-answers"]["estimate"]) for m in models]
    assert len(set(outside)) == len(models)  # the answer column is not constant
    assert outside[-1] > 0.9  # b = 1: the occupation's stereotyped person, nearly always
    inside = [abs(float(results[m, "gender-occupation"]["estimate"])) for m in models]
    assert inside[-1] > 1.5 and inside[-1] == max(inside)
    (corr,) = [r for r in _rows(out / "ranking-correlations.csv") if (r["measure_1"], r["measure_2"]) == ("d", "bbq")]
    doc = DOC.read_text(encoding="utf-8")
    for m in models:
        row = _doc_row(m, results[m, "gender-occupation"], results[m, "occupation-answers"], ranks[m])
        assert row in doc, row
    rho = (f"Spearman's rho between the two rankings: {float(corr['spearman']):.3f}, 95% CI "
           f"[{float(corr['ci_low']):.3f}, {float(corr['ci_high']):.3f}] (`ranking-correlations.csv`); exact "
           f"permutation p over all 120 orderings of the five models: {_exact_p(ranks, models):.3f} (two-sided; "
           "the file's `p_value`)")
    assert rho in " ".join(doc.split()), rho
    assert float(corr["p_value"]) == pytest.approx(_exact_p(ranks, models), abs=1e-12)  # exact, not t-approximated
    # the prose: 1 to 2 answers of 288 unread per model; the models of b <= 0.5 answer at chance
    assert all(1 <= int(float(results[m, "occupation-answers"]["unmatched"])) <= 2 for m in models)
    assert all(float(results[m, "occupation-answers"]["ci_low"]) < 0 < float(results[m, "occupation-answers"]["ci_high"])
               for m in models[:3])
    audit = (out / "audit.html").read_text(encoding="utf-8")
    assert ">d</th>" in audit and ">bbq</th>" in audit and "Spearman's rho between the measures' rankings" in audit
