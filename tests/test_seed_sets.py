"""Seed-set sensitivity (eatkit.stats.seed_sets and the "seed-sets" kind): each variant's d and p are the
EAT's with that variant's attribute sets; the spread and verdicts follow from them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from eatkit.cli import main
from eatkit.errors import EatkitError
from eatkit.stats.differential import eat
from eatkit.stats.seed_sets import seed_set_sensitivity


def test_each_variant_is_the_eat_with_its_sets():
    rng = np.random.default_rng(4)
    X, Y = rng.normal(size=(4, 6)) + 1, rng.normal(size=(4, 6))
    variants = {name: (rng.normal(size=(3, 6)) + shift, rng.normal(size=(3, 6))) for name, shift in
                (("suite", 1.0), ("alt1", 0.8), ("alt2", -1.0), ("alt3", 0.0))}
    r = seed_set_sensitivity(X, Y, variants, permutations="exact", alpha=0.1)
    d = []
    for name, (A, B) in variants.items():
        expected = eat(X, Y, A, B, permutations="exact")
        assert r.effect_sizes[name] == expected.effect_size and r.p_values[name] == expected.p_value
        assert r.significant[name] == (expected.p_value < 0.1)
        d.append(expected.effect_size)
    assert (r.d_min, r.d_max) == (min(d), max(d)) and r.d_sd == pytest.approx(np.std(d, ddof=1))
    assert r.share_same_sign == np.mean(np.sign(d) == np.sign(d[0]))
    assert r.share_significant == np.mean(list(r.significant.values()))
    signed = [(r.significant[n], np.sign(v) if r.significant[n] else 0) for n, v in r.effect_sizes.items()]
    assert r.verdicts_agree == all(v == signed[0] for v in signed)


def test_the_kind_from_the_cli(tmp_path, capsys):
    words = {"X": ["rose", "lily", "tulip"], "Y": ["ant", "fly", "wasp"], "A": ["love", "peace"],
             "B": ["war", "hate"]}
    extra = {"kind": {"A": ["gentle", "warm"], "B": ["cruel", "cold"]}, "short": {"A": ["joy"], "B": ["pain"]}}
    rng = np.random.default_rng(0)
    vocabulary = {w for ws in words.values() for w in ws} | {w for v in extra.values() for ws in v.values() for w in ws}
    vectors = {w: rng.normal(size=5) for w in sorted(vocabulary)}
    (tmp_path / "v.txt").write_text("".join(f"{w} {' '.join(f'{x:.6f}' for x in v)}\n" for w, v in vectors.items()))
    roles = {**words, **{f"{r}_{name}": ws for name, pair in extra.items() for r, ws in pair.items()}}
    suite = {"schema": "eatkit.suite/1", "id": "s", "title": "S", "tests": [
        {"id": "t", "title": "T", "kind": "seed-sets", **{r: {"name": r, "modality": "word", "items": ws}
                                                          for r, ws in roles.items()}}]}
    (tmp_path / "suite.json").write_text(json.dumps(suite))
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "suite.json"), "--vectors", str(tmp_path / "v.txt"), "--permutations", "exact",
                 "-o", str(out)]) == 0, capsys.readouterr().err
    (record,) = json.loads((out / "results.json").read_text())
    assert list(record["effect_sizes"]) == ["suite", "kind", "short"]

    def vec(ws):
        return np.array([np.float32(f"{x:.6f}") for w in ws for x in vectors[w]], dtype=np.float64).reshape(len(ws), -1)

    for name, pair in {"suite": {"A": words["A"], "B": words["B"]}, **extra}.items():
        expected = eat(vec(words["X"]), vec(words["Y"]), vec(pair["A"]), vec(pair["B"]), permutations="exact")
        assert record["effect_sizes"][name] == pytest.approx(expected.effect_size, abs=1e-9)
        assert record["p_values"][name] == expected.p_value
    assert record["set_names"]["A_short"] == "A_short"
    # a variant without its B is refused in one line
    roles.pop("B_short")
    suite["tests"][0] = {"id": "t", "title": "T", "kind": "seed-sets",
                         **{r: {"name": r, "modality": "word", "items": ws} for r, ws in roles.items()}}
    (tmp_path / "suite.json").write_text(json.dumps(suite))
    assert main(["run", str(tmp_path / "suite.json"), "--vectors", str(tmp_path / "v.txt"), "-o",
                 str(tmp_path / "out2")]) == 2
    assert "needs roles X, Y, A, B and at least one pair A_<variant>" in capsys.readouterr().err


@pytest.mark.parametrize(("call", "message"), [
    (lambda: seed_set_sensitivity(np.eye(2), np.eye(2), {"a": (np.eye(2), np.eye(2))}), "at least two variants"),
    (lambda: seed_set_sensitivity(np.eye(2), np.eye(2), {"a": (np.eye(2),), "b": (np.eye(2), np.eye(2))}),
     "must be a pair"),
])
def test_bad_inputs(call, message):
    with pytest.raises(EatkitError, match=message):
        call()
