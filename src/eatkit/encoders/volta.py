"""ViLBERT and VL-BERT from e-bug/volta checkpoints, on region features (Grounded-WEAT/SEAT, seed 001).

VOLTA (Bugliarello et al. 2021, "Multimodal Pretraining Unmasked") writes every model as one encoder of
numbered *sublayers*: an attention sublayer ``n`` lets text attend to text (``n`` in ``tt_attn_sublayers``)
and/or to the image regions (``tv``), and regions attend to text (``vt``) and/or regions (``vv``); the keys
of each query are concatenated before one softmax; a feed-forward sublayer applies the text (``t_ff``)
and/or vision (``v_ff``) feed-forward; each sublayer's output is ``LayerNorm(dense(x) + input)`` for a stream
it touches and the input itself for a stream it does not. ``shared_sublayers`` use the text weights for both
streams. A model is a config JSON (volta's ``config/*.json``, e.g. ``ctrl_vilbert_base.json``) and a state
dict (``pytorch_model_9.bin``: ``bert.*`` keys; heads such as ``cls.*`` are not used).

Embeddings (``image_embeddings: "vilbert"``): text ``LayerNorm(word + position + token type)`` (BERT);
regions ``LayerNorm(Linear(feature) + Linear(location))`` with location ``(x1/w, y1/h, x2/w, y2/h, area
share)``, and the mean of the region features at location ``(0, 0, 1, 1, 1)`` added first
(``add_global_imgfeat: "first"``), as volta's feature reader does. The text is ``[CLS] caption [SEP]`` with
the tokenizer named by the config's ``bert_model`` (a hub id or a local folder). The embedding read is the
last sublayer's text state at [CLS] or at the contextual word's first sub-token (as the other grounded
encoders, :mod:`eatkit.encoders.joint`).

VL-BERT (``image_embeddings: "vl-bert"``, e.g. ``ctrl_vl-bert_base.json``): one stream (every attention
sublayer has tt, tv, vt and vv, shared weights), with VL-BERT's shared embeddings
(:func:`vlbert_embeddings`; region locations ``(x1/w, y1/h, x2/w, y2/h)``, the mean region feature added
last). Not implemented: VOLTA's other embeddings (``"lxmert"``, ``"visualbert"``, UNITER's); a config
naming them is refused.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from eatkit.encoders.checkpoints import checkpoint_identity, load_state_strict, required_checkpoint
from eatkit.encoders.joint import GroundedEncoder, Prepared
from eatkit.errors import EatkitError, one_line
from eatkit.io import load_torch_weights, read_json, require

#: the config keys the gated encoder reads
VOLTA_KEYS: tuple[str, ...] = (
    "hidden_size", "num_attention_heads", "intermediate_size", "v_hidden_size", "v_num_attention_heads",
    "v_intermediate_size", "vocab_size", "max_position_embeddings", "type_vocab_size", "v_feature_size", "num_locs",
    "image_embeddings", "bert_model", "tt_attn_sublayers", "tv_attn_sublayers", "vt_attn_sublayers",
    "vv_attn_sublayers", "t_ff_sublayers", "v_ff_sublayers")
#: image embeddings eatkit implements
VOLTA_IMAGE_EMBEDDINGS: tuple[str, ...] = ("vilbert", "vl-bert")


def read_volta_config(path: Path) -> dict[str, Any]:
    """A volta config JSON, checked for the keys the gated encoder reads and for supported embeddings."""
    config = read_json(path, "volta config")  # the one reader: regular files only, bounded, depth checked
    if not isinstance(config, dict):
        raise EatkitError(f"volta config {path} is not a JSON object")
    missing = [k for k in VOLTA_KEYS if k not in config]
    if missing:
        raise EatkitError(f"volta config {path} has no '{missing[0]}' (is it one of volta's config/*.json?)")
    if config["image_embeddings"] not in VOLTA_IMAGE_EMBEDDINGS:
        raise EatkitError(f"volta config {path}: image_embeddings '{config['image_embeddings']}' is not implemented "
                          f"in eatkit (implemented: {', '.join(VOLTA_IMAGE_EMBEDDINGS)}: ViLBERT and VL-BERT)")
    if config.get("add_global_imgfeat", "first") not in ("first", "last", None):
        raise EatkitError(f"volta config {path}: unknown add_global_imgfeat {config['add_global_imgfeat']!r}")
    return config


def volta_network(config: dict[str, Any]) -> Any:
    """VOLTA's ``BertModel`` (embeddings, gated encoder and poolers) with its module names, from ``config``."""
    torch = require("torch", "volta models", "vl")
    nn = torch.nn
    eps = config.get("layer_norm_eps", 1e-12)
    sets = {k: set(config.get(k, [])) for k in ("tt_attn_sublayers", "tv_attn_sublayers", "vt_attn_sublayers",
                                                "vv_attn_sublayers", "t_ff_sublayers", "v_ff_sublayers",
                                                "shared_sublayers")}
    attn = sets["tt_attn_sublayers"] | sets["tv_attn_sublayers"] | sets["vt_attn_sublayers"] | sets["vv_attn_sublayers"]
    ff = sets["t_ff_sublayers"] | sets["v_ff_sublayers"]
    if attn & ff or sorted(attn | ff) != list(range(len(attn | ff))):
        raise EatkitError("volta config: the attention and feed-forward sublayers must number 0, 1, ... once each")

    def per(key: str, n: int, default: int) -> int:
        return int(config.get(key, {}).get(str(n), default))

    def linear_in(prefix: str, width: int, inner: int) -> Any:
        return nn.Linear(width, inner)

    def linear_out(prefix: str, width: int, inner: int) -> Any:
        return nn.Linear(inner, width)

    def sublayer(n: int) -> Any:
        attention = n in attn
        if attention:
            has_t = n in sets["tt_attn_sublayers"] or n in sets["tv_attn_sublayers"]
            has_v = n in sets["vt_attn_sublayers"] or n in sets["vv_attn_sublayers"]
            size = per("sublayer2attn_hidden_size", n, config["hidden_size"])
            v_size = per("sublayer2v_attn_hidden_size", n, config["v_hidden_size"])
        else:
            has_t, has_v = n in sets["t_ff_sublayers"], n in sets["v_ff_sublayers"]
            size = per("sublayer2intermediate_size", n, config["intermediate_size"])
            v_size = per("sublayer2v_intermediate_size", n, config["v_intermediate_size"])
        layer, first, second = nn.Module(), nn.Module(), nn.Module()
        if attention:   # volta's v_LayerNorm of an attention output has the attention width
            layer.attention_self, layer.attention_output = first, second
            parts = [(first, "query", linear_in), (first, "key", linear_in), (first, "value", linear_in),
                     (second, "dense", linear_out),
                     (second, "LayerNorm", lambda p, w, i: nn.LayerNorm(i if p else w, eps=eps))]
        else:
            layer.intermediate, layer.output = first, second
            parts = [(first, "dense", linear_in), (second, "dense", linear_out),
                     (second, "LayerNorm", lambda p, w, i: nn.LayerNorm(w, eps=eps))]
        shared = n in sets["shared_sublayers"] and has_t
        for prefix, on, width, inner in (("", has_t, config["hidden_size"], size),
                                         ("v_", has_v, config["v_hidden_size"], v_size)):
            for module, name, make in parts if on else []:   # a shared sublayer's vision modules are the text ones
                setattr(module, prefix + name, getattr(module, name) if prefix and shared else make(prefix, width, inner))
        layer.flags = {"t": has_t, "v": has_v, "attn": attention, "tt": n in sets["tt_attn_sublayers"],
                       "tv": n in sets["tv_attn_sublayers"], "vt": n in sets["vt_attn_sublayers"],
                       "vv": n in sets["vv_attn_sublayers"],
                       "heads": per("sublayer2num_attention_heads", n, config["num_attention_heads"]),
                       "v_heads": per("sublayer2v_num_attention_heads", n, config["v_num_attention_heads"])}
        return layer

    net = nn.Module()
    _volta_embeddings(nn, net, config, eps)
    net.encoder = nn.Module()
    net.encoder.layer = nn.ModuleList(sublayer(n) for n in range(len(attn | ff)))
    h, vh = config["hidden_size"], config["v_hidden_size"]
    fusion = config.get("fusion_method", "mul")
    if fusion != "none":   # the poolers (not read by eatkit, but part of the checkpoint)
        net.t_pooler = nn.Module()
        net.t_pooler.dense = nn.Linear(h, config.get("pooler_size", h))
    if fusion not in ("none", "text", "vl-bert_vqa"):
        net.v_pooler = nn.Module()
        net.v_pooler.dense = nn.Linear(vh, config.get("v_pooler_size", vh))
    return net


def _volta_embeddings(nn: Any, net: Any, config: dict[str, Any], eps: float) -> None:
    """The text embeddings of a VOLTA network and its image embeddings: ViLBERT's own, or VL-BERT's shared
    with the text (volta ``VLBertEmbeddings``)."""
    net.embeddings = e = nn.Module()
    h, vh, feature = config["hidden_size"], config["v_hidden_size"], config["v_feature_size"]
    e.word_embeddings = nn.Embedding(config["vocab_size"], h, padding_idx=0)
    e.position_embeddings = nn.Embedding(config["max_position_embeddings"], h)
    e.token_type_embeddings = nn.Embedding(config["type_vocab_size"], h)
    e.LayerNorm = nn.LayerNorm(h, eps=eps)
    if config["image_embeddings"] == "vilbert":
        net.v_embeddings = nn.Module()
        net.v_embeddings.image_embeddings = nn.Linear(feature, vh)
        net.v_embeddings.image_location_embeddings = nn.Linear(config["num_locs"], vh)
        net.v_embeddings.LayerNorm = nn.LayerNorm(vh, eps=eps)
        return
    e.obj_downsample = nn.Sequential(nn.Dropout(0.0), nn.Linear(2 * feature, vh), nn.ReLU())
    e.object_linguistic_embeddings = nn.Embedding(1, h)
    if config.get("visual_target_weights", {}).get("6", 0) > 0:
        e.object_mask_word_embedding = nn.Embedding(1, h)
    e.object_mask_visual_embedding = nn.Embedding(1, feature)
    e.end_embedding = nn.Embedding(1, h)
    if vh != h:
        e.visual_1x1_text, e.visual_1x1_object = nn.Linear(vh, h), nn.Linear(vh, h)
    e.visual_ln_text, e.visual_ln_object = nn.LayerNorm(h, eps=eps), nn.LayerNorm(h, eps=eps)


def _attend(torch: Any, query: Any, keys: list[Any], values: list[Any], masks: list[Any], heads: int) -> Any:
    """Multi-head attention of ``query`` (n, L, d) over the concatenated ``keys``/``values`` (n, S_i, d),
    additive ``masks`` (n, S_i): one softmax over all keys (volta's gated attention)."""
    n, length, d = query.shape
    size = d // heads

    def split(x: Any) -> Any:
        return x.view(n, x.shape[1], heads, size).transpose(1, 2)

    k, v = split(torch.cat(keys, dim=1)), split(torch.cat(values, dim=1))
    scores = split(query) @ k.transpose(-1, -2) / math.sqrt(size) + torch.cat(masks, dim=1)[:, None, None, :]
    return (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(n, length, d)


def volta_forward(net: Any, t: Any, v: Any, t_mask: Any, v_mask: Any) -> tuple[Any, Any]:
    """The gated encoder over text states ``t`` and region states ``v`` (additive masks: 0 or -10000)."""
    import torch

    gelu = torch.nn.functional.gelu
    for layer in net.encoder.layer:
        f = layer.flags
        if f["attn"]:
            a, o = layer.attention_self, layer.attention_output
            tq = (a.query(t), a.key(t), a.value(t)) if f["t"] else None
            vq = (a.v_query(v), a.v_key(v), a.v_value(v)) if f["v"] else None
            new_t, new_v = t, v
            if f["t"]:
                parts = [(tq, t_mask)] * f["tt"] + [(vq, v_mask)] * f["tv"]
                ctx = _attend(torch, tq[0], [p[0][1] for p in parts], [p[0][2] for p in parts],
                              [p[1] for p in parts], f["heads"])
                new_t = o.LayerNorm(o.dense(ctx) + t)
            if f["v"]:
                parts = [(tq, t_mask)] * f["vt"] + [(vq, v_mask)] * f["vv"]
                ctx = _attend(torch, vq[0], [p[0][1] for p in parts], [p[0][2] for p in parts],
                              [p[1] for p in parts], f["v_heads"])
                new_v = o.v_LayerNorm(o.v_dense(ctx) + v)
            t, v = new_t, new_v
        else:
            i, o = layer.intermediate, layer.output
            if f["t"]:
                t = o.LayerNorm(o.dense(gelu(i.dense(t))) + t)
            if f["v"]:
                v = o.v_LayerNorm(o.v_dense(gelu(i.v_dense(v))) + v)
    return t, v


def vilbert_embeddings(net: Any, config: dict[str, Any], ids: Any, feats: Any, locations: Any,
                       regions: Any = None) -> tuple[Any, Any]:
    """ViLBERT's two embeddings (volta ``BertEmbeddings``, ``ViLBertImageEmbeddings``; eval mode; each region
    embedded alone, so ``regions``, the mask of real regions, is not needed)."""
    import torch

    e, ve = net.embeddings, net.v_embeddings
    positions = torch.arange(ids.shape[1], device=ids.device)[None, :]
    t = e.LayerNorm(e.word_embeddings(ids) + e.position_embeddings(positions)
                    + e.token_type_embeddings(torch.zeros_like(ids)))
    return t, ve.LayerNorm(ve.image_embeddings(feats) + ve.image_location_embeddings(locations))


def coordinate_embeddings(boxes: Any, dim: int) -> Any:
    """VL-BERT's sine/cosine embedding of boxes ``(n, k, 4)`` (x1, y1, x2, y2 in [0, 1]): centre, width and
    height times 100, each divided by ``1000 ** (i / dim)``, sines then cosines: ``(n, k, 4, 2 * dim)``."""
    import torch

    x1, y1, x2, y2 = boxes.unbind(-1)
    pos = torch.stack([(x1 + x2) / 2 * 100, (y1 + y2) / 2 * 100, (x2 - x1) * 100, (y2 - y1) * 100], dim=-1)
    scaled = pos[..., None] / 1000 ** (torch.arange(dim, dtype=boxes.dtype, device=boxes.device) / float(dim))
    return torch.cat([scaled.sin(), scaled.cos()], dim=-1)


def vlbert_embeddings(net: Any, config: dict[str, Any], ids: Any, feats: Any, locations: Any,
                      regions: Any = None) -> tuple[Any, Any]:
    """VL-BERT's shared embeddings (volta ``VLBertEmbeddings``; eval mode): each region is
    ``ReLU(Linear([coordinate embedding, feature]))`` (an all-zero feature, i.e. a masked region, replaced by
    the learned masked-region feature); objects get the object word embedding (the end one for the pair's
    last region) plus the layer-normed visual embedding, token type 2 and positions after the text; text
    tokens get the layer-normed visual embedding of the pair's last region; one LayerNorm over both.

    The last region is the pair's own last real one (``regions``: ``(n, k)``, 1 for a region, 0 for the
    padding of a batch; ``None``: no padding), so a pair's embedding does not depend on the batch it is in:
    with ``add_global_imgfeat: "first"`` the global feature is first and, in a batch, padding follows the
    pair's regions (read alone, as volta reads it, the last slot is the pair's last region)."""
    import torch

    e = net.embeddings
    n, k, _ = feats.shape
    slots = torch.arange(k, device=feats.device)
    last = (torch.full((n,), k - 1, device=feats.device) if regions is None
            else (regions.to(feats.device).long() * slots[None, :]).amax(dim=1))  # the last slot holding a region
    rows = torch.arange(n, device=feats.device)
    zero = (feats == 0).all(dim=-1)
    feats = torch.where(zero[..., None], e.object_mask_visual_embedding.weight[0], feats)
    coords = coordinate_embeddings(locations[..., :4], config.get("v_coordinate_embeddings_dim", 256))
    final = e.obj_downsample(torch.cat([coords.reshape(n, k, -1), feats], dim=-1))
    one_by_one = getattr(e, "visual_1x1_object", None)
    objects = e.visual_ln_object(one_by_one(final) if one_by_one is not None else final)
    words = e.object_linguistic_embeddings.weight[0].expand(n, k, -1).clone()
    if hasattr(e, "object_mask_word_embedding"):
        words[zero] = e.object_mask_word_embedding.weight[0]
    words[rows, last] = e.end_embedding.weight[0]
    text_visual = final[rows, last][:, None, :].expand(n, ids.shape[1], -1)
    one_by_one = getattr(e, "visual_1x1_text", None)
    text = e.word_embeddings(ids) + e.visual_ln_text(one_by_one(text_visual) if one_by_one is not None else text_visual)
    text_end = (ids != 0).sum(dim=1, keepdim=True)
    text_positions = torch.arange(ids.shape[1], device=ids.device)[None, :].expand_as(ids)
    text_positions = text_positions + k * (text_positions >= text_end)
    object_positions = text_end.expand(n, k).clone()
    object_positions[rows, last] += 1
    t = text + e.position_embeddings(text_positions) + e.token_type_embeddings(torch.zeros_like(ids))
    v = (words + objects + e.position_embeddings(object_positions)
         + e.token_type_embeddings(torch.full((n, k), 2, dtype=ids.dtype, device=ids.device)))
    return e.LayerNorm(t), e.LayerNorm(v)


class VoltaEncoder(GroundedEncoder):
    """A volta model (``volta:<config JSON>``, e.g. ``volta:ctrl_vilbert_base.json``) with its state dict
    (``checkpoint``, ``--weights pytorch_model_9.bin``) on region features (``--regions``)."""

    family = "volta"
    definition = ("volta gated encoder (ViLBERT, VL-BERT): the last sublayer's text state at [CLS] or the "
                  "contextual word's first sub-token")
    mask_refusals = {"language": None, "vision": None}   # ViLBERT was pretrained with masked words and regions
    region_features = True
    libraries = ("torch", "transformers", "torchvision")
    #: "4": VL-BERT reads each pair's own last region (embeddings no longer depend on the batch)
    encoder_version = "4"

    def __init__(self, name: str, *, checkpoint: str | Path | None = None, **options: Any) -> None:
        self._path = required_checkpoint(f"volta:{name}", checkpoint)
        self._config_path = Path(name).expanduser()
        if not self._config_path.is_file():
            raise EatkitError(f"volta config {self._config_path} not found (volta's config/*.json)")
        self._volta = read_volta_config(self._config_path)
        super().__init__(name, **options)

    def _weights_identity(self, name: str, revision: str | None) -> str:
        config_hash = self.file_hashes([str(self._config_path)])[0]
        return f"config {self._config_path.name} sha256:{config_hash}; {checkpoint_identity(self._path)}"

    def config(self) -> dict[str, Any]:
        return {**super().config(), "tokenizer": self._volta["bert_model"],
                "global_image_feature": self._volta.get("add_global_imgfeat"),
                "region_locations": "x1/w, y1/h, x2/w, y2/h" + (", area share" if self._volta["num_locs"] == 5 else "")}

    def _load(self) -> None:
        transformers = require("transformers", f"the model '{self.id}'", "vl")
        checkpoint = load_torch_weights(self._path)
        state = checkpoint.get("model_state_dict", checkpoint) if isinstance(checkpoint, dict) else None
        if not isinstance(state, dict):
            raise EatkitError(f"checkpoint {self._path} holds no state dict")
        state = {k.removeprefix("module."): v for k, v in state.items() if isinstance(k, str)}
        bert = {k[len("bert."):]: v for k, v in state.items() if k.startswith("bert.")}
        if not bert:
            raise EatkitError(f"checkpoint {self._path} has no key starting with 'bert.' (first key: "
                              f"{next(iter(state), 'none')}; is it a volta checkpoint?)")
        net = volta_network(self._volta)
        load_state_strict(net, bert, f"checkpoint {self._path}", self.id)
        self._net = self._place(net)
        try:
            self._tokenizer = transformers.AutoTokenizer.from_pretrained(self._volta["bert_model"])
        except Exception as exc:  # noqa: BLE001 -- hub and file errors come in many types
            raise EatkitError(f"cannot load the tokenizer '{self._volta['bert_model']}' of '{self.id}': "
                              f"{one_line(exc)}") from None
        if not getattr(self._tokenizer, "is_fast", False):
            raise EatkitError(f"model '{self.id}' has no fast tokenizer (offset mappings locate the contextual words)")

    def _language_states(self, tokens: Any, inputs: list[Prepared]) -> Any:
        import torch

        cfg, net = self._volta, self._net
        feats, boxes, mask = self._region_batch(inputs, cfg["v_feature_size"], self._mask == "vision")
        counts = mask.sum(dim=1, keepdim=True).clamp(min=1)
        locations = torch.zeros((*boxes.shape[:2], cfg["num_locs"]))
        locations[..., :4] = boxes
        if cfg["num_locs"] >= 5:
            locations[..., 4] = (boxes[..., 3] - boxes[..., 1]) * (boxes[..., 2] - boxes[..., 0])
        where = cfg.get("add_global_imgfeat", "first")
        if where is not None:   # volta's reader: the mean region feature over the whole image
            global_feat = (feats * mask[..., None]).sum(dim=1, keepdim=True) / counts[..., None]
            global_loc = torch.tensor([0, 0, 1, 1] + [1] * (cfg["num_locs"] - 4), dtype=torch.float32)
            global_loc = global_loc.expand(len(inputs), 1, -1)
            one = torch.ones((len(inputs), 1), dtype=mask.dtype)
            first = where == "first"
            feats = torch.cat([global_feat, feats] if first else [feats, global_feat], dim=1)
            locations = torch.cat([global_loc, locations] if first else [locations, global_loc], dim=1)
            mask = torch.cat([one, mask] if first else [mask, one], dim=1)
        device = self._device()
        ids, feats, locations = tokens["input_ids"].to(device), feats.to(device), locations.to(device)
        embed = vilbert_embeddings if cfg["image_embeddings"] == "vilbert" else vlbert_embeddings
        t, v = embed(net, cfg, ids, feats, locations, mask)
        t_mask = (1.0 - tokens["attention_mask"].to(device).float()) * -10000.0
        v_mask = (1.0 - mask.to(device).float()) * -10000.0
        return volta_forward(net, t, v, t_mask, v_mask)[0]

