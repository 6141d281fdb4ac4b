"""Tiny random image-text-to-text models of the LLaVA, Qwen2-VL, Idefics3 and PaliGemma families, built offline
from configs, with processors and chat templates built here (a byte-level BPE trained on a few sentences, the
families' image processors at 16-32 pixels): the stand-ins of the answerer tests (tests/test_answerers.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import transformers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from tiny_lm import PAIRS


def _bpe(specials: list[str]) -> Tokenizer:
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator([p for pair in PAIRS for p in pair[:2]] * 3, trainers.BpeTrainer(
        vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return bpe


def _template(image: str, start: str = "<|", end: str = "|>", close: str = "") -> str:
    """A chat template in the families' shape: each message's role, its image placeholder then its text."""
    return ("{% for m in messages %}" + start + "{{ m['role'] }}" + end + "\n"
            "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
            "{% if c['type'] == 'image' %}" + image + "{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
            + close + "\n{% endfor %}{% if add_generation_prompt %}" + start + "assistant" + end + "\n{% endif %}")


def make_llava(folder: Path, seed: int = 0) -> str:
    """A LLaVA-family model: CLIP vision tower (16 px, patches of 8), 2-layer Llama, LlavaProcessor."""
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=_bpe(["<|endoftext|>", "<image>", "<pad>"]),
                                               eos_token="<|endoftext|>", bos_token="<|endoftext|>", pad_token="<pad>")
    images = transformers.CLIPImageProcessor(size={"shortest_edge": 16}, crop_size={"height": 16, "width": 16})
    transformers.LlavaProcessor(image_processor=images, tokenizer=tok, patch_size=8, image_token="<image>",
                                vision_feature_select_strategy="default", num_additional_image_tokens=1,
                                chat_template=_template("<image>")).save_pretrained(folder)
    vision = transformers.CLIPVisionConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                           num_attention_heads=2, image_size=16, patch_size=8)
    text = transformers.LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                    num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                                    bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                                    pad_token_id=tok.pad_token_id)
    config = transformers.LlavaConfig(vision_config=vision, text_config=text, vision_feature_layer=-1,
                                      image_token_index=tok.convert_tokens_to_ids("<image>"),
                                      vision_feature_select_strategy="default")
    torch.manual_seed(seed)
    transformers.LlavaForConditionalGeneration(config).save_pretrained(folder)
    return str(folder)


QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>",
                 "<|video_pad|>"]


def make_qwen2vl(folder: Path, seed: int = 0) -> str:
    """A Qwen2-VL-family model: 2-block vision transformer (patches of 8, merged 2x2), 2-layer Qwen2 decoder
    with M-RoPE, Qwen2VLProcessor (images of 16-32 pixels a side)."""
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=_bpe(QWEN_SPECIALS), eos_token="<|im_end|>",
                                               pad_token="<|endoftext|>")
    sizes = dict(min_pixels=16 * 16, max_pixels=32 * 32, patch_size=8, merge_size=2, temporal_patch_size=2)
    transformers.Qwen2VLProcessor(
        image_processor=transformers.Qwen2VLImageProcessor(**sizes),
        video_processor=transformers.Qwen2VLVideoProcessor(**sizes), tokenizer=tok,
        chat_template=_template("<|vision_start|><|image_pad|><|vision_end|>", "<|im_start|>", "", "<|im_end|>"),
    ).save_pretrained(folder)
    ids = {t: tok.convert_tokens_to_ids(t) for t in QWEN_SPECIALS}
    config = transformers.Qwen2VLConfig(
        text_config=dict(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                         rope_scaling={"type": "mrope", "mrope_section": [1, 1, 2]}, bos_token_id=ids["<|endoftext|>"],
                         eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"]),
        vision_config=dict(depth=2, embed_dim=16, hidden_size=16, num_heads=2, mlp_ratio=2, patch_size=8,
                           spatial_merge_size=2, temporal_patch_size=2, in_channels=3),
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"])
    torch.manual_seed(seed)
    transformers.Qwen2VLForConditionalGeneration(config).save_pretrained(folder)
    return str(folder)


def write_image(path: Path, seed: int = 0, size: tuple[int, int] = (20, 24)) -> Path:
    """A small random RGB PNG."""
    from PIL import Image

    Image.fromarray((np.random.default_rng(seed).random((*size, 3)) * 255).astype("uint8")).save(path)
    return path


#: Idefics3's chat template, as HuggingFaceM4/Idefics3-8B-Llama3's processor holds it: "User:" and the image
#: placeholder before the text, "<end_of_utterance>" after each message, "Assistant:" to answer
IDEFICS3_TEMPLATE = (
    "<|begin_of_text|>{% for message in messages %}{{message['role'] | capitalize}}"
    "{% if message['content'][0]['type'] == 'image' %}{{':'}}{% else %}{{': '}}{% endif %}"
    "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{line['text']}}"
    "{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}<end_of_utterance>\n{% endfor %}"
    "{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}")


def make_idefics3(folder: Path, seed: int = 0) -> str:
    """An Idefics3-family model (as SmolVLM): SigLIP-style vision encoder (16 px, patches of 8), pixel shuffle
    2 (one image token), 2-layer Llama, Idefics3Processor without image splitting, Idefics3's chat template."""
    specials = ["<|begin_of_text|>", "<end_of_utterance>", "<pad>", "<fake_token_around_image>", "<image>",
                "<global-img>"] + [f"<row_{i + 1}_col_{j + 1}>" for i in range(6) for j in range(6)]
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=_bpe(specials), bos_token="<|begin_of_text|>",
                                               eos_token="<end_of_utterance>", pad_token="<pad>")
    images = transformers.Idefics3ImageProcessor(do_image_splitting=False, size={"longest_edge": 16},
                                                 max_image_size={"longest_edge": 16})
    processor = transformers.Idefics3Processor(image_processor=images, tokenizer=tok, image_seq_len=1,
                                               chat_template=IDEFICS3_TEMPLATE)
    processor.save_pretrained(folder)
    text = dict(vocab_size=len(processor.tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512, bos_token_id=tok.bos_token_id,
                eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    config = transformers.Idefics3Config(
        vision_config=dict(hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
                           image_size=16, patch_size=8),
        text_config=text, scale_factor=2, image_token_id=processor.tokenizer.convert_tokens_to_ids("<image>"),
        pad_token_id=tok.pad_token_id)
    torch.manual_seed(seed)
    transformers.Idefics3ForConditionalGeneration(config).save_pretrained(folder)
    return str(folder)


def make_paligemma(folder: Path, seed: int = 0) -> str:
    """A PaliGemma-family model: SigLIP vision encoder (16 px, patches of 8: 4 image tokens), 2-layer Gemma,
    PaliGemmaProcessor (no chat template: image tokens, BOS, the prefix and a newline; an answer is the suffix)."""
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=_bpe(["<pad>", "<eos>", "<bos>", "<image>"]),
                                               eos_token="<eos>", bos_token="<bos>", pad_token="<pad>")
    images = transformers.SiglipImageProcessor(size={"height": 16, "width": 16}, image_seq_length=4)
    processor = transformers.PaliGemmaProcessor(image_processor=images, tokenizer=tok)
    processor.save_pretrained(folder)
    text = dict(vocab_size=len(processor.tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                num_attention_heads=2, num_key_value_heads=1, head_dim=8, max_position_embeddings=512,
                bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    config = transformers.PaliGemmaConfig(
        vision_config=dict(hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
                           image_size=16, patch_size=8, vision_use_head=False),
        text_config=text, image_token_index=processor.tokenizer.convert_tokens_to_ids("<image>"), projection_dim=16,
        hidden_size=16)
    torch.manual_seed(seed)
    transformers.PaliGemmaForConditionalGeneration(config).save_pretrained(folder)
    return str(folder)
