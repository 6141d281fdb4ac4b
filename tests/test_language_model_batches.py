"""Batched language-model scoring and generation (issue 46.1): a batch of sentences (causal), of masked copies
across sentences (masked) or of prompts (generation) in one forward pass gives what one sequence a pass gives
(float32 to ~1e-5, float64 to ~1e-12), sampled answers equal transformers' own unbatched sampling after
``torch.manual_seed(seed + i)``, the manifest records the batch size used, and progress counts items."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from tiny_lm import PAIRS, make_bert, make_gpt2  # noqa: E402

SENTENCES = [s for pair in PAIRS for s in pair[:2]] + ["Men.", "The old man forgot his keys again and again, the poor."]


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory: pytest.TempPathFactory) -> str:
    return make_gpt2(tmp_path_factory.mktemp("gpt2"), chat=True)


@pytest.fixture(scope="module")
def bert(tmp_path_factory: pytest.TempPathFactory) -> str:
    return make_bert(tmp_path_factory.mktemp("bert"))


@pytest.mark.parametrize("precision, tol", [("float32", 2e-5), ("float64", 1e-11)])
def test_a_batch_of_sentences_scores_as_one_sentence_a_pass(gpt2, precision, tol):
    from eatkit.encoders.language_models import causal_lm

    one, batched = (causal_lm(gpt2, precision=precision, batch_size=b) for b in (1, 5))
    one._load()
    # lengths differ within a batch of 5 (right padding), and 14 is not a multiple of 5 (a short last batch)
    assert len({len(one._tokenizer.encode(s)) for s in SENTENCES}) >= 5
    single = one.log_likelihoods(SENTENCES)
    assert batched.log_likelihoods(SENTENCES) == pytest.approx(single, abs=tol, rel=0)
    assert batched.sentence_scores(SENTENCES) == pytest.approx(one.sentence_scores(SENTENCES), abs=tol, rel=0)
    # the batched scores are the sentences' own: order kept, nothing shuffled by the length sort
    assert [batched.log_likelihood(s) for s in SENTENCES[:3]] == pytest.approx(single[:3], abs=tol, rel=0)
    assert len(set(np.round(single, 6))) == len(SENTENCES)


@pytest.mark.parametrize("precision, tol", [("float32", 5e-5), ("float64", 1e-11)])
def test_masked_copies_of_several_sentences_in_one_pass(bert, precision, tol):
    from eatkit.encoders.language_models import masked_lm

    firsts, seconds = SENTENCES[0:12:2], SENTENCES[1:12:2]
    one = masked_lm(bert, precision=precision, batch_size=1).pairs_scores(firsts, seconds)
    batched = masked_lm(bert, precision=precision, batch_size=7).pairs_scores(firsts, seconds)
    assert batched == pytest.approx(one, abs=tol, rel=0)
    assert len(batched) == 2 * len(firsts)
    lm = masked_lm(bert, precision=precision, batch_size=64)  # every copy of every sentence in one pass
    assert lm.sentence_scores(SENTENCES[:4]) == pytest.approx(
        masked_lm(bert, precision=precision, batch_size=1).sentence_scores(SENTENCES[:4]), abs=tol, rel=0)


def reference_answers(folder: str, prompts: list[str], seed: int, temperature: float) -> list[str]:
    """transformers' own generate, one prompt a call, in the chat template, sampled after
    torch.manual_seed(seed + i) (eatkit's decoding before batching)."""
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
    out = []
    for i, prompt in enumerate(prompts):
        messages = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": prompt}]
        ids = tok.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                      return_dict=True)["input_ids"]
        torch.manual_seed(seed + i)
        sample = temperature > 0
        new = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=8, do_sample=sample,
                             temperature=temperature if sample else None, top_k=0 if sample else None, top_p=None,
                             pad_token_id=tok.eos_token_id)
        out.append(tok.decode(new[0, ids.shape[1]:], skip_special_tokens=True))
    return out


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_batched_answers_equal_transformers_unbatched_generate(gpt2, temperature):
    from eatkit.encoders.language_models import causal_lm

    prompts = ["The poor are", "She was a doctor and he a nurse and", "Men", "Jamal was arrested for theft and"]
    expected = reference_answers(gpt2, prompts, 3, temperature)
    for batch_size in (1, 3, 4):  # left padding of prompts of different lengths
        assert causal_lm(gpt2, batch_size=batch_size).generate(
            prompts, max_new_tokens=8, temperature=temperature, seed=3) == expected
    if temperature:
        assert causal_lm(gpt2).generate(prompts, max_new_tokens=8, temperature=1.0, seed=4) != expected


def test_the_manifest_records_the_batch_size_used(gpt2):
    from eatkit.encoders.language_models import causal_lm

    manifest = causal_lm(gpt2, batch_size=7).manifest()
    assert manifest["batch_size"] == 7 and "right-padded" in manifest["batching"]


def test_progress_counts_sentences(gpt2, monkeypatch):
    from eatkit import progress
    from eatkit.encoders.language_models import causal_lm

    lm = causal_lm(gpt2, batch_size=2)
    lm._load()
    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    slow = lm._model.forward

    def forward(*args, **kwargs):  # each pass long enough for a progress line
        import time

        time.sleep(0.25)
        return slow(*args, **kwargs)

    monkeypatch.setattr(lm._model, "forward", forward)
    with progress.enabled(True):  # an earlier command's -q in this process may have turned it off
        lm.log_likelihoods(SENTENCES)
    lines = err.getvalue().splitlines()
    assert lines and all(line.startswith("eatkit: scoring ") for line in lines)
    assert re.search(r"scoring \d+/14 sentences", lines[0]), lines[0]  # items counted, not batches
    assert "14/14 sentences" in lines[-1] and "done" in lines[-1], lines[-1]


def test_a_full_crows_pairs_file_is_scored_in_batches(gpt2, tmp_path):
    from tiny_lm import write_pairs

    from eatkit.encoders.language_models import causal_lm
    from eatkit.run.runner import run_suite

    data = write_pairs(tmp_path / "pairs.csv")
    runs = [run_suite("crows-pairs", causal_lm(gpt2, batch_size=b), seed=0, n_bootstrap=50,
                      params={"pairs_file": str(data)}) for b in (1, 32)]
    one, batched = ([r.to_json() for r in run.records] for run in runs)
    assert one == batched  # scores rounded to metric.py's 3 decimals: the same records
    manifest = json.loads((runs[1].save(tmp_path / "run") / "manifest.json").read_text())
    assert manifest["source"]["batch_size"] == 32
