"""Small file and import helpers shared by every layer: hashing, atomic writes, optional imports.

This module sits at the bottom of the import graph (it imports only :mod:`eatkit.errors`), so that the
statistics, the stimuli, the sources and the encoders can all use it without importing each other.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from eatkit.errors import MissingExtraError


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 (hex) of a file's bytes, read in 1 MiB chunks.

    >>> import pathlib, tempfile; p = pathlib.Path(tempfile.mkdtemp()) / "f"; _ = p.write_bytes(b"")
    >>> file_sha256(p)[:16]
    'e3b0c44298fc1c14'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def text_sha256(text: str) -> str:
    """SHA-256 (hex) of a string's UTF-8 bytes.

    >>> text_sha256("")[:16]
    'e3b0c44298fc1c14'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def atomic_write(path: str | os.PathLike[str], write: Callable[[object], None], *, suffix: str = ".tmp") -> None:
    """Create ``path`` whole or not at all: ``write(handle)`` fills a temporary binary file beside it, which
    :func:`os.replace` then moves into place (a reader never sees a partial file). ``OSError`` propagates,
    after the temporary file is removed; callers turn it into a one-line :class:`~eatkit.errors.EatkitError`.

    >>> import pathlib, tempfile; p = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
    >>> atomic_write(p, lambda fh: fh.write(b"hi")); p.read_bytes()
    b'hi'
    """
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name[:16]}.", suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """:func:`atomic_write` of ``data``.

    >>> import pathlib, tempfile; p = pathlib.Path(tempfile.mkdtemp()) / "b"
    >>> atomic_write_bytes(p, b"x"); p.read_bytes()
    b'x'
    """
    atomic_write(path, lambda handle: handle.write(data))


def require(module: str, what: str, extra: str) -> ModuleType:
    """Import an optional dependency, or raise :class:`MissingExtraError` naming the extra.

    >>> require("json", "the demo", "image").__name__
    'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(what, extra, module.partition(".")[0]) from None


def load_object(path: str) -> Any:
    """The object named ``"package.module:attribute"``, imported on demand (registries name their entries
    this way so that listing them imports nothing heavy).

    >>> load_object("json:dumps")([1])
    '[1]'
    """
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def ensure_installed(module: str, what: str, extra: str) -> None:
    """Fail early, without importing it, when an optional dependency is missing (:func:`require` imports).

    >>> ensure_installed("json", "the demo", "text")
    """
    if importlib.util.find_spec(module) is None:
        raise MissingExtraError(what, extra, module)


def installed_version(name: str) -> str | None:
    """The version of an installed distribution (read from its metadata, not imported), or ``None``.

    >>> import numpy; installed_version("numpy") == numpy.__version__, installed_version("no-such-distribution")
    (True, None)
    """
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
