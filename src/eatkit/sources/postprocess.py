"""Post-processing that corrects anisotropy, as a wrapper around any embedding source (off by default).

Two methods, named as ``--postprocess`` takes them:

- ``"center"``: subtract the mean vector mu of the reference vectors: v' = v - mu.
- ``"abtt:D"``: *all-but-the-top* (Mu & Viswanath 2018, Algorithm 1): subtract mu, then remove the
  projections on the top ``D`` principal directions u_1..u_D of the centred reference vectors:
  v' = (v - mu) - sum_{i<=D} (u_i . (v - mu)) u_i.

The statistics (mu, u_i) are estimated once, on *reference* vectors: by default the embeddings of
every distinct stimulus the run will embed (:meth:`PostprocessedSource.fit` on its stimulus sets), so
that a run's results depend on the set of tests it runs; the manifest records the method, ``D``, the
number of reference vectors and their checksum. Cosine similarity then measures the directions that
remain (see :mod:`eatkit.stats.isotropy` for when that is needed).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stimuli.templates import expand_templates
from eatkit.stimuli.types import StimulusSet


@dataclass(frozen=True)
class Postprocessing:
    """A parsed ``--postprocess`` value: ``method`` ``"center"`` or ``"abtt"`` with ``components`` D."""

    method: str
    components: int = 0

    @classmethod
    def parse(cls, text: str) -> "Postprocessing":
        """Parse ``"center"`` or ``"abtt:D"`` (D >= 1).

        >>> Postprocessing.parse("abtt:3")
        Postprocessing(method='abtt', components=3)
        """
        if text == "center":
            return cls("center")
        name, sep, d = str(text).partition(":")
        if name == "abtt" and sep and d.isdigit() and int(d) >= 1:
            return cls("abtt", int(d))
        raise EatkitError(f"unknown post-processing {text!r} (expected 'center' or 'abtt:D' with D >= 1, e.g. abtt:2)")

    def __str__(self) -> str:
        return "center" if self.method == "center" else f"abtt:{self.components}"


@dataclass(frozen=True)
class FittedPostprocessing:
    """The estimated mean and top principal directions (rows of ``directions``) of the reference vectors."""

    spec: Postprocessing
    mean: np.ndarray
    directions: np.ndarray  # (D, d), orthonormal rows; (0, d) for "center"
    n_reference: int
    reference_sha256: str

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        """Transform ``(n, d)`` vectors (module docstring).

        >>> f = fit_postprocessing(Postprocessing("center"), np.array([[1.0, 2.0], [3.0, 2.0]]))
        >>> f.apply(np.array([[2.0, 5.0]])).tolist()
        [[0.0, 3.0]]
        """
        centred = np.asarray(vectors, dtype=np.float64) - self.mean
        return centred - (centred @ self.directions.T) @ self.directions

    def manifest(self) -> dict[str, Any]:
        return {"method": str(self.spec), "components": self.spec.components, "n_reference": self.n_reference,
                "reference_sha256": self.reference_sha256}


def fit_postprocessing(spec: Postprocessing, reference: np.ndarray) -> FittedPostprocessing:
    """Estimate mu and the top ``D`` principal directions of ``reference`` (each row one vector)."""
    ref = np.asarray(reference, dtype=np.float64)
    if ref.ndim != 2 or ref.shape[0] < 2 or not np.isfinite(ref).all():
        raise EatkitError(f"post-processing needs at least 2 finite reference vectors, got shape {ref.shape}")
    if spec.components >= min(ref.shape):
        raise EatkitError(f"post-processing {spec}: cannot remove {spec.components} principal components from "
                          f"{ref.shape[0]} reference vectors of dimension {ref.shape[1]}")
    mean = ref.mean(axis=0)
    directions = np.empty((0, ref.shape[1]))
    if spec.components:
        directions = np.linalg.svd(ref - mean, full_matrices=False)[2][: spec.components]
    digest = hashlib.sha256(np.ascontiguousarray(ref).tobytes()).hexdigest()
    return FittedPostprocessing(spec, mean, directions, ref.shape[0], digest)


class PostprocessedSource(EmbeddingSource):
    """``source`` with its embeddings post-processed (module docstring); :meth:`fit` before :meth:`embed`.

    >>> from eatkit.sources.vectors import WordVectors
    >>> wv = WordVectors(["a", "b", "c"], np.array([[5.0, 1.0], [5.0, -1.0], [5.0, 0.0]]), id="toy")
    >>> src = PostprocessedSource(wv, "center").fit([StimulusSet("S", "word", ("a", "b", "c"))])
    >>> src.embed(StimulusSet("T", "word", ("a",))).vectors.tolist()
    [[0.0, 1.0]]
    """

    def __init__(self, source: EmbeddingSource, postprocess: str | Postprocessing) -> None:
        self.source = source
        self.spec = postprocess if isinstance(postprocess, Postprocessing) else Postprocessing.parse(postprocess)
        self.id = source.id
        self.modalities = source.modalities
        self.fitted: FittedPostprocessing | None = None

    def fit(self, sets: Iterable[StimulusSet]) -> "PostprocessedSource":
        """Estimate the statistics on the embeddings of every distinct stimulus of ``sets``."""
        rows: dict[tuple[str, str, str], np.ndarray] = {}
        for stimuli in sets:
            if stimuli.templates:
                stimuli = expand_templates(stimuli)
            embedded = self.source.embed(stimuli)
            for item, vector in zip(embedded.ids, embedded.vectors):
                rows.setdefault((stimuli.modality, stimuli.category or "", item), vector)
        self.fitted = fit_postprocessing(self.spec, np.array(list(rows.values())))
        return self

    def embed(self, stimuli: StimulusSet) -> Embedded:
        if self.fitted is None:
            raise AssertionError("PostprocessedSource.fit must be called before embed")
        raw = self.source.embed(stimuli)
        return Embedded(self.fitted.apply(raw.vectors), raw.ids, raw.dropped)

    def manifest(self) -> dict[str, Any]:
        return {**self.source.manifest(), "postprocess": None if self.fitted is None else self.fitted.manifest()}
