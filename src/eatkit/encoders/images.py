"""Image stimuli on disk: resolving categories to files, decoding to RGB, and explicit preprocessing.

Conventions (recorded in every image encoder's configuration through :meth:`Preprocessing.to_dict`):

- **Files** of a category are resolved by :func:`eatkit.stimuli.images.resolve_image_set`.
- **Decoding** (:func:`load_image`, its ``decoder`` and ``alpha``): ``"pillow"`` (the default) applies the
  EXIF orientation (as image viewers and OpenCV do), uses the first frame of an animation, makes palette
  and greyscale images RGB, CMYK by Pillow's conversion, 16-bit greyscale scaled to 8 bits (``/ 257``);
  ``"opencv"`` gives the pixels of ``cv2.imread(path)`` with its default flags (the iEAT authors' decoder:
  EXIF orientation applied, CMYK by OpenCV's formula, 16 bits shifted to 8); ``"pil-open"`` is
  ``PIL.Image.open(path).convert("RGB")`` (no EXIF orientation; the decoding of Hugging Face processors
  and BLIP's code fed with Pillow images). Transparency (an alpha channel, or a palette/greyscale
  transparency colour): ``alpha="white"`` composites it onto white (eatkit's models' default);
  ``alpha="drop"`` keeps the colour channels as they are, as ``cv2.imread`` and Pillow's ``convert("RGB")``
  do (every author pipeline eatkit reproduces).
- **Geometry** (:class:`Preprocessing`): ``"top-left-square"`` keeps the top-left ``min(w, h)``
  square, then resizes it to ``size`` (the iEAT reference code's crop; with ``"box"`` interpolation
  the same pixels as its OpenCV ``INTER_AREA`` resize when the square's side is a multiple of ``size``,
  and images are decoded in full as OpenCV does unless ``jpeg_draft=True``); ``"center-square"``
  keeps the centred square instead; ``"resize-shorter+center-crop"`` resizes the shorter side to
  ``resize`` and crops the centre ``size`` x ``size`` (timm's and torchvision's evaluation transform);
  ``"stretch"`` resizes the whole image to ``size`` x ``size`` (Hugging Face's BLIP and ImageGPT processors).
  The centre crop's offset ``(side - size) / 2`` is rounded (``rounding="round"``, torchvision's) or
  floored (``"floor"``, Hugging Face's ``CLIPImageProcessor``).
- **Interpolation**: a Pillow filter, or ``"area"``: OpenCV's ``INTER_AREA`` resize, the same pixels
  (:func:`eatkit.encoders.resample.area_resize`, written in numpy).
- **Presets** (:data:`PRESETS`, ``--preprocess NAME``): the decoding, geometry and interpolation of a
  study's authors, applied to a model's own preprocessing (its size, scaling and normalisation stay, unless
  the preset names them); ``--crop``, ``--interpolation`` and ``--alpha`` override single fields.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.errors import EatkitError, one_line
from eatkit.io import require

from eatkit.encoders.presets import ALPHAS, CROPS, DECODERS, INTERPOLATIONS, PRESETS, ROUNDINGS  # noqa: F401


def load_image(path: str | Path, *, draft: tuple[int, int] | None = None, decoder: str = "pillow",
               alpha: str = "white") -> Any:
    """Decode an image file to an 8-bit RGB :class:`PIL.Image.Image` (conventions in the module docstring).

    ``draft`` lets a JPEG decoder downscale by 1/2, 1/4 or 1/8 while decoding, keeping both sides at
    least ``draft`` (Pillow's :meth:`~PIL.Image.Image.draft`; much faster for large photographs).
    ``decoder`` and ``alpha``: the module docstring. An unreadable file is an :class:`EatkitError` naming it.

    >>> import tempfile, pathlib; from PIL import Image
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.png"; Image.new("LA", (1, 1), (0, 0)).save(p)
    >>> load_image(p).getpixel((0, 0)), load_image(p, alpha="drop").getpixel((0, 0))  # over white, or dropped
    ((255, 255, 255), (0, 0, 0))
    """
    check_choice_of("decoder", decoder, DECODERS)
    check_choice_of("alpha", alpha, ALPHAS)
    ops = require("PIL.ImageOps", "image loading", "image")

    def decode(image: Any, pil: Any) -> Any:
        if draft is not None and image.format == "JPEG":
            image.draft(None, draft)
        image.load()
        if decoder != "pil-open":
            ops.exif_transpose(image, in_place=True)
        return _to_rgb(image, pil, decoder, alpha)

    return _opened(path, decode)


def _opened(path: str | Path, use: Callable[[Any, Any], Any]) -> Any:
    """``use(image, PIL.Image)`` of the image file ``path`` opened by Pillow (the one place eatkit opens an
    image file); an unreadable file is an :class:`EatkitError` naming it."""
    pil = require("PIL.Image", "image loading", "image")
    try:
        with pil.open(path) as image:
            return use(image, pil)
    except (OSError, SyntaxError, ValueError, pil.DecompressionBombError) as exc:
        raise EatkitError(f"cannot read image {path}: {one_line(exc)}") from None


def image_sizes(paths: list[str]) -> list[tuple[str, int, int]]:
    """``(path, width, height)`` of each image file, from its header only (nothing decoded; EXIF orientation
    ignored: the shorter side is the same); a file Pillow cannot open is left out (:func:`load_image` names it).

    >>> import tempfile, pathlib; from PIL import Image
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.png"; Image.new("RGB", (3, 2)).save(p)
    >>> image_sizes([str(p)])[0][1:]
    (3, 2)
    """
    out = []
    for path in paths:
        try:
            out.append((path, *_opened(path, lambda image, _: image.size)))  # the header only: nothing decoded
        except EatkitError:
            continue
    return out


def check_small_images(name: str, paths: list[str], side: int) -> None:
    """The ``small-image`` degeneracy rule on an image set about to be embedded at ``side`` x ``side``: one
    warning naming the images far smaller than that (:func:`eatkit.stats.degeneracy.check_image_sizes`)."""
    from eatkit.stats.degeneracy import check_image_sizes

    check_image_sizes(name, image_sizes(paths), side)


def check_choice_of(name: str, value: Any, known: tuple[str, ...]) -> None:
    """A one-line error for a preprocessing field ``name`` whose ``value`` is not one of ``known``."""
    if value not in known:
        raise EatkitError(f"unknown {name} '{value}' (known: {', '.join(known)})")


def _to_rgb(image: Any, pil: Any, decoder: str, alpha: str) -> Any:
    """8-bit RGB under ``decoder`` and ``alpha`` (see the module docstring)."""
    if image.mode in ("I;16", "I;16B", "I;16L", "I"):
        values = np.asarray(image, dtype=np.int64 if decoder == "opencv" else np.float64)
        scaled = (np.clip(values, 0, 65535) >> 8 if decoder == "opencv"  # OpenCV: 16 bits shifted to 8
                  else np.clip(values / 257.0, 0, 255).round())
        image = pil.fromarray(scaled.astype(np.uint8), mode="L")
    if image.mode == "CMYK" and decoder == "opencv":
        return pil.fromarray(_opencv_cmyk(np.asarray(image)), mode="RGB")
    if alpha == "drop":
        return image if image.mode == "RGB" else image.convert("RGB")
    if image.mode == "P" or (image.mode in ("L", "RGB") and "transparency" in image.info):
        image = image.convert("RGBA")
    if image.mode in ("RGBA", "LA", "PA", "RGBa", "La"):
        rgba = image.convert("RGBA")
        background = pil.new("RGBA", rgba.size, (255, 255, 255, 255))
        return pil.alpha_composite(background, rgba).convert("RGB")
    return image if image.mode == "RGB" else image.convert("RGB")


def _opencv_cmyk(cmyk: np.ndarray) -> np.ndarray:
    """OpenCV's CMYK to RGB (``icvCvt_CMYK2BGR_8u_C4C3R`` on libjpeg's inverted Adobe values, which Pillow
    has inverted back): ``k' - ((255 - c') * k' >> 8)`` with ``c' = 255 - c``, ``k' = 255 - k``.

    >>> _opencv_cmyk(np.array([[[0, 255, 0, 0]]], dtype=np.uint8)).tolist()
    [[[255, 1, 255]]]
    """
    inverted = 255 - cmyk.astype(np.int32)
    k = inverted[..., 3:]
    return (k - (((255 - inverted[..., :3]) * k) >> 8)).astype(np.uint8)


_DECODE_NOTES = {"pillow": "exif-orientation, first frame",
                 "opencv": "as cv2.imread (exif-orientation, first frame, OpenCV's CMYK and 16-bit conversions)",
                 "pil-open": "PIL.Image.open().convert('RGB') (no exif-orientation), first frame"}
_ALPHA_NOTES = {"white": "alpha over white", "drop": "alpha dropped"}


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
    drafted images, up to 11 for one image). ``decoder``, ``alpha``, ``rounding`` and ``"area"``
    interpolation: the module docstring.

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
    decoder: str = "pillow"
    alpha: str = "white"
    rounding: str = "round"

    def __post_init__(self) -> None:
        for name, known in (("crop", CROPS), ("interpolation", INTERPOLATIONS), ("decoder", DECODERS),
                            ("alpha", ALPHAS), ("rounding", ROUNDINGS)):
            check_choice_of(name, getattr(self, name), known)
        if self.jpeg_draft and self.decoder == "opencv":
            raise EatkitError("jpeg_draft cannot go with the opencv decoder (OpenCV decodes in full)")
        if self.size < 1 or (self.resize is not None and self.resize < self.size):
            raise EatkitError(f"bad preprocessing sizes: size={self.size}, resize={self.resize}")
        object.__setattr__(self, "mean", tuple(float(m) for m in self.mean))
        object.__setattr__(self, "std", tuple(float(s) for s in self.std))

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able record of this preprocessing (with the decoding conventions)."""
        record = {**dataclasses.asdict(self), "resize": self.resize or self.size,
                  "mean": list(self.mean), "std": list(self.std),
                  "decode": _DECODE_NOTES[self.decoder] + ", " + _ALPHA_NOTES[self.alpha] + ", 8-bit RGB"}
        for name, default in (("decoder", "pillow"), ("alpha", "white"), ("rounding", "round")):
            if record[name] == default:  # recorded as before when left at eatkit's defaults (same cache keys)
                del record[name]
        return record

    def override(self, *, preprocess: str | None = None, crop: str | None = None,
                 interpolation: str | None = None, alpha: str | None = None) -> Preprocessing:
        """This preprocessing under the study preset ``preprocess`` (:data:`PRESETS`) and the single-field
        overrides ``crop``, ``interpolation`` and ``alpha`` (``None``: unchanged). A square crop drops the
        resize of ``"resize-shorter+center-crop"``.

        >>> p = Preprocessing(size=224, resize=256, mean=(0.5,) * 3, std=(0.5,) * 3).override(preprocess="steed2021")
        >>> p.crop, p.interpolation, p.decoder, p.alpha, p.size, p.mean
        ('top-left-square', 'area', 'opencv', 'drop', 224, (0.5, 0.5, 0.5))
        """
        fields: dict[str, Any] = {}
        if preprocess is not None:
            check_choice_of("preprocess preset", preprocess, tuple(PRESETS))
            fields.update(PRESETS[preprocess])
        fields.update({k: v for k, v in (("crop", crop), ("interpolation", interpolation), ("alpha", alpha))
                       if v is not None})
        if fields.get("crop", self.crop) != "resize-shorter+center-crop":
            fields["resize"] = None
        if fields.get("decoder") == "opencv":
            fields["jpeg_draft"] = False
        return dataclasses.replace(self, **fields) if fields else self

    def draft_size(self) -> tuple[int, int] | None:
        """The ``draft`` of :func:`load_image` this preprocessing decodes with (``None``: in full)."""
        need = (self.resize or self.size) if self.crop == "resize-shorter+center-crop" else self.size
        return (need, need) if self.jpeg_draft else None

    def decode(self, path: str | Path) -> Any:
        """``path`` decoded as this preprocessing says (:func:`load_image` with its draft, decoder and alpha)."""
        return load_image(path, draft=self.draft_size(), decoder=self.decoder, alpha=self.alpha)

    def load(self, path: str | Path) -> Any:
        """Decode ``path`` and apply the geometry: a ``size`` x ``size`` RGB :class:`PIL.Image.Image`."""
        return self.geometry(self.decode(path))

    def pixels(self, path: str | Path) -> np.ndarray:
        """Decode, crop and resize ``path``: the ``(3, size, size)`` uint8 RGB pixels (what decoding workers
        send: a quarter of the bytes of the float input; :meth:`normalize_pixels` finishes the input)."""
        return self.pixels_of(self.decode(path))

    def pixels_of(self, image: Any) -> np.ndarray:
        """:meth:`pixels` of an image decoded already (by :meth:`decode`): one decode serves models whose
        preprocessing differs in geometry only (:mod:`eatkit.encoders.pixels`)."""
        return np.ascontiguousarray(np.asarray(self.geometry(image), dtype=np.uint8).transpose(2, 0, 1))

    def array(self, path: str | Path) -> np.ndarray:
        """Decode, crop, resize and normalise ``path``: the ``(3, size, size)`` float32 model input."""
        return self.normalize_pixels(self.pixels(path))

    def geometry(self, image: Any) -> Any:
        """Crop and resize an RGB image to ``size`` x ``size`` (no normalisation)."""
        w, h = image.size
        if self.crop == "resize-shorter+center-crop":
            short = self.resize or self.size
            # torchvision.transforms.Resize(int): the longer side is truncated, not rounded
            nw, nh = (short, int(short * h / w)) if w <= h else (int(short * w / h), short)
            image = self._resize(image, (nw, nh), (0, 0, w, h))
            offset = (lambda x: (x - self.size) // 2) if self.rounding == "floor" else (
                lambda x: round((x - self.size) / 2.0))
            left, top = offset(nw), offset(nh)
            return image.crop((left, top, left + self.size, top + self.size))
        if self.crop == "stretch":
            return self._resize(image, (self.size, self.size), (0, 0, w, h))
        side = min(w, h)
        left, top = ((w - side) // 2, (h - side) // 2) if self.crop == "center-square" else (0, 0)
        return self._resize(image, (self.size, self.size), (left, top, left + side, top + side))

    def _resize(self, image: Any, size: tuple[int, int], box: tuple[int, int, int, int]) -> Any:
        """The ``box`` of ``image`` resized to ``size`` with this preprocessing's interpolation."""
        from PIL import Image

        if self.interpolation == "area":
            from eatkit.encoders.resample import area_resize

            region = np.asarray(image)[box[1]:box[3], box[0]:box[2]]
            return Image.fromarray(area_resize(np.ascontiguousarray(region), *size))
        if box == (0, 0, *image.size):
            return image.resize(size, getattr(Image.Resampling, self.interpolation.upper()))
        return image.resize(size, getattr(Image.Resampling, self.interpolation.upper()), box=box)

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
