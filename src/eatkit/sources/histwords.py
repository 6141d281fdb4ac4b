"""Diachronic word embeddings in the HistWords layout (Hamilton, Leskovec & Jurafsky 2016).

A HistWords folder holds one embedding per decade: ``<year>-w.npy`` (an ``(n, d)`` matrix, one row per
word) and ``<year>-vocab.pkl`` (the ``n`` words, a pickled list of strings), e.g. ``1810-w.npy`` and
``1810-vocab.pkl`` for the text of 1810-1819. :func:`histwords_series` lists a folder's decades in
order, checking that every matrix has its vocabulary and that all decades share one dimension;
:func:`load_histwords_decade` loads one decade as :class:`HistWordsDecade` (a
:class:`~eatkit.sources.vectors.WordVectors`).

**Safety.** A pickle can run arbitrary code when loaded. The vocabulary is read with eatkit's one
restricted unpickler (:func:`eatkit.io.load_pickle`), which builds only plain containers and
strings/numbers and refuses any pickle that names another class or function; the matrix is read with
``allow_pickle=False``.

**Zero-norm vectors.** HistWords stores a zero row for a word with too few co-occurrences in a decade
(many stimuli in 1800; symphony, math and calculus in several decades). Cosine similarity is undefined
for them, so a zero row counts as *missing from that decade*: with ``oov="error"`` (default) the
decade refuses the set naming the words; with ``oov="drop"`` they are dropped and recorded. The ML-EAT
seed instead substitutes music for symphony, mathematics for math and calculation for calculus: that is
the bundled suite ``mleat-histwords``, whose substitutions are part of the suite (and its checksum).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.io import file_sha256, load_npy, load_pickle
from eatkit.errors import EatkitError
from eatkit.sources.base import Embedded
from eatkit.sources.vectors import OovPolicy, WordVectors
from eatkit.stimuli.types import StimulusSet

_MATRIX = re.compile(r"^(\d{3,4})-w\.npy$")


def read_vocabulary(path: str | os.PathLike[str]) -> list[str]:
    """The word list of a HistWords ``<year>-vocab.pkl``, read without running code (module docstring).

    Python 2 byte strings are decoded as UTF-8 (invalid bytes replaced by U+FFFD).

    >>> import pickle, tempfile, pathlib; p = pathlib.Path(tempfile.mkdtemp()) / "1810-vocab.pkl"
    >>> _ = p.write_bytes(pickle.dumps(["the", "math"], protocol=2))
    >>> read_vocabulary(p)
    ['the', 'math']
    """
    path = Path(path)
    words = load_pickle(path, encoding="bytes", what="vocabulary file")
    if not isinstance(words, (list, tuple)):
        raise EatkitError(f"vocabulary file {path} holds a {type(words).__name__}, expected a list of words")
    out = []
    for k, word in enumerate(words):
        if isinstance(word, bytes):
            word = word.decode("utf-8", errors="replace")
        if not isinstance(word, str):
            raise EatkitError(f"vocabulary file {path}: entry {k} is a {type(word).__name__}, not a word")
        out.append(word)
    return out


class HistWordsDecade(WordVectors):
    """One HistWords decade: a zero-norm row counts as a word missing from that decade (module docstring)."""

    def embed(self, stimuli: StimulusSet) -> Embedded:
        """The vectors of a word set; zero-norm words are out of vocabulary for this decade.

        >>> d = HistWordsDecade(["math", "art"], np.array([[0.0, 0.0], [1.0, 2.0]]), id="histwords-1800")
        >>> d.embed(StimulusSet("Math", "word", ("math", "art")))
        Traceback (most recent call last):
        eatkit.errors.EatkitError: zero-norm vectors in set 'Math' (histwords-1800): math (too few co-occurrences in this decade); pass --oov drop to drop them, or use the suite mleat-histwords (the seed's substitutions)
        """
        embedded = super().embed(stimuli)
        zero = np.linalg.norm(embedded.vectors, axis=1) == 0
        if not zero.any():
            return embedded
        words = tuple(w for w, z in zip(embedded.ids, zero) if z)
        if self.oov == "error":
            raise EatkitError(
                f"zero-norm vectors in set '{stimuli.name}' ({self.id}): {', '.join(words)} (too few co-occurrences "
                "in this decade); pass --oov drop to drop them, or use the suite mleat-histwords (the seed's "
                "substitutions)"
            )
        kept = ~zero
        return Embedded(embedded.vectors[kept], tuple(w for w, z in zip(embedded.ids, zero) if not z),
                        embedded.dropped + words)

    def manifest(self) -> dict[str, Any]:
        """The word-vector manifest plus the SHA-256 of the vocabulary file."""
        vocabulary = self.origin.get("vocabulary")
        return {**super().manifest(), "vocabulary_sha256": file_sha256(vocabulary) if vocabulary else None}


def histwords_series(folder: str | os.PathLike[str]) -> list[tuple[int, Path, Path]]:
    """The decades of a HistWords folder in order: ``(year, matrix file, vocabulary file)``.

    Refuses a folder without ``<year>-w.npy`` files, a matrix without its ``<year>-vocab.pkl``, an
    unreadable or non-2-D matrix, and decades of different dimensions (each a one-line error).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise EatkitError(f"series folder {folder} does not exist or is not a folder")
    years = sorted(int(m.group(1)) for p in folder.iterdir() if (m := _MATRIX.match(p.name)))
    if not years:
        raise EatkitError(f"series folder {folder} has no HistWords decades (<year>-w.npy with <year>-vocab.pkl)")
    series, dims = [], {}
    for year in years:
        matrix, vocab = folder / f"{year}-w.npy", folder / f"{year}-vocab.pkl"
        if not vocab.is_file():
            raise EatkitError(f"series folder {folder}: decade {year} has {matrix.name} but no vocabulary file {vocab.name}")
        dims[year] = _matrix(matrix).shape[1]
        series.append((year, matrix, vocab))
    if len(set(dims.values())) > 1:
        shown = ", ".join(f"{y}: {d}" for y, d in dims.items())
        raise EatkitError(f"series folder {folder}: decades have different dimensions ({shown})")
    return series


def _matrix(path: Path) -> np.ndarray:
    """A decade's matrix, memory-mapped (the one reader's :func:`~eatkit.io.load_npy`), checked to be 2-D."""
    matrix = load_npy(path, "matrix file", mmap=True)
    if matrix.ndim != 2:
        raise EatkitError(f"matrix file {path} has shape {matrix.shape}, expected (words, dimension)")
    return matrix


def load_histwords_decade(matrix: str | os.PathLike[str], vocabulary: str | os.PathLike[str], *,
                          year: int | None = None, oov: OovPolicy = "error", cased: bool = False) -> HistWordsDecade:
    """One decade (``<year>-w.npy`` and ``<year>-vocab.pkl``) as a word source ``histwords-<year>``.

    HistWords' English vocabularies are lower-case, so words are looked up lower-cased by default.
    """
    matrix, vocabulary = Path(matrix), Path(vocabulary)
    words = read_vocabulary(vocabulary)
    vectors = _matrix(matrix)
    n = vectors.shape[0]
    if n != len(words):
        raise EatkitError(f"matrix file {matrix} has {n} rows but {vocabulary.name} lists {len(words)} words")
    label = year if year is not None else matrix.name.split("-")[0]
    return HistWordsDecade(
        words,
        vectors,
        cased=cased,
        oov=oov,
        id=f"histwords-{label}",
        origin={"kind": "histwords", "path": str(matrix.resolve()), "vocabulary": str(vocabulary.resolve()),
                "year": year},
        file=matrix,
    )
