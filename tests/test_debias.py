"""Debiasing (eatkit.stats.debias, eatkit.run.debias, ``eatkit debias``): Hard Debias's guarantees on GloVe,
Double-Hard and HSR against their definitions, files and manifest, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from eatkit.errors import EatkitError
from eatkit.run.debias import debias, load_word_lists
from eatkit.sources.vectors import load_word_vectors
from eatkit.stats import debias as sd
from tests.conftest import shared_path


@pytest.fixture(scope="module")
def glove():
    return load_word_vectors(shared_path("glove840b-weat", "glove.840B.300d.weat-items.txt"))


def test_hard_debias_neutralises_and_equalises(glove):
    lists = load_word_lists("gender")
    result = debias(glove, "hard", lists)
    out, g = result.vectors.vectors, result.info.direction
    index = {w: i for i, w in enumerate(glove.words)}
    specific = lists.gender_words()
    neutral = [i for i, w in enumerate(glove.words) if w not in specific]
    assert result.neutral == len(neutral) > 400
    assert np.abs(out[neutral] @ g).max() < 1e-10  # every neutral word: no projection on g
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0)
    pairs = [(index[a], index[b]) for a, b in lists.equalize if a in index and b in index]
    assert len(pairs) >= 5
    for a, b in pairs:
        assert out[a] @ g == pytest.approx(-(out[b] @ g), abs=1e-12)
        # every neutral word is equidistant from the two words of an equalised pair
        gap = np.linalg.norm(out[neutral] - out[a], axis=1) - np.linalg.norm(out[neutral] - out[b], axis=1)
        assert np.abs(gap).max() < 1e-10
    assert "Mary/John" in result.dropped["definitional"]  # recorded, not silently dropped


def test_double_hard_removes_the_chosen_component_then_hard_debiases(glove):
    lists = load_word_lists("gender")
    result = debias(glove, "double-hard", lists, n_words=50, n_components=4, seed=0)
    details = result.info.details
    assert details["component"] == int(np.argmin(details["alignments"]))
    assert all(0.5 <= a <= 1.0 for a in details["alignments"])
    specific = lists.gender_words()
    neutral = [i for i, w in enumerate(glove.words) if w not in specific]
    assert np.abs(result.vectors.vectors[neutral] @ result.info.direction).max() < 1e-10
    again = debias(glove, "double-hard", lists, n_words=50, n_components=4, seed=0)
    assert np.array_equal(again.vectors.vectors, result.vectors.vectors)


def test_half_sibling_regression_equals_the_ridge_solution():
    rng = np.random.default_rng(5)
    V = rng.normal(size=(12, 6))
    gender, neutral = np.arange(4), np.arange(4, 12)
    out, _ = sd.half_sibling_regression(V, gender, neutral, alpha=2.0)
    G = V[gender].T
    for i in neutral:  # each non-gender vector minus its ridge prediction from the gender vectors
        w = np.linalg.lstsq(np.vstack([G, np.sqrt(2.0) * np.eye(4)]), np.r_[V[i], np.zeros(4)], rcond=None)[0]
        assert np.allclose(out[i], V[i] - G @ w, atol=1e-12)
    assert np.array_equal(out[gender], V[gender])


def test_cli_writes_vectors_manifest_and_prints_weat_6_to_8_before_after(tmp_path, capsys):
    from eatkit.cli import main

    vectors = shared_path("glove840b-weat", "glove.840B.300d.weat-items.txt")
    out = tmp_path / "debiased"
    code = main(["debias", "--vectors", str(vectors), "--method", "hard", "--seed", "0", "-o", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    lines = [line.split() for line in captured.out.splitlines()]
    table = {(row[0], row[1]): (float(row[2]), float(row[3])) for row in lines if len(row) == 4 and row[1] == "d"}
    assert set(table) == {("weat6", "d"), ("weat7", "d"), ("weat8", "d")}
    assert table[("weat6", "d")][0] == pytest.approx(1.81, abs=0.01)  # Caliskan et al. 2017: 1.81
    assert all(abs(after) < abs(before) for before, after in table.values())
    assert "dropped from the definitional list" in captured.err
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["method"] == "hard" and manifest["input"]["sha256"] and manifest["word_lists"]["sha256"]
    assert manifest["word_lists"]["dropped"]["definitional"]
    lines = (out / "vectors.txt").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "457 300"
    reread = np.array([line.split(" ")[1:] for line in lines[1:]], dtype=np.float64)
    again = debias(load_word_vectors(vectors), "hard", load_word_lists("gender")).vectors.vectors
    assert np.array_equal(reread, again)  # written with 17 digits: float64 read back bit for bit
    assert load_word_vectors(out / "vectors.txt").words == load_word_vectors(vectors).words


def test_bad_word_lists(tmp_path):
    bad = tmp_path / "lists.json"
    bad.write_text(json.dumps({"schema": "eatkit.debias-words/1", "definitional": [["a"]]}))
    with pytest.raises(EatkitError, match="'definitional' must be a non-empty list of word pairs"):
        load_word_lists(bad)
    with pytest.raises(EatkitError, match="no such bundled list"):
        load_word_lists(tmp_path / "missing.json")


def test_ran_gradient_equals_finite_differences():
    rng = np.random.default_rng(3)
    P, W = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    S, M = rng.normal(size=(4, 3, 5)), (rng.random((4, 3)) < 0.7).astype(float)
    g = rng.normal(size=5); g /= np.linalg.norm(g)
    weights = (0.2, 0.5, 0.3)
    _, grad = sd._ran_objective(P, W, S, M, g, weights)
    h = 1e-6
    for i in range(4):
        for j in range(5):
            up, down = P.copy(), P.copy()
            up[i, j] += h
            down[i, j] -= h
            numeric = (sd._ran_objective(up, W, S, M, g, weights)[0][i]
                       - sd._ran_objective(down, W, S, M, g, weights)[0][i]) / (2 * h)
            assert grad[i, j] == pytest.approx(numeric, abs=1e-6)


def test_ran_reduces_the_projection_on_g_and_stays_near_the_originals(glove):
    lists = load_word_lists("gender")
    index = {w: i for i, w in enumerate(glove.words)}
    pairs = [(index[a], index[b]) for a, b in lists.definitional if a in index and b in index]
    specific = lists.gender_words()
    neutral = [i for i, w in enumerate(glove.words) if w not in specific]
    out, info = sd.repulsion_attraction_neutralisation(glove.vectors, pairs, neutral, n_neighbours=20, epochs=100)
    before = glove.vectors[neutral] / np.linalg.norm(glove.vectors[neutral], axis=1, keepdims=True)
    after, g = out[neutral], info.direction
    assert np.abs(after @ g).mean() < 0.5 * np.abs(before @ g).mean()
    cos = np.einsum("ij,ij->i", after, before) / np.linalg.norm(after, axis=1)
    assert cos.mean() > 0.9 and info.details["mean_repulsion_set"] > 0


def test_a_suite_the_vectors_cannot_embed_is_refused_before_debiasing(tmp_path, capsys, monkeypatch):
    """issue 36: RAN on 20,000 words ran for six minutes before the suite's out-of-vocabulary error; the
    before-measurement comes first now, so the error comes before any debiasing (none is called here)."""
    from eatkit.cli import main

    def never(*args, **kwargs):
        raise AssertionError("debiased before the suite was checked")

    words = ("he", "she", "man", "woman", "table", "chair")
    (tmp_path / "v.txt").write_text("".join(f"{w} {i} 1 {i * i}\n" for i, w in enumerate(words)))
    monkeypatch.setattr("eatkit.stats.debias.repulsion_attraction_neutralisation", never)
    code = main(["debias", "--vectors", str(tmp_path / "v.txt"), "--method", "ran", "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "out-of-vocabulary words in set" in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
