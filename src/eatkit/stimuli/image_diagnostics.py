"""Diagnostics of image stimulus sets as files: near-duplicate images and unbalanced image properties.

eatkit's duplicate rule (``docs/duplicates.md``) drops byte-identical files; a resized, re-encoded or
slightly cropped copy is another file but the same stimulus. And two sets that differ in size,
brightness or colour give a model something other than the concept to tell them apart (the iEAT seed,
§6, on confounds of its image sets).

* **Near-duplicates**: each image's difference hash (dHash; Krawetz 2013, "Kind of like that"): the
  image in grey, resized to (``HASH_SIZE`` + 1) x ``HASH_SIZE`` pixels, one bit per horizontally adjacent
  pair (is the left pixel brighter?), ``HASH_SIZE``² bits. Resizing, re-encoding and small changes of
  brightness barely change it; two pairs of different images differ in about half their bits. Two images of
  a set whose hashes differ in at most ``max_distance`` bits (default ``NEAR_DUPLICATE_BITS``, 5% of
  them) are reported. (On the iEAT images, distinct images of one set differ in 18 bits or more -- two
  silhouettes of standing men -- and resized copies in at most 4.)
* **Properties** of each image: ``width``, ``height`` and ``aspect`` (width / height) in pixels of the
  file; ``brightness`` (mean luma, ITU-R BT.601, 0-1), ``red``, ``green``, ``blue`` (mean channel, 0-1)
  and ``saturation`` (mean HSV saturation) on a copy at most 64 pixels a side. Two sets are
  **unbalanced** in a property when the pooled-SD Cohen's d of it between them is at least
  ``IMBALANCE_D`` (0.8, "large").

PIL is imported when an image is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from eatkit.errors import EatkitError
from eatkit.io import open_image
from eatkit.stats import cohens_d

HASH_SIZE = 16
NEAR_DUPLICATE_BITS = HASH_SIZE * HASH_SIZE // 20
IMBALANCE_D = 0.8
PROPERTIES: tuple[str, ...] = ("width", "height", "aspect", "brightness", "red", "green", "blue", "saturation")


@dataclass(frozen=True, kw_only=True)
class ImageSetDiagnostics:
    """One image set: near-duplicate pairs (id, id, differing bits) and each property's values, mean and
    SD (ddof 1) over the images (module docstring)."""

    ids: tuple[str, ...]
    near_duplicates: tuple[tuple[str, str, int], ...]
    values: dict[str, np.ndarray] = field(repr=False)

    def summary(self) -> dict[str, dict[str, float]]:
        """``{property: {"mean": ..., "sd": ...}}``."""
        return {p: {"mean": float(v.mean()), "sd": float(v.std(ddof=1)) if v.size > 1 else 0.0}
                for p, v in self.values.items()}


def _read(path: Path) -> tuple[np.ndarray, dict[str, float]]:
    """The image's dHash bits and properties."""
    from PIL import Image, UnidentifiedImageError

    try:
        with open_image(path) as image:  # the one reader: a regular file (a folder named like an image refused)
            width, height = image.size
            image.draft("RGB", (4 * HASH_SIZE, 4 * HASH_SIZE))  # JPEG: decode at a reduced scale (faster)
            rgb = (image.convert("RGBA") if image.mode == "P" else image).convert("RGB")
    except (OSError, UnidentifiedImageError) as err:
        raise EatkitError(f"cannot read image {path}: {err}") from None
    grey = np.asarray(rgb.convert("L").resize((HASH_SIZE + 1, HASH_SIZE), Image.Resampling.LANCZOS), dtype=np.float64)
    bits = (grey[:, :-1] > grey[:, 1:]).ravel()
    small = rgb.copy()
    small.thumbnail((64, 64))
    pixels = np.asarray(small, dtype=np.float64) / 255.0
    hsv = np.asarray(small.convert("HSV"), dtype=np.float64) / 255.0
    r, g, b = (pixels[..., c].mean() for c in range(3))
    return bits, {
        "width": float(width), "height": float(height), "aspect": width / height,
        "brightness": float((0.299 * pixels[..., 0] + 0.587 * pixels[..., 1] + 0.114 * pixels[..., 2]).mean()),
        "red": float(r), "green": float(g), "blue": float(b), "saturation": float(hsv[..., 1].mean()),
    }


def image_set_diagnostics(paths: Sequence[str | Path], ids: Sequence[str] | None = None, *,
                          max_distance: int = NEAR_DUPLICATE_BITS) -> ImageSetDiagnostics:
    """Near-duplicates and properties of one set of image files (``ids``: their names in reports; the
    paths by default).

    >>> import tempfile, pathlib; from PIL import Image
    >>> folder = pathlib.Path(tempfile.mkdtemp()); rng = np.random.default_rng(0)
    >>> one, two = (Image.fromarray(rng.integers(0, 256, (8, 8), dtype=np.uint8)).resize((64, 64)) for _ in "12")
    >>> one.save(folder / "a.png"); one.resize((48, 48)).save(folder / "b.png"); two.save(folder / "c.png")
    >>> d = image_set_diagnostics(sorted(folder.iterdir()), ["a", "b", "c"])
    >>> d.near_duplicates, d.summary()["width"]["mean"]
    ((('a', 'b', 1),), 58.666666666666664)
    """
    paths = [Path(p) for p in paths]
    if not paths:
        raise EatkitError("image_set_diagnostics needs at least one image")
    ids = tuple(str(p) for p in paths) if ids is None else tuple(ids)
    if len(ids) != len(paths):
        raise EatkitError(f"{len(ids)} ids for {len(paths)} images")
    if not isinstance(max_distance, int) or isinstance(max_distance, bool) or not 0 <= max_distance <= HASH_SIZE**2:
        raise EatkitError(f"max_distance must be a number of bits from 0 to {HASH_SIZE**2}, got {max_distance!r}")
    read = [_read(p) for p in paths]
    bits = np.array([b for b, _ in read])
    distance = (bits[:, None, :] != bits[None, :, :]).sum(axis=2)
    i, j = np.triu_indices(len(paths), k=1)
    close = distance[i, j] <= max_distance
    pairs = tuple((ids[a], ids[b], int(distance[a, b])) for a, b in zip(i[close], j[close]))
    values = {p: np.array([props[p] for _, props in read]) for p in PROPERTIES}
    return ImageSetDiagnostics(ids=ids, near_duplicates=pairs, values=values)


def property_imbalance(first: ImageSetDiagnostics, second: ImageSetDiagnostics) -> dict[str, float]:
    """The pooled-SD Cohen's d of every property between two image sets (positive: larger in ``first``);
    a property constant in both sets gives 0 (equal) or ±inf.

    Sets with fewer than 2 images have no pooled SD: an error.
    """
    if len(first.ids) < 2 or len(second.ids) < 2:
        raise EatkitError("property imbalance needs at least 2 images in each set")
    return {p: float(cohens_d(first.values[p], second.values[p], sd="pooled")) for p in PROPERTIES}


def unbalanced(imbalance: dict[str, float], threshold: float = IMBALANCE_D) -> list[str]:
    """The properties whose |d| reaches ``threshold``.

    >>> unbalanced({"width": 0.1, "brightness": -1.2})
    ['brightness']
    """
    return [p for p, d in imbalance.items() if abs(d) >= threshold]
