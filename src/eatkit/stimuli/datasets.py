"""Downloadable stimulus and vector datasets, fetched with pooch and verified file by file.

The registry ``eatkit/stimuli/datasets.json`` (data, not code) lists every public stimulus or vector set the
suites use: the iEAT images, the SEAT test files, GloVe 6B and 840B, word2vec Google News, HistWords, the
COCO 2014 captions and validation images; each with its licence, where its files come from, and each
file's SHA-256, either inline or in a checksum manifest (``eatkit/stimuli/checksums/<name>.json``)::

    {"dataset": "ieat", "source": "https://github.com/ryansteed/ieat", "revision": "<commit>",
     "base_url": "https://raw.githubusercontent.com/ryansteed/ieat/<commit>", "prefix": "data/experiments",
     "files": {"age/old/x.jpg": {"sha256": "...", "size": 1234}, ...},
     "known_missing": {"gender/career/y.jpg": "why it has no checksum"}}

File ``<rel>`` is fetched from ``<base_url>/<prefix>/<rel>`` into ``<dest>/<rel>`` by pooch (one request per
file, so an interrupted download resumes: files already present and verified are skipped), which writes it
to a temporary file and moves it into place only when its SHA-256 matches. ``known_missing`` files were
absent from the copy the checksums were computed from: they are fetched if the source has them and kept
unverified, and skipped if it cannot. A file whose SHA-256 eatkit does not know (``null``, with the reason
in the entry's ``sha256_note``) is downloaded only with ``allow_unverified=True``. A ``licensed`` dataset
(the Chicago Face Database) cannot be downloaded: the error says how to obtain it and where to put it.
"""

from __future__ import annotations

import contextlib
import os
import json
import re
import shutil
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from eatkit.errors import EatkitError, one_line
from eatkit.io import FILE_MODE, atomic_write_bytes, file_sha256, inside, read_json, require, shipped_json
from eatkit.paths import user_dir
from eatkit.progress import progress as progress_bar

_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Dataset:
    """A registered dataset: its name, what it holds, its licence, and how to get it (registry entry)."""

    name: str
    description: str
    licence: str
    used_by: tuple[str, ...] = ()
    manifest_file: str | None = None  # a checksum manifest in eatkit/stimuli/checksums/
    licensed: bool = False  # cannot be downloaded: ``how`` says how to obtain it
    how: str | None = None
    sha256_note: str | None = None  # why some file has no known SHA-256
    unpack: str | None = None  # "zip": unpack the downloaded archive into the destination


@cache
def _registry() -> dict[str, dict[str, Any]]:
    return shipped_json("eatkit.stimuli", "datasets.json")["datasets"]


def list_datasets() -> tuple[Dataset, ...]:
    """The registered datasets (``eatkit data list``).

    >>> [d.name for d in list_datasets()][:3]
    ['ieat', 'seat', 'glove-6b']
    """
    return tuple(Dataset(name=name, description=e["title"], licence=e["licence"], used_by=tuple(e.get("used_by", ())),
                         manifest_file=e.get("checksums"), licensed=bool(e.get("licensed")), how=e.get("how"),
                         sha256_note=e.get("sha256_note"), unpack=e.get("unpack"))
                 for name, e in _registry().items())


def get_dataset(name: str) -> Dataset:
    """The registered dataset ``name``; an unknown name is an error listing the known ones."""
    for dataset in list_datasets():
        if dataset.name == name:
            return dataset
    known = ", ".join(d.name for d in list_datasets())
    raise EatkitError(f"unknown dataset '{name}' (known datasets: {known})")


def default_data_dir() -> Path:
    """Where eatkit keeps downloaded data: ``$EATKIT_DATA_DIR``, else ``$XDG_DATA_HOME/eatkit``, else
    ``~/.local/share/eatkit``. A dataset downloads by default into ``default_data_dir() / name``.

    >>> default_data_dir()  # doctest: +SKIP
    PosixPath('/home/me/.local/share/eatkit')
    """
    return user_dir("EATKIT_DATA_DIR", "XDG_DATA_HOME", ".local/share")


def load_manifest(name: str) -> dict[str, Any]:
    """The files of dataset ``name`` with their checksums: its checksum manifest shipped with eatkit, or its
    registry entry (see the module docstring).

    >>> len(load_manifest("ieat")["files"]), load_manifest("glove-6b")["files"]
    (869, {'glove.6B.zip': {'sha256': None, 'size': None}})
    """
    dataset = get_dataset(name)
    if dataset.manifest_file is None:
        return dict(_registry()[name])
    return shipped_json("eatkit.stimuli", f"checksums/{dataset.manifest_file}")


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
    allow_unverified: bool = False,
) -> Path:
    """Download dataset ``name`` into ``dest`` with pooch and verify every file's SHA-256; return ``dest``.

    ``dest`` defaults to ``default_data_dir() / name``. ``base_url`` replaces the registry's source (a mirror
    laid out as the upstream source, ``file://`` or ``http(s)://``); ``manifest`` replaces the shipped files
    and checksums (tests use a reduced one). Files already present and verified are skipped; a file is moved
    into place only once verified. A checksum mismatch is an :class:`EatkitError` naming the file; the bad
    download, any earlier unverified copy of that file and the folders this call created empty are removed
    (verified files stay, so a rerun resumes). Files with no known SHA-256 need ``allow_unverified``.

    >>> download_dataset("ieat", "/tmp/ieat")  # doctest: +SKIP
    PosixPath('/tmp/ieat')
    """
    dataset = get_dataset(name)
    dest = Path(dest).expanduser() if dest is not None else default_data_dir() / name
    if dataset.licensed:
        raise EatkitError(f"dataset '{name}' is licensed ({dataset.licence}) and cannot be downloaded by eatkit: "
                          f"{(dataset.how or '').format(dest=dest)}")
    spec = dict(manifest) if manifest is not None else load_manifest(name)
    files: dict[str, dict[str, Any]] = spec["files"]
    _check_verified(name, files, dataset.sha256_note, allow_unverified)
    existing = _make_folder(name, dest)
    source = (base_url or spec["base_url"]).rstrip("/")
    if not source.startswith(("https://", "http://", "file://")):
        raise EatkitError(f"base URL '{source}' of dataset '{name}' must start with https://, http:// or file://")
    try:
        _fetch_all(name, dest, spec, source, progress and len(files) > 1, dataset.unpack)
    except BaseException:
        _remove_new_empty_folders(dest, existing)
        raise
    return dest


def _check_verified(name: str, files: Mapping[str, Mapping[str, Any]], note: str | None,
                    allow_unverified: bool) -> None:
    """An error for a file with no known SHA-256, unless ``allow_unverified``."""
    unknown = [rel for rel, entry in files.items() if not entry.get("sha256")]
    if unknown and not allow_unverified:
        raise EatkitError(f"dataset '{name}': eatkit knows no sha256 of {unknown[0]} ({note or 'none recorded'}); "
                          "download it anyway with --allow-unverified (allow_unverified=True)")


def _make_folder(name: str, dest: Path) -> set[Path]:
    """``dest`` created where absent; the folders that existed before (removed on failure only if new)."""
    if dest.exists() and not dest.is_dir():
        raise EatkitError(f"destination {dest} of dataset '{name}' is a file, not a folder")
    existing = {dest, *(p for p in dest.rglob("*") if p.is_dir())} if dest.is_dir() else set()
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise EatkitError(f"cannot create the folder {dest} for dataset '{name}': {one_line(err.strerror or err)}") from None
    return existing


def _fetch_all(name: str, dest: Path, spec: Mapping[str, Any], source: str, bar: bool, unpack: str | None) -> None:
    """Fetch each file of ``spec`` not yet present and verified (pooch checks the SHA-256 before the move)."""
    pooch = require("pooch", f"downloading dataset '{name}'", "data")
    pooch.get_logger().setLevel("WARNING")
    tree = f"{source}/{spec['prefix']}" if spec.get("prefix") else source
    files: dict[str, dict[str, Any]] = spec["files"]
    optional: dict[str, str] = spec.get("known_missing", {})
    registry = {rel: f"sha256:{e['sha256']}" if e.get("sha256") else None for rel, e in files.items()}
    fetcher = pooch.create(path=dest, base_url=tree + "/", registry={**registry, **dict.fromkeys(optional)},
                           retry_if_failed=0)
    if tree.startswith("file://"):
        downloader: Any = _copy_file
    else:
        downloader = pooch.HTTPDownloader(progressbar=not bar and len(files) == 1, timeout=_TIMEOUT_S)
    processor = pooch.Unzip(extract_dir=str(dest)) if unpack == "zip" else None
    wanted = sorted([*files, *optional])
    before = _downloaded(dest)
    owned = set(before)
    try:
        for rel in progress_bar(wanted, desc=f"downloading {name}", unit="files") if bar else wanted:
            _fetch_one(name, dest, rel, files.get(rel), fetcher, downloader, processor, owned)
    finally:
        if owned != before:
            atomic_write_bytes(dest / DOWNLOADED, (json.dumps(sorted(owned), indent=0) + "\n").encode("utf-8"))


#: the list of the files eatkit downloaded into a dataset folder (only those are ever replaced)
DOWNLOADED = ".eatkit-downloads.json"


def _downloaded(dest: Path) -> set[str]:
    try:
        names = read_json(dest / DOWNLOADED, "list of downloaded files")
    except EatkitError:  # missing or unreadable: nothing counts as downloaded by eatkit, so nothing is replaced
        return set()
    return {n for n in names if isinstance(n, str)} if isinstance(names, list) else set()


def _fetch_one(name: str, dest: Path, rel: str, expected: Mapping[str, Any] | None, fetcher: Any, downloader: Any,
               processor: Any, owned: set[str]) -> None:
    """Fetch ``rel`` unless present and verified; a file there that eatkit did not download (not in
    ``owned``, :data:`DOWNLOADED`) is never replaced. Every downloaded file gets eatkit's mode (0644)."""
    target = inside(dest, rel, "dataset file")
    if expected is None:  # known missing: fetched (unverified) only if the source can serve it
        if not target.is_file():
            with contextlib.suppress(EatkitError):
                _fetch(fetcher, rel, downloader, None, None)
    elif not expected.get("sha256"):  # no known checksum (allow_unverified): fetched once, as it comes
        if not target.is_file():
            _fetch(fetcher, rel, downloader, processor, expected)
    elif not _verified(target, expected):
        if (target.exists() or target.is_symlink()) and rel not in owned:
            raise EatkitError(f"{target} exists and is not the file '{rel}' of dataset '{name}' (its SHA-256 "
                              "differs), and eatkit did not download it: eatkit does not write over it (move it, "
                              "or give another --dest)")
        target.unlink(missing_ok=True)  # an earlier download, damaged: never left in place unverified
        _fetch(fetcher, rel, downloader, processor, expected)
    if target.is_file() and not target.is_symlink():
        owned.add(rel)
        os.chmod(target, FILE_MODE)  # as every file eatkit writes (pooch leaves its temporary file's 0600)


def _fetch(fetcher: Any, rel: str, downloader: Any, processor: Any, expected: Mapping[str, Any] | None) -> None:
    """One file through pooch; its failures as one-line errors naming the file and the URL."""
    import requests

    url = fetcher.get_url(rel)
    try:
        fetcher.fetch(rel, downloader=downloader, processor=processor)
    except ValueError as err:
        got = re.search(r"but got ([0-9a-f]+)", str(err))
        if got is None or expected is None:
            raise EatkitError(f"cannot download '{rel}' from {url}: {one_line(err)}") from None
        raise EatkitError(f"checksum mismatch for '{rel}' from {url}: expected sha256 {expected['sha256']}, got "
                          f"{got[1]}; the file was not kept") from None
    except requests.HTTPError as err:
        raise EatkitError(f"cannot download '{rel}' from {url}: HTTP {err.response.status_code} "
                          f"{err.response.reason}") from None
    except (OSError, requests.RequestException) as err:  # connection refused, timeout, disk full, no such file
        cause = re.search(r"\[Errno -?\d+\] [^'\")]+", str(err)) if isinstance(err, requests.ConnectionError) else None
        hint = ("; offline, or behind a firewall? download from a copy with --base-url file://MIRROR (a folder "
                "in the source's layout) or an http(s) mirror") if isinstance(err, requests.RequestException) else ""
        raise EatkitError(f"cannot download '{rel}' from {url}: {cause[0] if cause else one_line(err)}{hint}") from None


def _copy_file(url: str, output_file: str, pooch: Any) -> None:
    """A pooch downloader for ``file://`` URLs (a local mirror)."""
    shutil.copyfile(urllib.request.url2pathname(urllib.parse.urlsplit(url).path), output_file)


def _remove_new_empty_folders(dest: Path, existing: set[Path]) -> None:
    """After a failed download: remove the folders it created that are (still) empty, deepest first."""
    created = [p for p in (dest, *dest.rglob("*")) if p.is_dir() and p not in existing] if dest.is_dir() else []
    for folder in sorted(created, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            folder.rmdir()


def _verified(path: Path, expected: Mapping[str, Any]) -> bool:
    size = expected.get("size")
    return path.is_file() and (size is None or path.stat().st_size == size) and file_sha256(path) == expected["sha256"]
