"""The shared machinery of neural encoders: cache look-up, lazy model loading, batching, devices, and
decoding images in worker processes.

A concrete encoder subclasses :class:`NeuralEncoder` and implements

- :meth:`~NeuralEncoder.config`: a JSON-able dict of everything that determines its output (model id,
  weights identity, layer, pooling, preprocessing, prompt template, dtype). It must be cheap and must
  not import torch: a cache hit is decided from it and the stimulus contents alone, so that a fully
  cached run never builds the model;
- :meth:`~NeuralEncoder._load`: build the model (imports torch etc.) and put it on the encoder's device
  with :meth:`~NeuralEncoder._place`; called once, before the first batch that misses the cache;
- :meth:`~NeuralEncoder._encode`: embed one batch of prepared inputs under :meth:`~NeuralEncoder._inference`
  (inputs moved with :meth:`~NeuralEncoder._tensor`), returning an ``(n, d)`` array; on the CPU image
  batches run in several threads at once (:mod:`eatkit.encoders.streams`), so it must not change the
  encoder's state;

and optionally :meth:`~NeuralEncoder._prepare` (turn one text into a model input) and
:meth:`~NeuralEncoder._image_transform` (a picklable function from an image file to a model input; it
runs in ``workers`` worker processes, overlapped with the forward pass of the previous batch; for a model
on a GPU by default the uint8 pixels, which :meth:`~NeuralEncoder._image_tensor` normalises there).

**Batch plan** (why a partial re-embed gives the bits of a cold run): the forward pass of most models is
not batch-invariant (a vector differs in the last bits with the batch it was computed in). So the batches
are planned from a set's *full* stimulus list (``batch_size`` consecutive stimuli, in the set's order),
whatever the cache holds; a batch with any stimulus missing from the cache is embedded whole, its missing
vectors stored; a stimulus found in the cache keeps the cached vector. Cold, warm and partly cached runs of
the same command therefore return the same bits. A content that occurs twice gets the vector of its first
occurrence.
"""

from __future__ import annotations

import contextlib
import os
import weakref
from abc import abstractmethod
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from eatkit.encoders.cache import EmbeddingCache, entry_key
from eatkit.encoders.device import (
    check_precision,
    default_batch_size,
    default_workers,
    usable_cores,
    device_kind,
    device_name,
    inference,
    torch_device,
)
from eatkit.encoders.hf import hub_pin
from eatkit.encoders.images import Preprocessing, check_small_images
from eatkit.encoders.streams import BatchStreams, done
from eatkit.encoders.workers import Prefetcher, start_pool, stop_pool
from eatkit.errors import EatkitError, MissingExtraError
from eatkit.io import file_sha256_many, installed_version
from eatkit.progress import item_unit, tracker, warn
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stimuli.duplicates import drop_duplicates
from eatkit.stimuli.images import image_ids, resolve_image_set
from eatkit.stimuli.types import StimulusSet


def distribution_version(name: str, extra: str) -> str:
    """``"name==version"`` of an installed distribution (a weights identity), or an error naming the eatkit
    ``extra`` that installs it.

    >>> distribution_version("numpy", "image").startswith("numpy==")
    True
    """
    version = installed_version(name)
    if version is None:
        raise MissingExtraError("the model's weights", extra, name)
    return f"{name}=={version}"


#: how batches are formed (recorded in every manifest; see the module docstring)
BATCH_PLAN = ("batch_size consecutive stimuli over each set's full list, in order, whatever the cache holds; "
              "a batch with any stimulus missing from the cache is embedded whole")


class NeuralEncoder(EmbeddingSource):
    """Base class of the model-backed embedding sources (see the module docstring for the contract).

    Parameters
    ----------
    batch_size : stimuli per forward pass (see the batch plan in the module docstring); default
        :func:`~eatkit.encoders.device.default_batch_size` of the device (32 on the CPU, 256 on a GPU).
    cache : look up and store embeddings in the on-disk cache (``--no-cache`` passes ``False``).
    cache_dir : cache directory; default :func:`eatkit.encoders.cache.cache_dir`.
    images : image root used to resolve image sets that list no files (the iEAT layout,
        ``<root>/<test>/<category>/*``); sets resolved by
        :func:`eatkit.stimuli.images.resolve_image_set` need none.
    workers : processes that decode and preprocess images (0: inline), ahead of the forward pass; the
        embeddings are the same bits either way; default :func:`~eatkit.encoders.device.default_workers`
        (2 on the CPU, where the forward pass needs the cores; on a GPU all usable cores but one, at most 32).
        On the CPU, image batches run through the model one thread each, as many at once as torch has
        threads (:mod:`eatkit.encoders.streams`: the bits do not depend on the number of cores).
    device : ``"auto"`` (default: a GPU when present), ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"mps"``
        (:mod:`eatkit.encoders.device`).
    precision : ``"fp32"`` (default), ``"bf16"`` or ``"fp16"`` (autocast of the forward pass).

    Example (a toy subclass embedding a word as its length)::

        class Length(NeuralEncoder):
            id = "length"; modalities = frozenset({"word"})
            def config(self): return {"model": "length"}
            def _encode(self, modality, inputs): return np.array([[len(w)] for w in inputs])

        Length(cache=False).embed(StimulusSet("A", "word", ("rose", "ant"))).vectors  # [[4.], [3.]]
    """

    #: the image preprocessing (set by image encoders; part of :meth:`config`)
    preprocessing: Preprocessing | None = None
    #: bump when a change in the extraction code changes its output (it is part of every cache key);
    #: "2": fp32 on a CUDA GPU without TensorFloat-32 (eatkit 0.2.2); "3": image batches on the CPU on one
    #: thread each (eatkit 0.2.3)
    encoder_version: ClassVar[str] = "3"
    #: the distributions whose versions can change the output (recorded by :meth:`cache_config`)
    libraries: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        *,
        batch_size: int | None = None,
        cache: bool = True,
        cache_dir: str | os.PathLike[str] | None = None,
        images: str | os.PathLike[str] | None = None,
        workers: int | None = None,
        device: str = "auto",
        precision: str = "fp32",
    ) -> None:
        self.device_kind = device_kind(device)  # cheap (no torch import); confirmed by torch at load
        batch_size = default_batch_size(self.device_kind) if batch_size is None else batch_size
        workers = default_workers(self.device_kind) if workers is None else workers
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise EatkitError(f"batch_size must be a positive integer, got {batch_size!r}")
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 0:
            raise EatkitError(f"workers must be a non-negative integer, got {workers!r}")
        most = max(usable_cores(), default_workers(self.device_kind))
        if workers > most:  # more processes than cores only compete for them (1000 ran 6 times slower)
            warn(f"workers={workers} is more than the {usable_cores()} usable cores: using {most}")
            workers = most
        self.batch_size = batch_size
        self.workers = workers
        self.device, self.precision = device, check_precision(precision)
        self.images = Path(images) if images is not None else None
        self._cache = EmbeddingCache(cache_dir) if cache else None
        self._loaded = False
        self._torch_device: Any = None
        self._device_name: str | None = None
        self._pool: Executor | None = None
        self._streams: BatchStreams | None = None
        self._threads_note: str | None = None  # how image batches ran on the CPU (for the manifest)
        self._pixel_table: Any = None
        self._library_versions: dict[str, str | None] | None = None
        self.stats = {"hits": 0, "misses": 0, "batches": 0}

    # -- the subclass contract ---------------------------------------------------------------------

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """Everything that determines the output, JSON-able and cheap (no torch import)."""

    def _load(self) -> None:
        """Build the model (import torch here, not at module level); called once before ``_encode``."""

    def ensure_loaded(self) -> None:
        """Build the model now (otherwise the first batch that is not cached builds it), on its device."""
        if self._loaded:
            return
        kind = self.device_kind
        self._load()
        self._loaded = True
        if self._torch_device is None and kind != "cpu":  # an encoder that never calls _place
            if self.device != "auto":
                raise EatkitError(f"model '{self.id}' runs on the CPU only: use --device cpu or auto")
            self.device_kind = "cpu"

    def _prepare(self, modality: str, item: str) -> Any:
        """One stimulus as a model input: the text itself, or for an image (``item`` is its file path)
        :meth:`_image_transform` of it (override for other text inputs, e.g. prompts)."""
        return self._image_transform()(item) if modality == "image" else item

    def _image_transform(self) -> Callable[[str], Any]:
        """A picklable function from an image file to the model input (it runs in worker processes): by
        default, under ``self.preprocessing``, :meth:`Preprocessing.array` (``(3, size, size)`` float32,
        normalised in the workers, in parallel) for a model on the CPU, and :meth:`Preprocessing.pixels`
        (uint8, a quarter of the bytes to pass on, normalised on the device by :meth:`_image_tensor`) for
        a model on a GPU; override for other inputs (e.g. ImageGPT's colour tokens)."""
        if self.preprocessing is None:
            raise AssertionError(f"{type(self).__name__} embeds images but sets no preprocessing")
        cpu = self._device().type == "cpu"
        if self._cache is not None:  # pixels decoded once for a sweep's models, when there (same bits)
            from eatkit.encoders.pixels import CachedPixels

            return CachedPixels(self.preprocessing, str(self._cache.root), normalize=cpu)
        return self.preprocessing.array if cpu else self.preprocessing.pixels

    def shared_images(self, sets: Sequence[StimulusSet]) -> tuple[Path, Preprocessing, list[str], list[str]] | None:
        """What :func:`eatkit.encoders.pixels.predecode` needs to prepare this encoder's images of ``sets``
        ahead (its cache folder, its preprocessing, the image files and their SHA-256), or ``None`` when its
        images do not go through the pixel cache (no cache, no image sets, or its own image inputs)."""
        uses_pixels = type(self)._image_transform is NeuralEncoder._image_transform
        images = [s for s in sets if s.modality == "image" and "image" in self.modalities]
        if self._cache is None or not uses_pixels or not images or self.preprocessing is None:
            return None
        files = sorted({item for s in images for item in self._stimuli(s)[0]})
        return self._cache.root, self.preprocessing, files, self.file_hashes(files)

    @abstractmethod
    def _encode(self, modality: str, inputs: list[Any]) -> np.ndarray:
        """Embed one batch of prepared inputs: an ``(len(inputs), d)`` array (under :meth:`_inference`)."""

    # -- devices (for subclasses' _load and _encode) -------------------------------------------------

    def _device(self) -> Any:
        """The ``torch.device`` the model runs on (resolved by torch on first use)."""
        if self._torch_device is None:
            import torch

            self._torch_device = torch_device(torch, self.device)
            self._device_name = device_name(torch, self._torch_device)
            self.device_kind = self._torch_device.type
        return self._torch_device

    def _place(self, module: Any) -> Any:
        """A torch module moved to the encoder's device, in eval mode."""
        return module.to(self._device()).eval()

    def _tensor(self, array: np.ndarray) -> Any:
        """A numpy batch as a tensor on the encoder's device (through pinned memory to a CUDA GPU)."""
        import torch

        tensor, device = torch.from_numpy(np.ascontiguousarray(array)), self._device()
        if device.type == "cuda":
            return tensor.pin_memory().to(device, non_blocking=True)
        return tensor.to(device)

    def _image_tensor(self, inputs: list[np.ndarray]) -> Any:
        """A batch of :meth:`_image_transform` outputs as the normalised float32 ``(n, 3, H, W)`` tensor on
        the device: to a CUDA GPU stacked straight into pinned memory; uint8 pixels normalised on the
        device by looking up :meth:`Preprocessing.table` (the same bits as :meth:`Preprocessing.array`)."""
        import torch

        device = self._device()
        if device.type == "cuda":
            dtype = torch.from_numpy(inputs[0][:0]).dtype
            staging = torch.empty((len(inputs), *inputs[0].shape), dtype=dtype, pin_memory=True)
            np.stack(inputs, out=staging.numpy())
            batch = staging.to(device, non_blocking=True)
        else:
            batch = torch.from_numpy(np.stack(inputs)).to(device)
        if batch.dtype != torch.uint8:
            return batch
        if self._pixel_table is None:
            table = torch.from_numpy(self.preprocessing.table()).to(device)
            self._pixel_table = (table.reshape(-1), torch.arange(0, 768, 256, device=device).reshape(1, 3, 1, 1))
        flat, offsets = self._pixel_table
        return flat[batch.long() + offsets]

    def _inference(self) -> Any:
        """The context of a forward pass: inference mode, and autocast unless the precision is fp32."""
        import torch

        return inference(torch, self._device(), self.precision)

    # -- the machinery -----------------------------------------------------------------------------

    def cache_config(self) -> dict[str, Any]:
        """:meth:`config` with the encoder class, its version, the kind of device and the precision, and
        the installed versions of its :attr:`libraries` (``None``: not installed): the configuration part
        of a cache key."""
        cls = type(self)
        if self._library_versions is None:  # read once per encoder: each look-up parses package metadata
            self._library_versions = {name: installed_version(name) for name in self.libraries}
        return {"encoder": f"{cls.__module__}.{cls.__qualname__}", "encoder_version": self.encoder_version,
                **self.config(), "device": self.device_kind, "precision": self.precision,
                "libraries": dict(self._library_versions)}

    def file_hashes(self, paths: list[str]) -> list[str]:
        """SHA-256 of each file (read by ``workers`` threads); with the cache on, remembered there under the
        file's stat stamp (see :meth:`EmbeddingCache.file_hashes`), so that an unchanged file is not read again."""
        if self._cache is None:
            return file_sha256_many(paths, self.workers)
        return self._cache.file_hashes(paths, self.workers)

    def manifest(self) -> dict[str, Any]:
        cache = self._cache.info() if self._cache is not None else {"path": None}
        return {"id": self.id, **self.cache_config(), "device_requested": self.device,
                "device_name": self._device_name or "not used (every embedding came from the cache)",
                "batch_size": self.batch_size, "batch_plan": BATCH_PLAN, "workers": self.workers,
                "cpu_image_batches": self._threads_note,
                "images": str(self.images.resolve()) if self.images is not None else None,
                "hub": hub_pin(str(getattr(self, "weights", "")), getattr(self, "revision", None)),
                "cache": {"enabled": self._cache is not None, "path": cache["path"], **self.stats}}

    def plan(self, n: int) -> list[range]:
        """The batches of a set of ``n`` stimuli (the batch plan of the module docstring).

        >>> [list(b) for b in NeuralEncoder.plan(type("E", (), {"batch_size": 2})(), 5)]
        [[0, 1], [2, 3], [4]]
        """
        return [range(i, min(i + self.batch_size, n)) for i in range(0, n, self.batch_size)]

    def embed(self, stimuli: StimulusSet) -> Embedded:
        return self._embed_sets([stimuli])[0]

    def embed_many(self, sets: Sequence[StimulusSet]) -> list[Embedded]:
        """Embed several sets in one stream: the images of the next set are decoded while the current set
        runs through the model. Each set keeps its own batch plan, so the vectors are the bits of
        embedding the sets one by one."""
        return self._embed_sets(list(sets))

    def _embed_sets(self, sets: list[StimulusSet]) -> list[Embedded]:
        plans = [self._plan(stimuli) for stimuli in sets]
        if any(v is None for plan in plans for v in plan.vectors) and not self._loaded:
            self._load_for(plans)
        work = [(plan, batch) for plan in plans for batch in self.plan(len(plan.items))
                if any(plan.vectors[i] is None for i in batch)]
        prepared = self._prefetch([(plan.modality, [plan.items[i] for i in batch]) for plan, batch in work])
        outputs = self._forward(zip((plan.modality for plan, _ in work), prepared))
        desc = f"{self.id}: embedding {sets[0].name}" if len(sets) == 1 else f"{self.id}: embedding {len(sets)} sets"
        with tracker(desc, sum(len(batch) for _, batch in work), item_unit(plans)) as tick:
            for (plan, batch), out in zip(work, outputs):
                self._store(plan, batch, out)
                tick.advance(len(batch))
        return [plan.embedded() for plan in plans]

    def _load_for(self, plans: list["_SetPlan"]) -> None:
        """Load the model; where torch disagreed with the cheap device probe, the plans' cache keys (which
        name the device kind) are looked up again."""
        kind = self.device_kind
        self.ensure_loaded()
        if self.device_kind != kind:
            for plan in plans:
                plan.keys, plan.vectors = self._lookup(plan.modality, plan.contents)

    def _store(self, plan: "_SetPlan", batch: Sequence[int], out: np.ndarray) -> None:
        """A batch's vectors into its plan (each new key once) and the cache."""
        if out.ndim != 2 or out.shape[0] != len(batch):
            raise AssertionError(f"{type(self).__name__}._encode returned shape {out.shape} for {len(batch)} inputs")
        self.stats["batches"] += 1
        for i, vector in zip(batch, out):
            if plan.vectors[i] is None and plan.keys[i] not in plan.computed:
                plan.computed[plan.keys[i]] = vector
                if self._cache is not None:
                    self._cache.put(plan.keys[i], vector)

    def _forward(self, batches: Iterable[tuple[str, list[Any]]]) -> Iterator[np.ndarray]:
        """:meth:`_encode` of each (modality, inputs) batch, in order. On the CPU image batches run in
        :class:`~eatkit.encoders.streams.BatchStreams` (one thread each, as many at once as torch has
        threads), their inputs first copied out of the decoding ring (a view there is valid only until the
        next batch is asked for); other batches (texts: tokenizers are not thread-safe) run here."""
        pending: deque[Future] = deque()
        for modality, inputs in batches:
            if modality == "image" and self.device_kind == "cpu":
                streams = self._batch_streams()
                owned = [np.array(x) if isinstance(x, np.ndarray) else x for x in inputs]
                pending.append(streams.submit(self._encode, modality, owned))
                size = streams.size
            else:
                pending.append(done(self._encode(modality, inputs)))
                size = 0
            while len(pending) > size or (pending and pending[0].done()):
                yield np.asarray(pending.popleft().result())
        while pending:
            yield np.asarray(pending.popleft().result())

    def _batch_streams(self) -> BatchStreams:
        if self._streams is None:
            import torch

            self._streams = BatchStreams(torch, torch.get_num_threads())
            weakref.finalize(self, self._streams.close, False)
            self._threads_note = f"one thread each, up to {self._streams.size} at once"
        return self._streams

    def _plan(self, stimuli: StimulusSet) -> "_SetPlan":
        """A set's inputs, ids, contents (file hashes for images) and cache look-ups, duplicates dropped."""
        items, ids = self._stimuli(stimuli)
        modality = stimuli.modality
        contents = self._contents(modality, items)
        if modality == "image" and self.preprocessing is not None:
            check_small_images(stimuli.name, items, self.preprocessing.size)  # upscaled far: a recorded warning
        first, copies = drop_duplicates(ids, contents, "byte-identical to" if modality == "image" else "same as")
        items, ids, contents = [items[i] for i in first], tuple(ids[i] for i in first), [contents[i] for i in first]
        keys, vectors = self._lookup(modality, contents)
        self.stats["hits"] += sum(v is not None for v in vectors)
        self.stats["misses"] += sum(v is None for v in vectors)
        return _SetPlan(modality, items, ids, copies, contents, keys, vectors)

    def _lookup(self, modality: str, contents: list[str]) -> tuple[list[str], list[np.ndarray | None]]:
        """The cache key of each stimulus and its cached vector (``None``: a miss, or no cache)."""
        config = self.cache_config()
        keys = [entry_key(config, modality, c) for c in contents]
        if self._cache is None:
            return keys, [None] * len(keys)
        return keys, [self._cache.get(k) for k in keys]

    def close(self) -> None:
        """Stop the image-decoding worker processes and the batch threads (also done when the encoder is
        garbage-collected)."""
        if self._pool is not None:
            stop_pool(self._pool)
            self._pool = None
        if self._streams is not None:
            self._streams.close()
            self._streams = None

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

    def _prefetch(self, batches: list[tuple[str, list[str]]]) -> Iterator[list[Any]]:
        """Prepared (modality, items) batches in order; image batches are prepared in worker processes
        (:class:`eatkit.encoders.workers.Prefetcher`), the next ones while the model runs the current ones;
        an array may be a view valid until the next batch is asked for."""
        if self.workers == 0 or not any(modality == "image" for modality, _ in batches):
            for modality, items in batches:
                yield [self._prepare(modality, item) for item in items]
            return
        if self._pool is None:
            self._pool = start_pool(self.workers)
            weakref.finalize(self, stop_pool, self._pool)
        prefetcher = Prefetcher(self._pool, self.workers, self._image_transform())
        images_only = [items for modality, items in batches if modality == "image"]
        with contextlib.closing(prefetcher.run(images_only)) as images:
            for modality, items in batches:  # other inputs are prepared here, in order, as images decode
                yield next(images) if modality == "image" else [self._prepare(modality, item) for item in items]


@dataclass
class _SetPlan:
    """One set's part of :meth:`NeuralEncoder.embed_many`: inputs, ids, cache keys, cached vectors (None:
    to compute) and the vectors computed for it."""

    modality: str
    items: list[str]
    ids: tuple[str, ...]
    copies: Any
    contents: list[str]
    keys: list[str]
    vectors: list[np.ndarray | None]
    computed: dict[str, np.ndarray] = field(default_factory=dict)

    def embedded(self) -> Embedded:
        vectors = [self.computed[k] if v is None else v for k, v in zip(self.keys, self.vectors)]
        image = self.modality == "image"
        checksums = tuple(c.removeprefix("sha256:") for c in self.contents) if image else ()
        return Embedded(np.stack(vectors).astype(np.float64), self.ids, self.copies, checksums=checksums,
                        files=tuple(self.items) if image else ())
