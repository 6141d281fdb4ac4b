"""Geometry tests end to end: analysis sets -> eatkit run (with --compare-model) -> records and report;
eatkit analysis-set and eatkit finetune on the command line, and their one-line errors (exit 2)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from eatkit.analyses import record_from_json
from eatkit.cli import main
from eatkit.errors import EatkitError
from eatkit.run.runner import run_suite
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stats import geometry_scores, spearman_by_group
from eatkit.stimuli.analysis_sets import folder_analysis_set
from eatkit.stimuli.schema import parse_suite
from tiny_coco import write_coco


class Planted(EmbeddingSource):
    """Image features with a planted geometry: class c's images are centre_c + noise_c * z (seeded)."""

    id = "planted"
    modalities = frozenset({"image"})

    def __init__(self, spread: dict[str, float]):
        self.spread = spread

    def embed(self, stimuli):
        rng = np.random.default_rng(sum(map(ord, stimuli.name)))
        n = 6 if stimuli.name != "random" else 8
        centre = rng.normal(size=16)
        vectors = centre + self.spread[stimuli.name] * rng.normal(size=(n, 16))
        return Embedded(vectors, tuple(f"{stimuli.category}/{i}.png" for i in range(n)))

    def manifest(self):
        return {"model": "planted"}


def _suite(tmp_path, names):
    root = tmp_path / "classes"
    for name in names:
        (root / name).mkdir(parents=True)
        for i in range(2):
            (root / name / f"{i}.png").write_bytes(b"")
    aset = folder_analysis_set(root)
    return parse_suite(json.dumps(aset.suite()), "suite.json"), root


def test_run_suite_geometry_records(tmp_path):
    names = ["car", "car+man", "car+woman", "man", "random", "woman"]
    suite, _ = _suite(tmp_path, names)
    test = suite.tests[0]
    assert test.kind == "geometry" and [s.name for s in test.sets().values()] == names
    spread = {"car": 0.3, "car+man": 0.5, "car+woman": 0.8, "man": 0.4, "random": 3.0, "woman": 0.6}
    run = run_suite(suite, Planted(spread), seed=3, permutations=500, params={"iterations": 100, "label": "p"})
    (record,) = run.records
    assert record.kind == "geometry" and record.models == ["p"] and record.reference == "random"
    assert record.classes == {"car": 6, "car+man": 6, "car+woman": 6, "man": 6, "random": 8, "woman": 6}
    # the scores are eatkit.stats.geometry_scores on the planted features with the test's seed
    source = Planted(spread)
    classes = {n: source.embed(s).vectors for n, s in ((s.name, s) for s in test.sets().values())}
    pairs = [tuple(p) for p in test.param("pairs")]
    expected = geometry_scores(classes, pairs=pairs, iterations=100, rng=record.seed)
    car = next(s for s in record.scores if s["key"] == "car")
    assert car["mean"] == expected.intra["car"].mean and car["min"] == expected.intra["car"].min
    vs = next(s for s in record.scores if s["key"] == "car+man vs car")
    assert vs["mean"] == expected.inter[("car+man", "car")].mean
    # the tight classes are more similar within than the random class, significantly
    comp = {c["classes"][0]: c for c in record.comparisons}
    assert set(comp) == set(names) - {"random"}
    assert all(c["difference"] > 0 and c["p_permutation"] < 0.05 and c["q_value"] >= c["p_permutation"]
               for c in comp.values())
    np.testing.assert_array_equal(run.similarities["geometry"]["p|car"], expected.intra["car"].values)
    # records round-trip through results.json
    out = run.save(tmp_path / "out")
    (data,) = json.loads((out / "results.json").read_text())
    assert record_from_json(data) == record
    assert "p_t" not in comp["car"]  # the thesis's one-sample t-test only when asked for


def test_one_sample_t_test_beside_the_permutation_test(tmp_path, capsys):
    from scipy import stats as sps

    names = ["car", "man", "random", "woman"]
    suite, _ = _suite(tmp_path, names)
    spread = {"car": 0.3, "man": 0.4, "random": 3.0, "woman": 0.6}
    run = run_suite(suite, Planted(spread), seed=3, permutations=200,
                    params={"iterations": 50, "label": "p", "t_test": "one-sample"})
    (record,) = run.records
    arrays = run.similarities["geometry"]
    for c in record.comparisons:
        name = c["classes"][0]
        values, mu = arrays[f"p|{name}"], np.mean(arrays["p|random"])
        # t = (mean - mu0) / (s / sqrt(n)), s with ddof 1, Student's t with n - 1 df
        t = (values.mean() - mu) / (values.std(ddof=1) / np.sqrt(values.size))
        assert c["t_one_sample"] == pytest.approx(t, rel=1e-10) and c["df_one_sample"] == 49
        assert c["p_t"] == pytest.approx(2 * sps.t.sf(abs(t), 49), rel=1e-9)
    with pytest.raises(EatkitError, match="t_test must be one of off, one-sample, got 'sometimes'"):
        run_suite(suite, Planted(spread), seed=3, params={"t_test": "sometimes"})


def test_spearman_between_models_and_report(tmp_path, monkeypatch):
    from eatkit.analyses import geometry

    names = ["a", "b", "c", "d", "random"]
    suite, _ = _suite(tmp_path, names)
    first = Planted({"a": 0.2, "b": 0.4, "c": 0.6, "d": 0.8, "random": 2.0})
    second = Planted({"a": 0.3, "b": 0.2, "c": 0.9, "d": 0.7, "random": 2.0})
    monkeypatch.setattr(geometry, "_compare_source", lambda spec, options: second)
    run = run_suite(suite, first, seed=1, permutations=200,
                    params={"iterations": 50, "label": "one", "compare": ["two"]})
    (record,) = run.records
    assert record.models == ["one", "two"] and len(record.comparisons) == 8
    means = {m: {s["key"]: s["mean"] for s in record.scores if s["model"] == m} for m in record.models}
    expected = spearman_by_group(means["one"], means["two"], {"classes": names})[0]
    got = next(s for s in record.spearman if s["group"] == "classes")
    assert (got["rho"], got["p_value"], got["first"], got["second"]) == (expected.rho, expected.p_value, "one", "two")
    out = run.save(tmp_path / "out")
    from eatkit.report import write_html_report
    from eatkit.report.geometry import scores_csv, scores_latex, spearman_grid

    html = write_html_report([out], tmp_path / "r.html").read_text()
    assert "Feature-space geometry" in html and "Spearman grid" in html and "<svg" in html
    assert scores_csv([record]).splitlines()[0].startswith("test,model,key,kind,mean")
    assert "\\toprule" in scores_latex(record) and "a vs b" in scores_latex(record)
    models, grid = spearman_grid(record)["classes"]
    assert grid[0][1] == grid[1][0] == expected.rho and grid[0][0] == 1.0


def test_geometry_options_refused_for_other_kinds(tmp_path, capsys):
    code, _, err = _cli(["run", "weat", "--model", "glove-6b-50d", "--iterations", "10", "-o", tmp_path], capsys)
    assert code == 2 and err == "eatkit: error: --iterations applies to geometry tests only\n"


def _cli(args, capsys):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


IMAGES = {i: (["car"] if i < 4 else ["car", "person"] if i < 8 else ["person"] if i < 12 else [],
              ["a man"] if i in (4, 5, 8, 9) else ["a woman"] if i in (6, 7, 10, 11) else ["a thing"])
          for i in range(16)}


@pytest.mark.slow
def test_cli_analysis_set_finetune_and_compare(tmp_path, capsys):
    pytest.importorskip("timm")
    instances, captions, images = write_coco(tmp_path, IMAGES, size=20)
    code, out, err = _cli(["analysis-set", "coco", "--instances", instances, "--captions", captions, "--images",
                           images, "--objects", "car", "--no-control", "-o", tmp_path / "aset"], capsys)
    assert code == 0, err
    assert "car+woman      2 images (2 available)" in out
    ckpts = [tmp_path / "ft0.safetensors", tmp_path / "ft1.safetensors"]
    code, out, err = _cli(["finetune", "--model", "timm:test_resnet", "--no-pretrained", "--instances", instances,
                           "--images", images, "--epochs", "1", "--batch-size", "8", "--categories", "person,car",
                           "-o", ckpts[0]], capsys)
    assert code == 0, err
    assert "epoch 1/1" in out and "final: mAP" in out and ckpts[0].is_file()
    # the "pretrained" side: the same architecture with other weights, saved as a checkpoint
    import timm

    from eatkit.encoders.checkpoints import save_checkpoint

    save_checkpoint(ckpts[1], timm.create_model("test_resnet", pretrained=False, num_classes=2),
                    {"model": "timm:test_resnet", "architecture": "timm:test_resnet", "num_classes": 2})
    code, out, err = _cli(["run", tmp_path / "aset" / "suite.json", "--model", "timm:test_resnet", "--weights",
                           ckpts[0], "--compare-model", f"timm:test_resnet@{ckpts[1]}", "--images",
                           tmp_path / "aset" / "images", "--iterations", "20", "--seed", "0", "--no-cache",
                           "-o", tmp_path / "run"], capsys)
    assert code == 0, err
    (record,) = json.loads((tmp_path / "run" / "results.json").read_text())
    assert record["models"] == [f"timm:test_resnet@{ckpts[0]}", f"timm:test_resnet@{ckpts[1]}"]
    assert {s["group"] for s in record["spearman"]} == {"individual", "paired", "gender+object vs object",
                                                        "vs random"}
    assert record["compare_sources"][0]["weights"].startswith("checkpoint ft1.safetensors sha256:")
    # a checkpoint that does not fit the model: one line, exit 2
    code, out, err = _cli(["run", tmp_path / "aset" / "suite.json", "--model", "timm:test_vit", "--weights",
                           ckpts[0], "--images", tmp_path / "aset" / "images", "-o", tmp_path / "bad"], capsys)
    assert code == 2 and err.count("\n") == 1 and "does not fit timm:test_vit" in err


def test_cli_bad_input_one_line(tmp_path, capsys):
    instances, captions, images = write_coco(tmp_path, IMAGES, pixels=False)
    base = ["analysis-set", "coco", "--captions", captions, "--images", images, "-o", tmp_path / "a"]
    code, _, err = _cli(base + ["--instances", captions, "--objects", "car"], capsys)
    assert code == 2 and err.startswith("eatkit: error: ") and "is not a COCO instances file" in err
    assert err.count("\n") == 1
    code, _, err = _cli(base + ["--instances", instances, "--objects", "surfboard"], capsys)
    assert code == 2 and "category 'surfboard' is not in" in err and err.count("\n") == 1
    code, _, err = _cli(base + ["--instances", instances, "--objects", "car"], capsys)   # no stop-sign images
    assert code == 2 and "class 'stop sign' has 0 image(s)" in err and err.count("\n") == 1
    code, _, err = _cli(["finetune", "--model", "timm:test_resnet", "--instances", captions, "--images", images,
                         "-o", tmp_path / "x.safetensors"], capsys)
    assert code == 2 and "is not a COCO instances file" in err and err.count("\n") == 1
