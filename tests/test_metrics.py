"""The field's metrics (eatkit.metrics, eatkit.stats.metrics): WEFE 1.0.1's numbers, brute-force
permutation references, closed forms, and bad input."""

from __future__ import annotations

import json
import math
from itertools import combinations, product
from pathlib import Path

import numpy as np
import pytest

import eatkit.metrics as metrics
from eatkit.errors import EatkitError
from eatkit.stats import metrics as sm
from tests.conftest import shared_path

REFERENCE = json.loads((Path(__file__).parent / "data" / "wefe" / "reference.json").read_text(encoding="utf-8"))


def _glove() -> dict[str, np.ndarray]:
    path = shared_path("glove840b-weat", "glove.840B.300d.weat-items.txt")
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.rstrip().split(" ")
        out[parts[0]] = np.array(parts[1:], dtype=np.float64)
    return out


@pytest.mark.parametrize("name", ["synthetic", *REFERENCE["queries"]])
def test_metrics_equal_wefe_101(name):
    query = REFERENCE["synthetic"] if name == "synthetic" else REFERENCE["queries"][name]
    vectors = ({w: np.array(v) for w, v in query["vectors"].items()} if name == "synthetic" else _glove())
    X, Y, A, B = (np.stack([vectors[w] for w in query["sets"][r]]) for r in "XYAB")
    AB = np.concatenate([A, B])
    ref = query["values"]
    kw = dict(permutations=10, rng=0)
    assert metrics.rnd([X, Y], [AB], **kw).value == pytest.approx(ref["rnd_euclidean"], abs=1e-6)
    assert metrics.rnd([X, Y], [AB], distance="cosine", **kw).value == pytest.approx(ref["rnd_cosine"], abs=1e-6)
    assert metrics.ect([X, Y], [AB], **kw).value == pytest.approx(ref["ect"], abs=1e-6)
    assert metrics.ripa([X, Y], [AB], **kw).value == pytest.approx(ref["ripa"], abs=1e-6)
    assert metrics.mac([X, Y], [A, B]).value == pytest.approx(ref["mac"], abs=1e-6)
    # RNSB: a mean over 20 seeded fits, inside the range of WEFE's 20 seeded runs
    got = metrics.rnsb([X, Y], [A, B], n_fits=20, rng=0)
    assert ref["rnsb"]["min"] <= got.value <= ref["rnsb"]["max"]
    assert got.spread["n_fits"] == 20 and got.spread["min"] <= got.value <= got.spread["max"]


def _small(seed=1, sizes=(3, 4, 5), d=4):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n, d)) for n in sizes]


def test_rnd_and_ect_exact_p_equal_brute_force_enumeration():
    X, Y, A = _small()
    T = np.concatenate([X, Y])
    for name, fn in (("rnd", lambda x, y: sm.rnd(x, y, A, permutations=1).value),
                     ("ect", lambda x, y: sm.ect(x, y, A, permutations=1).value)):
        observed = fn(X, Y)
        null = [fn(T[list(s)], T[[i for i in range(7) if i not in s]]) for s in combinations(range(7), 3)]
        result = getattr(sm, name)(X, Y, A, permutations="exact", alternative="greater")
        assert result.exact and result.n_partitions == 35
        assert result.p_values["greater"] == sum(v >= observed - 1e-12 for v in null) / 35
        assert result.p_values["less"] == sum(v <= observed + 1e-12 for v in null) / 35


def test_ripa_sign_flip_p_equals_brute_force_and_monte_carlo_is_seeded():
    X, Y, A = _small(sizes=(5, 5, 3))
    terms = sm._ripa_terms(X, Y, A)
    observed = terms.mean()
    null = [np.dot(s, terms) / 5 for s in product((1, -1), repeat=5)]
    result = sm.ripa(X, Y, A, permutations="exact")
    assert result.n_partitions == 32
    assert result.p_values["two-sided"] == sum(abs(v) >= abs(observed) - 1e-12 for v in null) / 32
    a, b = (sm.ripa(X, Y, A, permutations=500, rng=4) for _ in range(2))
    assert a.p_value == b.p_value and a.seed == 4 and not a.exact and a.n_permutations == 500


def test_direct_bias_closed_form_and_bootstrap_ci():
    # pairs differ along e1 only: g = e1, so DirectBias_1 is the mean |cos(w, e1)|
    X = np.array([[2.0, 1.0, 0.0], [2.0, 0.0, 1.0]])
    Y = np.array([[-2.0, 1.0, 0.0], [-2.0, 0.0, 1.0]])
    N = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0], [3.0, 0.0, 4.0]])
    result = sm.direct_bias(X, Y, N, n_bootstrap=200, rng=0)
    assert result.value == pytest.approx((1 / math.sqrt(2) + 0 + 0.6) / 3, abs=1e-12)
    assert sm.direct_bias(X, Y, N, c=2).value == pytest.approx((0.5 + 0 + 0.36) / 3, abs=1e-12)
    assert result.ci[0] <= result.value <= result.ci[1] and result.seed == 0


def test_bootstrap_ci_contains_the_value_and_repeats_with_the_seed():
    X, Y, A = _small(sizes=(8, 8, 6))
    a = sm.rnd(X, Y, A, n_bootstrap=300, rng=3)
    b = sm.rnd(X, Y, A, n_bootstrap=300, rng=3)
    assert a.ci == b.ci and a.ci[0] < a.value < a.ci[1]
    m = metrics.mac([X, Y], [A], n_bootstrap=300, rng=3)
    assert m.ci[0] < m.value < m.ci[1] and m.p_value is None


def test_rnsb_single_fit_without_holdout_is_deterministic_and_zero_for_symmetric_targets():
    A = np.array([[1.0, 0.0], [1.0, 0.2]]); B = np.array([[-1.0, 0.0], [-1.0, 0.2]])
    T = [np.array([[0.0, 1.0], [0.0, 2.0]])]  # every target equally negative: P uniform, KL 0
    result = sm.rnsb(T, A, B, holdout=False)
    assert result.value == pytest.approx(0.0, abs=1e-12) and result.spread["n_fits"] == 1


class _KeyedVectors:
    """A stand-in with gensim KeyedVectors' duck-typed interface (gensim is not needed)."""

    def __init__(self, words, table):
        self.key_to_index = {w: i for i, w in enumerate(words)}
        self.vectors = table


def test_model_objects_by_duck_typing_and_missing_words():
    X, Y, A = _small(sizes=(2, 2, 3))
    words = ["x0", "x1", "y0", "y1", "a0", "a1", "a2"]
    kv = _KeyedVectors(words, np.concatenate([X, Y, A]))
    got = metrics.rnd([["x0", "x1"], ["y0", "y1"]], [["a0", "a1", "a2"]], model=kv, permutations=1)
    assert got.value == sm.rnd(X, Y, A, permutations=1).value

    class Wefe:  # WEFE's WordEmbeddingModel keeps the KeyedVectors in .wv
        wv = kv

    with pytest.raises(EatkitError, match="lacks: zz"):
        metrics.mac([["x0", "zz"]], [["a0"]], model=Wefe())
    dropped = metrics.mac([["x0", "zz"]], [["a0"]], model=Wefe(), oov="drop")
    assert dropped.dropped == {"T1": ["zz"]} and math.isfinite(dropped.value)


@pytest.mark.parametrize("call, message", [
    (lambda X, Y, A: metrics.rnd([X], [A]), "RND takes 2 target set"),
    (lambda X, Y, A: metrics.rnsb([X, Y], [A]), "RNSB takes 2 attribute set"),
    (lambda X, Y, A: metrics.ect([X, Y], [np.full_like(A, np.nan)]), "non-finite"),
    (lambda X, Y, A: metrics.mac([X, np.zeros_like(Y)], [A]), "zero-norm"),
    (lambda X, Y, A: metrics.ripa([X, Y[:, :2]], [A]), "dimension"),
    (lambda X, Y, A: metrics.ripa([X, Y[:2]], [A]), "pairs the targets row by row"),
    (lambda X, Y, A: metrics.rnd([X, Y], [A], distance="manhattan"), "distance must be one of"),
    (lambda X, Y, A: metrics.rnd([X, Y], [A], permutations=0), "permutations must be"),
    (lambda X, Y, A: metrics.direct_bias([X, Y], [A], c=0), r"c must be a number in \(0, 10000\], got 0.0"),
    (lambda X, Y, A: metrics.rnd([X, Y], [A], distanse="cosine"), "RND takes no option .distanse. .its options: distance, "),
    (lambda X, Y, A: metrics.rnd([X, Y], [A], model=object()), "gensim KeyedVectors"),
])
def test_bad_input_is_one_line_error(call, message):
    X, Y, A = _small(sizes=(3, 3, 3))
    with pytest.raises(EatkitError, match=message):
        call(X, Y, A)


def test_every_metric_on_ieat_images_from_the_cli_with_p_ci_and_html_report(tmp_path, capsys):
    """Issue 27 acceptance: each metric on an image suite (iEAT, EfficientNet-Lite0) from the CLI."""
    from eatkit.analyses import record_from_json
    from eatkit.cli import main

    images = shared_path("ieat", "images")
    out = tmp_path / "run"
    code = main(["run", "ieat", "--model", "efficientnet_lite0", "--images", str(images), "--tests", "asian",
                 "--metrics", "all", "--seed", "3", "--bootstrap", "200",
                 "--batch-size", "8", "-o", str(out), "--report"])
    printed = capsys.readouterr().out
    assert code == 0
    records = {r["test"]: r for r in json.loads((out / "results.json").read_text(encoding="utf-8"))}
    for kind in ("rnd", "ect", "ripa", "mac", "rnsb", "direct-bias"):
        record = records[f"asian:{kind}"]
        assert record["kind"] == kind and math.isfinite(record["value"]) and record["n_x"] == 6
        low, high = record["ci"]
        assert low <= high and record["n_bootstrap"] == 200
        assert (record["p_value"] is not None) == (kind in ("rnd", "ect", "ripa"))
        assert type(record_from_json(record)).kind == kind
        assert f"asian:{kind}" in printed
    # RND and ECT re-partition 6 + 6 images: 924 partitions, all counted; RIPA 2^6 sign patterns
    assert records["asian:rnd"]["p_value_exact"] and records["asian:rnd"]["n_partitions"] == 924
    assert records["asian:ripa"]["n_partitions"] == 64
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.count("<h3>Bias metrics</h3>") == 1 and "asian:direct-bias" in html  # one section (its figures name it too)
    assert "--metrics all" in json.loads((out / "manifest.json").read_text(encoding="utf-8"))["command"]


def test_metric_parameters_are_run_flags_recorded_in_the_manifest(tmp_path):
    from eatkit.cli import main

    vectors = shared_path("glove840b-weat", "glove.840B.300d.weat-items.txt")
    out = tmp_path / "run"
    assert main(["run", "weat", "--vectors", str(vectors), "--tests", "weat6", "--metrics", "rnd,direct-bias",
                 "--distance", "cosine", "--direct-bias-c", "2", "--bootstrap", "0", "-q", "-o", str(out)]) == 0
    records = {r["test"]: r for r in json.loads((out / "results.json").read_text(encoding="utf-8"))}
    weat6 = REFERENCE["queries"]["weat_6"]["values"]
    assert records["weat6:rnd"]["value"] == pytest.approx(weat6["rnd_cosine"], abs=1e-6)
    assert records["weat6:direct-bias"]["options"] == {"c": 2.0}
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["statistics"]["params"] == {"distance": "cosine", "c": 2.0}


def test_metrics_flag_errors():
    from eatkit.analyses.metrics import parse_metrics

    with pytest.raises(EatkitError, match="unknown metric"):
        parse_metrics("rnd,weat")


def test_wefe_word_sets_round_trip_and_queries(tmp_path):
    from eatkit.stimuli.loader import load_suite
    from eatkit.stimuli.wefe import read_wefe_word_sets, test_from_word_sets, wefe_queries

    weat = load_suite("weat")
    queries = wefe_queries(weat.tests)
    six = next(q for q in queries if q["name"] == "weat6")
    assert six["target_sets"][0][:2] == ["John", "Paul"] and six["attribute_sets_names"] == ["Career", "Family"]
    # WEFE's bundled format: an object of set name -> words
    path = tmp_path / "sets.json"
    path.write_text(json.dumps({n: w for n, w in zip([*six["target_sets_names"], *six["attribute_sets_names"]],
                                                     [*six["target_sets"], *six["attribute_sets"]])}))
    sets = read_wefe_word_sets(path)
    test = test_from_word_sets(sets, ("Male names", "Female names"), ("Career", "Family"), id="weat6")
    assert test.sets() == weat.test("weat6").sets()
    path.write_text('{"a": ["x"], "a": ["y"]}')
    with pytest.raises(EatkitError, match="set 'a' is given twice"):
        read_wefe_word_sets(path)
    path.write_text('{"a": []}')
    with pytest.raises(EatkitError, match="non-empty list of words"):
        read_wefe_word_sets(path)


def test_ect_equals_scipy_spearman_also_with_tied_similarities():
    from scipy.stats import spearmanr

    X, Y, A = _small(sizes=(3, 3, 4))
    A = np.concatenate([A, A[:2]])  # repeated attributes: tied similarities
    sims = [[float(np.dot(m, a) / np.linalg.norm(m) / np.linalg.norm(a)) for a in A] for m in (X.mean(0), Y.mean(0))]
    assert sm.ect(X, Y, A, permutations=1).value == pytest.approx(spearmanr(*sims).correlation, abs=1e-12)


def _doc_commands() -> list[list[str]]:
    """The ``eatkit`` command lines of docs/metrics.md (console blocks)."""
    import shlex

    text = (Path(__file__).resolve().parents[1] / "docs" / "metrics.md").read_text(encoding="utf-8")
    blocks = text.split("```console\n")[1:]
    return [shlex.split(block.split("```")[0].strip())[1:] for block in blocks]


def test_docs_metrics_commands_run(tmp_path, capsys):
    """Every command of docs/metrics.md, on the shared GloVe items and iEAT images (and a tiny CLIP with
    two generated image folders for the retrieval probe)."""
    from tiny_vl import group_images, tiny_clip

    from eatkit.cli import main

    commands = _doc_commands()
    assert [c[0] for c in commands] == ["run", "run", "probe", "debias"]
    stand_ins = {"glove.840B.300d.txt": str(shared_path("glove840b-weat", "glove.840B.300d.weat-items.txt")),
                 "ieat/images": str(shared_path("ieat", "images")),
                 "hf-clip:openai/clip-vit-base-patch32": f"hf-clip:{tiny_clip(tmp_path / 'clip')}",
                 "fairface/gender": str(group_images(tmp_path / "gender", {"female": 3, "male": 3}))}
    for argv in commands:
        argv = [stand_ins.get(a, a) for a in argv]
        out = argv.index("-o") + 1
        argv[out] = str(tmp_path / argv[out])
        assert main(argv) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert "weat6:rnd" in printed and "asian:mac" in printed and "weat8  rnd" in printed and "mean_ndkl" in printed
    # the worked example's table is what the first command prints, row by row, and its prose rounds those rows
    doc = (Path(__file__).resolve().parents[1] / "docs" / "metrics.md").read_text(encoding="utf-8")
    rows = [line.split() for line in doc.split("Worked example: GloVe 840B")[1].split("```")[1].splitlines()
            if line.startswith("weat6:")]
    assert len(rows) == 7 and all(row in [line.split() for line in printed.splitlines()] for row in rows), rows
    values = {row[0]: float(row[8]) for row in rows}  # test, metric, X (2 words), Y (2), A, B, value
    assert f"RND {values['weat6:rnd']:.3f}" in doc and f"ECT {values['weat6:ect']:.2f}" in doc
    # the debias example's before/after table (the last command) likewise
    table = [line.split() for line in doc.split("On the WEAT words of GloVe 840B it prints")[1].split("```")[1]
             .splitlines() if line.startswith("weat")]
    assert len(table) == 9 and all(row in [line.split() for line in printed.splitlines()] for row in table), table
    assert f"WEAT 6's d stays at {float(table[0][3]):.2f}" in doc


def test_sweep_ranks_models_by_each_measure_with_rank_correlations(tmp_path, capsys):
    """Rankings across models (WEFE's rankings study): per measure, overall, and Spearman between measures."""
    import pandas as pd

    from eatkit.cli import main
    from eatkit.stats.metrics import rank_models

    glove = shared_path("glove840b-weat", "glove.840B.300d.weat-items.txt")
    words = [line.split(" ", 1)[0] for line in glove.read_text(encoding="utf-8").splitlines()]
    for seed in (1, 2):
        table = np.random.default_rng(seed).normal(size=(len(words), 10))
        (tmp_path / f"rand{seed}.txt").write_text(
            "".join(w + " " + " ".join(f"{x:.6f}" for x in row) + "\n" for w, row in zip(words, table)))
    (tmp_path / "sweep.toml").write_text(
        f'models = [{{ vectors = "{glove}", label = "glove" }}, {{ vectors = "rand1.txt" }}, {{ vectors = "rand2.txt" }}]\n'
        'suites = [{ suite = "weat", tests = ["weat6", "weat7"], metrics = ["rnd", "ect", "mac"] }]\n'
        'settings = [{ seed = 0, n_bootstrap = 0, permutations = 99 }]\n')
    assert main(["sweep", str(tmp_path / "sweep.toml"), "-o", str(tmp_path / "out"), "--no-report"]) == 0
    assert "overall_rank" in capsys.readouterr().out
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    rankings = pd.read_csv(tmp_path / "out" / "rankings.csv").set_index("model")
    assert list(rankings.index) == ["glove", "rand1", "rand2"]
    # the measures: mean bias magnitude over the two tests, recomputed from results.csv
    # (distance from no bias, written out: |d|, |RND|, 1 - ECT, |1 - MAC|)
    for measure, kind, column, far in (("d", "eat", "effect_size", abs), ("rnd", "rnd", "value", abs),
                                       ("ect", "ect", "value", lambda v: 1 - v),
                                       ("mac", "mac", "value", lambda v: abs(1 - v))):
        for model in rankings.index:
            rows = results[(results["kind"] == kind) & (results["model"] == model)]
            assert len(rows) == 2
            assert rankings.loc[model, measure] == pytest.approx(np.mean([far(v) for v in rows[column]]))
    expected = rank_models(rankings[["d", "rnd", "ect", "mac"]].to_numpy())
    assert rankings["overall_rank"].tolist() == expected.overall.tolist()
    correlations = pd.read_csv(tmp_path / "out" / "ranking-correlations.csv")
    assert len(correlations) == 6 and correlations["spearman"].between(-1, 1).all()
    assert correlations[["ci_low", "ci_high"]].isna().all().all()  # three models: no Fisher-z interval (n - 3 = 0)
    # do the measures rank the models alike? ICC(3,1) of the models x measures ranks, Shrout & Fleiss written out
    ranks = rankings[["rank_d", "rank_rnd", "rank_ect", "rank_mac"]].to_numpy(dtype=float)
    n, k = ranks.shape
    grand = ranks.mean()
    ms_rows = k * ((ranks.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    residual = ranks - ranks.mean(axis=1, keepdims=True) - ranks.mean(axis=0) + grand
    ms_error = (residual**2).sum() / ((n - 1) * (k - 1))
    agreement = pd.read_csv(tmp_path / "out" / "measure-agreement.csv")
    assert len(agreement) == 1 and (agreement["models"][0], agreement["measures"][0]) == (3, 4)
    assert agreement["icc"][0] == pytest.approx((ms_rows - ms_error) / (ms_rows + (k - 1) * ms_error), rel=1e-12)
    # the sweep report shows both tables (run again: every cell finished before, the reports written)
    assert main(["sweep", str(tmp_path / "sweep.toml"), "-o", str(tmp_path / "out"), "--quiet"]) == 0
    page = (tmp_path / "out" / "audit.html").read_text(encoding="utf-8")
    section = page[page.index("<h2>Rankings</h2>"):page.index("<h2>Across models (random effects)</h2>")]
    by_rank = rankings.sort_values("overall_rank").index
    assert [section.index(f">{m}</th>") for m in by_rank] == sorted(section.index(f">{m}</th>") for m in by_rank)
    assert section.count("</tr>") == 1 + 3 + 1 + 6  # heads and models; heads and measure pairs
    assert f"ICC(3,1) of the ranks (consistency; Shrout &amp; Fleiss 1979): {agreement['icc'][0]:.2f}" in section


def test_a_sweep_with_an_unknown_metric_is_one_line(tmp_path, capsys):
    from eatkit.cli import main

    (tmp_path / "s.toml").write_text('models = ["glove-6b-50d"]\nsuites = [{ suite = "weat", metrics = ["weat"] }]\n')
    assert main(["sweep", str(tmp_path / "s.toml"), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown metric(s) weat" in err


@pytest.mark.slow
def test_retrieval_probe_maxskew_and_ndkl_per_prompt(tmp_path, capsys):
    """The retrieval probe on a folder-per-value image set with a tiny CLIP: the recorded MaxSkew@k and NDKL
    are those of the saved similarities' rankings."""
    from tiny_vl import group_images, tiny_clip

    from eatkit.cli import main
    from eatkit.stats.ranking import max_skew, ndkl

    clip = tiny_clip(tmp_path / "clip")
    images = group_images(tmp_path / "gender", {"female": 4, "male": 3})
    out = tmp_path / "out"
    code = main(["probe", "retrieval", "--model", f"hf-clip:{clip}", "--images", str(images), "--concepts",
                 "doctor,nurse,CEO", "--k", "3", "--no-cache", "-o", str(out), "--report"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "mean_ndkl" in captured.out
    (record,) = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert record["kind"] == "retrieval" and record["attribute"] == "gender" and record["k"] == 3
    assert record["prompts"]["CEO"] == "a photo of a CEO person"
    sims = np.load(out / "similarities.npz")["retrieval/similarities"]
    labels = np.array(["female"] * 4 + ["male"] * 3)
    ranked = labels[np.argsort(-sims, axis=1, kind="stable")]
    for i, concept in enumerate(["doctor", "nurse", "CEO"]):
        assert record["max_skew"][concept] == pytest.approx(max_skew(ranked[i], 3), abs=1e-12)
        assert record["ndkl"][concept] == pytest.approx(ndkl(ranked[i]), abs=1e-12)
        assert sum(record["top_shares"][concept].values()) == pytest.approx(1.0)
    assert record["mean_ndkl"] == pytest.approx(np.mean(list(record["ndkl"].values())))
    assert "Retrieval bias" in (out / "report.html").read_text(encoding="utf-8")


# --- clustering (Gonen & Goldberg 2019): 2-means of X ∪ Y against the sets -----------------------------

def test_clustering_accuracy_matches_scikit_learn_kmeans_and_brute_force_p():
    """The clusters are scikit-learn's KMeans(2) clusters (an independent 2-means, up to the labels' names);
    the exact conditional p is the share of all re-partitions of X ∪ Y, the clusters fixed, whose accuracy
    reaches the observed one (brute force over C(n, k))."""
    from itertools import combinations
    from math import comb

    from eatkit.stats.metrics import clustering

    sklearn_cluster = pytest.importorskip("sklearn.cluster")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6, 5)) + np.r_[1.5, 0, 0, 0, 0]
    Y = rng.normal(size=(5, 5)) - np.r_[1.5, 0, 0, 0, 0]
    r = clustering(X, Y, rng=0)
    unit = np.concatenate([X, Y]) / np.linalg.norm(np.concatenate([X, Y]), axis=1, keepdims=True)
    theirs = sklearn_cluster.KMeans(n_clusters=2, n_init=10, random_state=0).fit(unit).labels_
    ours = r.parts["clusters"]
    assert np.array_equal(ours, theirs) or np.array_equal(ours, 1 - theirs)
    truth = np.r_[np.zeros(6), np.ones(5)]
    assert r.value == max(np.mean(ours == truth), np.mean(ours != truth)) and r.value >= 0.5
    hits = 0
    for chosen in combinations(range(11), 6):
        labels = np.ones(11)
        labels[list(chosen)] = 0
        hits += max(np.mean(ours == labels), np.mean(ours != labels)) >= r.value - 1e-12
    assert r.n_partitions == comb(11, 6) and r.exact
    assert r.p_value == pytest.approx(hits / comb(11, 6), rel=1e-12)


def test_clustering_at_chance_and_its_bootstrap_interval():
    from eatkit.stats.metrics import clustering

    rng = np.random.default_rng(5)
    same = rng.normal(size=(20, 8))
    r = clustering(same[:10], same[10:], n_bootstrap=200, rng=1)  # one population: near 0.5, p large
    assert 0.5 <= r.value <= 0.75 and r.p_value > 0.05
    low, high = r.ci
    assert 0.5 <= low <= high <= 1.0 and r.n_bootstrap == 200 and r.seed == 1
    import eatkit.metrics

    api = eatkit.metrics.clustering([same[:10], same[10:]], rng=1)
    assert api.value == r.value and api.null == "X ∪ Y re-partitioned, the clusters fixed"


def test_rank_correlation_p_is_exact_over_all_orderings_of_a_few_models():
    """rank_models' Spearman p: brute-force enumeration of every ordering of up to 8 models (5 models in the
    same order: 2 of 120 orderings as extreme), scipy's t approximation beyond."""
    from itertools import permutations

    from scipy.stats import spearmanr

    from eatkit.stats.metrics import rank_models

    same = rank_models([[0.1, 1.0], [0.2, 2.0], [0.3, 3.0], [0.4, 4.0], [0.5, 5.0]])
    assert same.spearman[0, 1] == pytest.approx(1.0) and same.spearman_p[0, 1] == pytest.approx(2 / 120, abs=1e-12)
    table = np.random.default_rng(3).random((6, 3))
    r = rank_models(table)
    for j, k in ((0, 1), (0, 2), (1, 2)):
        observed = abs(spearmanr(table[:, j], table[:, k]).statistic)
        null = [abs(spearmanr(table[:, j], o).statistic) for o in permutations(table[:, k])]
        assert r.spearman_p[j, k] == pytest.approx(np.mean(np.array(null) >= observed - 1e-12), abs=1e-12)
    wide = np.random.default_rng(4).random((12, 2))
    assert rank_models(wide).spearman_p[0, 1] == pytest.approx(spearmanr(wide[:, 0], wide[:, 1]).pvalue, abs=1e-12)
