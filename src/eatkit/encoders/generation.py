"""CLIP-guided image generation from an initial image (the generation probe of the "American == White" study).

The study used VQGAN-CLIP: a VQGAN decoder's latent is optimised so that CLIP finds the decoded image
similar to a prompt ("an American person"), starting from a face photograph. eatkit optimises the
image directly, under one of two parameterisations, with the same objective:

- ``"pixel"``: image = sigmoid(P), P initialised to logit(initial image);
- ``"fourier"``: image = sigmoid(irfft2(F)), F initialised to rfft2(logit(initial image)) (orthonormal
  FFT), so that Adam's per-coordinate steps act on spatial frequencies (smoother changes).

Loss: 1 - mean cosine between the prompt's text embedding and the image embeddings of ``cutouts`` random
square crops (side 50-100 % of the image, resized to the model's input size; the whole image when
``cutouts=0``), normalised with the model's mean and std. Adam, learning rate ``lr``, ``steps`` steps; a
frame (8-bit RGB) is kept at step 0 and every ``every`` steps. Random crops are drawn from
``torch.manual_seed(seed)``. VQGAN decoders (taming-transformers) are not supported: see docs/probes.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eatkit.encoders.images import Preprocessing
from eatkit.errors import EatkitError

PARAMETERIZATIONS: tuple[str, ...] = ("pixel", "fourier")
#: the start image's crop and its resize filter
INITIAL_INTERPOLATION: dict[str, str] = {"center-square": "bicubic", "stretch": "lanczos"}


class CLIPGuidedGenerator:
    """Optimise an image toward a prompt under a CLIP-like joint encoder (``hf-clip:``, ``open_clip:``,
    ``hf-blip:``; any :class:`~eatkit.encoders.vision_language.JointEncoder`).

    Example::

        gen = CLIPGuidedGenerator(build_model("open_clip:ViT-B-32/openai"), steps=80, every=10)
        frames = gen.run("face.jpg", "an American person", seed=0)   # (9, 224, 224, 3) uint8
    """

    def __init__(self, encoder: Any, *, steps: int = 80, every: int = 10, lr: float = 0.05,
                 parameterization: str = "pixel", size: int | None = None, cutouts: int = 4,
                 initial: str = "center-square") -> None:
        from eatkit.encoders.vision_language import JointEncoder

        if not isinstance(encoder, JointEncoder):
            raise EatkitError(f"model '{getattr(encoder, 'id', encoder)}' is not a CLIP-like vision-language model: "
                              "generation needs one that embeds images and text (hf-clip:, open_clip:, hf-blip:)")
        for name, value, least in (("steps", steps, 1), ("every", every, 1), ("cutouts", cutouts, 0)):
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise EatkitError(f"{name} must be an integer >= {least}, got {value!r}")
        if parameterization not in PARAMETERIZATIONS:
            raise EatkitError(f"parameterization must be one of {', '.join(PARAMETERIZATIONS)}, got {parameterization!r}")
        if not isinstance(lr, (int, float)) or not lr > 0:
            raise EatkitError(f"lr must be a positive number, got {lr!r}")
        self.encoder, self.steps, self.every, self.lr = encoder, steps, every, float(lr)
        self.parameterization, self.cutouts = parameterization, cutouts
        self.size = size or encoder.preprocessing.size
        if initial not in INITIAL_INTERPOLATION:
            raise EatkitError(f"initial must be one of {', '.join(INITIAL_INTERPOLATION)}, got {initial!r}")
        # the start image: its centre square (bicubic), or stretched whole (Lanczos, as VQGAN-CLIP's init image)
        self.initial = Preprocessing(size=self.size, crop=initial, interpolation=INITIAL_INTERPOLATION[initial])

    def config(self) -> dict[str, Any]:
        return {"model": self.encoder.id, "steps": self.steps, "every": self.every, "lr": self.lr,
                "parameterization": self.parameterization, "size": self.size, "cutouts": self.cutouts,
                "initial_image": {"center-square": "centre square, bicubic resize to size",
                                  "stretch": "whole image stretched to size x size, Lanczos"}[self.initial.crop],
                "optimizer": "Adam"}

    def frame_steps(self) -> list[int]:
        """The steps at which frames are kept: 0, every, 2 every, ... (and the last step)."""
        return sorted({*range(0, self.steps + 1, self.every), self.steps})

    def run(self, path: str | None, prompt: str, seed: int) -> np.ndarray:
        """Frames of the optimisation from the image file ``path``: (frames, size, size, 3) uint8. With
        ``path=None`` it starts from seeded uniform noise: generation from the text alone (the "American ==
        White" study's appendix A.3, Figure 8)."""
        import torch

        enc = self.encoder
        net, tokenizer = enc.towers()
        net.requires_grad_(False)  # only the image is optimised
        torch.manual_seed(seed)
        with torch.no_grad():
            text = enc.text_features(net, tokenizer, [prompt])
        if path is None:  # the text alone: uniform noise drawn from the seed
            pixels = np.random.default_rng(seed).integers(0, 256, (self.size, self.size, 3))
        else:
            pixels = np.asarray(self.initial.load(path))
        start = torch.from_numpy(pixels.astype(np.float32) / 255.0)
        start = start.permute(2, 0, 1)[None].clamp(1e-3, 1 - 1e-3)
        logit = torch.log(start) - torch.log1p(-start)
        if self.parameterization == "fourier":
            param = torch.view_as_real(torch.fft.rfft2(logit, norm="ortho")).clone().requires_grad_(True)
        else:
            param = logit.clone().requires_grad_(True)
        optimizer = torch.optim.Adam([param], lr=self.lr)
        keep, frames = set(self.frame_steps()), []
        for step in range(self.steps + 1):
            image = self._image(param)
            if step in keep:
                frames.append((image.detach()[0].permute(1, 2, 0).numpy() * 255.0).round().astype(np.uint8))
            if step == self.steps:
                break
            loss = 1.0 - (enc.image_features(net, self._views(image)) @ text.T).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return np.stack(frames)

    def _image(self, param: Any) -> Any:
        import torch

        if self.parameterization == "fourier":
            return torch.sigmoid(torch.fft.irfft2(torch.view_as_complex(param), s=(self.size, self.size),
                                                  norm="ortho"))
        return torch.sigmoid(param)

    def embed(self, frames: np.ndarray, prompts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The model's embeddings of ``frames`` ((n, size, size, 3) uint8, each whole frame resized and
        normalised as in the optimisation) and of ``prompts``: ((n, d), (len(prompts), d))."""
        import torch

        net, tokenizer = self.encoder.towers()
        images = torch.from_numpy(frames.astype(np.float32) / 255.0).permute(0, 3, 1, 2)
        with torch.no_grad():
            return (self.encoder.image_features(net, self._inputs([images])).numpy().astype(np.float64),
                    self.encoder.text_features(net, tokenizer, prompts).numpy().astype(np.float64))

    def _views(self, image: Any) -> Any:
        """The model inputs: random square crops (or the whole image), resized and normalised."""
        import torch

        crops = [image]
        if self.cutouts:
            crops = []
            for _ in range(self.cutouts):
                side = int(torch.randint(self.size // 2, self.size + 1, ()).item())
                top = int(torch.randint(0, self.size - side + 1, ()).item())
                left = int(torch.randint(0, self.size - side + 1, ()).item())
                crops.append(image[:, :, top:top + side, left:left + side])
        return self._inputs(crops)

    def _inputs(self, crops: list[Any]) -> Any:
        """Image batches resized to the model's input size and normalised with its mean and std."""
        import torch
        import torch.nn.functional as F

        model_size = self.encoder.preprocessing.size
        views = torch.cat([F.interpolate(c, size=(model_size, model_size), mode="bilinear", align_corners=False,
                                         antialias=True) for c in crops])
        mean = torch.tensor(self.encoder.preprocessing.mean).view(1, 3, 1, 1)
        std = torch.tensor(self.encoder.preprocessing.std).view(1, 3, 1, 1)
        return (views - mean) / std
