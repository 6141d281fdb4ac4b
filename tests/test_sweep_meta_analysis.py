"""A sweep's random effects across models: meta-analysis.csv equals statsmodels' DerSimonian-Laird
combination of each test's models' d (variances written out here), and audit.html shows it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from eatkit.cli import main

from conftest import lazy_module
sm_meta = lazy_module("statsmodels.stats.meta_analysis")
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt:RuntimeWarning")


def test_sweep_writes_and_shows_the_random_effects_across_models(tmp_path, capsys):
    from eatkit.stimuli.loader import load_suite

    words = sorted({w for t in load_suite("weat").tests if t.id in ("weat6", "weat7")
                    for s in t.sets().values() for w in s.items})
    for seed in (1, 2, 3):
        table = np.random.default_rng(seed).normal(size=(len(words), 6)) + (seed == 3) * 0.5
        (tmp_path / f"v{seed}.txt").write_text(
            "".join(w + " " + " ".join(f"{x:.6f}" for x in row) + "\n" for w, row in zip(words, table)))
    (tmp_path / "sweep.toml").write_text(
        'models = [{ vectors = "v1.txt" }, { vectors = "v2.txt" }, { vectors = "v3.txt" }]\n'
        'suites = [{ suite = "weat", tests = ["weat6", "weat7"] }]\n'
        'settings = [{ seed = 0, n_bootstrap = 0, permutations = 99 }]\n')
    assert main(["sweep", str(tmp_path / "sweep.toml"), "-o", str(tmp_path / "out"), "--quiet"]) == 0, \
        capsys.readouterr().err
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    meta = pd.read_csv(tmp_path / "out" / "meta-analysis.csv")
    assert list(meta["test"]) == ["weat6", "weat7"] and (meta["k"] == 3).all()
    for _, row in meta.iterrows():
        part = results[(results["test"] == row["test"]) & (results["kind"] == "eat")]
        d, nx, ny = part["effect_size"].to_numpy(), part["n_x"].to_numpy(), part["n_y"].to_numpy()
        v = (nx + ny) / (nx * ny) + d**2 / (2 * (nx + ny))
        theirs = sm_meta.combine_effects(d, v, method_re="dl")
        tau2 = max(0.0, theirs.tau2)
        w = 1 / (v + tau2)
        assert row["tau2"] == pytest.approx(tau2, abs=1e-12)
        assert row["estimate"] == pytest.approx(w @ d / w.sum(), rel=1e-12)
        assert row["q"] == pytest.approx(theirs.q, rel=1e-9)
        assert row["q_p_value"] == pytest.approx(theirs.test_homogeneity().pvalue, rel=1e-9)
        if theirs.tau2 > 0:
            assert row["se"] == pytest.approx(theirs.sd_eff_w_re, rel=1e-9)
    page = (tmp_path / "out" / "audit.html").read_text(encoding="utf-8")
    section = page[page.index("<h2>Across models (random effects)</h2>"):]
    assert "weat / weat6" in section and "weat / weat7" in section
    assert f"{meta['estimate'][0]:.2f} [{meta['ci_low'][0]:.2f}, {meta['ci_high'][0]:.2f}]" in section
    # a forest plot per test from meta-analysis.json (every model's d, in results order)
    import json

    details = json.loads((tmp_path / "out" / "meta-analysis.json").read_text())
    assert [t["test"] for t in details] == ["weat6", "weat7"] and details[0]["models"] == ["v1", "v2", "v3"]
    first = results[(results["test"] == "weat6") & (results["kind"] == "eat")]["effect_size"].tolist()
    assert details[0]["result"]["effects"] == pytest.approx(first)
    assert section.count('aria-label="forest plot of weat') == 2


def test_a_series_writes_the_random_effects_across_its_points(tmp_path):
    from eatkit.analyses.base import RunOptions
    from eatkit.run.series import run_series
    from eatkit.sources.vectors import WordVectors
    from eatkit.stats.meta_analysis import random_effects, smd_variance
    from eatkit.stimuli.loader import load_suite

    words = sorted({w for t in load_suite("weat").tests if t.id in ("weat1", "weat2")
                    for s in t.sets().values() for w in s.items})
    sources = [(label, WordVectors(words, np.random.default_rng(seed).normal(size=(len(words), 6))))
               for seed, label in enumerate(["prompt a", "prompt b", "prompt c"])]
    series = run_series("weat", sources, kind="prompts", tests=["weat1", "weat2"],
                        options=RunOptions(seed=0, permutations=99, n_bootstrap=0))
    out = series.save(tmp_path / "series")
    meta = pd.read_csv(out / "meta-analysis.csv")
    assert list(meta["test"]) == ["weat1", "weat2"] and list(meta["setting"]) == ["prompts", "prompts"]
    for _, row in meta.iterrows():
        records = [r for run in series.runs for r in run.records if r.test == row["test"]]
        d = [r.effect_size for r in records]
        expected = random_effects(d, [smd_variance(x, r.n_x, r.n_y) for x, r in zip(d, records)])
        assert row["estimate"] == pytest.approx(expected.estimate, rel=1e-12)
        assert row["q_p_value"] == pytest.approx(expected.q_p_value, rel=1e-12)
        assert row["models"] == "prompt a;prompt b;prompt c"
