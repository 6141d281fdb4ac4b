"""Tiny random vision-language models built offline from configs (shared by the probe tests)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: the size of every tiny transformer tower
TOWER = {"hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2, "num_attention_heads": 2}

#: a word-level vocabulary for the tiny BLIP heads ([DEC] starts generation, as in BLIP)
BLIP_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[DEC]", "a", "photo", "of", "man", "woman", "person",
              "asian", "white", "black", "african", "american", "yes", "no", "is", "this", "an", "?", "ohio", "china",
              "what", "state", "does", "live", "in"]


def tiny_blip(folder: Path, model_class: str) -> str:
    """A random ``BlipForQuestionAnswering`` or ``BlipForConditionalGeneration`` with its tokenizer and
    image processor (32 x 32 images) saved in ``folder``."""
    import torch
    import transformers

    torch.manual_seed(0)
    config = transformers.BlipConfig(
        text_config={**TOWER, "vocab_size": len(BLIP_VOCAB), "max_position_embeddings": 40,
                     "encoder_hidden_size": 32, "bos_token_id": 5, "sep_token_id": 3, "pad_token_id": 0},
        vision_config={**TOWER, "image_size": 32, "patch_size": 8}, image_text_hidden_size=16)
    getattr(transformers, model_class)(config).save_pretrained(folder)
    transformers.BertTokenizerFast(vocab={w: i for i, w in enumerate(BLIP_VOCAB)}, bos_token="[DEC]"
                                   ).save_pretrained(folder)
    transformers.BlipImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    return str(folder)


def byte_level_vocab() -> dict[str, int]:
    """A character-level CLIP BPE vocabulary (no merges): every byte symbol, alone and word-final."""
    from tokenizers.pre_tokenizers import ByteLevel

    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for suffix in ("", "</w>"):
        for c in sorted(ByteLevel.alphabet()):
            vocab[c + suffix] = len(vocab)
    return vocab


def tiny_clip(folder: Path, *, max_positions: int = 77, shortest_edge: int = 32) -> str:
    """A random transformers ``CLIPModel`` (16-d joint space, 32 x 32 images) saved in ``folder``."""
    import torch
    import transformers

    vocab = byte_level_vocab()
    torch.manual_seed(0)
    config = transformers.CLIPConfig(
        text_config={**TOWER, "vocab_size": len(vocab), "max_position_embeddings": max_positions, "bos_token_id": 0,
                     "eos_token_id": 1, "pad_token_id": 1},
        vision_config={**TOWER, "image_size": 32, "patch_size": 8},
        projection_dim=16)
    transformers.CLIPModel(config).save_pretrained(folder)
    transformers.CLIPTokenizer(vocab=vocab, merges=[], model_max_length=max_positions).save_pretrained(folder)
    transformers.CLIPImageProcessor(size={"shortest_edge": shortest_edge}, crop_size={"height": 32, "width": 32}
                                    ).save_pretrained(folder)
    return str(folder)


#: a tiny open_clip architecture (registered under a name of the caller's choice by :func:`tiny_open_clip`)
TINY_OPEN_CLIP = {"embed_dim": 16,
                  "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
                  "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1}}


def tiny_open_clip(folder: Path, name: str = "eatkit-tiny") -> str:
    """``open_clip:<name>/<weights file>``: a random tiny open_clip CLIP (``create_model`` with
    ``pretrained=None``) whose weights are saved in ``folder``."""
    import json

    import open_clip
    import torch

    (folder / f"{name}.json").write_text(json.dumps(TINY_OPEN_CLIP))
    open_clip.add_model_config(folder / f"{name}.json")
    torch.manual_seed(0)
    torch.save(open_clip.create_model(name, pretrained=None).state_dict(), folder / "w.pt")
    return f"open_clip:{name}/{folder / 'w.pt'}"


def group_images(root: Path, groups: dict[str, int], seed: int = 0) -> Path:
    """A folder-per-group layout ``root/<group>/<i>.png`` of random 40 x 48 images; group g's images are
    brighter for later groups, so a model can tell them apart."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    for level, (group, n) in enumerate(groups.items()):
        (root / group).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            base = 40 + 50 * level
            pixels = np.clip(base + rng.integers(0, 60, size=(48, 40, 3)), 0, 255).astype(np.uint8)
            Image.fromarray(pixels, "RGB").save(root / group / f"{i:02d}.png")
    return root
