"""Published numbers that eatkit must reproduce (Caliskan et al. 2017; Steed & Caliskan 2021; ML-EAT)."""

from __future__ import annotations

import math

import pytest

from conftest import shared_path
from eatkit import RunOptions, load_suite, run_suite
from eatkit.sources.precomputed import IEATEmbeddings
from eatkit.sources.vectors import load_word_vectors
from published_values import IEAT_AUTHORS_OUTPUTS, IEAT_TABLE1, IEAT_TABLE2_IGPT_FROM_TEXT, WEAT_CALISKAN_D

pytestmark = pytest.mark.shared_data

# The ML-EAT seed's Table 1: EAT patterns of the ten WEATs on GloVe 840B.
ML_EAT_PATTERNS = {
    "weat1": "AB-Divergent", "weat2": "AB-Divergent", "weat3": "Non-Directional",
    "weat4": "Non-Directional", "weat5": "AX-Singular", "weat6": "BY-Singular",
    "weat7": "Non-Directional", "weat8": "AX-Singular", "weat9": "BY-Singular", "weat10": "A-Uniform",
}
# Monte Carlo draws assumed behind a published sampled p-value (to bound its sampling error).
PUBLISHED_DRAWS = 10_000


@pytest.fixture(scope="module")
def weat_glove840b():
    path = shared_path("glove840b-weat", "glove.840B.300d.weat-items.txt")
    suite = load_suite("weat")
    vectors = load_word_vectors(path)
    return run_suite(suite, vectors, options=RunOptions(seed=7, n_bootstrap=0))


def test_weat_effect_sizes_match_caliskan_2017(weat_glove840b):
    got = {r.test: r.effect_size for r in weat_glove840b.records}
    for test, d in WEAT_CALISKAN_D.items():
        assert abs(got[test] - d) <= 0.01, (test, got[test], d)


def test_weat_p_values_significant_and_exact_where_cheap(weat_glove840b):
    for r in weat_glove840b.records:
        assert r.p_value < 0.02, r.test
        # 'auto' counts exactly up to 25 + 25 targets; only WEAT 3's 32 + 32 is sampled
        assert r.p_value_exact == (r.n_x + r.n_y <= 50), r.test
    weat7 = next(r for r in weat_glove840b.records if r.test == "weat7")
    # exact: 12870 partitions of 8 + 8 targets; the count is an integer
    assert weat7.n_permutations == math.comb(16, 8)
    assert (weat7.p_value * math.comb(16, 8)) == pytest.approx(round(weat7.p_value * math.comb(16, 8)))


def test_weat_patterns_match_ml_eat_table_1(weat_glove840b):
    assert {r.test: r.pattern for r in weat_glove840b.records} == ML_EAT_PATTERNS


def _published_p_agrees(ours: float, ours_se: float, published: str) -> bool:
    """A published p "<1e-k" is an upper bound; a number is rounded to 2 decimals and was sampled."""
    if published.startswith("<"):
        return ours < float(published[1:])
    p = float(published)
    published_se = math.sqrt(max(p * (1 - p), 1e-4) / PUBLISHED_DRAWS)
    return abs(ours - p) <= 0.005 + 4 * math.hypot(published_se, ours_se)


@pytest.mark.parametrize("model,key", [("igpt_l_32", "igpt"), ("simclr_152_3x_sk1", "simclr")])
def test_ieat_table_1(model, key):
    source = IEATEmbeddings(shared_path("ieat", "embeddings"), model)
    table1 = [t.id for t in load_suite("ieat").tests if t.id in IEAT_TABLE1]
    run = run_suite(load_suite("ieat"), source, tests=table1,
                    options=RunOptions(seed=3, permutations=20_000, n_bootstrap=0))
    assert len(run.records) == 15
    for r in run.records:
        d, p = IEAT_TABLE1[r.test][key]
        assert abs(r.effect_size - d) <= 0.01, (r.test, r.effect_size, d)
        assert _published_p_agrees(r.p_value, r.p_value_mc_se, p), (r.test, r.p_value, p)
        assert r.n_x == IEAT_TABLE1[r.test]["n_t"] or r.test in {"gender-career", "gender-science"}


def test_ieat_intersectional_runs_and_matches_quoted_values():
    source = IEATEmbeddings(shared_path("ieat", "embeddings"), "igpt_l_32")
    run = run_suite(load_suite("ieat-intersectional"), source,
                    options=RunOptions(seed=3, permutations=20_000, n_bootstrap=0))
    got = {r.test: r for r in run.records}
    assert len(got) == 20  # the 16 of the paper and 4 more the authors' code runs
    for test, (d, p) in IEAT_TABLE2_IGPT_FROM_TEXT.items():
        assert abs(got[test].effect_size - d) <= 0.01, (test, got[test].effect_size, d)
        assert _published_p_agrees(got[test].p_value, got[test].p_value_mc_se, p), test


def test_ieat_specificity_matches_section_6():
    """iEAT §6: 1,000 random re-partitions of the Insect-Flower stimuli (iGPT) give false positives at
    10.3% (p < 0.1) and 1.2% (p < 0.01); the rate must stay within binomial error of alpha and of those."""
    from eatkit import specificity

    source = IEATEmbeddings(shared_path("ieat", "embeddings"), "igpt_l_32")
    test = load_suite("ieat").test("insect-flower")
    sets = {role: source.embed(s).vectors for role, s in test.sets().items()}
    result = specificity(sets["X"], sets["Y"], sets["A"], sets["B"], n_splits=1000, permutations=10_000, rng=0)
    published = {0.1: 0.103, 0.01: 0.012}
    for alpha, rate in result.false_positive_rates.items():
        se = math.sqrt(alpha * (1 - alpha) / 1000)
        assert abs(rate - alpha) <= 3 * se, (alpha, rate)
        if alpha in published:
            assert abs(rate - published[alpha]) <= 3 * math.sqrt(2) * se, (alpha, rate)


# the authors' p: exact (all partitions, ties counted) where C(2n, n) <= 10,000, else from 10,000 draws
AUTHORS_DRAWS = 10_000


def _authors_counted(n: int) -> bool:
    return math.comb(2 * n, n) <= AUTHORS_DRAWS


@pytest.mark.slow
@pytest.mark.parametrize(("model", "key"), [("igpt-logit_l_32", "igpt-logit"), ("igpt_l_32", "igpt"),
                                            ("simclr_152_3x_sk1", "simclr")])
def test_every_test_of_the_ieat_authors_outputs(model, key):
    """Every iEAT test of the authors' public outputs (39 per model, presidents and all intersectional
    comparisons included) reproduces their d to 1e-9; their p exactly where they counted every partition,
    within Monte Carlo error where they drew 10,000."""
    source = IEATEmbeddings(shared_path("ieat", "embeddings"), model)
    records = {}
    for suite in ("ieat", "ieat-intersectional"):
        run = run_suite(load_suite(suite), source, options=RunOptions(seed=5, permutations="auto", n_bootstrap=0))
        records |= {(suite, r.test): r for r in run.records}
    assert set(records) == set(IEAT_AUTHORS_OUTPUTS)  # the bundled suites hold exactly the authors' tests
    for where, published in IEAT_AUTHORS_OUTPUTS.items():
        r, (d, p) = records[where], published[1][key]
        assert r.alternative == "greater" and abs(r.effect_size - d) <= 1e-9, (where, r.effect_size, d)
        if _authors_counted(r.n_x):
            assert r.p_value_exact and r.p_value == pytest.approx(p, abs=1e-12), (where, r.p_value, p)
        else:
            # theirs: (1 + hits among 9,999 draws) / 10,000; ours exact (up to 25 + 25) or sampled
            se = math.hypot(math.sqrt(max(p * (1 - p), 1 / AUTHORS_DRAWS) / AUTHORS_DRAWS), r.p_value_mc_se)
            assert abs(r.p_value - p) <= 4 * se + 1 / AUTHORS_DRAWS, (where, r.p_value, p, se)
