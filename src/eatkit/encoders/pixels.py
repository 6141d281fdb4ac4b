"""Decode once for many models: preprocessed pixels shared through a bounded on-disk cache.

On an accelerator an image model is bound by JPEG decoding, and in a sweep of N models over the same images
decoding was paid N times. :func:`predecode` decodes each image file **once** and applies every
preprocessing the sweep's models ask for to the decoded image (models whose preprocessing differs only in
the resize or crop share the decode), storing each result as uint8 pixels under

    sha256(json({"file": <sha256 of the file's bytes>, "preprocessing": Preprocessing.to_dict()}))

in ``<cache dir>/pixels-v1/`` (the checksummed, atomic entries of :class:`~eatkit.encoders.cache.EmbeddingCache`).
An image encoder with its cache on prepares images with :class:`CachedPixels`: the pixels of the cache when
present, else it decodes as before; the pixels are the same bits either way (:meth:`Preprocessing.pixels`
is what is stored), so the embeddings are too. The pixel cache is bounded: :func:`prune_pixels` removes
the least recently written entries beyond :data:`PIXEL_CACHE_BYTES` (``$EATKIT_PIXEL_CACHE_MB``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

import numpy as np

from eatkit.encoders.cache import EmbeddingCache
from eatkit.encoders.images import Preprocessing
from eatkit.io import read_input

PIXELS = "pixels-v1"
#: the default bound of the pixel cache (about 10,000 images at 224 x 224; ``$EATKIT_PIXEL_CACHE_MB``)
PIXEL_CACHE_BYTES = 2 << 30


def pixel_key(file_sha256: str, preprocessing: Preprocessing) -> str:
    """The cache key of a file's pixels under ``preprocessing`` (module docstring).

    >>> pixel_key("0" * 64, Preprocessing(size=4))[:12]
    '7b531a968960'
    """
    payload = json.dumps({"file": file_sha256, "preprocessing": preprocessing.to_dict()}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def pixel_cache(root: str | os.PathLike[str]) -> EmbeddingCache:
    """The pixel cache under an eatkit cache directory ``root``."""
    return EmbeddingCache(root, entries=PIXELS)


@dataclass(frozen=True)
class CachedPixels:
    """A picklable image transform for decoding workers: the file's pixels from the pixel cache under
    ``root`` when :func:`predecode` stored them, else decoded here; normalised to the float32 model input
    when ``normalize`` (a model on the CPU), else the uint8 pixels (normalised on the GPU)."""

    preprocessing: Preprocessing
    root: str
    normalize: bool

    def __call__(self, path: str) -> np.ndarray:
        digest = hashlib.sha256(read_input(path, "image")).hexdigest()  # the one reader: a regular file
        pixels = pixel_cache(self.root).get(pixel_key(digest, self.preprocessing))
        if pixels is None:
            pixels = self.preprocessing.pixels(path)
        return self.preprocessing.normalize_pixels(pixels) if self.normalize else pixels


def _decode_file(path: str, digest: str, preprocessings: Sequence[Preprocessing], root: str) -> int:
    """Decode ``path`` once per decoding (JPEG draft size, decoder, alpha) its missing preprocessings need and
    store their pixels; return the number of decodes (0 when every entry was there)."""
    cache = pixel_cache(root)
    missing = [p for p in preprocessings if cache.get(pixel_key(digest, p)) is None]
    decoded: dict[Any, Any] = {}
    for preprocessing in missing:
        how = (preprocessing.draft_size(), preprocessing.decoder, preprocessing.alpha)
        if how not in decoded:
            decoded[how] = preprocessing.decode(path)
        cache.put(pixel_key(digest, preprocessing), preprocessing.pixels_of(decoded[how]))
    return len(decoded)


def predecode(jobs: Sequence[tuple[str, str, Sequence[Preprocessing]]], root: str | os.PathLike[str],
              pool: Executor | None = None) -> int:
    """For each ``(file, sha256, preprocessings)`` of ``jobs``, decode the file once and store its pixels
    under every one of its preprocessings in the pixel cache of ``root`` (in ``pool`` when given); return
    the number of decodes made (files whose pixels were all there already need none).

    >>> import tempfile, pathlib; from PIL import Image
    >>> d = pathlib.Path(tempfile.mkdtemp()); Image.new("RGB", (8, 6), (9, 9, 9)).save(d / "a.png")
    >>> from eatkit.io import file_sha256
    >>> sizes = [Preprocessing(size=4), Preprocessing(size=2, crop="stretch")]
    >>> job = (str(d / "a.png"), file_sha256(d / "a.png"), sizes)
    >>> predecode([job], d / "cache"), predecode([job], d / "cache")  # one decode for both sizes, then none
    (1, 0)
    """
    args = [(path, digest, list(preprocessings), str(root)) for path, digest, preprocessings in jobs]
    if pool is None or not args:
        return sum(_decode_file(*a) for a in args)
    return sum(pool.map(_decode_file, *zip(*args), chunksize=max(1, len(args) // 64)))


def prune_pixels(root: str | os.PathLike[str], limit: int | None = None) -> int:
    """Remove the least recently written pixel entries until the pixel cache holds at most ``limit`` bytes
    (default :data:`PIXEL_CACHE_BYTES`, or ``$EATKIT_PIXEL_CACHE_MB`` megabytes); return the entries removed."""
    if limit is None:
        given = os.environ.get("EATKIT_PIXEL_CACHE_MB")
        limit = int(float(given) * (1 << 20)) if given else PIXEL_CACHE_BYTES
    entries = []
    for path in pixel_cache(root).entries_dir.glob("*/*.npe"):
        try:
            stat = path.stat()
        except OSError:
            continue
        entries.append((stat.st_mtime_ns, stat.st_size, path))
    total, removed = sum(e[1] for e in entries), 0
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        path.unlink(missing_ok=True)
        total, removed = total - size, removed + 1
    return removed
