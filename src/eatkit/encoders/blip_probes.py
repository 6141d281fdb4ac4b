"""BLIP heads that answer and describe: visual question answering and captioning (probe models).

By default both decode as the "American == White" authors ran BLIP (seed 003; the BLIP repository's
``BLIP_VQA`` and ``BLIP_Decoder.generate``, which their code called), every setting an option recorded
in the manifest (``decoding``):

- ``hf-blip-vqa:<name>``: transformers ``BlipForQuestionAnswering`` (e.g. ``Salesforce/blip-vqa-base``,
  the study's model): :meth:`BlipVQA.answer` decodes an answer to a question about each image by beam
  search, ``num_beams=3``, ``max_length=10``, ``min_length=1`` (BLIP's VQA inference), on 480 x 480 inputs
  (BLIP's VQA image size; the preset ``wolfe2022-blip-vqa``). The hub's converted ``blip-vqa-base`` has
  position embeddings for 384 px, so at 480 px they are interpolated (transformers'
  ``interpolate_pos_encoding``): the authors' original checkpoint had 480-px embeddings, which the hub
  weights no longer hold; ``--preprocess model`` runs at the hub model's own 384 px instead.
- ``hf-blip-caption:<name>``: transformers ``BlipForConditionalGeneration`` (e.g.
  ``Salesforce/blip-image-captioning-base``): :meth:`BlipCaptioner.caption` samples one caption per image
  after the prompt ``"a picture of "`` (removed from the caption, as BLIP does), with nucleus (top-p)
  sampling, ``top_k=50`` (transformers' default, which BLIP leaves), ``repetition_penalty=1.1``,
  ``max_length=20`` and ``min_length=5`` (tokens, the prompt's included), on 384 x 384 inputs (the preset
  ``wolfe2022-blip``); seeded per batch from ``(seed, top_p, batch index)``, so a run is repeated exactly
  with the same seed, batch size and device.

``max_new_tokens`` (``--max-new-tokens``) replaces ``max_length`` when given. ``preprocess="model"`` uses
the model's own ``preprocessor_config.json`` instead of the authors' preset. Images are decoded as Pillow
opens them (alpha dropped, as BLIP's ``Image.open(...).convert("RGB")``). These models return text, not
embeddings: they serve the probes (``eatkit probe vqa|caption``), not the association tests.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from eatkit.encoders.hf import hf_weights_identity, load_pretrained, pinned_revision
from eatkit.encoders.vision_language import hf_image_preprocessing
from eatkit.errors import EatkitError
from eatkit.io import ensure_installed, installed_version
from eatkit.progress import tracker


class _BlipHead:
    """A BLIP model that generates text from images (subclasses name the family and the decoding)."""

    family: ClassVar[str] = ""
    model_class: ClassVar[str] = ""
    task: ClassVar[str] = ""  # "vqa" or "caption"
    libraries: ClassVar[tuple[str, ...]] = ("torch", "transformers", "pillow")

    #: the study preset of the authors' image input (:data:`eatkit.encoders.images.PRESETS`)
    preset: ClassVar[str] = ""

    def __init__(self, name: str, *, revision: str | None = None, batch_size: int = 16,
                 max_new_tokens: int | None = None, max_length: int | None = None, min_length: int | None = None,
                 preprocess: str | None = None, device: str = "cpu", images: Any = None, cache: bool = False,
                 **_: Any) -> None:
        ensure_installed("transformers", f"the model '{self.family}:{name}'", "vl")
        for what, value in (("batch_size", batch_size), ("max_new_tokens", max_new_tokens),
                            ("max_length", max_length), ("min_length", min_length)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise EatkitError(f"{what} must be a positive integer, got {value!r}")
        self.id, self.model, self.revision = f"{self.family}:{name}", name, revision
        self.batch_size, self.device = batch_size, device
        self.max_new_tokens = max_new_tokens
        self.max_length = self.default_max_length if max_length is None else max_length
        self.min_length = self.default_min_length if min_length is None else min_length
        self.images = images
        own = hf_image_preprocessing(name, revision)
        self.preprocessing = own if preprocess == "model" else own.override(preprocess=preprocess or self.preset)
        self.weights = hf_weights_identity(name, revision)
        self._net: Any = None
        self._tokenizer: Any = None

    #: the authors' lengths (tokens, a prompt's included)
    default_max_length: ClassVar[int] = 20
    default_min_length: ClassVar[int] = 1

    def config(self) -> dict[str, Any]:
        return {"model": self.model, "weights": self.weights, "task": self.task, "decoding": self.decoding(),
                "preprocessing": self.preprocessing.to_dict(), "device": self.device, "batch_size": self.batch_size}

    def lengths(self) -> dict[str, int]:
        """The length limits passed to ``generate``: ``max_new_tokens`` when given, else ``max_length``."""
        most = {"max_new_tokens": self.max_new_tokens} if self.max_new_tokens else {"max_length": self.max_length}
        return {**most, "min_length": self.min_length}

    def _vision_kwargs(self) -> dict[str, bool]:
        """``interpolate_pos_encoding=True`` when the input size differs from the one the model's position
        embeddings were made for (BLIP's VQA input is 480 px; the hub's converted weights have 384 px)."""
        return {"interpolate_pos_encoding": self.preprocessing.size != self._net.config.vision_config.image_size}

    def decoding(self) -> dict[str, Any]:
        return self.lengths()

    def manifest(self) -> dict[str, Any]:
        return {"id": self.id, **self.config(),
                "libraries": {name: installed_version(name) for name in self.libraries}}

    def _load(self) -> None:
        if self._net is None:
            self._net, self._tokenizer = load_pretrained(self.model_class, self.model,
                                                         pinned_revision(self.weights, self.revision),
                                                         f"the model '{self.id}'", "vl", model_type="blip")
            try:
                self._net.to(self.device)
            except (RuntimeError, AssertionError) as exc:
                raise EatkitError(f"cannot move the model '{self.id}' to device '{self.device}': {exc}") from None

    def _batches(self, paths: list[str], desc: str) -> Any:
        """(batch index, pixel tensor) for each batch of image files."""
        import torch

        self._load()
        starts = range(0, len(paths), self.batch_size)
        with tracker(f"{self.id}: {desc}", len(paths), "images") as tick:
            for b, start in enumerate(starts):
                chunk = paths[start:start + self.batch_size]
                yield b, torch.from_numpy(np.stack([self.preprocessing.array(p) for p in chunk])).to(self.device)
                tick.advance(len(chunk))

    def _decode(self, tokens: Any) -> list[str]:
        return [" ".join(t.split()) for t in self._tokenizer.batch_decode(tokens, skip_special_tokens=True)]


class BlipVQA(_BlipHead):
    """``hf-blip-vqa:<name>``: answers a question about each image (beam search, BLIP's VQA settings).

    Example::

        vqa = BlipVQA("Salesforce/blip-vqa-base")
        vqa.answer(["face.jpg"], "Is this person an American?")  # ['yes']
    """

    family, model_class, task, preset = "hf-blip-vqa", "BlipForQuestionAnswering", "vqa", "wolfe2022-blip-vqa"
    default_max_length = 10

    def __init__(self, name: str, *, num_beams: int = 3, **options: Any) -> None:
        super().__init__(name, **options)
        if not isinstance(num_beams, int) or isinstance(num_beams, bool) or num_beams < 1:
            raise EatkitError(f"num_beams must be a positive integer, got {num_beams!r}")
        self.num_beams = num_beams

    def decoding(self) -> dict[str, Any]:
        strategy = "greedy" if self.num_beams == 1 else "beam search"
        return {"strategy": strategy, "num_beams": self.num_beams, **self.lengths()}

    def answer(self, paths: list[str], question: str) -> list[str]:
        """The model's answer to ``question`` for each image file, lower-cased by the tokenizer."""
        import torch

        if not question.strip():
            raise EatkitError("a VQA question must not be empty")
        answers: list[str] = []
        for _, pixels in self._batches(paths, question):
            tokens = self._tokenizer([question] * pixels.shape[0], return_tensors="pt", padding=True).to(self.device)
            with torch.inference_mode():
                out = self._net.generate(pixel_values=pixels, input_ids=tokens["input_ids"],
                                         attention_mask=tokens["attention_mask"], do_sample=False,
                                         num_beams=self.num_beams, **self.lengths(), **self._vision_kwargs())
            answers += self._decode(out)
        return answers


class BlipCaptioner(_BlipHead):
    """``hf-blip-caption:<name>``: one nucleus-sampled caption per image, after BLIP's prompt.

    Example::

        cap = BlipCaptioner("Salesforce/blip-image-captioning-base")
        cap.caption(["face.jpg"], top_p=0.7, seed=0)  # ['a man in a grey shirt']
    """

    family, model_class, task, preset = "hf-blip-caption", "BlipForConditionalGeneration", "caption", "wolfe2022-blip"
    default_min_length = 5

    def __init__(self, name: str, *, prompt: str = "a picture of ", top_k: int = 50,
                 repetition_penalty: float = 1.1, **options: Any) -> None:
        super().__init__(name, **options)
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 0:
            raise EatkitError(f"top_k must be a non-negative integer (0: no top-k), got {top_k!r}")
        if not isinstance(repetition_penalty, float | int) or not repetition_penalty > 0:
            raise EatkitError(f"repetition_penalty must be positive, got {repetition_penalty!r}")
        if not isinstance(prompt, str):
            raise EatkitError(f"prompt must be a string, got {prompt!r}")
        self.prompt, self.top_k, self.repetition_penalty = prompt, top_k, float(repetition_penalty)

    def decoding(self) -> dict[str, Any]:
        return {"strategy": "nucleus sampling", "prompt": self.prompt, "top_k": self.top_k,
                "repetition_penalty": self.repetition_penalty, **self.lengths(),
                "seeding": "torch.manual_seed(SeedSequence([seed, round(top_p * 1000), batch]))"}

    def caption(self, paths: list[str], top_p: float, seed: int) -> list[str]:
        """One caption per image file, sampled from the nucleus of probability mass ``top_p`` (the prompt
        removed as BLIP removes it: the first ``len(prompt)`` characters of the decoded text)."""
        import torch

        if not isinstance(top_p, float | int) or not 0 < top_p <= 1:
            raise EatkitError(f"top-p must be in (0, 1], got {top_p!r}")
        captions: list[str] = []
        for b, pixels in self._batches(paths, f"top-p {top_p}"):
            prompt = {}
            if self.prompt:
                tokens = self._tokenizer([self.prompt] * pixels.shape[0], return_tensors="pt").to(self.device)
                prompt = {"input_ids": tokens["input_ids"], "attention_mask": tokens["attention_mask"]}
            torch.manual_seed(int(np.random.SeedSequence([seed, round(top_p * 1000), b]).generate_state(1)[0]))
            with torch.inference_mode():
                out = self._net.generate(pixel_values=pixels, **prompt, do_sample=True, top_p=float(top_p),
                                         top_k=self.top_k, repetition_penalty=self.repetition_penalty,
                                         **self.lengths(), **self._vision_kwargs())
            texts = self._tokenizer.batch_decode(out, skip_special_tokens=True)
            captions += [" ".join(t[len(self.prompt):].split()) for t in texts]
        return captions
