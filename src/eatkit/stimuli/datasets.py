"""Downloadable stimulus datasets, verified file by file against a checksum manifest shipped with eatkit.

The one dataset so far is ``ieat``: the iEAT image stimuli of Steed & Caliskan (FAccT 2021) from the
public repository github.com/ryansteed/ieat at a pinned revision, written in the iEAT layout
``<dest>/<test>/<category>/<file>`` that ``eatkit run ieat --images DIR`` reads (see ``docs/datasets.md``).

A manifest (``eatkit/stimuli/checksums/<name>.json``) names the source and every file with its SHA-256
and size::

    {"dataset": "ieat", "source": "https://github.com/ryansteed/ieat", "revision": "<commit>",
     "base_url": "https://raw.githubusercontent.com/ryansteed/ieat/<commit>", "prefix": "data/experiments",
     "files": {"age/old/x.jpg": {"sha256": "...", "size": 1234}, ...},
     "known_missing": {"gender/career/y.jpg": "why it has no checksum"}}

File ``<rel>`` is fetched from ``<base_url>/<prefix>/<rel>`` (one request per file, so an interrupted
download resumes: files already present and verified are skipped). ``known_missing`` files were absent
from the copy the checksums were computed from: they are fetched if the source has them and kept
unverified, and skipped if it cannot (absent, or unreachable).
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from eatkit.errors import EatkitError, one_line
from eatkit.io import atomic_write, file_sha256
from eatkit.paths import user_dir
from eatkit.progress import progress as progress_bar

_CHUNK = 1 << 16
_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Dataset:
    """A registered downloadable dataset: its name, what it holds, its licence and its manifest file."""

    name: str
    description: str
    licence: str
    manifest_file: str  # a file in eatkit/stimuli/checksums/


_DATASETS: tuple[Dataset, ...] = (
    Dataset(
        name="ieat",
        description="iEAT image stimuli (Steed & Caliskan, FAccT 2021), github.com/ryansteed/ieat, "
        "layout <test>/<category>/<file>",
        licence="CC BY-NC-SA 4.0 (repository); the images are third-party (Project Implicit, web search)",
        manifest_file="ieat-images.json",
    ),
)


def list_datasets() -> tuple[Dataset, ...]:
    """The downloadable datasets, by name.

    >>> [d.name for d in list_datasets()]
    ['ieat']
    """
    return _DATASETS


def get_dataset(name: str) -> Dataset:
    """The registered dataset ``name``; an unknown name is an error listing the known ones."""
    for dataset in _DATASETS:
        if dataset.name == name:
            return dataset
    known = ", ".join(d.name for d in _DATASETS)
    raise EatkitError(f"unknown dataset '{name}' (known datasets: {known})")


def default_data_dir() -> Path:
    """Where eatkit keeps downloaded data: ``$EATKIT_DATA_DIR``, else ``$XDG_DATA_HOME/eatkit``, else
    ``~/.local/share/eatkit``. A dataset downloads by default into ``default_data_dir() / name``.

    >>> default_data_dir()  # doctest: +SKIP
    PosixPath('/home/me/.local/share/eatkit')
    """
    return user_dir("EATKIT_DATA_DIR", "XDG_DATA_HOME", ".local/share")


def load_manifest(name: str) -> dict[str, Any]:
    """The checksum manifest shipped with eatkit for dataset ``name`` (see the module docstring).

    >>> len(load_manifest("ieat")["files"])
    869
    """
    dataset = get_dataset(name)
    text = resources.files("eatkit.stimuli").joinpath("checksums", dataset.manifest_file).read_text("utf-8")
    return json.loads(text)


def checksum_manifest(root: str | Path, **fields: Any) -> dict[str, Any]:
    """A manifest of every file under ``root`` (relative POSIX path -> sha256 and size), sorted by path,
    with ``fields`` (source, revision, base_url, prefix, known_missing, ...) copied in front.

    This is how ``checksums/ieat-images.json`` was made from a verified copy of the iEAT images.

    >>> checksum_manifest("images", dataset="ieat")["files"]["age/old/of1.jpg"]  # doctest: +SKIP
    {'sha256': '3f1c...', 'size': 20818}
    """
    root = Path(root)
    if not root.is_dir():
        raise EatkitError(f"cannot build a manifest of '{root}': not a directory")
    files = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        files[path.relative_to(root).as_posix()] = {"sha256": file_sha256(path), "size": path.stat().st_size}
    return {**fields, "files": files}


def download_dataset(
    name: str,
    dest: str | Path | None = None,
    *,
    base_url: str | None = None,
    progress: bool = True,
    manifest: Mapping[str, Any] | None = None,
) -> Path:
    """Download dataset ``name`` into ``dest`` and verify every file's SHA-256; return ``dest``.

    ``dest`` defaults to ``default_data_dir() / name``. ``base_url`` replaces the manifest's source (a
    mirror laid out as the upstream repository, ``file://`` or ``http(s)://``); ``manifest`` replaces the
    shipped manifest (tests use a reduced one). Files already present and verified are skipped; each file
    is written atomically (a temporary file renamed into place), so an interrupted download leaves no
    partial file. A checksum mismatch is an :class:`EatkitError` naming the file, and the bad download is
    discarded.

    >>> download_dataset("ieat", "/tmp/ieat")  # doctest: +SKIP
    PosixPath('/tmp/ieat')
    """
    spec = dict(manifest) if manifest is not None else load_manifest(name)
    dest = Path(dest).expanduser() if dest is not None else default_data_dir() / name
    source = (base_url or spec["base_url"]).rstrip("/")
    if not source.startswith(("https://", "http://", "file://")):
        raise EatkitError(f"base URL '{source}' of dataset '{name}' must start with https://, http:// or file://")
    tree = f"{source}/{spec['prefix']}" if spec.get("prefix") else source
    files: dict[str, dict[str, Any]] = spec["files"]
    optional: dict[str, str] = spec.get("known_missing", {})
    wanted = sorted([*files, *optional])
    items = progress_bar(wanted, desc=f"downloading {name}") if progress else wanted
    for rel in items:
        target = dest / rel
        expected = files.get(rel)
        if expected is None:  # known missing: fetched (unverified) only if the source can serve it
            if not target.is_file():
                with contextlib.suppress(EatkitError):
                    _fetch(f"{tree}/{rel}", target, rel, expected=None)
        elif not _verified(target, expected):
            target.unlink(missing_ok=True)  # never leave an unverified file in place
            _fetch(f"{tree}/{rel}", target, rel, expected=expected)
    return dest


def _verified(path: Path, expected: Mapping[str, Any]) -> bool:
    return path.is_file() and path.stat().st_size == expected["size"] and file_sha256(path) == expected["sha256"]


def _fetch(url: str, target: Path, rel: str, *, expected: Mapping[str, Any] | None) -> None:
    """Stream ``url`` into ``target`` atomically (:func:`eatkit.io.atomic_write`), checking its checksum
    before it is moved into place."""

    def stream(out: Any) -> None:
        digest = hashlib.sha256()
        size = 0
        with urllib.request.urlopen(url, timeout=_TIMEOUT_S) as response:
            for chunk in iter(lambda: response.read(_CHUNK), b""):
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
        if expected is not None and (size, digest.hexdigest()) != (expected["size"], expected["sha256"]):
            raise EatkitError(
                f"checksum mismatch for '{rel}' from {url}: expected sha256 {expected['sha256']} "
                f"({expected['size']} bytes), got {digest.hexdigest()} ({size} bytes); the file was not kept"
            )

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise EatkitError(f"cannot write into '{target.parent}': {one_line(err.strerror or err)}") from None
    try:
        atomic_write(target, stream, suffix=".part")
    except urllib.error.URLError as err:
        reason = f"HTTP {err.code} {err.reason}" if isinstance(err, urllib.error.HTTPError) else err.reason
        raise EatkitError(f"cannot download '{rel}' from {url}: {one_line(reason)}") from None
    except (OSError, http.client.HTTPException) as err:  # connection reset, timeout, short read, disk full
        raise EatkitError(f"cannot download '{rel}' from {url}: {one_line(err)}") from None
