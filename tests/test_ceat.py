"""CEAT from the command line on a tiny BERT and a small corpus file: its combined effect equals a
random-effects estimate (statsmodels' DerSimonian-Laird) of per-context effect sizes computed here
independently (each marked word embedded with transformers directly, WEAT d written out)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from eatkit.cli import main
from eatkit.stimuli.contexts import marked_span, sample_contexts

from conftest import lazy_module
torch = lazy_module("torch")
transformers = lazy_module("transformers")
sm_meta = lazy_module("statsmodels.stats.meta_analysis")

WORDS = {"X": ["rose", "lily"], "Y": ["ant", "fly"], "A": ["love", "peace"], "B": ["war", "hate"]}
FILLERS = ["the", "a", "i", "saw", "like", "near", "and", "is", "with", "."]
CORPUS = [f"{a} {b} {c} {d} ." for a, b, c, d in (
    ("the", "rose", "and", "love"), ("a", "lily", "is", "peace"), ("i", "saw", "the", "ant"),
    ("the", "fly", "and", "war"), ("i", "like", "the", "rose"), ("the", "lily", "near", "war"),
    ("an", "ant", "with", "hate"), ("a", "fly", "is", "near"), ("love", "and", "peace", "."),
    ("war", "and", "hate", "."), ("i", "saw", "love", "."), ("hate", "is", "near", "."),
    ("peace", "with", "the", "rose"), ("the", "ant", "is", "war"), ("a", "fly", "with", "love"),
    ("the", "lily", "and", "hate"))]
N = 12  # asked; each word is in 3 or 4 sentences, so 3 distinct contexts are drawn per word (capped, warned)
DRAWN = 3


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ceat-bert")
    torch.manual_seed(0)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "an", *FILLERS, *[w for ws in WORDS.values() for w in ws]]
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=32)
    transformers.BertModel(config).save_pretrained(folder)
    transformers.BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}).save_pretrained(folder)
    return str(folder)


def embed_marked(folder, marked):
    """Last hidden state of the first token of the marked word, with transformers directly."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModel.from_pretrained(folder).eval()
    out = []
    for text in marked:
        plain, (start, end) = marked_span(text)
        batch = tokenizer(plain, return_tensors="pt", return_offsets_mapping=True)
        offsets = batch.pop("offset_mapping")[0].tolist()
        index = next(i for i, (a, b) in enumerate(offsets) if a == start and b > a)
        with torch.no_grad():
            out.append(model(**batch).last_hidden_state[0, index].numpy().astype(np.float64))
    return np.array(out)


def weat_d(X, Y, A, B):
    def cos(u, v):
        return float(u @ v / np.sqrt((u @ u) * (v @ v)))

    def s(w):
        return np.mean([cos(w, a) for a in A]) - np.mean([cos(w, b) for b in B])

    sx, sy = [s(x) for x in X], [s(y) for y in Y]
    return (np.mean(sx) - np.mean(sy)) / np.std(sx + sy, ddof=1)


def test_ceat_from_the_cli_equals_an_independent_random_effects_estimate(tmp_path, tiny_bert, capsys):
    (tmp_path / "corpus.txt").write_text("\n".join(CORPUS) + "\n")
    suite = {"schema": "eatkit.suite/1", "id": "ceat-toy", "title": "CEAT toy", "tests": [
        {"id": "flowers", "title": "Flowers vs insects", "kind": "ceat",
         **{r: {"name": r, "modality": "word", "items": ws} for r, ws in WORDS.items()}}]}
    (tmp_path / "suite.json").write_text(json.dumps(suite))
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "suite.json"), "--model", f"hf:{tiny_bert}", "--pooling", "token",
                 "--corpus", str(tmp_path / "corpus.txt"), "--contexts", str(N), "--seed", "5", "--no-cache",
                 "-o", str(out)]) == 0, capsys.readouterr().err
    (record,) = json.loads((out / "results.json").read_text())
    assert record["kind"] == "ceat" and record["n_contexts"] == DRAWN and record["context_seed"] == 5
    assert record["warnings"][0] == ("--contexts 12 capped at 3: the word 'rose' has 3 distinct contexts in the "
                                     "corpus, and contexts are drawn without replacement (a context drawn twice would "
                                     "count one observation twice)")

    # the contexts as documented: per role (suite order), a Generator seeded [seed, role index]
    sentences = (tmp_path / "corpus.txt").read_text().splitlines()
    samples = {}
    for index, (role, words) in enumerate(WORDS.items()):
        rng = np.random.default_rng([5, index])
        marked = [c for w in words for c in sample_contexts(sentences, w, DRAWN, rng)]
        assert all(len(set(marked[i * DRAWN:(i + 1) * DRAWN])) == DRAWN for i in range(len(words)))  # distinct
        samples[role] = embed_marked(tiny_bert, marked).reshape(len(words), DRAWN, -1)
    d = np.array([weat_d(*(samples[r][:, i] for r in "XYAB")) for i in range(DRAWN)])
    v = (2 + 2) / (2 * 2) + d**2 / (2 * (2 + 2))  # Hedges & Olkin's large-sample variance, n_X = n_Y = 2
    expected = sm_meta.combine_effects(d, v, method_re="dl")
    tau2 = max(0.0, expected.tau2)
    w = 1 / (v + tau2)
    assert record["mean_effect"] == pytest.approx(d.mean(), abs=1e-5)
    assert record["tau2"] == pytest.approx(tau2, abs=1e-6)
    assert record["estimate"] == pytest.approx(w @ d / w.sum(), abs=1e-5)
    assert record["q"] == pytest.approx(expected.q, rel=1e-4)
    if expected.tau2 > 0:
        assert record["estimate"] == pytest.approx(expected.mean_effect_re, abs=1e-5)
        assert record["se"] == pytest.approx(expected.sd_eff_w_re, abs=1e-6)
    saved = np.load(out / "similarities.npz")
    np.testing.assert_allclose(saved["flowers/effect_sizes"], d, atol=1e-5)


def test_ceat_needs_a_corpus_and_contexts_for_every_word(tmp_path, capsys):
    suite = {"schema": "eatkit.suite/1", "id": "c", "title": "C", "tests": [
        {"id": "t", "title": "T", "kind": "ceat", **{r: {"name": r, "modality": "word", "items": ws}
                                                     for r, ws in {**WORDS, "B": ["war", "zebra"]}.items()}}]}
    (tmp_path / "suite.json").write_text(json.dumps(suite))
    (tmp_path / "corpus.txt").write_text("\n".join(CORPUS) + "\n")
    (tmp_path / "vectors.txt").write_text("rose 1.0 0.0\nwar 0.0 1.0\n")
    argv = ["run", str(tmp_path / "suite.json"), "--vectors", str(tmp_path / "vectors.txt"), "-o", str(tmp_path / "out")]
    for extra, message in (([], "needs a corpus file"),
                           (["--corpus", str(tmp_path / "corpus.txt")], "no sentence of the corpus contains the word 'zebra'")):
        assert main([*argv, *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err


def test_ceat_on_sentence_templates(tmp_path, tiny_bert, capsys):
    suite = {"schema": "eatkit.suite/1", "id": "ceat-toy", "title": "CEAT toy", "tests": [
        {"id": "flowers", "title": "Flowers vs insects", "kind": "ceat",
         **{r: {"name": r, "modality": "word", "items": ws} for r, ws in WORDS.items()}}]}
    (tmp_path / "suite.json").write_text(json.dumps(suite))
    templates = ["the {x} is near .", "i saw a {x} .", "{x} and the rose ."]
    out = tmp_path / "out"
    argv = ["run", str(tmp_path / "suite.json"), "--model", f"hf:{tiny_bert}", "--pooling", "token", "--contexts", "4",
            "--seed", "1", "--no-cache", "-o", str(out)]
    assert main([*argv, *(a for t in templates for a in ("--context-template", t))]) == 0, capsys.readouterr().err
    (record,) = json.loads((out / "results.json").read_text())
    assert record["templates"] == templates and record["corpus"] == "" and record["n_contexts"] == 3  # 3 templates
    assert "--contexts 4 capped at 3" in record["warnings"][0] and "in the templates" in record["warnings"][0]
    samples = {}
    for index, (role, words) in enumerate(WORDS.items()):
        rng = np.random.default_rng([1, index])
        marked = [c for w in words for c in sample_contexts([t.replace("{x}", w) for t in templates], w, 3, rng)]
        samples[role] = embed_marked(tiny_bert, marked).reshape(len(words), 3, -1)
    d = [weat_d(*(samples[r][:, i] for r in "XYAB")) for i in range(3)]
    np.testing.assert_allclose(np.load(out / "similarities.npz")["flowers/effect_sizes"], d, atol=1e-5)
    # a template without {x}, or templates and a corpus together: one line each
    for extra, message in ((["--context-template", "no slot"], "must contain {x} once"),
                           (["--context-template", "a {x}", "--corpus", "c.txt"], "not both")):
        assert main([*argv, *extra]) == 2
        assert message in capsys.readouterr().err


def _run_ceat(tmp_path, tiny_bert, capsys, *extra):
    (tmp_path / "corpus.txt").write_text("\n".join(CORPUS) + "\n")
    suite = {"schema": "eatkit.suite/1", "id": "ceat-toy", "title": "CEAT toy", "tests": [
        {"id": "flowers", "title": "Flowers vs insects", "kind": "ceat",
         **{r: {"name": r, "modality": "word", "items": ws} for r, ws in WORDS.items()}}]}
    (tmp_path / "suite.json").write_text(json.dumps(suite))
    out = tmp_path / ("out" + "-".join(extra))
    assert main(["run", str(tmp_path / "suite.json"), "--model", f"hf:{tiny_bert}", "--pooling", "token",
                 "--corpus", str(tmp_path / "corpus.txt"), "--seed", "0", "-q", "-o", str(out), *extra]) == 0, \
        capsys.readouterr().err
    (record,) = json.loads((out / "results.json").read_text())
    return record, out


def test_more_contexts_asked_over_a_fixed_corpus_leave_p_unchanged(tmp_path, tiny_bert, capsys):
    # issue 45: contexts drawn with replacement from the same few sentences gave p = 1.8e-4 at N = 10,
    # 2.2e-33 at N = 100, 7.2e-125 at N = 400; drawn without replacement, N is capped at the distinct contexts
    records = [_run_ceat(tmp_path, tiny_bert, capsys, "--contexts", str(n))[0] for n in (10, 100, 400)]
    assert {r["n_contexts"] for r in records} == {DRAWN}
    assert records[0]["p_value"] == records[1]["p_value"] == records[2]["p_value"]
    assert records[0]["estimate"] == records[2]["estimate"]
    assert all(any("capped at 3" in w for w in r["warnings"]) for r in records)
    printed = capsys.readouterr()
    assert "capped at 3" in printed.out + printed.err  # printed, also with -q (under the results table)


def ceat_code_combined_effect(X, Y, A, B):
    """CEAT's code (weiguowilliam/CEAT, code/ceat.py, ceat_meta), rewritten here: per sample i the effect size
    and the variance (ddof 1) of the association scores over X ∪ Y, then DerSimonian-Laird; (pes, one-sided p)."""
    from scipy import stats

    def associate(w, a_set, b_set):
        cos = [float(w @ a / np.sqrt((w @ w) * (a @ a))) for a in a_set]
        cos_b = [float(w @ b / np.sqrt((w @ w) * (b @ b))) for b in b_set]
        return sum(cos) / len(cos) - sum(cos_b) / len(cos_b)

    e_lst, v_lst = [], []
    for i in range(X.shape[1]):
        x, y, a, b = X[:, i], Y[:, i], A[:, i], B[:, i]
        sx, sy = [associate(w, a, b) for w in x], [associate(w, a, b) for w in y]
        std_dev = np.std(sx + sy, ddof=1)
        e_lst.append((np.mean(sx) - np.mean(sy)) / std_dev)
        v_lst.append(std_dev ** 2)
    e, w = np.array(e_lst), 1 / np.array(v_lst)
    q = np.sum(w * e ** 2) - np.sum(e * w) ** 2 / np.sum(w)
    df = len(e) - 1
    tau2 = (q - df) / (np.sum(w) - np.sum(w ** 2) / np.sum(w)) if q > df else 0.0
    w_star = 1 / (np.array(v_lst) + tau2)
    pes = np.sum(w_star * e) / np.sum(w_star)
    return pes, stats.norm.sf(pes / np.sqrt(1 / np.sum(w_star)))


@pytest.mark.parametrize("shift", [0.0, 0.3])
def test_ceat_weighting_equals_ceat_codes_combined_effect(shift):
    from eatkit.stats.meta_analysis import ceat

    rng = np.random.default_rng(4)
    X, Y, A, B = (rng.normal(size=(5, 40, 8)) + s * shift for s in (1, -1, 1, -1))
    d, v, result = ceat(X, Y, A, B, variance="ceat", method="dl")
    pes, p = ceat_code_combined_effect(X, Y, A, B)
    assert result.estimate == pytest.approx(pes, abs=1e-12)
    assert 0.5 * math.erfc(result.z / math.sqrt(2)) == pytest.approx(p, rel=1e-9, abs=1e-300)
    assert not np.allclose(v, ceat(X, Y, A, B)[1])  # the default, Hedges-Olkin, weights differently


def test_ceat_variance_from_the_cli_records_ceats_weighting(tmp_path, tiny_bert, capsys):
    record, out = _run_ceat(tmp_path, tiny_bert, capsys, "--ceat-variance", "ceat")
    saved = np.load(out / "similarities.npz")
    d, v = saved["flowers/effect_sizes"], saved["flowers/variances"]
    assert record["variance"] == "ceat" and record["method"] == "dl"
    # the record's estimate is DerSimonian-Laird over the saved d_i with the association-score variances
    w = 1 / v
    q = np.sum(w * d ** 2) - np.sum(w * d) ** 2 / np.sum(w)
    tau2 = max(0.0, (q - (d.size - 1)) / (np.sum(w) - np.sum(w ** 2) / np.sum(w)))
    w_star = 1 / (v + tau2)
    assert record["estimate"] == pytest.approx(np.sum(w_star * d) / np.sum(w_star), abs=1e-12)
    default, _ = _run_ceat(tmp_path, tiny_bert, capsys)
    assert default["variance"] == "hedges-olkin" and default["mean_effect"] == pytest.approx(record["mean_effect"])
