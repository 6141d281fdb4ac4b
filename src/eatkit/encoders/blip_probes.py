"""BLIP heads that answer and describe: visual question answering and captioning (probe models).

- ``hf-blip-vqa:<name>``: transformers ``BlipForQuestionAnswering`` (e.g. ``Salesforce/blip-vqa-base``,
  the "American == White" study's model): :meth:`BlipVQA.answer` decodes an answer to a question about
  each image, greedily (the model's deterministic answer), at most ``max_new_tokens`` tokens.
- ``hf-blip-caption:<name>``: transformers ``BlipForConditionalGeneration`` (e.g.
  ``Salesforce/blip-image-captioning-base``): :meth:`BlipCaptioner.caption` samples one caption per image
  with nucleus (top-p) sampling (``top_k=0``: the nucleus alone decides), seeded per batch from
  ``(seed, top_p, batch index)``, so a run is repeated exactly with the same seed, batch size and device.

Images go through the model's own ``preprocessor_config.json`` (BLIP: a bicubic resize to a square and
CLIP's mean and std), decoded as every eatkit image encoder decodes them. These models return text, not
embeddings: they serve the probes (``eatkit probe vqa|caption``), not the association tests.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from eatkit.encoders.hf import hf_weights_identity, load_pretrained, pinned_revision
from eatkit.encoders.vision_language import hf_image_preprocessing
from eatkit.errors import EatkitError
from eatkit.io import ensure_installed, installed_version
from eatkit.progress import progress


class _BlipHead:
    """A BLIP model that generates text from images (subclasses name the family and the decoding)."""

    family: ClassVar[str] = ""
    model_class: ClassVar[str] = ""
    task: ClassVar[str] = ""  # "vqa" or "caption"
    libraries: ClassVar[tuple[str, ...]] = ("torch", "transformers", "pillow")

    def __init__(self, name: str, *, revision: str | None = None, batch_size: int = 16, max_new_tokens: int = 20,
                 device: str = "cpu", images: Any = None, cache: bool = False, **_: Any) -> None:
        ensure_installed("transformers", f"the model '{self.family}:{name}'", "vl")
        for what, value in (("batch_size", batch_size), ("max_new_tokens", max_new_tokens)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise EatkitError(f"{what} must be a positive integer, got {value!r}")
        self.id, self.model, self.revision = f"{self.family}:{name}", name, revision
        self.batch_size, self.max_new_tokens, self.device = batch_size, max_new_tokens, device
        self.images = images
        self.preprocessing = hf_image_preprocessing(name, revision)
        self.weights = hf_weights_identity(name, revision)
        self._net: Any = None
        self._tokenizer: Any = None

    def config(self) -> dict[str, Any]:
        return {"model": self.model, "weights": self.weights, "task": self.task, "decoding": self.decoding(),
                "preprocessing": self.preprocessing.to_dict(), "device": self.device, "batch_size": self.batch_size}

    def decoding(self) -> dict[str, Any]:
        return {"max_new_tokens": self.max_new_tokens}

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
        for b, start in progress(enumerate(starts), total=len(starts), desc=f"{self.id}: {desc}"):
            chunk = paths[start:start + self.batch_size]
            yield b, torch.from_numpy(np.stack([self.preprocessing.array(p) for p in chunk])).to(self.device)

    def _decode(self, tokens: Any) -> list[str]:
        return [" ".join(t.split()) for t in self._tokenizer.batch_decode(tokens, skip_special_tokens=True)]


class BlipVQA(_BlipHead):
    """``hf-blip-vqa:<name>``: answers a question about each image (greedy decoding).

    Example::

        vqa = BlipVQA("Salesforce/blip-vqa-base")
        vqa.answer(["face.jpg"], "Is this person an American?")  # ['yes']
    """

    family, model_class, task = "hf-blip-vqa", "BlipForQuestionAnswering", "vqa"

    def decoding(self) -> dict[str, Any]:
        return {"strategy": "greedy", "max_new_tokens": self.max_new_tokens}

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
                                         attention_mask=tokens["attention_mask"], do_sample=False, num_beams=1,
                                         max_new_tokens=self.max_new_tokens)
            answers += self._decode(out)
        return answers


class BlipCaptioner(_BlipHead):
    """``hf-blip-caption:<name>``: one nucleus-sampled caption per image.

    Example::

        cap = BlipCaptioner("Salesforce/blip-image-captioning-base")
        cap.caption(["face.jpg"], top_p=0.7, seed=0)  # ['a man in a grey shirt']
    """

    family, model_class, task = "hf-blip-caption", "BlipForConditionalGeneration", "caption"

    def decoding(self) -> dict[str, Any]:
        return {"strategy": "nucleus sampling", "top_k": 0, "max_new_tokens": self.max_new_tokens,
                "seeding": "torch.manual_seed(SeedSequence([seed, round(top_p * 1000), batch]))"}

    def caption(self, paths: list[str], top_p: float, seed: int) -> list[str]:
        """One caption per image file, sampled from the nucleus of probability mass ``top_p``."""
        import torch

        if not isinstance(top_p, float | int) or not 0 < top_p <= 1:
            raise EatkitError(f"top-p must be in (0, 1], got {top_p!r}")
        captions: list[str] = []
        for b, pixels in self._batches(paths, f"top-p {top_p}"):
            torch.manual_seed(int(np.random.SeedSequence([seed, round(top_p * 1000), b]).generate_state(1)[0]))
            with torch.inference_mode():
                out = self._net.generate(pixel_values=pixels, do_sample=True, top_p=float(top_p), top_k=0,
                                         max_new_tokens=self.max_new_tokens)
            captions += self._decode(out)
        return captions
