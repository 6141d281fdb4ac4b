"""The vocabulary of image preprocessing and the study presets, as plain data (no heavy imports: the command line
builds its flags from it without loading numpy). :mod:`eatkit.encoders.images` applies them."""

from __future__ import annotations

from typing import Any

CROPS: tuple[str, ...] = ("top-left-square", "center-square", "resize-shorter+center-crop", "stretch")
INTERPOLATIONS: tuple[str, ...] = ("nearest", "box", "bilinear", "hamming", "bicubic", "lanczos", "area")
DECODERS: tuple[str, ...] = ("pillow", "opencv", "pil-open")
ALPHAS: tuple[str, ...] = ("white", "drop")
ROUNDINGS: tuple[str, ...] = ("round", "floor")

#: study presets: the fields of :class:`Preprocessing` each sets (the model's own values for the rest)
PRESETS: dict[str, dict[str, Any]] = {
    "steed2021": {  # iEAT (seed 000): ryansteed/ieat's image utilities, cv2.imread then INTER_AREA
        "decoder": "opencv", "alpha": "drop", "crop": "top-left-square", "interpolation": "area"},
    "wolfe2022-clip": {  # ML-EAT (seed 002): transformers' CLIPImageProcessor on a Pillow image
        "decoder": "pil-open", "alpha": "drop", "crop": "resize-shorter+center-crop", "rounding": "floor",
        "interpolation": "bicubic", "size": 224, "resize": 224,
        "mean": (0.48145466, 0.4578275, 0.40821073), "std": (0.26862954, 0.26130258, 0.27577711)},
    "wolfe2022-blip": {  # "American == White" (seed 003), BLIP retrieval and captions: BLIP's transform_test
        "decoder": "pil-open", "alpha": "drop", "crop": "stretch", "interpolation": "bicubic", "size": 384,
        "mean": (0.48145466, 0.4578275, 0.40821073), "std": (0.26862954, 0.26130258, 0.27577711)},
    "wolfe2022-blip-vqa": {  # "American == White" (seed 003), BLIP VQA: the same transform at 480 px
        "decoder": "pil-open", "alpha": "drop", "crop": "stretch", "interpolation": "bicubic", "size": 480,
        "mean": (0.48145466, 0.4578275, 0.40821073), "std": (0.26862954, 0.26130258, 0.27577711)},
}
#: what each preset reproduces (``eatkit list presets``)
PRESET_SOURCES: dict[str, str] = {
    "steed2021": "iEAT (Steed & Caliskan 2021): cv2.imread (alpha dropped), top-left square, cv2.resize "
                 "INTER_AREA; then the network's own scaling (/255 for SimCLR, iGPT's [-1, 1] and colour clusters)",
    "wolfe2022-clip": "ML-EAT CLIP (Wolfe et al.): Pillow image, CLIPImageProcessor (shortest edge 224 bicubic, "
                      "centre crop 224 with the offset floored, CLIP's mean and std)",
    "wolfe2022-blip": "\"American == White\" BLIP (Wolfe & Caliskan 2022): Pillow image, resize to 384 x 384 "
                      "bicubic, CLIP's mean and std (BLIP's transform_test)",
    "wolfe2022-blip-vqa": "\"American == White\" BLIP VQA: as wolfe2022-blip at 480 x 480 (BLIP's VQA input)",
}
