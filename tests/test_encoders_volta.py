"""ViLBERT through e-bug/volta's gated encoder: a tiny config and state dict in volta's layout (keys as
volta's BertModel names them), loaded as ``volta:<config>``, against volta's forward pass written out."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from eatkit.errors import EatkitError
from eatkit.registry import build_model
from eatkit.stimuli.captioned import CaptionedImages

from conftest import lazy_module
torch = lazy_module("torch")
transformers = lazy_module("transformers")
F = lazy_module("torch.nn.functional")

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "this", "is", "a", "man", "woman", "lawyer", "here", "."]
#: a two-stream ViLBERT in miniature: text-only sublayers, then co-attention (tv + vt), then tt + vv
CONFIG = {"hidden_size": 16, "num_attention_heads": 2, "intermediate_size": 20, "v_hidden_size": 16,
          "v_num_attention_heads": 2, "v_intermediate_size": 24, "vocab_size": len(VOCAB),
          "max_position_embeddings": 40, "type_vocab_size": 2, "v_feature_size": 12, "num_locs": 5,
          "add_global_imgfeat": "first", "image_embeddings": "vilbert", "fusion_method": "mul", "pooler_size": 8,
          "v_pooler_size": 8, "hidden_act": "gelu", "v_hidden_act": "gelu",
          "tt_attn_sublayers": [0, 4], "tv_attn_sublayers": [2], "vt_attn_sublayers": [2], "vv_attn_sublayers": [4],
          "t_ff_sublayers": [1, 3, 5], "v_ff_sublayers": [3, 5], "shared_sublayers": [], "single_ln_sublayers": [],
          "sublayer2attn_hidden_size": {}, "sublayer2num_attention_heads": {}, "sublayer2intermediate_size": {},
          "sublayer2v_attn_hidden_size": {}, "sublayer2v_num_attention_heads": {}, "sublayer2v_intermediate_size": {}}
PAIRS = CaptionedImages("Lawyers", "image-caption", items=("This is a lawyer.", "a man is here ."),
                        images=("m1.png", "w1.png"), contextual_words=("lawyer", "man"))


def _linear(s, key, n_out, n_in):
    s[f"{key}.weight"], s[f"{key}.bias"] = torch.randn(n_out, n_in) * n_in ** -0.5, torch.randn(n_out) * 0.1


def _norm(s, key, n):
    s[f"{key}.weight"], s[f"{key}.bias"] = 1 + 0.1 * torch.randn(n), 0.1 * torch.randn(n)


def volta_state(c):
    """The state dict of volta's BertForVLPreTraining for config ``c``: ``bert.*`` written key by key
    (BertEmbeddings, ViLBertImageEmbeddings, BertEncoder's gated sublayers, the poolers) and a ``cls`` head."""
    torch.manual_seed(0)
    s = {"embeddings.word_embeddings.weight": torch.randn(c["vocab_size"], 16),
         "embeddings.position_embeddings.weight": torch.randn(40, 16) * 0.1,
         "embeddings.token_type_embeddings.weight": torch.randn(2, 16) * 0.1}
    _norm(s, "embeddings.LayerNorm", 16)
    _linear(s, "v_embeddings.image_embeddings", 16, 12), _linear(s, "v_embeddings.image_location_embeddings", 16, 5)
    _norm(s, "v_embeddings.LayerNorm", 16)
    for n in range(6):
        p = f"encoder.layer.{n}"
        if n % 2 == 0:   # attention sublayer
            t = n in c["tt_attn_sublayers"] or n in c["tv_attn_sublayers"]
            v = n in c["vt_attn_sublayers"] or n in c["vv_attn_sublayers"]
            for prefix, on in (("", t), ("v_", v)):
                if on:
                    for name in ("query", "key", "value"):
                        _linear(s, f"{p}.attention_self.{prefix}{name}", 16, 16)
                    _linear(s, f"{p}.attention_output.{prefix}dense", 16, 16)
                    _norm(s, f"{p}.attention_output.{prefix}LayerNorm", 16)
        else:
            for prefix, on, inner in (("", n in c["t_ff_sublayers"], 20), ("v_", n in c["v_ff_sublayers"], 24)):
                if on:
                    _linear(s, f"{p}.intermediate.{prefix}dense", inner, 16)
                    _linear(s, f"{p}.output.{prefix}dense", 16, inner)
                    _norm(s, f"{p}.output.{prefix}LayerNorm", 16)
    _linear(s, "t_pooler.dense", 8, 16), _linear(s, "v_pooler.dense", 8, 16)
    return {**{f"bert.{k}": v for k, v in s.items()}, "cls.predictions.bias": torch.zeros(len(VOCAB))}


def volta_text_states(s, c, ids, feats, locs):
    """volta's BertModel forward for one pair, as its code computes it: separate tt/tv (vt/vv) scores,
    one softmax over their concatenation, split, context summed; LayerNorm(dense(x) + input)."""
    g = lambda k: s["bert." + k]  # noqa: E731
    ln = lambda x, k: F.layer_norm(x, x.shape[-1:], g(k + ".weight"), g(k + ".bias"), eps=1e-12)  # noqa: E731
    lin = lambda x, k: x @ g(k + ".weight").T + g(k + ".bias")  # noqa: E731
    t = ln(g("embeddings.word_embeddings.weight")[ids] + g("embeddings.position_embeddings.weight")[:len(ids)]
           + g("embeddings.token_type_embeddings.weight")[0], "embeddings.LayerNorm")
    v = ln(lin(feats, "v_embeddings.image_embeddings") + lin(locs, "v_embeddings.image_location_embeddings"),
           "v_embeddings.LayerNorm")
    return encoder_reference(s, c, t, v)


def encoder_reference(s, c, t, v):
    """volta's BertEncoder over one pair's text and region states: the text states after the last sublayer."""
    g = lambda k: s["bert." + k]  # noqa: E731
    ln = lambda x, k: F.layer_norm(x, x.shape[-1:], g(k + ".weight"), g(k + ".bias"), eps=1e-12)  # noqa: E731
    lin = lambda x, k: x @ g(k + ".weight").T + g(k + ".bias")  # noqa: E731

    def heads(x):
        return x.view(x.shape[0], 2, 8).transpose(0, 1)

    for n in range(6):
        p = f"encoder.layer.{n}"
        if n % 2 == 0:
            a = f"{p}.attention_self."
            new_t, new_v = t, v
            for side, own, other, q_pref, pairs in (
                    ("t", t, v, "", [("tt", "", t), ("tv", "v_", v)]),
                    ("v", v, t, "v_", [("vt", "", t), ("vv", "v_", v)])):
                used = [(k, x) for name, k, x in pairs if n in c[f"{name}_attn_sublayers"]]
                if not used:
                    continue
                q = heads(lin(own, a + q_pref + "query"))
                scores = [q @ heads(lin(x, a + k + "key")).transpose(-1, -2) / math.sqrt(8) for k, x in used]
                probs = torch.softmax(torch.cat(scores, dim=-1), dim=-1).split([sc.shape[-1] for sc in scores], -1)
                ctx = sum(pr @ heads(lin(x, a + k + "value")) for pr, (k, x) in zip(probs, used))
                ctx = ctx.transpose(0, 1).reshape(own.shape[0], 16)
                o = f"{p}.attention_output.{q_pref}"
                out = ln(lin(ctx, o + "dense") + own, o + "LayerNorm")
                new_t, new_v = (out, new_v) if side == "t" else (new_t, out)
            t, v = new_t, new_v
        else:
            if n in c["t_ff_sublayers"]:
                t = ln(lin(F.gelu(lin(t, f"{p}.intermediate.dense")), f"{p}.output.dense") + t, f"{p}.output.LayerNorm")
            if n in c["v_ff_sublayers"]:
                v = ln(lin(F.gelu(lin(v, f"{p}.intermediate.v_dense")), f"{p}.output.v_dense") + v,
                       f"{p}.output.v_LayerNorm")
    return t


@pytest.fixture
def volta_files(tmp_path):
    tokenizer = tmp_path / "tokenizer"
    transformers.BertTokenizerFast(vocab={w: i for i, w in enumerate(VOCAB)}).save_pretrained(tokenizer)
    (tmp_path / "ctrl_vilbert_tiny.json").write_text(json.dumps({**CONFIG, "bert_model": str(tokenizer)}))
    torch.save(volta_state(CONFIG), tmp_path / "pytorch_model_9.bin")
    return tmp_path, write_regions(tmp_path / "regions", 12, 0), tokenizer


def write_regions(regions, dim, seed):
    """Region files of the two images of PAIRS: m1 with 3 regions, w1 with 2, a person box in each."""
    regions.mkdir()
    rng = np.random.default_rng(seed)
    for name, (h, w), n in (("m1", (48, 64), 3), ("w1", (56, 40), 2)):
        boxes = np.array([[0, 0, w / 2, h / 2], [w / 4, h / 4, w, h], [1, 1, 9, 9]])[:n]
        np.savez(regions / f"{name}.npz", features=rng.normal(size=(n, dim)), boxes=boxes,
                 labels=np.array(["person", "dog", "tie"][:n]), image_size=np.array([h, w]))
    return regions


def test_vilbert_equals_voltas_forward_pass(volta_files):
    import dataclasses

    from eatkit.encoders.regions import load_regions

    root, regions, tokenizer = volta_files
    enc = build_model(f"volta:{root / 'ctrl_vilbert_tiny.json'}", checkpoint=root / "pytorch_model_9.bin",
                      regions=regions, cache=False, device="cpu")
    state = torch.load(root / "pytorch_model_9.bin", weights_only=True)
    tok = transformers.BertTokenizerFast.from_pretrained(tokenizer)
    for embedding, rows in (("cls", (0, 0)), ("contextual", (4, 2))):
        ours = enc.embed(dataclasses.replace(PAIRS, embedding=embedding)).vectors
        for i, (caption, image) in enumerate(zip(PAIRS.items, PAIRS.images)):
            r = load_regions(regions / image.replace(".png", ".npz"))
            h, w = r.image_size
            area = (r.boxes[:, 3] - r.boxes[:, 1]) * (r.boxes[:, 2] - r.boxes[:, 0]) / (w * h)
            locs = np.concatenate([r.boxes / [w, h, w, h], area[:, None]], axis=1)
            feats = np.concatenate([r.features.mean(axis=0, keepdims=True), r.features])   # global feature first
            locs = np.concatenate([[[0, 0, 1, 1, 1]], locs])
            ids = torch.tensor(tok(caption)["input_ids"])
            with torch.inference_mode():
                states = volta_text_states(state, CONFIG, ids, torch.tensor(feats, dtype=torch.float32),
                                           torch.tensor(locs, dtype=torch.float32))
            np.testing.assert_allclose(ours[i], states[rows[i]].numpy(), rtol=1e-4, atol=1e-5)
    config = enc.config()
    assert config["weights"].startswith("config ctrl_vilbert_tiny.json sha256:")
    assert "checkpoint pytorch_model_9.bin sha256:" in config["weights"]


def test_volta_errors_are_one_line(volta_files, tmp_path):
    root, regions, _ = volta_files
    with pytest.raises(EatkitError, match=r"^volta:.* needs its checkpoint file: --weights PATH"):
        build_model(f"volta:{root / 'ctrl_vilbert_tiny.json'}", regions=regions)
    (tmp_path / "lxmert.json").write_text(json.dumps({**CONFIG, "bert_model": "x", "image_embeddings": "lxmert"}))
    with pytest.raises(EatkitError, match=r"image_embeddings 'lxmert' is not implemented in eatkit"):
        build_model(f"volta:{tmp_path / 'lxmert.json'}", checkpoint=root / "pytorch_model_9.bin", regions=regions)
    state = volta_state(CONFIG)
    del state["bert.encoder.layer.2.attention_self.v_key.bias"]
    torch.save(state, tmp_path / "cut.bin")
    enc = build_model(f"volta:{root / 'ctrl_vilbert_tiny.json'}", checkpoint=tmp_path / "cut.bin", regions=regions,
                      cache=False)
    with pytest.raises(EatkitError) as err:
        enc.embed(PAIRS)
    model = f"volta:{root / 'ctrl_vilbert_tiny.json'}"
    assert str(err.value) == (f"checkpoint {tmp_path / 'cut.bin'} does not fit {model}: 1 missing tensor(s) "
                              "(e.g. encoder.layer.2.attention_self.v_key.bias)")


# -- VL-BERT: one stream, shared sublayers, VL-BERT's embeddings ---------------------------------------

VLBERT = {**CONFIG, "v_feature_size": 16, "num_locs": 4, "v_coordinate_embeddings_dim": 2, "type_vocab_size": 3,
          "add_global_imgfeat": "last", "image_embeddings": "vl-bert", "fusion_method": "none",
          "v_intermediate_size": 20, "visual_target_weights": {"6": 1.0},
          "tt_attn_sublayers": [0, 2, 4], "tv_attn_sublayers": [0, 2, 4], "vt_attn_sublayers": [0, 2, 4],
          "vv_attn_sublayers": [0, 2, 4], "t_ff_sublayers": [1, 3, 5], "v_ff_sublayers": [1, 3, 5],
          "shared_sublayers": list(range(6)), "single_ln_sublayers": list(range(6))}


def vlbert_state(c):
    """volta's state dict of a VL-BERT: VLBertEmbeddings under ``bert.embeddings``, and every sublayer's
    shared modules saved under both names (``query`` and ``v_query``, ...), as torch saves shared modules."""
    torch.manual_seed(1)
    s = {"embeddings.word_embeddings.weight": torch.randn(c["vocab_size"], 16),
         "embeddings.position_embeddings.weight": torch.randn(40, 16) * 0.1,
         "embeddings.token_type_embeddings.weight": torch.randn(3, 16) * 0.1,
         "embeddings.object_linguistic_embeddings.weight": torch.randn(1, 16),
         "embeddings.object_mask_word_embedding.weight": torch.randn(1, 16),
         "embeddings.object_mask_visual_embedding.weight": torch.randn(1, 16),
         "embeddings.end_embedding.weight": torch.randn(1, 16)}
    _linear(s, "embeddings.obj_downsample.1", 16, 32)
    for name in ("LayerNorm", "visual_ln_text", "visual_ln_object"):
        _norm(s, f"embeddings.{name}", 16)
    for n in range(6):
        p = f"encoder.layer.{n}"
        names = ([f"attention_self.{x}" for x in ("query", "key", "value")] + ["attention_output.dense"]
                 if n % 2 == 0 else ["intermediate.dense", "output.dense"])
        norm = "attention_output.LayerNorm" if n % 2 == 0 else "output.LayerNorm"
        for name in names:
            shape = (20, 16) if name == "intermediate.dense" else (16, 20) if name == "output.dense" else (16, 16)
            _linear(s, f"{p}.{name}", *shape)
        _norm(s, f"{p}.{norm}", 16)
        for name in [*names, norm]:
            a, b = name.split(".")
            for suffix in ("weight", "bias"):
                s[f"{p}.{a}.v_{b}.{suffix}"] = s[f"{p}.{name}.{suffix}"]
    return {f"bert.{k}": v for k, v in s.items()}


def vlbert_embeddings_reference(s, ids, feats, boxes):
    """volta's VLBertEmbeddings.forward for one pair (eval mode), step by step."""
    g = lambda k: s["bert.embeddings." + k]  # noqa: E731
    ln = lambda x, k: F.layer_norm(x, x.shape[-1:], g(k + ".weight"), g(k + ".bias"), eps=1e-12)  # noqa: E731
    k = feats.shape[0]
    masked = (feats == 0).all(dim=1)
    feats = feats.clone()
    feats[masked] = g("object_mask_visual_embedding.weight")[0]
    pos = torch.stack([(boxes[:, 0] + boxes[:, 2]) / 2 * 100, (boxes[:, 1] + boxes[:, 3]) / 2 * 100,
                       (boxes[:, 2] - boxes[:, 0]) * 100, (boxes[:, 3] - boxes[:, 1]) * 100], dim=1)
    dim_mat = 1000 ** (torch.arange(2, dtype=torch.float32) / 2.0)
    coords = torch.cat([(pos[:, :, None] / dim_mat).sin(), (pos[:, :, None] / dim_mat).cos()], dim=-1).reshape(k, -1)
    final = F.relu(torch.cat([coords, feats], dim=1) @ g("obj_downsample.1.weight").T + g("obj_downsample.1.bias"))
    linguistic = g("object_linguistic_embeddings.weight")[0].repeat(k, 1)
    linguistic[masked] = g("object_mask_word_embedding.weight")[0]
    linguistic[-1] = g("end_embedding.weight")[0]
    objects = linguistic + ln(final, "visual_ln_object")
    text = g("word_embeddings.weight")[ids] + ln(final[-1].repeat(len(ids), 1), "visual_ln_text")
    text_end = len(ids)
    object_positions = torch.full((k,), text_end)
    object_positions[-1] += 1
    t = text + g("position_embeddings.weight")[:text_end] + g("token_type_embeddings.weight")[0]
    v = objects + g("position_embeddings.weight")[object_positions] + g("token_type_embeddings.weight")[2]
    return ln(t, "LayerNorm"), ln(v, "LayerNorm")


def test_vlbert_equals_voltas_forward_pass(volta_files, tmp_path):
    import dataclasses

    from eatkit.encoders.regions import load_regions

    root, _, tokenizer = volta_files
    regions = write_regions(tmp_path / "regions16", 16, 2)
    (tmp_path / "ctrl_vl-bert_tiny.json").write_text(json.dumps({**VLBERT, "bert_model": str(tokenizer)}))
    state = vlbert_state(VLBERT)
    torch.save(state, tmp_path / "vlbert.bin")
    enc = build_model(f"volta:{tmp_path / 'ctrl_vl-bert_tiny.json'}", checkpoint=tmp_path / "vlbert.bin",
                      regions=regions, cache=False, device="cpu")
    tok = transformers.BertTokenizerFast.from_pretrained(tokenizer)
    for mask in (None, "vision"):
        ours = enc.embed(dataclasses.replace(PAIRS, mask=mask)).vectors
        for i, (caption, image) in enumerate(zip(PAIRS.items, PAIRS.images)):
            r = load_regions(regions / image.replace(".png", ".npz"))
            h, w = r.image_size
            feats = r.features.copy()
            if mask == "vision":
                feats[r.persons()] = 0.0
            feats = np.concatenate([feats, feats.mean(axis=0, keepdims=True)])   # global feature last
            boxes = np.concatenate([r.boxes / [w, h, w, h], [[0, 0, 1, 1]]])
            ids = torch.tensor(tok(caption)["input_ids"])
            with torch.inference_mode():
                t, v = vlbert_embeddings_reference(state, ids, torch.tensor(feats, dtype=torch.float32),
                                                   torch.tensor(boxes, dtype=torch.float32))
                states = encoder_reference(state, VLBERT, t, v)
            np.testing.assert_allclose(ours[i], states[0].numpy(), rtol=1e-4, atol=1e-5)


def test_vlbert_global_first_is_batch_independent(volta_files, tmp_path):
    """add_global_imgfeat "first" (volta's ctrl_vl-bert_base): a pair embedded in a batch with a pair of more
    regions (its regions padded) equals the pair embedded alone, which is volta's forward pass on the global
    feature first and the pair's regions after it."""
    import dataclasses

    from eatkit.encoders.regions import load_regions

    _, _, tokenizer = volta_files
    regions = write_regions(tmp_path / "regions16", 16, 3)
    config = {**VLBERT, "add_global_imgfeat": "first", "bert_model": str(tokenizer)}
    (tmp_path / "ctrl_vl-bert_first.json").write_text(json.dumps(config))
    state = vlbert_state(config)
    torch.save(state, tmp_path / "vlbert.bin")
    enc = build_model(f"volta:{tmp_path / 'ctrl_vl-bert_first.json'}", checkpoint=tmp_path / "vlbert.bin",
                      regions=regions, cache=False, device="cpu", batch_size=2)
    together = enc.embed(PAIRS).vectors  # m1 has 3 regions, w1 2: w1's last slot in the batch is padding
    tok = transformers.BertTokenizerFast.from_pretrained(tokenizer)
    for i, (caption, image) in enumerate(zip(PAIRS.items, PAIRS.images)):
        alone = enc.embed(dataclasses.replace(PAIRS, name=f"one{i}", items=(caption,), images=(image,))).vectors
        np.testing.assert_allclose(together[i], alone[0], rtol=1e-5, atol=1e-5)
        r = load_regions(regions / image.replace(".png", ".npz"))
        h, w = r.image_size
        feats = np.concatenate([r.features.mean(axis=0, keepdims=True), r.features])  # global feature first
        boxes = np.concatenate([[[0, 0, 1, 1]], r.boxes / [w, h, w, h]])
        with torch.inference_mode():
            t, v = vlbert_embeddings_reference(state, torch.tensor(tok(caption)["input_ids"]),
                                               torch.tensor(feats, dtype=torch.float32),
                                               torch.tensor(boxes, dtype=torch.float32))
            states = encoder_reference(state, config, t, v)
        np.testing.assert_allclose(together[i], states[0].numpy(), rtol=1e-4, atol=1e-5)
