"""A tiny random Stable Diffusion pipeline built offline from configs (UNet, VAE, CLIP text encoder with a
character-level tokenizer, a scheduler), saved with ``save_pretrained`` (shared by the generation tests)."""

from __future__ import annotations

from pathlib import Path


def tiny_pipeline(folder: Path, *, seed: int = 0, scheduler: str = "DDIMScheduler") -> str:
    """A random ``StableDiffusionPipeline`` (16 x 16 images, 4 x 4 latents) saved in ``folder``; ``seed``
    draws its weights (two seeds: two different models)."""
    import diffusers
    import torch
    import transformers

    from tiny_vl import byte_level_vocab

    torch.manual_seed(seed)
    unet = diffusers.UNet2DConditionModel(
        sample_size=4, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(8, 16),
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=16, attention_head_dim=2, norm_num_groups=4)
    vae = diffusers.AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(8, 8, 8),
                                  down_block_types=("DownEncoderBlock2D",) * 3,
                                  up_block_types=("UpDecoderBlock2D",) * 3, norm_num_groups=4, sample_size=16)
    vocab = byte_level_vocab()
    text = transformers.CLIPTextModel(transformers.CLIPTextConfig(
        vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        max_position_embeddings=77, bos_token_id=0, eos_token_id=1, pad_token_id=1))
    tokenizer = transformers.CLIPTokenizer(vocab=vocab, merges=[], model_max_length=77)
    schedule = getattr(diffusers, scheduler)(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear",
                                              num_train_timesteps=1000, steps_offset=1,
                                              **({"clip_sample": False} if "DDIM" in scheduler else {}))
    pipe = diffusers.StableDiffusionPipeline(vae=vae, text_encoder=text, tokenizer=tokenizer, unet=unet,
                                             scheduler=schedule, safety_checker=None, feature_extractor=None,
                                             requires_safety_checker=False)
    pipe.save_pretrained(folder)
    return str(folder)
