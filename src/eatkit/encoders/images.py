"""Image stimuli on disk: resolving categories to files, decoding to RGB, and explicit preprocessing.

Conventions (recorded in every image encoder's configuration through :meth:`Preprocessing.to_dict`):

- **Files** of a category are resolved by :func:`eatkit.stimuli.images.resolve_image_set`.
- **Decoding** (:func:`load_image`): the EXIF orientation is applied (as image viewers and OpenCV, which
  the iEAT reference code used, do); the first frame of an animation is used; palette and
  greyscale images become RGB; transparency (alpha channel, or a palette/greyscale transparency
  colour) is composited onto white; CMYK uses Pillow's conversion; 16-bit greyscale is scaled to 8 bits.
- **Geometry** (:class:`Preprocessing`): ``"top-left-square"`` keeps the top-left ``min(w, h)``
  square, then resizes it to ``size`` (the iEAT reference code's crop; with ``"box"`` interpolation
  the same pixels as its OpenCV ``INTER_AREA`` resize when the square's side is a multiple of ``size``,
  and images are decoded in full as OpenCV does unless ``jpeg_draft=True``); ``"center-square"``
  keeps the centred square instead; ``"resize-shorter+center-crop"`` resizes the shorter side to
  ``resize`` and crops the centre ``size`` x ``size`` (timm's and torchvision's evaluation transform);
  ``"stretch"`` resizes the whole image to ``size`` x ``size`` (Hugging Face's BLIP and ImageGPT processors).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.errors import EatkitError, one_line
from eatkit.io import require

CROPS: tuple[str, ...] = ("top-left-square", "center-square", "resize-shorter+center-crop", "stretch")
INTERPOLATIONS: tuple[str, ...] = ("nearest", "box", "bilinear", "hamming", "bicubic", "lanczos")


def load_image(path: str | Path, *, draft: tuple[int, int] | None = None) -> Any:
    """Decode an image file to an 8-bit RGB :class:`PIL.Image.Image` (conventions in the module docstring).

    ``draft`` lets a JPEG decoder downscale by 1/2, 1/4 or 1/8 while decoding, keeping both sides at
    least ``draft`` (Pillow's :meth:`~PIL.Image.Image.draft`; much faster for large photographs).
    An unreadable file is an :class:`EatkitError` naming it.

    >>> import tempfile, pathlib; from PIL import Image
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.png"; Image.new("LA", (1, 1), (0, 0)).save(p)
    >>> load_image(p).getpixel((0, 0))  # fully transparent black on white
    (255, 255, 255)
    """
    pil = require("PIL.Image", "image loading", "image")
    ops = require("PIL.ImageOps", "image loading", "image")
    try:
        with pil.open(path) as image:
            if draft is not None and image.format == "JPEG":
                image.draft(None, draft)
            image.load()
            ops.exif_transpose(image, in_place=True)
            return _to_rgb(image, pil)
    except (OSError, SyntaxError, ValueError, pil.DecompressionBombError) as exc:
        raise EatkitError(f"cannot read image {path}: {one_line(exc)}") from None


def _to_rgb(image: Any, pil: Any) -> Any:
    """8-bit RGB with any transparency composited onto white (see the module docstring)."""
    if image.mode in ("I;16", "I;16B", "I;16L", "I"):
        scaled = np.clip(np.asarray(image, dtype=np.float64) / 257.0, 0, 255).round().astype(np.uint8)
        image = pil.fromarray(scaled, mode="L")
    if image.mode == "P" or (image.mode in ("L", "RGB") and "transparency" in image.info):
        image = image.convert("RGBA")
    if image.mode in ("RGBA", "LA", "PA", "RGBa", "La"):
        rgba = image.convert("RGBA")
        background = pil.new("RGBA", rgba.size, (255, 255, 255, 255))
        return pil.alpha_composite(background, rgba).convert("RGB")
    return image if image.mode == "RGB" else image.convert("RGB")


@dataclass(frozen=True)
class Preprocessing:
    """Geometry and normalisation of an image model's input, recorded in manifests and cache keys.

    ``crop`` and ``resize`` follow the module docstring (``resize`` is used by
    ``"resize-shorter+center-crop"`` only and defaults to ``size``); ``interpolation`` names a Pillow
    filter (``"box"`` averages the source pixels whose centres fall in each output pixel's footprint,
    which equals OpenCV's ``INTER_AREA`` of the iEAT code for integer reduction factors); ``mean`` and
    ``std`` normalise ``[0, 1]`` pixel values per channel; ``jpeg_draft=True`` (opt-in) lets JPEGs decode
    at a reduced DCT scale that is still at least the size needed: faster, but different pixels (on the
    iEAT JPEGs at EfficientNet-Lite0's 256-pixel resize, 1.9 grey levels on average per pixel of the
    drafted images, up to 11 for one image).

    >>> p = Preprocessing(size=4, crop="top-left-square", interpolation="box", mean=(0.5,) * 3, std=(0.5,) * 3)
    >>> from PIL import Image; p(Image.new("RGB", (8, 6), (255, 0, 0))).shape
    (3, 4, 4)
    """

    size: int = 224
    crop: str = "resize-shorter+center-crop"
    resize: int | None = None
    interpolation: str = "bicubic"
    mean: tuple[float, float, float] = (0.485, 0.456, 0.406)
    std: tuple[float, float, float] = (0.229, 0.224, 0.225)
    jpeg_draft: bool = False

    def __post_init__(self) -> None:
        if self.crop not in CROPS:
            raise EatkitError(f"unknown crop '{self.crop}' (known: {', '.join(CROPS)})")
        if self.interpolation not in INTERPOLATIONS:
            raise EatkitError(f"unknown interpolation '{self.interpolation}' (known: {', '.join(INTERPOLATIONS)})")
        if self.size < 1 or (self.resize is not None and self.resize < self.size):
            raise EatkitError(f"bad preprocessing sizes: size={self.size}, resize={self.resize}")
        object.__setattr__(self, "mean", tuple(float(m) for m in self.mean))
        object.__setattr__(self, "std", tuple(float(s) for s in self.std))

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able record of this preprocessing (with the decoding conventions)."""
        return {**dataclasses.asdict(self), "resize": self.resize or self.size,
                "mean": list(self.mean), "std": list(self.std),
                "decode": "exif-orientation, first frame, alpha over white, 8-bit RGB"}

    def draft_size(self) -> tuple[int, int] | None:
        """The ``draft`` of :func:`load_image` this preprocessing decodes with (``None``: in full)."""
        need = (self.resize or self.size) if self.crop == "resize-shorter+center-crop" else self.size
        return (need, need) if self.jpeg_draft else None

    def load(self, path: str | Path) -> Any:
        """Decode ``path`` and apply the geometry: a ``size`` x ``size`` RGB :class:`PIL.Image.Image`."""
        return self.geometry(load_image(path, draft=self.draft_size()))

    def pixels(self, path: str | Path) -> np.ndarray:
        """Decode, crop and resize ``path``: the ``(3, size, size)`` uint8 RGB pixels (what decoding workers
        send: a quarter of the bytes of the float input; :meth:`normalize_pixels` finishes the input)."""
        return self.pixels_of(load_image(path, draft=self.draft_size()))

    def pixels_of(self, image: Any) -> np.ndarray:
        """:meth:`pixels` of an image decoded already (by :func:`load_image` with :meth:`draft_size`): one
        decode serves models whose preprocessing differs (:mod:`eatkit.encoders.pixels`)."""
        return np.ascontiguousarray(np.asarray(self.geometry(image), dtype=np.uint8).transpose(2, 0, 1))

    def array(self, path: str | Path) -> np.ndarray:
        """Decode, crop, resize and normalise ``path``: the ``(3, size, size)`` float32 model input."""
        return self.normalize_pixels(self.pixels(path))

    def geometry(self, image: Any) -> Any:
        """Crop and resize an RGB image to ``size`` x ``size`` (no normalisation)."""
        from PIL import Image

        resample = getattr(Image.Resampling, self.interpolation.upper())
        w, h = image.size
        if self.crop == "resize-shorter+center-crop":
            short = self.resize or self.size
            # torchvision.transforms.Resize(int): the longer side is truncated, not rounded
            nw, nh = (short, int(short * h / w)) if w <= h else (int(short * w / h), short)
            image = image.resize((nw, nh), resample)
            left, top = round((nw - self.size) / 2.0), round((nh - self.size) / 2.0)
            return image.crop((left, top, left + self.size, top + self.size))
        if self.crop == "stretch":
            return image.resize((self.size, self.size), resample)
        side = min(w, h)
        left, top = ((w - side) // 2, (h - side) // 2) if self.crop == "center-square" else (0, 0)
        return image.resize((self.size, self.size), resample, box=(left, top, left + side, top + side))

    def table(self) -> np.ndarray:
        """The ``(3, 256)`` float32 normalisation table: ``(v / 255 - mean[c]) / std[c]`` for channel ``c`` and
        level ``v``, computed in float32 (a look-up gives the same bits as computing it per pixel).

        >>> Preprocessing(mean=(0.5,) * 3, std=(0.5,) * 3).table()[:, [0, 255]].tolist()
        [[-1.0, 1.0], [-1.0, 1.0], [-1.0, 1.0]]
        """
        levels = np.arange(256, dtype=np.float32) / np.float32(255.0)
        mean, std = np.asarray(self.mean, dtype=np.float32), np.asarray(self.std, dtype=np.float32)
        return np.ascontiguousarray(((levels[:, np.newaxis] - mean) / std).T)

    def normalize_pixels(self, pixels: np.ndarray) -> np.ndarray:
        """uint8 pixels ``(..., 3, H, W)`` (:meth:`pixels`, or a batch of them) as float32 model input of the
        same shape, looked up in :meth:`table`."""
        table, out = self.table(), np.empty(pixels.shape, dtype=np.float32)
        for c in range(3):
            np.take(table[c], pixels[..., c, :, :], out=out[..., c, :, :], mode="clip")  # 4x fancy indexing
        return out

    def normalize(self, image: Any) -> np.ndarray:
        """An RGB image as a ``(3, H, W)`` float32 array, ``(x / 255 - mean) / std`` per channel
        (:meth:`normalize_pixels`)."""
        return self.normalize_pixels(np.asarray(image, dtype=np.uint8).transpose(2, 0, 1))

    def __call__(self, image: Any) -> np.ndarray:
        """Geometry then normalisation of a decoded RGB image: a ``(3, size, size)`` float32 array."""
        return self.normalize(self.geometry(image))
