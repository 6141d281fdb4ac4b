"""An on-disk cache of stimulus embeddings, so that a model embeds each stimulus once.

One entry holds the embedding of one stimulus under one encoder configuration. Its key is

    sha256(json({"config": <encoder config>, "modality": <modality>, "content": <stimulus content>}))

with the encoder config as returned by :meth:`eatkit.encoders.base.NeuralEncoder.cache_config` (encoder
class and version, model id, weights identity, layer, pooling, preprocessing, prompt template, dtype)
and the stimulus content being the text itself or ``"sha256:<hex>"`` of an image file's bytes.

Layout: ``<cache dir>/embeddings-v1/<key[:2]>/<key>.npe``. An entry file is the ``.npy`` serialisation
of the vector followed by the 32-byte SHA-256 of ``key + payload``; entries are written to a temporary
file and moved into place with :func:`os.replace` (atomic), so a reader sees a whole entry or none.
A truncated, corrupt or misplaced entry fails its checksum, is deleted and reported as a miss. Many
processes may share one cache (sweep workers, cluster nodes on a shared file system): writers of the
same key each replace the entry whole; a reader deletes only the corrupt file it read, never an entry
written after it; the remembered file hashes are rewritten atomically (a lost update is only hashed again).

Hashing image files is the main cost of a fully cached run, so :meth:`EmbeddingCache.file_hashes`
remembers each file's SHA-256 in ``<cache dir>/file-sha256-v1.json`` under its path, size, inode,
modification and change times (``st_mtime_ns``, ``st_ctime_ns``), as ``git`` does for its index: any
write to a file changes its change time, and the file is hashed again.

The cache directory is ``$EATKIT_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/eatkit``, else
``~/.cache/eatkit``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.errors import EatkitError, one_line
from eatkit.io import atomic_write_bytes, file_sha256_many, load_npy, open_input, read_json
from eatkit.paths import user_dir
from eatkit.progress import warn

_ENTRIES = "embeddings-v1"
_FILE_HASHES = "file-sha256-v1.json"
_SUFFIX = ".npe"
_DIGEST = 32  # bytes of the trailing SHA-256


def cache_dir() -> Path:
    """The cache directory from the environment (it need not exist yet).

    >>> cache_dir().name if "EATKIT_CACHE_DIR" not in os.environ else "eatkit"
    'eatkit'
    """
    return user_dir("EATKIT_CACHE_DIR", "XDG_CACHE_HOME", ".cache")


def entry_key(config: dict[str, Any], modality: str, content: str) -> str:
    """The cache key of one stimulus embedded under ``config`` (see the module docstring).

    >>> entry_key({"model": "m"}, "word", "rose")[:12]
    '5495f9451110'
    """
    payload = json.dumps(
        {"config": config, "modality": modality, "content": content},
        sort_keys=True,
        ensure_ascii=False,
        allow_nan=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Embeddings on disk, one checksummed file per (encoder config, stimulus) key.

    >>> import tempfile, numpy as np
    >>> cache = EmbeddingCache(tempfile.mkdtemp())
    >>> key = entry_key({"model": "m"}, "word", "rose")
    >>> cache.put(key, np.array([1.0, 2.0], dtype=np.float32)); cache.get(key)
    array([1., 2.], dtype=float32)
    """

    def __init__(self, root: str | os.PathLike[str] | None = None, entries: str = _ENTRIES) -> None:
        self.root = Path(root) if root is not None else cache_dir()
        self.writable = True  # until a write fails (see _write_atomic)
        self.entries = entries  # the folder of the entries (another one holds shared pixels: encoders.pixels)

    @property
    def entries_dir(self) -> Path:
        return self.root / self.entries

    def _path(self, key: str) -> Path:
        return self.entries_dir / key[:2] / f"{key}{_SUFFIX}"

    def file_hashes(self, paths: list[str], workers: int = 2) -> list[str]:
        """SHA-256 of each file, from the remembered hashes when the file is unchanged (module docstring).

        A file that cannot be read raises :class:`OSError` (its ``filename`` names it); a cache that
        cannot be written is a warning.
        """
        memo_path = self.root / _FILE_HASHES
        memo = _remembered_hashes(memo_path)
        stamps = [_stamp(os.stat(path)) for path in paths]
        todo = [i for i, (p, stamp) in enumerate(zip(paths, stamps))
                if not (isinstance(memo.get(p), list) and memo[p][:1] == [stamp])]
        if todo:
            for i, digest in zip(todo, file_sha256_many([paths[i] for i in todo], workers)):
                memo[paths[i]] = [stamps[i], digest]
            self._write_atomic(memo_path, json.dumps(memo, sort_keys=True).encode("utf-8"))
        return [memo[p][1] for p in paths]

    def get(self, key: str) -> np.ndarray | None:
        """The stored vector, or ``None`` if absent or corrupt (a corrupt entry is deleted)."""
        path = self._path(key)
        try:
            with open_input(path, "cache entry") as handle:  # (a missing entry: one stat, no open)
                data, inode = handle.read(), os.fstat(handle.fileno()).st_ino
        except (EatkitError, OSError):
            return None
        payload, digest = data[:-_DIGEST], data[-_DIGEST:]
        if len(data) > _DIGEST and hashlib.sha256(key.encode("ascii") + payload).digest() == digest:
            try:
                return load_npy(path, "cache entry", data=payload)
            except EatkitError:  # a valid checksum over a non-.npy payload: treat as corrupt
                pass
        try:  # delete the corrupt file read, not an entry another process has just written in its place
            if os.stat(path).st_ino == inode:
                path.unlink()
        except OSError:
            pass
        return None

    def put(self, key: str, vector: np.ndarray) -> None:
        """Store ``vector`` under ``key`` atomically (temporary file, then :func:`os.replace`); a cache that
        cannot be written is a warning (:meth:`_write_atomic`)."""
        buffer = io.BytesIO()
        np.save(buffer, np.ascontiguousarray(vector), allow_pickle=False)
        payload = buffer.getvalue()
        digest = hashlib.sha256(key.encode("ascii") + payload).digest()
        self._write_atomic(self._path(key), payload + digest)

    def _write_atomic(self, path: Path, data: bytes) -> None:
        """:func:`eatkit.io.atomic_write_bytes`. A cache that cannot be written (read-only, full, not a
        folder) costs no result: the first failure is a warning naming the cache and the reason, and the
        run goes on without writing to it (what it holds is still read)."""
        if not self.writable:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, data)
        except OSError as exc:
            self.writable = False
            warn(f"{self._write_error(exc)}; running without writing to it")

    def _write_error(self, exc: OSError) -> EatkitError:
        not_a_folder = self.root.exists() and not self.root.is_dir()
        reason = "it is not a folder" if not_a_folder else one_line(exc.strerror or exc)
        return EatkitError(f"cannot write the embedding cache at {self.root}: {reason}")

    def info(self) -> dict[str, Any]:
        """``{"path", "entries", "bytes"}`` of the cache (zero entries if it does not exist)."""
        entries = 0
        size = 0
        for path in self.entries_dir.glob(f"*/*{_SUFFIX}"):
            entries += 1
            size += path.stat().st_size
        return {"path": str(self.root), "entries": entries, "bytes": size}

    def clear(self) -> int:
        """Delete every entry, left-over temporary files and the remembered file hashes; return the
        number of entries deleted."""
        removed = self.info()["entries"]
        shutil.rmtree(self.entries_dir, ignore_errors=True)
        (self.root / _FILE_HASHES).unlink(missing_ok=True)
        return removed


def _count_files() -> list[Path]:
    """The permutation counts a run kept (:func:`eatkit.stats.permutation.count_store`'s files)."""
    return list((cache_dir() / "counts").glob("*/*.json"))


def cache_info() -> dict[str, Any]:
    """What ``eatkit cache clear`` removes from the cache in :func:`cache_dir`: ``{"path", "entries"
    (embeddings), "counts" (permutation counts), "bytes" (of both)}`` (``eatkit cache info``)."""
    info = EmbeddingCache().info()
    counts = _count_files()
    return {**info, "counts": len(counts), "bytes": info["bytes"] + sum(p.stat().st_size for p in counts)}


def clear_cache() -> dict[str, int]:
    """Empty the cache in :func:`cache_dir` (``eatkit cache clear``): the embeddings and the permutation
    counts a run kept; return how many of each were deleted (``{"entries", "counts"}``)."""
    counts = len(_count_files())
    shutil.rmtree(cache_dir() / "counts", ignore_errors=True)
    return {"entries": EmbeddingCache().clear(), "counts": counts}


def _remembered_hashes(path: Path) -> dict[str, Any]:
    """The remembered file hashes (:meth:`EmbeddingCache.file_hashes`); none when the file is unreadable."""
    try:
        memo = read_json(path, "file-hash memo")
    except EatkitError:
        return {}
    return memo if isinstance(memo, dict) else {}


def _stamp(st: os.stat_result) -> str:
    """What tells a file unchanged: its size, inode and modification and change times."""
    return f"{st.st_size}:{st.st_ino}:{st.st_mtime_ns}:{st.st_ctime_ns}"

