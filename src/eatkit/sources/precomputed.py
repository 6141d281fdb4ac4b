"""Published or precomputed embeddings read from files, as an embedding source.

Two layouts:

- :class:`IEATEmbeddings`: the iEAT authors' published embeddings (Steed & Caliskan, 2021), a folder
  of ``{test}_{category}_{model}.csv`` files (test and category names never contain ``_``; model
  names may), one row per image: an optional unnamed index column, value columns ``0 .. d-1`` and a
  last column ``img`` with the image's file name. The image category ``"age/young"`` is the file
  ``age_young_<model>.csv``; :meth:`IEATEmbeddings.categories` lists every category of a model.
- :class:`PrecomputedEmbeddings`: one file holding ids and vectors: an ``.npz`` with arrays ``ids``
  and ``vectors``; an ``.npy`` matrix with a sidecar ``<name>.ids.txt`` (one id per line); or a
  ``.csv`` / ``.parquet`` table with an id column (``id``, else ``img``, else ``word``) and numeric
  value columns.

**Lookup rule.** A word or sentence is looked up by its text. An image is looked up by the id the
image encoders give it, ``<category>/<file name>``; an image set whose files are not resolved
(no ``items``) takes every id under ``<category>/``, in file order. In the iEAT layout the category
selects the file, and images are looked up by file name (the ``img`` column). Returned ids are
the ids as stored; a stimulus without an embedding is an error naming it. Rows keep file order.
Duplicates follow :mod:`eatkit.stimuli.duplicates`: an id the file lists twice has its first row used,
and a set that uses it, or that lists a stimulus twice, records the left-out copies as dropped.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from eatkit.errors import EatkitError, one_line
from eatkit.io import (MAX_ARRAY_BYTES, check_regular, inside, load_npy, load_npz, parse_csv, read_frame, read_input,
                       read_text)
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.sources.vectors import is_number
from eatkit.stimuli.duplicates import drop_duplicates, file_duplicates
from eatkit.stimuli.images import image_ids
from eatkit.stimuli.types import StimulusSet

if TYPE_CHECKING:
    import pandas as pd

ID_COLUMNS: tuple[str, ...] = ("id", "img", "word")
SUFFIXES: tuple[str, ...] = (".npz", ".npy", ".csv", ".parquet")


class IEATEmbeddings(EmbeddingSource):
    """The published iEAT embeddings of one model (``igpt_l_32``, ``simclr_152_3x_sk1``, ...).

    Each category file is read once, when a set first needs it; its SHA-256 is recorded then.

    >>> src = IEATEmbeddings("../shared/data/ieat/embeddings", "igpt_l_32")  # doctest: +SKIP
    >>> src.embed(StimulusSet("Young", "image", category="age/young")).vectors.shape  # doctest: +SKIP
    (6, 1536)
    """

    modalities = frozenset({"image"})

    def __init__(self, root: str | os.PathLike[str], model: str) -> None:
        self.root = Path(root)
        found = self.models_in(self.root)
        if model not in found:
            raise EatkitError(
                f"embeddings folder {self.root} has no files for model '{model}' "
                f"(models found: {', '.join(found) or 'none'})"
            )
        self.id = model
        self.model = model
        self._tables: dict[str, _Table] = {}
        self._sha256: dict[str, str] = {}

    @staticmethod
    def models_in(root: str | os.PathLike[str]) -> list[str]:
        """The models with at least one ``{test}_{category}_{model}.csv`` file in the folder, sorted."""
        return sorted({parts[2] for parts in _ieat_files(Path(root)).values()})

    def categories(self) -> list[str]:
        """Every category ``<test>/<category>`` this model has a file for, sorted."""
        return sorted(f"{t}/{c}" for t, c, m in _ieat_files(self.root).values() if m == self.model)

    def file_name(self, category: str) -> str:
        """The file holding a category's embeddings: ``"age/young"`` -> ``age_young_<model>.csv``."""
        return f"{category.replace('/', '_')}_{self.model}.csv"

    def embed(self, stimuli: StimulusSet) -> Embedded:
        """The embeddings of an image set: all rows of its category's file, or the rows of its
        resolved files (``items``, matched by file name), in that order."""
        if stimuli.modality != "image":
            raise EatkitError(
                f"set '{stimuli.name}' has modality '{stimuli.modality}', but the iEAT embeddings of "
                f"{self.model} embed only image categories"
            )
        _require_category(stimuli)
        name = self.file_name(stimuli.category)
        if name not in self._tables:
            path = inside(self.root, name, "embeddings file")
            if not path.exists():
                raise EatkitError(
                    f"embeddings folder {self.root} has no file for category '{stimuli.category}' and "
                    f"model '{self.model}' (expected {name})"
                )
            data = read_input(path, "embeddings file", max_bytes=MAX_ARRAY_BYTES)
            self._sha256[name] = hashlib.sha256(data).hexdigest()
            self._tables[name] = _Table(*_table_arrays(path, _csv_cells(path, data), ("img",)), path)
        table = self._tables[name]
        if not stimuli.items:
            return table.select(list(dict.fromkeys(table.ids)), stimuli)
        return table.select([Path(item).name for item in stimuli.items], stimuli)

    def manifest(self) -> dict[str, Any]:
        """Layout, folder, model, and the SHA-256 of every file read so far."""
        return {
            "source": "precomputed",
            "id": self.id,
            "layout": "ieat",
            "root": str(self.root.resolve()),
            "model": self.model,
            "files": dict(sorted(self._sha256.items())),
        }


class PrecomputedEmbeddings(EmbeddingSource):
    """Embeddings from one ``.npz``, ``.npy`` (+ ``<name>.ids.txt``), ``.csv`` or ``.parquet`` file.

    The file is read and checked when the source is built; ``model`` names what produced the
    embeddings (recorded as the source id; the file name by default). Lookup rule: module docstring.

    >>> import tempfile, pathlib; p = pathlib.Path(tempfile.mkdtemp()) / "e.npz"
    >>> np.savez(p, ids=np.array(["rose", "t/c/a.jpg"]), vectors=np.eye(2))
    >>> src = PrecomputedEmbeddings(p, model="toy")
    >>> src.embed(StimulusSet("C", "image", category="t/c")).ids
    ('t/c/a.jpg',)
    """

    modalities = frozenset({"word", "sentence", "image"})

    def __init__(self, path: str | os.PathLike[str], *, model: str | None = None) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            found = IEATEmbeddings.models_in(self.path)
            if found:
                raise EatkitError(f"embeddings file {self.path} is a folder: pass --embeddings-model "
                                  f"(models found: {', '.join(found)})")
            raise EatkitError(f"embeddings file {self.path} is a folder, not an embeddings file "
                              f"({', '.join(SUFFIXES)})")
        check_regular(self.path, "embeddings file")
        self.layout = self.path.suffix.lower().lstrip(".")
        if f".{self.layout}" not in SUFFIXES:
            raise EatkitError(
                f"embeddings file {self.path}: unsupported format (expected one of: {', '.join(SUFFIXES)})"
            )
        self.id = model or self.path.name
        self.model = model
        self._sha256: dict[str, str] = {}
        self._table = _Table(*getattr(self, f"_read_{self.layout}")(), self.path)
        self.vectors, self.ids = self._table.vectors, self._table.ids

    def _bytes(self, path: Path) -> bytes:
        """The bytes of the embeddings file (eatkit's one reader: a regular file, at most
        :data:`~eatkit.io.MAX_ARRAY_BYTES`); their SHA-256 recorded for the manifest."""
        data = read_input(path, "embeddings file", max_bytes=MAX_ARRAY_BYTES)
        self._sha256[path.name] = hashlib.sha256(data).hexdigest()
        return data

    def _read_npz(self) -> tuple[np.ndarray, tuple[str, ...]]:
        arrays = load_npz(self.path, "embeddings file", data=self._bytes(self.path))
        if not {"ids", "vectors"} <= arrays.keys():
            raise EatkitError(
                f"embeddings file {self.path} must hold arrays 'ids' and 'vectors' "
                f"(found: {', '.join(sorted(arrays)) or 'none'})"
            )
        return _check_arrays(self.path, arrays["vectors"], [str(i) for i in arrays["ids"].ravel()])

    def _read_npy(self) -> tuple[np.ndarray, tuple[str, ...]]:
        sidecar = self.path.with_suffix(".ids.txt")
        if not sidecar.exists():
            raise EatkitError(f"embeddings file {self.path} needs its ids file {sidecar} (one id per line)")
        matrix = load_npy(self.path, "embeddings file", data=self._bytes(self.path))
        text = read_text(sidecar, "ids file")
        self._sha256[sidecar.name] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return _check_arrays(self.path, matrix, text.splitlines())

    def _read_csv(self) -> tuple[np.ndarray, tuple[str, ...]]:
        return _table_arrays(self.path, _csv_cells(self.path, self._bytes(self.path)), ID_COLUMNS)

    def _read_parquet(self) -> tuple[np.ndarray, tuple[str, ...]]:
        frame = read_frame(self.path, "embeddings file", data=self._bytes(self.path), kind="parquet")
        return _table_arrays(self.path, _frame_cells(frame), ID_COLUMNS)

    def embed(self, stimuli: StimulusSet) -> Embedded:
        """The embeddings of a set's stimuli, looked up by the rule of the module docstring."""
        if stimuli.templates:
            raise EatkitError(
                f"set '{stimuli.name}' has sentence templates, which precomputed embeddings cannot apply; "
                "store the embeddings of the filled-in sentences and list the sentences as items"
            )
        if stimuli.modality != "image":
            return self._table.select(list(stimuli.items), stimuli)
        _require_category(stimuli)
        if stimuli.items:
            return self._table.select(list(image_ids(stimuli)), stimuli)
        prefix = f"{stimuli.category}/"
        wanted = list(dict.fromkeys(id_ for id_ in self.ids if id_.startswith(prefix)))
        if not wanted:
            raise EatkitError(
                f"embeddings file {self.path} has no ids under '{prefix}' for set '{stimuli.name}'"
            )
        return self._table.select(wanted, stimuli)

    def manifest(self) -> dict[str, Any]:
        """Layout, folder, model, and the SHA-256 of the file(s) read."""
        return {
            "source": "precomputed",
            "id": self.id,
            "layout": self.layout,
            "root": str(self.path.parent.resolve()),
            "model": self.model,
            "files": dict(sorted(self._sha256.items())),
        }


def _require_category(stimuli: StimulusSet) -> None:
    if not stimuli.category:
        raise EatkitError(f"image set '{stimuli.name}' has no category")


def _ieat_files(root: Path) -> dict[str, tuple[str, str, str]]:
    """``{file name: (test, category, model)}`` for the iEAT-layout files of a folder."""
    if not root.is_dir():
        raise EatkitError(f"embeddings folder {root} does not exist")
    files = {}
    for path in root.glob("*.csv"):
        parts = path.stem.split("_", 2)
        if len(parts) == 3 and all(parts):
            files[path.name] = (parts[0], parts[1], parts[2])
    return files


def _csv_cells(path: Path, data: bytes) -> tuple[list[str], np.ndarray]:
    """The header and the cells (an object matrix of strings) of a CSV file with rectangular rows.

    Read with the csv module rather than pandas, which is slow for the thousands of columns of
    image embeddings."""
    try:
        rows = parse_csv(data.decode("utf-8"), f"embeddings file {path}")
    except UnicodeDecodeError as exc:
        raise EatkitError(f"embeddings file {path} is not a valid CSV file: {one_line(exc)}") from None
    if not rows:
        raise EatkitError(f"embeddings file {path} is empty")
    header = rows[0][1]
    for lineno, row in rows[1:]:
        if len(row) != len(header):
            raise EatkitError(
                f"embeddings file {path}: line {lineno} has {len(row)} fields, "
                f"expected {len(header)} as in the header"
            )
    body = [row for _, row in rows[1:]]
    return header, np.array(body, dtype=object).reshape(len(body), len(header))


def _frame_cells(frame: pd.DataFrame) -> tuple[list[str], np.ndarray]:
    return [str(c) for c in frame.columns], frame.to_numpy(dtype=object)


def _table_arrays(
    path: Path, table: tuple[list[str], np.ndarray], id_columns: tuple[str, ...]
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Split a table into its value matrix and ids (the first of ``id_columns`` present), ignoring
    pandas' unnamed index column (``""`` or ``"Unnamed: 0"``); every other column must be numeric."""
    header, cells = table
    id_column = next((c for c in id_columns if c in header), None)
    if id_column is None:
        raise EatkitError(
            f"embeddings file {path} has no id column (expected one of: {', '.join(id_columns)})"
        )
    k = header.index(id_column)
    columns = [
        i for i, name in enumerate(header) if i != k and name != "" and not name.startswith("Unnamed: ")
    ]
    ids = [str(i) for i in cells[:, k]]
    for row, id_ in enumerate(cells[:, k]):
        if id_ is None or id_ == "" or (isinstance(id_, float) and np.isnan(id_)):
            raise EatkitError(f"embeddings file {path}: row {row + 1} has no {id_column}")
    raw = cells[:, columns]
    try:
        vectors = raw.astype(np.float64)
    except (ValueError, TypeError):
        row, col = next((r, c) for (r, c), cell in np.ndenumerate(raw) if not is_number(cell))
        cell = raw[row, col]
        what = "a missing value" if cell in ("", None) else f"a non-numeric value '{cell}'"
        raise EatkitError(
            f"embeddings file {path}: column '{header[columns[col]]}' has {what} in row {row + 1} "
            f"({id_column} '{ids[row]}')"
        ) from None
    return _check_arrays(path, vectors, ids, id_column)


def _check_arrays(
    path: Path, vectors: np.ndarray, ids: list[str], id_name: str = "id"
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Check that ids and vectors match and every value is a finite number."""
    if vectors.ndim != 2 or not np.issubdtype(vectors.dtype, np.number) or vectors.shape[1] == 0:
        raise EatkitError(
            f"embeddings file {path}: expected a numeric matrix (one row per id), got shape "
            f"{vectors.shape} of type {vectors.dtype}"
        )
    if vectors.shape[0] != len(ids):
        raise EatkitError(f"embeddings file {path}: {len(ids)} ids for {vectors.shape[0]} vectors")
    if not ids:
        raise EatkitError(f"embeddings file {path} has no rows")
    vectors = vectors.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(vectors).all(axis=1))
    if bad.size:
        row = int(bad[0])
        raise EatkitError(
            f"embeddings file {path}: row {row + 1} ({id_name} '{ids[row]}') "
            "has missing, NaN or infinite values"
        )
    return vectors, tuple(ids)


class _Table:
    """The vectors and ids of one file, looked up by id (an id listed twice: its first row)."""

    def __init__(self, vectors: np.ndarray, ids: tuple[str, ...], path: Path) -> None:
        self.vectors, self.ids, self.path = vectors, ids, path
        self.row_of = {id_: row for row, id_ in reversed(list(enumerate(ids)))}
        self.duplicated = file_duplicates(ids, path.name) if len(self.row_of) < len(ids) else {}

    def select(self, wanted: list[str], stimuli: StimulusSet) -> Embedded:
        """The rows of ``wanted`` ids, in that order (duplicates recorded as dropped); a missing id is an
        error naming all of them."""
        missing = list(dict.fromkeys(w for w in wanted if w not in self.row_of))
        if missing:
            raise EatkitError(
                f"embeddings file {self.path} has no embedding for set '{stimuli.name}': {', '.join(missing)}"
            )
        first, copies = drop_duplicates(wanted)
        ids = [wanted[i] for i in first]
        noted = tuple(self.duplicated[id_] for id_ in ids if id_ in self.duplicated)
        rows = [self.row_of[id_] for id_ in ids]
        return Embedded(self.vectors[rows].reshape(len(rows), self.vectors.shape[1]), tuple(ids), copies + noted)
