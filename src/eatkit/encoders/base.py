"""The shared machinery of neural encoders: cache look-up, lazy model loading, batching, prefetching.

A concrete encoder subclasses :class:`NeuralEncoder` and implements

- :meth:`~NeuralEncoder.config`: a JSON-able dict of everything that determines its output (model id,
  weights identity, layer, pooling, preprocessing, prompt template, dtype). It must be cheap and must
  not import torch: a cache hit is decided from it and the stimulus contents alone, so that a fully
  cached run never builds the model;
- :meth:`~NeuralEncoder._load`: build the model (imports torch etc.); called once, before the first
  batch that misses the cache;
- :meth:`~NeuralEncoder._encode`: embed one batch of prepared inputs, returning an ``(n, d)`` array;

and optionally :meth:`~NeuralEncoder._prepare` (turn one stimulus into a model input; for images it
runs in worker threads, overlapped with the forward pass of the previous batch).
"""

from __future__ import annotations

import os
from abc import abstractmethod
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from eatkit.encoders.cache import EmbeddingCache, entry_key
from eatkit.encoders.images import Preprocessing
from eatkit.io import file_sha256, installed_version
from eatkit.stimuli.images import image_ids, resolve_image_set
from eatkit.errors import EatkitError
from eatkit.progress import progress
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stimuli.types import StimulusSet


def distribution_version(name: str) -> str:
    """``"name==version"`` of an installed distribution (a weights identity), or an error naming it.

    >>> distribution_version("numpy").startswith("numpy==")
    True
    """
    version = installed_version(name)
    if version is None:
        raise EatkitError(f"the package '{name}' is not installed: pip install {name}")
    return f"{name}=={version}"


class NeuralEncoder(EmbeddingSource):
    """Base class of the model-backed embedding sources (see the module docstring for the contract).

    Parameters
    ----------
    batch_size : stimuli per forward pass.
    cache : look up and store embeddings in the on-disk cache (``--no-cache`` passes ``False``).
    cache_dir : cache directory; default :func:`eatkit.encoders.cache.cache_dir`.
    images : image root used to resolve image sets that list no files (the iEAT layout,
        ``<root>/<test>/<category>/*``); sets resolved by
        :func:`eatkit.stimuli.images.resolve_image_set` need none.
    workers : threads that decode and preprocess images ahead of the forward pass (0: inline).

    Example (a toy subclass embedding a word as its length)::

        class Length(NeuralEncoder):
            id = "length"; modalities = frozenset({"word"})
            def config(self): return {"model": "length"}
            def _encode(self, modality, inputs): return np.array([[len(w)] for w in inputs])

        Length(cache=False).embed(StimulusSet("A", "word", ("rose", "ant"))).vectors  # [[4.], [3.]]
    """

    #: the image preprocessing (set by image encoders; part of :meth:`config`)
    preprocessing: Preprocessing | None = None
    #: bump when a change in the extraction code changes its output (it is part of every cache key)
    encoder_version: ClassVar[str] = "1"
    #: the distributions whose versions can change the output (recorded by :meth:`cache_config`)
    libraries: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        *,
        batch_size: int = 32,
        cache: bool = True,
        cache_dir: str | os.PathLike[str] | None = None,
        images: str | os.PathLike[str] | None = None,
        workers: int = 2,
    ) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise EatkitError(f"batch_size must be a positive integer, got {batch_size!r}")
        if not isinstance(workers, int) or workers < 0:
            raise EatkitError(f"workers must be a non-negative integer, got {workers!r}")
        self.batch_size = batch_size
        self.workers = workers
        self.images = Path(images) if images is not None else None
        self._cache = EmbeddingCache(cache_dir) if cache else None
        self._loaded = False
        self.stats = {"hits": 0, "misses": 0, "batches": 0}

    # -- the subclass contract ---------------------------------------------------------------------

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """Everything that determines the output, JSON-able and cheap (no torch import)."""

    def _load(self) -> None:
        """Build the model (import torch here, not at module level); called once before ``_encode``."""

    def _prepare(self, modality: str, item: str) -> Any:
        """One stimulus as a model input: the text itself, or for an image (``item`` is its file path)
        the ``(3, size, size)`` float32 array of :meth:`Preprocessing.array` under ``self.preprocessing``.
        Runs in worker threads for images; override for other inputs (e.g. ImageGPT's colour tokens)."""
        if modality == "image":
            if self.preprocessing is None:
                raise AssertionError(f"{type(self).__name__} embeds images but sets no preprocessing")
            return self.preprocessing.array(item)
        return item

    @abstractmethod
    def _encode(self, modality: str, inputs: list[Any]) -> np.ndarray:
        """Embed one batch of prepared inputs: an ``(len(inputs), d)`` array (under ``torch.no_grad``)."""

    # -- the machinery -----------------------------------------------------------------------------

    def cache_config(self) -> dict[str, Any]:
        """:meth:`config` with the encoder class, its version and the installed versions of its
        :attr:`libraries` (``None``: not installed): the configuration part of a cache key."""
        cls = type(self)
        return {"encoder": f"{cls.__module__}.{cls.__qualname__}", "encoder_version": self.encoder_version,
                **self.config(), "libraries": {name: installed_version(name) for name in self.libraries}}

    def file_hashes(self, paths: list[str]) -> list[str]:
        """SHA-256 of each file; with the cache on, remembered there under the file's stat stamp (see
        :meth:`EmbeddingCache.file_hashes`), so that an unchanged file is not read again."""
        if self._cache is None:
            return [file_sha256(path) for path in paths]
        return self._cache.file_hashes(paths, self.workers)

    def manifest(self) -> dict[str, Any]:
        cache = self._cache.info() if self._cache is not None else {"path": None}
        return {"id": self.id, **self.cache_config(), "batch_size": self.batch_size,
                "cache": {"enabled": self._cache is not None, "path": cache["path"], **self.stats}}

    def embed(self, stimuli: StimulusSet) -> Embedded:
        items, ids = self._stimuli(stimuli)
        modality = stimuli.modality
        vectors: list[np.ndarray | None] = [None] * len(items)
        keys: list[str] = []
        contents = self._contents(modality, items)
        if self._cache is not None:
            config = self.cache_config()
            keys = [entry_key(config, modality, c) for c in contents]
            vectors = [self._cache.get(k) for k in keys]
        missing = [i for i, v in enumerate(vectors) if v is None]
        self.stats["hits"] += len(items) - len(missing)
        self.stats["misses"] += len(missing)
        if missing:
            if not self._loaded:
                self._load()
                self._loaded = True
            batches = [missing[i : i + self.batch_size] for i in range(0, len(missing), self.batch_size)]
            prepared = self._prefetch(modality, [[items[i] for i in b] for b in batches])
            desc = f"{self.id}: {stimuli.name}"
            for batch, inputs in progress(zip(batches, prepared), total=len(batches), desc=desc):
                out = np.asarray(self._encode(modality, inputs))
                if out.ndim != 2 or out.shape[0] != len(batch):
                    raise AssertionError(f"{type(self).__name__}._encode returned shape {out.shape} "
                                         f"for {len(batch)} inputs")
                self.stats["batches"] += 1
                for i, vector in zip(batch, out):
                    vectors[i] = vector
                    if self._cache is not None:
                        self._cache.put(keys[i], vector)
        checksums = tuple(c.removeprefix("sha256:") for c in contents) if modality == "image" else ()
        return Embedded(np.stack(vectors).astype(np.float64), ids, checksums=checksums)

    def _stimuli(self, stimuli: StimulusSet) -> tuple[list[str], tuple[str, ...]]:
        """The inputs (texts, or image file paths) of a set and their ids."""
        if stimuli.modality not in self.modalities:
            raise EatkitError(f"model '{self.id}' cannot embed the {stimuli.modality} set '{stimuli.name}' "
                              f"(it embeds: {', '.join(sorted(self.modalities))})")
        if stimuli.templates:
            raise EatkitError(f"set '{stimuli.name}' still has templates: expand them into sentences "
                              "before embedding")
        if stimuli.modality != "image":
            if not stimuli.items:
                raise EatkitError(f"set '{stimuli.name}' is empty")
            return list(stimuli.items), tuple(stimuli.items)
        if not stimuli.items:
            if self.images is None:
                raise EatkitError(f"image set '{stimuli.name}' (category '{stimuli.category}') needs an "
                                  "image folder: pass --images DIR (images=DIR)")
            stimuli = resolve_image_set(stimuli, self.images)
        return list(stimuli.items), image_ids(stimuli)

    def _contents(self, modality: str, items: list[str]) -> list[str]:
        """The content part of each cache key: the text, or ``sha256:<hex>`` of the image file."""
        if modality != "image":
            return items
        try:
            hashes = self.file_hashes(items)
        except OSError as exc:
            raise EatkitError(f"cannot read image {exc.filename}: {exc.strerror}") from None
        return [f"sha256:{h}" for h in hashes]

    def _prefetch(self, modality: str, batches: list[list[str]]) -> Iterator[list[Any]]:
        """Prepared batches in order; for images, the next batch is prepared in worker threads while
        the caller encodes the current one (at most two batches in flight)."""
        if modality != "image" or self.workers == 0:
            for batch in batches:
                yield [self._prepare(modality, item) for item in batch]
            return
        with ThreadPoolExecutor(self.workers) as pool:
            pending: deque[list[Any]] = deque()
            upcoming = iter(batches)
            for batch in upcoming:
                pending.append([pool.submit(self._prepare, modality, item) for item in batch])
                if len(pending) == 2:
                    break
            while pending:
                futures = pending.popleft()
                batch = next(upcoming, None)
                if batch is not None:
                    pending.append([pool.submit(self._prepare, modality, item) for item in batch])
                yield [f.result() for f in futures]
