"""The interface between stimuli and statistics: an embedding source maps a stimulus set to vectors.

Static word vectors, published (precomputed) embeddings and neural encoders all implement
:class:`EmbeddingSource`. Sources never compute statistics.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

from eatkit.stimuli.types import StimulusSet


@dataclass(frozen=True)
class Embedded:
    """Embeddings of one stimulus set: ``vectors[i]`` embeds the stimulus ``ids[i]``.

    ``dropped`` lists stimuli that were left out on the user's explicit request (``oov="drop"``).
    ``checksums[i]`` is the SHA-256 of what was embedded for ``ids[i]`` where that is not the id itself
    (an image file's bytes); empty when the ids are the exact strings embedded (words, sentences).
    ``files[i]`` is the path of the image file embedded for ``ids[i]`` where the source read one (image
    sets of a model; empty otherwise).
    """

    vectors: np.ndarray
    ids: tuple[str, ...]
    dropped: tuple[str, ...] = ()
    checksums: tuple[str, ...] = ()
    files: tuple[str, ...] = ()


class EmbeddingSource(ABC):
    """Something that embeds stimulus sets: word vectors, published embeddings, or a model."""

    #: short identifier recorded in manifests, e.g. ``"glove-6b-50d"``
    id: str = ""
    #: the stimulus modalities this source can embed
    modalities: frozenset[str] = frozenset()

    @abstractmethod
    def embed(self, stimuli: StimulusSet) -> Embedded:
        """Embed one stimulus set; raise :class:`eatkit.errors.EatkitError` naming any bad stimulus."""

    def embed_many(self, sets: Sequence[StimulusSet]) -> list[Embedded]:
        """Embed several sets (the same vectors as :meth:`embed` of each; a model may overlap them)."""
        return [self.embed(stimuli) for stimuli in sets]

    @abstractmethod
    def manifest(self) -> dict[str, Any]:
        """What a reader needs to reproduce the embeddings: model id, revision, layer, pooling,
        preprocessing, prompt template, file checksums."""
