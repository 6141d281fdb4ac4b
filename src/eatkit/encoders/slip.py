"""SLIP (Mu et al. 2022, "SLIP: Self-supervision meets Language-Image Pre-training"; the "American ==
White" study's third model) from the released checkpoints of facebookresearch/SLIP.

A released file (``slip_base_100ep.pt``, ``clip_base_25ep.pt``, ...) is a ``torch.save`` of
``{"epoch", "state_dict", "optimizer", "scaler", "best_acc1", "args"}`` whose ``state_dict`` holds the
DistributedDataParallel keys of SLIP's ``models.py`` (``module.`` prefix): ``visual.*`` a timm
VisionTransformer without head (``num_classes=0``), the CLIP text transformer
(``token_embedding``, ``positional_embedding``, ``transformer.resblocks.*`` with
``nn.MultiheadAttention`` and QuickGELU, ``ln_final``), ``image_projection``, ``text_projection``,
``logit_scale`` and, for SLIP, the SimCLR head ``image_mlp.*`` (not used). ``args`` is an
``argparse.Namespace`` (read as plain data, recorded as the checkpoint's ``model``).

Embedding definitions (as SLIP's ``eval_zeroshot.py``), L2-normalised: images: the ViT class token after
its final layer norm, times ``image_projection``; texts: SLIP's tokenizer (CLIP's BPE, lower-cased,
start and end tokens, truncated to the context length after the end token is appended), the text
transformer under a causal mask, ``ln_final`` at the end-of-text token (the largest id), times
``text_projection``. Sizes are read from the checkpoint's shapes; the attention heads are those of SLIP's
configurations (ViT-S/16 12, ViT-B/16 12, ViT-L/16 16 by vision width; text 8 = width / 64), width / 64
otherwise. Preprocessing: ``eval_zeroshot.py``'s transform (shorter side 224, bilinear, centre crop 224,
ImageNet mean and std).
"""

from __future__ import annotations

import argparse
import functools
import pathlib
from pathlib import Path
from typing import Any

from eatkit.encoders.checkpoints import checkpoint_identity, load_state_strict, required_checkpoint
from eatkit.encoders.images import Preprocessing
from eatkit.encoders.published import published_state
from eatkit.encoders.text import model_device
from eatkit.encoders.vision_language import JointEncoder, unit_rows
from eatkit.errors import EatkitError
from eatkit.io import require

#: eval_zeroshot.py's transform: Resize(224), CenterCrop(224), ToTensor, ImageNet Normalize
#: the plain types SLIP's saved ``args`` hold (its submitit launcher stores output folders as paths); read
#: safely: ``torch.load(weights_only=True)`` builds a path from its strings and runs no other code
SLIP_ARGS_TYPES: tuple[Any, ...] = (argparse.Namespace, (pathlib.PosixPath, "pathlib.PosixPath"),
                                    (pathlib.PurePosixPath, "pathlib.PurePosixPath"))
SLIP_EVAL = Preprocessing(size=224, crop="resize-shorter+center-crop", resize=224, interpolation="bilinear")
#: attention heads of SLIP's vision towers by width (models.py: vit_small_mocov3 12, ViT-B 12, ViT-L 16)
VISION_HEADS: dict[int, int] = {384: 12, 768: 12, 1024: 16}


def heads(width: int, table: dict[int, int] | None = None) -> int:
    """Attention heads of a SLIP tower of ``width`` (the table's, else width / 64, at least 1).

    >>> heads(384, VISION_HEADS), heads(512), heads(32)
    (12, 8, 1)
    """
    return (table or {}).get(width, max(1, width // 64))


@functools.cache
def _bpe() -> Any:
    """open_clip's CLIP BPE tokenizer (read once)."""
    return require("open_clip.tokenizer", "SLIP's tokenizer", "vl").SimpleTokenizer()


def slip_tokens(texts: list[str], context_length: int) -> Any:
    """SLIP's tokenizer: CLIP's BPE (open_clip ships the same ``bpe_simple_vocab_16e6``), ``[sot] + bpe
    + [eot]`` truncated to ``context_length`` (a long text loses its end token, as in SLIP), zero-padded."""
    torch = require("torch", "SLIP", "vl")
    tokenizer = _bpe()
    sot, eot = tokenizer.sot_token_id, tokenizer.eot_token_id
    out = torch.zeros(len(texts), context_length, dtype=torch.long)
    for i, text in enumerate(texts):
        ids = ([sot] + tokenizer.encode(text) + [eot])[:context_length]
        out[i, :len(ids)] = torch.tensor(ids)
    return out


def slip_network(state: dict[str, Any], path: Path, model: str) -> Any:
    """SLIP's (or SLIP's CLIP's) network, sized from the shapes of ``state`` (keys without ``module.``)."""
    torch = require("torch", model, "vl")
    timm = require("timm", model, "vl")
    nn = torch.nn

    def shape(key: str) -> tuple[int, ...]:
        if key not in state:
            raise EatkitError(f"checkpoint {path} does not fit {model}: 1 missing tensor(s) (e.g. {key})")
        return tuple(state[key].shape)

    width, patch = shape("visual.patch_embed.proj.weight")[0], shape("visual.patch_embed.proj.weight")[-1]
    grid = round((shape("visual.pos_embed")[1] - 1) ** 0.5)
    if grid * patch != SLIP_EVAL.size:
        raise EatkitError(f"checkpoint {path} is a ViT for {grid * patch}-pixel images; SLIP's are 224")
    depth = sum(1 for k in state if k.startswith("visual.blocks.") and k.endswith(".attn.qkv.weight"))
    text_width, text_layers = shape("token_embedding.weight")[1], sum(
        1 for k in state if k.startswith("transformer.resblocks.") and k.endswith(".attn.in_proj_weight"))
    context = shape("positional_embedding")[0]

    class QuickGELU(nn.Module):
        def forward(self, x: Any) -> Any:
            return x * torch.sigmoid(1.702 * x)

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attn = nn.MultiheadAttention(text_width, heads(text_width))
            self.ln_1, self.ln_2 = nn.LayerNorm(text_width), nn.LayerNorm(text_width)
            self.mlp = nn.Sequential()
            self.mlp.add_module("c_fc", nn.Linear(text_width, 4 * text_width))
            self.mlp.add_module("gelu", QuickGELU())
            self.mlp.add_module("c_proj", nn.Linear(4 * text_width, text_width))

        def forward(self, x: Any, mask: Any) -> Any:   # x: (length, n, width), as SLIP's
            h = self.ln_1(x)
            x = x + self.attn(h, h, h, need_weights=False, attn_mask=mask)[0]
            return x + self.mlp(self.ln_2(x))

    class SLIP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.visual = timm.models.vision_transformer.VisionTransformer(
                img_size=grid * patch, patch_size=patch, embed_dim=width, depth=depth,
                num_heads=heads(width, VISION_HEADS), num_classes=0)
            self.transformer = nn.Module()
            self.transformer.resblocks = nn.ModuleList(Block() for _ in range(text_layers))
            self.token_embedding = nn.Embedding(shape("token_embedding.weight")[0], text_width)
            self.positional_embedding = nn.Parameter(torch.empty(context, text_width))
            self.ln_final = nn.LayerNorm(text_width)
            self.image_projection = nn.Parameter(torch.empty(shape("image_projection")))
            self.text_projection = nn.Parameter(torch.empty(shape("text_projection")))
            self.logit_scale = nn.Parameter(torch.ones([]))
            if "image_mlp.layer1.weight" in state:   # SLIP's SimCLR head (not used by the embeddings)
                mid, out = shape("image_mlp.layer1.weight")[0], shape("image_mlp.layer3.weight")[0]
                self.image_mlp = nn.Sequential()
                for name, module in (("layer1", nn.Linear(width, mid)), ("bn1", nn.BatchNorm1d(mid)),
                                     ("layer2", nn.Linear(mid, mid)), ("bn2", nn.BatchNorm1d(mid)),
                                     ("layer3", nn.Linear(mid, out))):
                    self.image_mlp.add_module(name, module)
            mask = torch.full((context, context), float("-inf")).triu_(1)
            self.register_buffer("causal_mask", mask, persistent=False)

        def encode_image(self, x: Any) -> Any:
            return self.visual(x) @ self.image_projection

        def encode_text(self, tokens: Any) -> Any:
            x = (self.token_embedding(tokens) + self.positional_embedding).permute(1, 0, 2)
            for block in self.transformer.resblocks:
                x = block(x, self.causal_mask)
            x = self.ln_final(x.permute(1, 0, 2))
            return x[torch.arange(x.shape[0]), tokens.argmax(dim=-1)] @ self.text_projection

    return SLIP()


class SLIPEncoder(JointEncoder):
    """SLIP (or SLIP's CLIP baseline) from a released checkpoint (``checkpoint``, ``--weights``)."""

    definition = ("SLIP/CLIP joint space: image = image_projection(ViT class token after its final norm), "
                  "text = text_projection(ln_final at the end-of-text token), L2-normalised (eval_zeroshot.py)")
    libraries = ("torch", "timm", "open_clip_torch", "pillow")

    def __init__(self, *, checkpoint: str | Path | None = None, prompt: str | None = None, **options: Any) -> None:
        self._path = required_checkpoint("slip", checkpoint)
        super().__init__(id="slip", model="slip", preprocessing=SLIP_EVAL, prompt=prompt, **options)
        self.weights = checkpoint_identity(self._path)
        self._tokenizer = None
        self._context = 77

    def config(self) -> dict[str, Any]:
        return {**super().config(), "tokenizer": "SLIP SimpleTokenizer (CLIP BPE, lower-cased, [sot] text [eot], "
                "truncated after the end token is appended)",
                "checkpoint_layout": "state_dict/module.* (facebookresearch/SLIP models.py)"}

    def _load(self) -> None:
        state, checkpoint = published_state(self._path, "state_dict", "module.", "slip", SLIP_ARGS_TYPES)
        net = slip_network(state, self._path, "slip")
        load_state_strict(net, state, f"checkpoint {self._path}", "slip")
        self._context = net.positional_embedding.shape[0]
        self._net = self._place(net)
        self._checkpoint_model = getattr(checkpoint.get("args"), "model", None)

    def manifest(self) -> dict[str, Any]:
        """The base manifest with the model the checkpoint says it is (its ``args.model``, once loaded)."""
        return {**super().manifest(), "checkpoint_model": getattr(self, "_checkpoint_model", None)}

    @staticmethod
    def image_features(net: Any, pixels: Any) -> Any:
        return unit_rows(net.encode_image(pixels))

    def text_features(self, net: Any, tokenizer: Any, texts: list[str]) -> Any:
        return unit_rows(net.encode_text(slip_tokens(texts, self._context).to(model_device(net))))
