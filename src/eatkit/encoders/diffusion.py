"""Text-to-image generation as an embedding source (diffusers): a prompt is embedded as the image
embeddings of the images a text-to-image model generates from it.

:class:`DiffusionGenerator` runs a diffusers text-to-image pipeline (``DiffusionPipeline.from_pretrained``
of a hub id or a local folder saved with ``save_pretrained``): image ``i`` of a prompt is generated alone
(one image per pipeline call), its initial noise drawn from ``torch.Generator(device).manual_seed(seed + i)``,
so that every image depends only on its prompt, its seed and the settings (:data:`GENERATION_SETTINGS`:
images per prompt, seed, steps, guidance scale, scheduler, negative prompt, size) and on the model and
precision. Each image is saved as a PNG under the eatkit cache (``<cache>/generated-v1/<key>.png``), its key
the SHA-256 of everything that changes it (the model's identity: hub id and revision, or the SHA-256 of every
file of its folder; prompt, seed, settings, precision, device kind, diffusers and torch versions), so that
re-running or re-analysing never generates an image twice.

:class:`TextToImage` (registered as ``diffusers:<hub id or folder>``, built by
:func:`eatkit.run.generated.text_to_image`) embeds ``"prompt"`` sets: every
prompt's images, embedded by an image model (``embedder``, a registered model name); sets of the embedder's
own modalities (e.g. a CLIP model's sentences: the classifier prompts of the generated-people test) go to
the embedder as they are. The ids of a prompt set's embeddings are ``"<prompt> [seed <s>]"``, their
checksums the PNG files' SHA-256 (recorded in the manifest), their files the cached PNGs.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.io import atomic_write_bytes, installed_version
from eatkit.kinds import Param
from eatkit.progress import tracker
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stimuli.types import StimulusSet

#: diffusers scheduler classes by eatkit's name (``scheduler=None``: the pipeline's own)
SCHEDULERS: dict[str, str] = {
    "ddim": "DDIMScheduler", "pndm": "PNDMScheduler", "euler": "EulerDiscreteScheduler",
    "euler-ancestral": "EulerAncestralDiscreteScheduler", "dpm-multistep": "DPMSolverMultistepScheduler",
    "lms": "LMSDiscreteScheduler",
}
#: the settings of a generation (``--generation KEY=VALUE``, a sweep model's ``generation`` table)
GENERATION_SETTINGS: tuple[Param, ...] = (
    # each image a pipeline run: 10,000 per prompt is days on a GPU (the useful ranges here are not yet printed)
    Param("images_per_prompt", int, 4, low=1, high=10_000, useful=(None, None), help="images generated per prompt"),
    # seed + i stays below 2^53 (recorded exactly in JSON) and below torch's 2^64
    Param("seed", int, 0, low=0, high=2**53 - 10_001, useful=(None, None),
          help="image i of a prompt starts from the noise of seed + i"),
    Param("steps", int, 25, low=1, high=10_000, useful=(None, None), help="denoising steps"),
    Param("guidance_scale", float, 7.5, low=0, high=1000, useful=(None, None), help="classifier-free guidance scale"),
    Param("scheduler", choices=tuple(SCHEDULERS), help="the sampler (default: the pipeline's own)"),
    Param("negative_prompt", help="the negative prompt (default: none)"),
    # a latent diffusion pipeline takes multiples of 8 (its VAE downsamples 8x); 4096 pixels a side fill a GPU
    Param("size", int, low=8, high=4096, useful=(None, None), help="image height and width in pixels, a multiple "
          "of 8 (default: the pipeline's)"),
)
#: a generated image's side is a multiple of this (the VAE of a latent diffusion pipeline downsamples 8x)
SIZE_STEP = 8
#: bump when a change here changes the generated images (part of every image's cache key)
GENERATOR_VERSION = "1"


def generation_settings(given: Mapping[str, Any] | Sequence[str] | None) -> dict[str, Any]:
    """Every generation setting: ``given`` (names of :data:`GENERATION_SETTINGS`, values or their text; or
    ``KEY=VALUE`` texts)
    checked and converted, the defaults filled in; an unknown name or a bad value is a one-line error.

    >>> generation_settings({"steps": "2"})["steps"], generation_settings(["seed=3"])["seed"]
    (2, 3)
    >>> generation_settings({"step": 2})
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: unknown generation setting 'step' (known: images_per_prompt, seed, steps, guidance_scale, scheduler, negative_prompt, size)
    """
    if isinstance(given, (list, tuple)):  # KEY=VALUE texts of a command line
        pairs = [str(text).partition("=") for text in given]
        bad = [key for key, sep, _ in pairs if not sep or not key.strip()]
        if bad:
            raise EatkitError(f"--generation takes KEY=VALUE, got '{bad[0]}'")
        given = {key.strip(): value.strip() for key, _, value in pairs}
    if given is not None and not isinstance(given, Mapping):
        raise EatkitError(f"generation settings must map names to values, got {given!r:.60}")
    given = dict(given or {})
    names = [p.name for p in GENERATION_SETTINGS]
    for name in given:
        if name not in names:
            raise EatkitError(f"unknown generation setting {name!r} (known: {', '.join(names)})")
    return _checked_size({p.name: p.convert(given[p.name]) if given.get(p.name) is not None else p.default
                          for p in GENERATION_SETTINGS})


def _checked_size(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` whose image size, when given, is a multiple of :data:`SIZE_STEP`, or a one-line error."""
    if settings["size"] is not None and settings["size"] % SIZE_STEP:
        raise EatkitError(f"size must be a multiple of {SIZE_STEP} (a latent diffusion pipeline's VAE downsamples "
                          f"{SIZE_STEP}x), got {settings['size']}")
    return settings


def folder_sha256(folder: str | os.PathLike[str]) -> str:
    """SHA-256 over every file of ``folder`` (relative path and content, in path order): the identity of a
    model saved there.

    >>> import tempfile; d = tempfile.mkdtemp(); _ = open(os.path.join(d, "a"), "w").write("x")
    >>> folder_sha256(d)[:12]
    'b71899f0e13a'
    """
    from eatkit.io import file_sha256

    root = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(root).as_posix()}\0{file_sha256(path)}\n".encode())
    return digest.hexdigest()


class DiffusionGenerator:
    """A diffusers text-to-image pipeline with recorded settings and a cache of its images.

    Example::

        gen = DiffusionGenerator("stabilityai/stable-diffusion-2-1-base", settings={"steps": 25})
        images = gen.generate("a photo of a person studying science")   # [(seed, png bytes)] * 4
    """

    def __init__(self, model: str | os.PathLike[str], *, settings: Mapping[str, Any] | Sequence[str] | None = None,
                 revision: str | None = None, device: str = "auto", precision: str = "fp32",
                 cache: bool = True, cache_dir: str | os.PathLike[str] | None = None) -> None:
        from eatkit.encoders.cache import cache_dir as default_cache
        from eatkit.encoders.device import check_device, check_precision, device_kind

        if not isinstance(model, (str, os.PathLike)) or not str(model).strip():
            raise EatkitError(f"a text-to-image model is a hub id or a folder, got {model!r}")
        self.model = str(model)
        self.folder = Path(model).expanduser() if Path(model).expanduser().is_dir() else None
        if self.folder is None and (self.model.startswith((".", "/", "~")) or self.model.count("/") > 1):
            raise EatkitError(f"text-to-image model folder not found: {self.model}")
        if self.folder is not None and not (self.folder / "model_index.json").is_file():
            raise EatkitError(f"{self.model} is not a diffusers pipeline folder (it has no model_index.json)")
        if self.folder is not None and revision is not None:
            raise EatkitError("--revision applies to a hub model, not to a local folder")
        self.revision = revision
        self.settings = generation_settings(settings)
        self.device, self.precision = check_device(device), check_precision(precision)
        self.device_kind = device_kind(self.device)
        self.cache = Path(cache_dir or default_cache()) / f"generated-v{GENERATOR_VERSION}" if cache else None
        self.stats = {"generated": 0, "cached": 0}
        self._pipe: Any = None
        self._identity: dict[str, Any] | None = None
        self._config: dict[str, Any] | None = None

    def identity(self) -> dict[str, Any]:
        """What identifies the weights: the folder's SHA-256, or the hub id, revision and the commit it
        resolves to."""
        if self._identity is None:
            if self.folder is not None:
                self._identity = {"folder": str(self.folder.resolve()), "folder_sha256": folder_sha256(self.folder)}
            else:  # the commit the revision resolves to now: the images' key, and the weights loaded
                from eatkit.encoders.hf import hub_commit

                commit = hub_commit(self.model, self.revision, "model_index.json")
                self._identity = {"hub_id": self.model, "revision": self.revision or "main", "commit": commit}
        return self._identity

    def config(self) -> dict[str, Any]:
        """Everything that changes an image but its prompt and seed (the cache key's payload)."""
        if self._config is None:
            self._config = self._settled_config()
        return self._config

    def _settled_config(self) -> dict[str, Any]:
        weights = {k: v for k, v in self.identity().items() if k != "folder"}
        return {"generator_version": GENERATOR_VERSION, "weights": weights, "precision": self.precision,
                "device_kind": self.device_kind, "diffusers": installed_version("diffusers"),
                "torch": installed_version("torch"),
                **{k: v for k, v in self.settings.items() if k not in ("images_per_prompt", "seed")}}

    def seeds(self) -> list[int]:
        """The seed of each image of a prompt: seed + i."""
        return [self.settings["seed"] + i for i in range(self.settings["images_per_prompt"])]

    def key(self, prompt: str, seed: int) -> str:
        """The cache key of one image."""
        payload = json.dumps({"config": self.config(), "prompt": prompt, "seed": seed}, sort_keys=True)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def generate(self, prompt: str, tick: Any = None) -> list[tuple[int, bytes]]:
        """(seed, PNG bytes) of every image of ``prompt``, from the cache where it holds them; ``tick`` (a
        :func:`eatkit.progress.tracker`) advances by one per image."""
        if not isinstance(prompt, str) or not prompt.strip():
            raise EatkitError(f"a generation prompt must be a non-empty string, got {prompt!r}")
        out = []
        for seed in self.seeds():
            path = self.cache / f"{self.key(prompt, seed)}.png" if self.cache is not None else None
            if path is not None and path.is_file():
                out.append((seed, path.read_bytes()))
                self.stats["cached"] += 1
                if tick is not None:
                    tick.advance()
                continue
            png = self._run(prompt, seed)
            self.stats["generated"] += 1
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_bytes(path, png)
            out.append((seed, png))
            if tick is not None:
                tick.advance()
        return out

    def _run(self, prompt: str, seed: int) -> bytes:
        """One image generated by the pipeline, as PNG bytes."""
        import torch

        from eatkit.encoders.device import strict_fp32

        pipe = self.pipeline()
        s = self.settings
        generator = torch.Generator(device="cpu" if pipe.device.type == "mps" else pipe.device).manual_seed(seed)
        size = {"height": s["size"], "width": s["size"]} if s["size"] else {}
        strict = pipe.device.type == "cuda" and self.precision == "fp32"  # IEEE fp32, as the embedders run
        with torch.inference_mode(), (strict_fp32(torch) if strict else contextlib.nullcontext()):
            image = pipe(prompt, negative_prompt=s["negative_prompt"], num_inference_steps=s["steps"],
                         guidance_scale=s["guidance_scale"], num_images_per_prompt=1, generator=generator,
                         output_type="pil", **size).images[0]
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return buffer.getvalue()

    def pipeline(self) -> Any:
        """The loaded pipeline (loaded on first use)."""
        if self._pipe is None:
            from eatkit.encoders.device import torch_device
            from eatkit.io import require

            diffusers = require("diffusers", "text-to-image generation", "t2i")
            import torch

            dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[self.precision]
            source = str(self.folder) if self.folder is not None else self.model
            revision = self.identity().get("commit", self.revision)  # pinned: the branch may move meanwhile
            # no loading bars on the console (diffusers', and transformers' for the text encoder); restored after
            quiet = [diffusers.utils.logging]
            if installed_version("transformers") is not None:
                import transformers

                quiet.append(transformers.utils.logging)
            bars = [q.is_progress_bar_enabled() for q in quiet]
            for q in quiet:
                q.disable_progress_bar()
            try:
                pipe = diffusers.DiffusionPipeline.from_pretrained(
                    source, revision=revision, dtype=dtype,
                    low_cpu_mem_usage=installed_version("accelerate") is not None)
            except (OSError, ValueError, TypeError) as err:
                raise EatkitError(f"cannot load the text-to-image model '{self.model}': "
                                  f"{str(err).splitlines()[0] if str(err) else type(err).__name__}") from None
            finally:
                for q, on in zip(quiet, bars):
                    if on:
                        q.enable_progress_bar()
            if not hasattr(pipe, "unet") and not hasattr(pipe, "transformer"):
                raise EatkitError(f"'{self.model}' is a {type(pipe).__name__}, not a text-to-image pipeline")
            if self.settings["scheduler"] is not None:
                scheduler = getattr(diffusers, SCHEDULERS[self.settings["scheduler"]])
                pipe.scheduler = scheduler.from_config(pipe.scheduler.config)
            pipe.set_progress_bar_config(disable=True)
            self._pipe = pipe.to(torch_device(torch, self.device))
        return self._pipe

    def manifest(self) -> dict[str, Any]:
        """The generator as the run's manifest records it (the scheduler and safety checker once loaded)."""
        out = {"model": self.model, **self.identity(), "settings": dict(self.settings), "seeds": "seed + i",
               "precision": self.precision, "device": self.device, "diffusers": installed_version("diffusers"),
               "torch": installed_version("torch"), "images": dict(self.stats),
               "one_image_per_call": True}
        if self._pipe is not None:
            out.update(pipeline=type(self._pipe).__name__, scheduler=type(self._pipe.scheduler).__name__,
                       scheduler_config=_plain(dict(self._pipe.scheduler.config)),
                       safety_checker=getattr(self._pipe, "safety_checker", None) is not None)
        return out


def _plain(value: Any) -> Any:
    """A JSON-able copy of a scheduler config (tuples as lists, other objects as text)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value if value is None or isinstance(value, (bool, int, float, str)) else str(value)


class TextToImage(EmbeddingSource):
    """Prompts embedded as the images generated from them by ``embedder``, a built image model (module
    docstring; ``diffusers:<hub id or folder>`` is :func:`eatkit.run.generated.text_to_image`).

    >>> TextToImage("/no/such/pipeline")
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: text-to-image model folder not found: /no/such/pipeline
    """

    def __init__(self, name: str, *, embedder: EmbeddingSource | None = None,
                 generation: Mapping[str, Any] | Sequence[str] | None = None, revision: str | None = None,
                 device: str = "auto", precision: str = "fp32", cache: bool = True) -> None:
        self.generator = DiffusionGenerator(name, settings=generation, revision=revision, device=device,
                                            precision=precision, cache=cache)
        self.id = f"diffusers:{name}"
        self.embedder = embedder
        self._folder: Path | None = None
        self._tick: Any = None  # the progress of the sets being generated (_generating)

    @property  # type: ignore[override]
    def modalities(self) -> frozenset[str]:
        """Prompts, and the embedder's own modalities."""
        return frozenset({"prompt"} | (set(self.embedder.modalities) if self.embedder is not None else set()))

    def embed(self, stimuli: StimulusSet) -> Embedded:
        with self._generating([stimuli]):
            return self._embed(stimuli)

    def embed_many(self, sets: Sequence[StimulusSet]) -> list[Embedded]:
        """The sets one by one, under one progress line counting every image to generate."""
        with self._generating(sets):
            return [self._embed(stimuli) for stimuli in sets]

    @contextlib.contextmanager
    def _generating(self, sets: Sequence[StimulusSet]) -> Iterator[None]:
        """``diffusers:<name>: generating 1,200/3,200 images, ETA 4m10s`` while the block runs (cached
        images count as generated)."""
        if self._tick is not None:
            yield
            return
        total = sum(len(s.items) for s in sets if s.modality == "prompt") * self.generator.settings["images_per_prompt"]
        with tracker(f"{self.id}: generating", total, "images") as self._tick:
            try:
                yield
            finally:
                self._tick = None

    def _embed(self, stimuli: StimulusSet) -> Embedded:
        if self.embedder is None:
            raise EatkitError(f"{self.id} needs an image model to embed its images: give --embedder MODEL "
                              "(e.g. hf-clip:openai/clip-vit-large-patch14, as T2IAT used CLIP ViT-L/14)")
        if stimuli.modality != "prompt":
            return self.embedder.embed(stimuli)
        if not stimuli.items:
            raise EatkitError(f"prompt set '{stimuli.name}' is empty")
        ids, paths, hashes = [], [], []
        for prompt in stimuli.items:
            for seed, png in self.generator.generate(prompt, self._tick):
                digest = hashlib.sha256(png).hexdigest()
                ids.append(f"{prompt} [seed {seed}]")
                paths.append(str(self._store(digest, png)))
                hashes.append(digest)
        images = self.embedder.embed(StimulusSet(stimuli.name, "image", tuple(dict.fromkeys(paths))))
        by_hash = dict(zip(images.checksums, images.vectors)) if images.checksums else {}
        by_file = dict(zip(images.files, images.vectors))
        vectors = np.stack([by_file[p] if p in by_file else by_hash[h] for p, h in zip(paths, hashes)])
        return Embedded(vectors, tuple(ids), checksums=tuple(hashes), files=tuple(paths))

    def _store(self, digest: str, png: bytes) -> Path:
        """The PNG as a file the embedder reads (the cache's file; a temporary folder without a cache)."""
        if self.generator.cache is not None:
            path = self.generator.cache / "by-sha256" / f"{digest}.png"
        else:
            if self._folder is None:
                import atexit
                import shutil
                import tempfile

                self._folder = Path(tempfile.mkdtemp(prefix="eatkit-generated-"))
                # the run folder keeps its copies; the temporary files go when the process ends
                atexit.register(shutil.rmtree, self._folder, ignore_errors=True)
            path = self._folder / f"{digest}.png"
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, png)
        return path

    def manifest(self) -> dict[str, Any]:
        return {"model": self.id, "generator": self.generator.manifest(),
                "embedder": self.embedder.manifest() if self.embedder is not None else None}
