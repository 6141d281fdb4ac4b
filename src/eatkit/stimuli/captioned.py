"""(image, caption) pairs: the stimuli of the grounded tests (Grounded-WEAT/SEAT, seed 001).

A :class:`CaptionedImages` set is a :class:`~eatkit.stimuli.types.StimulusSet` of modality
``"image-caption"``: ``items`` are the captions and ``images`` the image file names, in parallel (the
i-th stimulus is ``(images[i], items[i])``; an image may carry several captions). Its other fields say
how a joint encoder reads each pair; the grounded analysis sets them for each embedding kind:

- ``embedding``: ``"cls"`` (the hidden state of the first token, [CLS]: the seed's word and sentence
  embeddings) or ``"contextual"`` (the first sub-token of the first contextual word in the caption);
- ``contextual_words``: the test's contextual words (matched whole, case-insensitively);
- ``mask``: ``None``, ``"language"`` (every sub-token of every contextual word in the caption is replaced
  by the mask token) or ``"vision"`` (the image regions labelled person are masked).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from eatkit.errors import EatkitError
from eatkit.stimuli.types import StimulusSet

MODALITY = "image-caption"
EMBEDDINGS: tuple[str, ...] = ("cls", "contextual")
MASKS: tuple[str, ...] = ("language", "vision")


@dataclass(frozen=True)
class CaptionedImages(StimulusSet):
    """(image, caption) pairs (see the module docstring)."""

    images: tuple[str, ...] = ()
    embedding: str = "cls"
    contextual_words: tuple[str, ...] = ()
    mask: str | None = None

    def __post_init__(self) -> None:
        if self.modality != MODALITY:
            raise AssertionError(f"CaptionedImages has modality '{MODALITY}', got '{self.modality}'")
        if len(self.images) != len(self.items):
            raise EatkitError(f"set '{self.name}' has {len(self.items)} captions but {len(self.images)} images")
        if self.embedding not in EMBEDDINGS:
            raise AssertionError(f"unknown embedding '{self.embedding}'")
        if self.mask not in (None, *MASKS):
            raise AssertionError(f"unknown mask '{self.mask}'")

    def content_hash(self) -> str:
        payload = json.dumps([self.modality, list(self.items), list(self.images), self.embedding,
                              list(self.contextual_words), self.mask], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def pair_ids(self) -> tuple[str, ...]:
        """One id per pair: ``<image file name>|<caption>``."""
        return tuple(f"{image}|{caption}" for image, caption in zip(self.images, self.items))


def word_pattern(words: tuple[str, ...]) -> re.Pattern[str] | None:
    """A regular expression matching any of ``words`` as whole words, case-insensitively (longest first,
    so that "construction worker" wins over "worker"); ``None`` when there are no words.

    >>> word_pattern(("he", "his")).findall("His hat, he said.")
    ['His', 'he']
    """
    if not words:
        return None
    alternatives = "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def word_spans(caption: str, words: tuple[str, ...]) -> list[tuple[int, int]]:
    """Character spans of every occurrence of a contextual word in ``caption``, left to right.

    >>> word_spans("The construction worker is here.", ("worker", "construction worker"))
    [(4, 23)]
    """
    pattern = word_pattern(words)
    return [m.span() for m in pattern.finditer(caption)] if pattern is not None else []


def captions_without_words(stimuli: CaptionedImages, words: tuple[str, ...]) -> list[str]:
    """The distinct captions of a set that contain none of ``words``, in order of first appearance.

    >>> pairs = CaptionedImages("P", MODALITY, items=("He is here.", "It is here."), images=("a.jpg", "b.jpg"))
    >>> captions_without_words(pairs, ("he", "she"))
    ['It is here.']
    """
    pattern = word_pattern(words)
    return list(dict.fromkeys(c for c in stimuli.items if pattern is None or pattern.search(c) is None))
