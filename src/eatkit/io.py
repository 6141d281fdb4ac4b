"""Small file and import helpers shared by every layer: hashing, atomic writes, optional imports, and
the one rule for reading files that others made.

This module sits at the bottom of the import graph (it imports only :mod:`eatkit.errors`), so that the
statistics, the stimuli, the sources and the encoders can all use it without importing each other.

Files from others (a suite, a run folder, a vocabulary pickle, a checkpoint, a config) never run code
and a file name read from them never reaches outside its folder:

- **pickles** are read by :func:`load_pickle`, whose unpickler admits only plain data (``dict``, ``list``,
  ``tuple``, ``set``, ``frozenset``, ``str``, ``bytes``, ``int``, ``float``, ``complex``, ``bool``,
  ``None``); any other class or function named by the pickle is refused before it is looked up;
- **PyTorch checkpoints** are read by :func:`load_torch_weights`: ``.safetensors`` with safetensors,
  anything else with ``torch.load(weights_only=True)`` (tensors and plain containers only);
- **file names** read from a suite, manifest or config are resolved by :func:`inside`, which refuses an
  absolute path, a ``..`` component, and a path whose symbolic links lead out of the folder.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import json
import importlib.util
import math
import os
import pickle
import stat
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath, PureWindowsPath
from types import ModuleType
from typing import Any

from eatkit.errors import EatkitError, MissingExtraError, one_line


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


def file_sha256_many(paths: Sequence[str | os.PathLike[str]], threads: int = 2) -> list[str]:
    """:func:`file_sha256` of each file, in order, read by ``threads`` threads (hashing releases the GIL).

    >>> import pathlib, tempfile; p = pathlib.Path(tempfile.mkdtemp()) / "f"; _ = p.write_bytes(b"")
    >>> [h[:8] for h in file_sha256_many([p, p], threads=2)]
    ['e3b0c442', 'e3b0c442']
    """
    if len(paths) < 2 or threads < 2:
        return [file_sha256(path) for path in paths]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(file_sha256, paths))


def text_sha256(text: str) -> str:
    """SHA-256 (hex) of a string's UTF-8 bytes.

    >>> text_sha256("")[:16]
    'e3b0c44298fc1c14'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: the mode of every file eatkit writes: 0644 under the usual umask (a temporary file's 0600 would stay)
FILE_MODE = 0o666 & ~_umask()


def atomic_write(path: str | os.PathLike[str], write: Callable[[object], None], *, suffix: str = ".tmp") -> None:
    """Create ``path`` whole or not at all: ``write(handle)`` fills a temporary binary file beside it, which
    :func:`os.replace` then moves into place (a reader never sees a partial file), with the mode of a
    newly created file (:data:`FILE_MODE`). ``OSError`` propagates, after the temporary file is removed;
    callers turn it into a one-line :class:`~eatkit.errors.EatkitError` (:func:`os_error`).

    >>> import pathlib, tempfile; p = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
    >>> atomic_write(p, lambda fh: fh.write(b"hi")); p.read_bytes(), oct(p.stat().st_mode & 0o777) == oct(FILE_MODE)
    (b'hi', True)
    """
    target = checked_path(path, "file")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name[:16]}.", suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            os.fchmod(handle.fileno(), FILE_MODE)
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)


def checked_path(path: str | os.PathLike[str], what: str = "path") -> Path:
    """``path`` as a :class:`Path`, or a one-line :class:`EatkitError` when no file system can hold it:
    a NUL byte, a name longer than the folder's limit (255 bytes on most), or a path longer than
    ``PATH_MAX``. Every path eatkit writes to, and every path a user names, passes through here (or
    through :func:`os_error`, for what only the file system itself can say).

    >>> checked_path("results/run1")
    PosixPath('results/run1')
    >>> checked_path("x" * 300, "output folder")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: output folder xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... has a name of 300 bytes, longer than the file system allows (255)
    """
    text = os.fspath(path)
    shown = text if len(text) <= 60 else text[:40] + "..."
    if "\x00" in text:
        raise EatkitError(f"{what} {shown!r} contains a NUL byte, which no file name can hold")
    length = len(os.fsencode(text))
    for part in Path(text).parts if length > _NAME_MAX else ():  # (a shorter path has no longer name)
        size = len(os.fsencode(part))
        if size > _NAME_MAX:
            raise EatkitError(f"{what} {shown} has a name of {size} bytes, longer than the file system allows "
                              f"({_NAME_MAX})")
    if length >= _PATH_MAX:
        raise EatkitError(f"{what} {shown} is longer than the file system allows ({_PATH_MAX} bytes)")
    return Path(text)


_NAME_MAX, _PATH_MAX = 255, 4096


def os_error(err: OSError, doing: str) -> EatkitError:
    """An :class:`OSError` as a one-line :class:`EatkitError`: what eatkit was ``doing`` (e.g. "write the
    report"), the file, and the system's reason (permissions, a full disk, a name too long...).

    >>> str(os_error(PermissionError(13, "Permission denied", "/data/x"), "read the image folder"))
    'cannot read the image folder /data/x: Permission denied'
    """
    name = "" if err.filename is None else f" {err.filename}"
    name = name if len(name) <= 80 else name[:60] + "..."
    return EatkitError(f"cannot {doing}{name}: {one_line(err.strerror or err)}")


#: what marks a file as written by eatkit (:func:`check_replaceable`), per kind of file
OWN_MARKERS: dict[str, tuple[bytes, ...]] = {
    "html": (b'<meta name="generator" content="eatkit', b"<h1>eatkit report</h1>"),
    "safetensors": (b'"format":"eatkit.finetune/', b'"format": "eatkit.finetune/'),
    "finetune-json": (b'"num_classes": ',),
}


def check_replaceable(path: str | os.PathLike[str], kind: str, what: str) -> Path:
    """``path``, checked before any work: a new file, or an existing one that eatkit wrote (its start
    holds a marker of :data:`OWN_MARKERS`). eatkit never writes over a file it did not create, such as a
    run folder's ``results.json`` given as the report's name.

    >>> import pathlib, tempfile; p = pathlib.Path(tempfile.mkdtemp()) / "results.json"
    >>> _ = p.write_text("[]"); check_replaceable(p, "html", "report")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: report .../results.json exists and is not an eatkit html file: eatkit does not write over it (give a new file name)
    """
    target = checked_path(path, what)
    if target.is_dir():
        raise EatkitError(f"{what} {target} is a folder; give a file name such as {target / ('report.' + kind)}")
    if not target.exists():
        return target
    try:
        with open(target, "rb") as handle:
            head = handle.read(1 << 16)
    except OSError as err:
        raise os_error(err, f"read the existing {what}") from None
    if not any(marker in head for marker in OWN_MARKERS[kind]):
        raise EatkitError(f"{what} {target} exists and is not an eatkit {kind} file: eatkit does not write over "
                          "it (give a new file name)")
    return target


def check_output_file(path: str | os.PathLike[str], what: str, *, inputs: Sequence[Any] = (),
                      kind: str | None = None) -> Path:
    """A file a command will write, checked before any work: not one of the command's ``inputs``, not a
    folder, and new, or (with ``kind``) a file eatkit wrote (:func:`check_replaceable`). eatkit never writes
    over a file it did not create.

    >>> import pathlib, tempfile; p = pathlib.Path(tempfile.mkdtemp()) / "train.json"; _ = p.write_text("{}")
    >>> check_output_file(p, "checkpoint", inputs=[p])   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: checkpoint .../train.json is one of the command's inputs: give another file name
    """
    target = checked_path(path, what)
    for given in inputs:
        try:
            same = given is not None and Path(given).exists() and Path(given).resolve() == target.absolute().resolve()
        except OSError:  # a name no file system holds: its reader says so, by name
            same = False
        if same:
            raise EatkitError(f"{what} {target} is one of the command's inputs: give another file name")
    if kind is not None:
        return check_replaceable(target, kind, what)
    if target.is_dir():
        raise EatkitError(f"{what} {target} is a folder; give a file name")
    if target.exists() or target.is_symlink():
        raise EatkitError(f"{what} {target} exists: eatkit does not write over a file it did not create (give a "
                          "new file name)")
    return target


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
    import importlib.metadata  # (imported on use: with email and zipfile, a tenth of eatkit's start-up CPU)

    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


# ---------------------------------------------------------------- files from others: the one rule

#: the only globals a pickle may name (plain containers and numbers; Python 2 pickles name ``__builtin__``,
#: which the unpickler maps to ``builtins``)
PICKLE_GLOBALS: frozenset[tuple[str, str]] = frozenset(
    ("builtins", name) for name in ("set", "frozenset", "complex", "bytearray", "list", "dict", "tuple")
)


class _PlainUnpickler(pickle.Unpickler):
    """An unpickler that builds plain data only (see :data:`PICKLE_GLOBALS`)."""

    def find_class(self, module: str, name: str) -> Any:
        if (module.replace("__builtin__", "builtins"), name) in PICKLE_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"it names {module}.{name}, which eatkit does not load from a pickle "
                                     "(only plain containers, strings and numbers)")


def load_pickle(path: str | os.PathLike[str], *, encoding: str = "ASCII", what: str = "pickle file") -> Any:
    """The plain data (containers, strings, numbers) held in a pickle file, without running any code.

    ``encoding`` decodes the byte strings of Python 2 pickles (``"latin1"`` or ``"bytes"``, as
    :func:`pickle.load`). A pickle that names any other class or function is refused with an
    :class:`EatkitError` naming the file (as ``what``) and the global.

    >>> import tempfile, pathlib; p = pathlib.Path(tempfile.mkdtemp()) / "v.pkl"
    >>> _ = p.write_bytes(pickle.dumps({"words": ["rose", "ant"], "n": 2}))
    >>> load_pickle(p)
    {'words': ['rose', 'ant'], 'n': 2}
    """
    path = Path(path)
    data = read_input(path, what)  # the one reader: regular files only, bounded
    try:
        return _PlainUnpickler(io.BytesIO(data), encoding=encoding).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, KeyError,
            AttributeError, UnicodeDecodeError, OverflowError, MemoryError) as err:
        raise EatkitError(f"refusing {what} {path}: {one_line(err)}") from None


def load_torch_weights(path: str | os.PathLike[str], allow: tuple[Any, ...] = (), what: str = "weights file", *,
                       safetensors: bool | None = None) -> Any:
    """A PyTorch checkpoint's tensors without running code: a safetensors file (``safetensors=True``, or by
    default a name ending in ``.safetensors``) through safetensors,
    any other file through ``torch.load(weights_only=True)`` (tensors, plain containers, numbers, and the
    plain attribute containers named in ``allow``, e.g. the ``argparse.Namespace`` SLIP saves its options in,
    or ``(object, "module.name")`` pairs, as ``torch.serialization.safe_globals`` takes them). ``what``
    names the file in errors.

    A checkpoint holding anything else (a pickled class or function) is an :class:`EatkitError`.

    >>> import tempfile, pathlib, torch; p = pathlib.Path(tempfile.mkdtemp()) / "w.pt"
    >>> torch.save({"w": torch.ones(2)}, p); load_torch_weights(p)["w"].tolist()
    [1.0, 1.0]
    """
    path = check_regular(path, what)  # the one reader's rule: no folder, FIFO or device
    try:
        if safetensors or (safetensors is None and path.suffix == ".safetensors"):
            try:
                from safetensors.torch import load_file
            except ImportError:
                raise MissingExtraError(f"reading {path.name}", "image", "safetensors") from None
            return load_file(str(path), device="cpu")
        try:
            import torch
        except ImportError:
            raise MissingExtraError(f"reading {path.name}", "image", "torch") from None
        return _quiet_unless_loaded(lambda: torch.load(path, map_location="cpu", weights_only=True),
                                    torch.serialization.safe_globals(list(allow)))
    except EatkitError:
        raise
    except Exception as err:  # noqa: BLE001 -- torch and safetensors raise many types for a bad file
        reason = str(err)
        if "WeightsUnpickler error:" in reason:  # torch's advice around it would cut the reason off
            reason = reason.split("WeightsUnpickler error:", 1)[1].split(" Please use", 1)[0]
        raise EatkitError(f"refusing {what} {path} (only tensors and plain containers are loaded): "
                          f"{one_line(reason)}") from None


def safetensors_metadata(path: str | os.PathLike[str], what: str = "checkpoint") -> dict[str, str]:
    """The metadata of a safetensors file (its header only: no tensor is read), after :func:`check_regular`;
    a file that is not one is a one-line error naming it.

    >>> import tempfile, pathlib, numpy as np; from safetensors.numpy import save_file
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.safetensors"; save_file({"w": np.ones(2)}, p, metadata={"a": "1"})
    >>> safetensors_metadata(p)
    {'a': '1'}
    """
    target = check_regular(path, what)
    safe_open = require("safetensors", f"reading {what}s", "image").safe_open
    try:
        with safe_open(str(target), framework="numpy") as handle:
            return dict(handle.metadata() or {})
    except Exception as exc:  # noqa: BLE001 -- safetensors raises its own error types
        raise EatkitError(f"{what} {target} is not a safetensors file: {one_line(exc)}") from None


def _quiet_unless_loaded(load: Callable[[], Any], context: Any) -> Any:
    """``load()`` within ``context``; the warnings it gave are shown only if it succeeds (a refused file's error
    comes alone, without torch's notes on pickle protocols before it)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught, context:
        warnings.simplefilter("always")
        loaded = load()
    for item in caught:
        warnings.warn_explicit(item.message, item.category, item.filename, item.lineno)
    return loaded


def inside(folder: str | os.PathLike[str], name: str, what: str = "file", *, links_out: bool = False) -> Path:
    """``folder / name`` for a relative ``name`` read from a suite, manifest or config, refusing a name
    that would reach outside ``folder``: an absolute path, a ``..`` component, or (unless ``links_out``)
    a path that leaves the folder through a symbolic link. ``links_out=True`` is for a folder the user
    named and arranged (``--images DIR``, whose category folders may link to a dataset elsewhere): the
    name from the file still cannot climb out of it. The returned path need not exist.

    >>> inside("/data/ieat", "age/young")
    PosixPath('/data/ieat/age/young')
    >>> inside("/data/ieat", "../etc/passwd", "image category")
    Traceback (most recent call last):
    eatkit.errors.EatkitError: image category '../etc/passwd' must stay inside /data/ieat (no '..' component)
    """
    base = Path(folder)
    _check_relative(name, base, what)
    path = base / name
    if links_out:
        return path
    real_base = base.resolve()
    real = path.resolve()
    if real != real_base and real_base not in real.parents:
        raise EatkitError(f"{what} '{name}' must stay inside {base} (a symbolic link leads to {real})")
    return path


def _check_relative(name: Any, base: Path, what: str) -> None:
    """An error unless ``name`` is a relative path that stays below ``base`` by its text (:func:`inside`)."""
    if not isinstance(name, str) or not name:
        raise EatkitError(f"{what} name {name!r} must be a non-empty relative path")
    if "\x00" in name:
        raise EatkitError(f"{what} {name!r} must stay inside {base} (contains a NUL byte)")
    if PurePosixPath(name).is_absolute() or PureWindowsPath(name).is_absolute() or PureWindowsPath(name).drive:
        raise EatkitError(f"{what} '{name}' must stay inside {base} (an absolute path)")
    if ".." in PurePosixPath(name.replace("\\", "/")).parts:
        raise EatkitError(f"{what} '{name}' must stay inside {base} (no '..' component)")


def check_json_schema(data: Any, schema: dict[str, Any], where: str) -> None:
    """Validate parsed ``data`` against the JSON Schema ``schema`` (when jsonschema is installed):
    jsonschema's best match of its problems as one :class:`EatkitError` line prefixed ``where``.

    >>> check_json_schema({"a": 1}, {"type": "object", "required": ["b"]}, "s.json")
    Traceback (most recent call last):
    eatkit.errors.EatkitError: s.json: (top level) 'b' is a required property
    """
    try:
        import jsonschema
    except ImportError:
        return
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        path = "/".join(str(p) for p in error.absolute_path)
        raise EatkitError(f"{where}: ({path or 'top level'}) {one_line(error.message)}")


def shipped_json(package: str, resource: str) -> Any:
    """A JSON file shipped in ``package`` (e.g. a JSON Schema), parsed.

    >>> shipped_json("eatkit.run", "sweep.schema.json")["title"]
    'eatkit sweep file'
    """
    return json.loads(shipped_text(package, resource))


# ---------------------------------------------------------------- the one reader of input files

#: the most bytes eatkit reads whole from a file a user names (a suite, a sweep, annotations, a word list);
#: larger files (vectors, embeddings) are streamed
MAX_INPUT_BYTES = 256 << 20
#: the most bytes eatkit reads whole from an embeddings file (.npy, .npz, .csv, .parquet: a matrix of
#: 2 million 1024-dimensional float32 vectors)
MAX_ARRAY_BYTES = 8 << 30
#: the longest line of a text file read line by line (a word-vector file's line of 4096 numbers is ~50 KB)
MAX_LINE_BYTES = 1 << 20
#: the deepest nesting of a JSON (or TOML / YAML) input, and the most digits of one of its numbers (CPython's own
#: limit on converting text to an int, ``sys.int_info.default_max_str_digits``: eatkit's records hold exact counts
#: such as the number of a large test's splits, 954 digits for a grounded test)
MAX_JSON_DEPTH, MAX_NUMBER_DIGITS = 64, 4300


def check_regular(path: str | os.PathLike[str], what: str) -> Path:
    """``path`` if it names a regular file (after symbolic links), else a one-line :class:`EatkitError`
    naming it: missing, a folder, a FIFO, a device or a socket (reading one could block forever or never
    end). Every input file passes here before it is opened.

    >>> check_regular("/dev/null", "suite file")
    Traceback (most recent call last):
    eatkit.errors.EatkitError: suite file /dev/null is a character device, not a regular file
    """
    target = checked_path(path, what)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        raise EatkitError(f"{what} {target} does not exist") from None
    except OSError as err:
        raise os_error(err, f"read the {what}") from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _NOT_REGULAR if test(mode)), "not a regular file")
        raise EatkitError(f"{what} {target} is {kind}, not a regular file")
    return target


_NOT_REGULAR: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_input(path: str | os.PathLike[str], what: str, *, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of an input file: a regular file (:func:`check_regular`) of at most ``max_bytes``.

    >>> import pathlib, tempfile; p = pathlib.Path(tempfile.mkdtemp()) / "s.json"; _ = p.write_bytes(b"[1]")
    >>> read_input(p, "suite file"), read_input(p, "suite file", max_bytes=2)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: suite file .../s.json has 3 bytes, more than eatkit reads from one (2)
    """
    target = check_regular(path, what)
    try:
        with open(target, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as err:
        raise os_error(err, f"read the {what}") from None
    if len(data) > max_bytes:
        size = target.stat().st_size
        raise EatkitError(f"{what} {target} has {size} bytes, more than eatkit reads from one ({max_bytes})")
    return data


def read_text(path: str | os.PathLike[str], what: str, *, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """:func:`read_input` decoded as UTF-8 (a one-line error naming the byte otherwise).

    >>> import pathlib, tempfile; p = pathlib.Path(tempfile.mkdtemp()) / "w.txt"; _ = p.write_bytes(b"\\xff")
    >>> read_text(p, "word list")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: word list .../w.txt is not UTF-8 text (invalid start byte at byte 0)
    """
    data = read_input(path, what, max_bytes=max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise EatkitError(f"{what} {path} is not UTF-8 text ({err.reason} at byte {err.start})") from None


def parse_json(text: str, where: str, *, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None) -> Any:
    """JSON ``text`` parsed within the input limits: nesting at most :data:`MAX_JSON_DEPTH`, numbers of at
    most :data:`MAX_NUMBER_DIGITS` digits; any problem is one line prefixed ``where``.

    >>> parse_json("[" * 100 + "]" * 100, "suite file s.json")
    Traceback (most recent call last):
    eatkit.errors.EatkitError: suite file s.json: JSON nested deeper than 64 levels
    >>> parse_json("1" * 5000, "sweep.json")
    Traceback (most recent call last):
    eatkit.errors.EatkitError: sweep.json: a number of 5000 digits (at most 4300)
    """
    def number(kind: type) -> Callable[[str], Any]:
        def parse(digits: str) -> Any:
            if len(digits) > MAX_NUMBER_DIGITS:
                raise EatkitError(f"{where}: a number of {len(digits)} digits (at most {MAX_NUMBER_DIGITS})")
            return kind(digits)
        return parse

    try:
        data = json.loads(text, object_pairs_hook=object_pairs_hook, parse_int=number(int), parse_float=number(float))
    except json.JSONDecodeError as err:
        raise EatkitError(f"{where}: invalid JSON at line {err.lineno}, column {err.colno}: {err.msg}") from None
    except RecursionError:
        raise EatkitError(f"{where}: JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    check_depth(data, where)
    return data


def check_depth(data: Any, where: str, limit: int = MAX_JSON_DEPTH) -> None:
    """Refuse parsed data (JSON, TOML, YAML) nested deeper than ``limit`` (walked without recursion).

    >>> check_depth({"a": [[1]]}, "f.toml", limit=2)
    Traceback (most recent call last):
    eatkit.errors.EatkitError: f.toml: JSON nested deeper than 2 levels
    """
    stack = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list, tuple)):
            if depth >= limit:
                raise EatkitError(f"{where}: JSON nested deeper than {limit} levels")
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))


def read_json(path: str | os.PathLike[str], what: str, *, max_bytes: int = MAX_INPUT_BYTES,
              object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None) -> Any:
    """An input JSON file, parsed within the limits (:func:`read_text`, :func:`parse_json`).

    >>> import pathlib, tempfile; p = pathlib.Path(tempfile.mkdtemp()) / "a.json"; _ = p.write_text('{"a": 1}')
    >>> read_json(p, "annotations file")
    {'a': 1}
    """
    return parse_json(read_text(path, what, max_bytes=max_bytes), f"{what} {path}", object_pairs_hook=object_pairs_hook)


def read_config(path: str | os.PathLike[str], what: str) -> Any:
    """An input configuration file parsed within the limits (:func:`read_text`, nesting :func:`check_depth`):
    YAML for a ``.yaml`` / ``.yml`` name (PyYAML's ``safe_load``: plain data only, the ``yaml`` extra), TOML for
    any other; a file that does not parse is one line naming it.

    >>> import pathlib, tempfile; p = pathlib.Path(tempfile.mkdtemp()) / "s.toml"; _ = p.write_text("a = [1, 2]")
    >>> read_config(p, "sweep file")
    {'a': [1, 2]}
    >>> _ = p.write_text("a = ["); read_config(p, "sweep file")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: sweep file .../s.toml: not valid TOML: ...
    """
    text = read_text(path, what)
    if Path(path).suffix.lower() in (".yaml", ".yml"):
        yaml = require("yaml", f"a YAML {what}", "yaml")
        try:
            data = yaml.safe_load(text)
        except (yaml.YAMLError, RecursionError) as err:
            raise EatkitError(f"{what} {path}: not valid YAML: {one_line(err)}") from None
    else:
        import tomllib

        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError) as err:
            raise EatkitError(f"{what} {path}: not valid TOML: {one_line(err)}") from None
    check_depth(data, f"{what} {path}")
    return data


def read_csv(path: str | os.PathLike[str], what: str, columns: Sequence[str], *,
             max_bytes: int = MAX_INPUT_BYTES) -> list[dict[str, str]]:
    """The rows of an input CSV file (comma-separated, UTF-8 with or without a byte-order mark), each a dict
    by the header's names; one-line errors for what a reader would misread: a header without the needed
    ``columns``, a column named twice, a file separated by semicolons or tabs, a row with more fields than
    the header.

    >>> import pathlib, tempfile; p = pathlib.Path(tempfile.mkdtemp()) / "e.csv"
    >>> _ = p.write_bytes("\\ufeffeffect,se\\n0.5,0.1\\n".encode())
    >>> read_csv(p, "effects file", ["effect"])
    [{'effect': '0.5', 'se': '0.1'}]
    >>> _ = p.write_text("effect;se\\n0,5;0,1\\n"); read_csv(p, "effects file", ["effect"])   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: effects file .../e.csv is separated by ';', not commas: ...
    """
    numbered = parse_csv(read_text(path, what, max_bytes=max_bytes).removeprefix("\ufeff"), f"{what} {path}")
    header = [name.strip() for name in numbered[0][1]] if numbered else []
    for separator in (";", "\t"):
        if len(header) == 1 and separator in header[0]:
            raise EatkitError(f"{what} {path} is separated by {separator!r}, not commas: save it as comma-separated "
                              f"CSV with the columns {', '.join(columns)}")
    twice = sorted({name for name in header if header.count(name) > 1})
    if twice:
        raise EatkitError(f"{what} {path} names the column {twice[0]!r} twice")
    missing = [c for c in columns if c not in header]
    if missing:
        raise EatkitError(f"{what} {path} needs the columns {', '.join(columns)}; its header has "
                          f"{', '.join(header) or 'nothing'}")
    long = next(((line, row) for line, row in numbered[1:] if len(row) > len(header)), None)
    if long is not None:
        raise EatkitError(f"{what} {path}, line {long[0]}: {len(long[1])} fields, the header has {len(header)}")
    return [dict(zip(header, row)) for _, row in numbered[1:]]


def read_lines(handle: Any, where: str, *, max_line: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The lines of an open binary file, streamed, each at most ``max_line`` bytes (a one-line error
    naming the line otherwise: a file of one endless line is refused without reading it whole).

    >>> list(read_lines(io.BytesIO(b"a 1\\nb 2\\n"), "v.txt"))
    [b'a 1\\n', b'b 2\\n']
    >>> list(read_lines(io.BytesIO(b"x" * 9), "v.txt", max_line=4))
    Traceback (most recent call last):
    eatkit.errors.EatkitError: v.txt: line 1 is longer than 4 bytes
    """
    number = 0
    while True:
        line = handle.readline(max_line + 1)
        if not line:
            return
        number += 1
        if len(line) > max_line:
            raise EatkitError(f"{where}: line {number} is longer than {max_line} bytes")
        yield line


def open_input(path: str | os.PathLike[str], what: str) -> io.BufferedReader:
    """An input file opened for binary reading, after :func:`check_regular` (a folder, FIFO or device is refused
    by name before anything opens it): for readers that stream a large file (word vectors, line by line with
    :func:`read_lines`, or memory-mapped) instead of reading it whole. The caller closes it (``with``).

    >>> import pathlib, tempfile; p = pathlib.Path(tempfile.mkdtemp()) / "v.txt"; _ = p.write_bytes(b"a 1\\n")
    >>> with open_input(p, "vectors file") as handle: list(read_lines(handle, "v.txt"))
    [b'a 1\\n']
    >>> open_input(p.parent, "vectors file")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: vectors file ... is a folder, not a regular file
    """
    target = check_regular(path, what)
    try:
        return open(target, "rb")
    except OSError as err:
        raise os_error(err, f"read the {what}") from None


def shipped_text(package: str, resource: str) -> str:
    """A text file shipped in ``package`` (a bundled suite, table or checksum manifest; ``resource`` may name a
    sub-folder, ``"suites/ieat.json"``), as UTF-8 text.

    >>> shipped_text("eatkit", "models.json")[:1]
    '{'
    """
    import importlib.resources  # (imported on use, as importlib.metadata)

    return importlib.resources.files(package).joinpath(resource).read_text("utf-8")


def open_image(path: str | os.PathLike[str], what: str = "image") -> Any:
    """A :class:`PIL.Image.Image` opened lazily (Pillow's own ``Image.open`` of the checked path: no extra read
    or copy of the file) after :func:`check_regular`: a missing file, a folder named like an image or a FIFO is
    a one-line error naming it. Pillow's own errors (not an image, truncated) are the caller's to word; use it
    as a context manager.

    >>> import pathlib, tempfile; from PIL import Image; p = pathlib.Path(tempfile.mkdtemp()) / "a.png"
    >>> Image.new("RGB", (3, 2)).save(p)
    >>> with open_image(p) as image: image.size
    (3, 2)
    >>> (p.parent / "b.jpg").mkdir(); open_image(p.parent / "b.jpg")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: image .../b.jpg is a folder, not a regular file
    """
    target = check_regular(path, what)
    return require("PIL.Image", "image loading", "image").open(target)



def read_image(path: str | os.PathLike[str], what: str = "image", *, draft: tuple[int, int] | None = None) -> Any:
    """An input image file decoded as a :class:`PIL.Image.Image` in the mode it was stored in (its first frame):
    a regular file (:func:`check_regular`) that Pillow reads; anything else (a folder, a FIFO, no image, a
    truncated file, a decompression bomb) is a one-line error naming it. ``draft`` lets a JPEG decode at 1/2,
    1/4 or 1/8 scale, keeping both sides at least ``draft`` (Pillow's ``draft``: much faster for thumbnails).

    >>> import pathlib, tempfile; from PIL import Image; p = pathlib.Path(tempfile.mkdtemp()) / "a.png"
    >>> Image.new("RGB", (3, 2)).save(p); read_image(p).size
    (3, 2)
    >>> _ = p.write_bytes(b"no image"); read_image(p)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: cannot read image .../a.png: cannot identify image file '.../a.png'
    """
    pil = require("PIL.Image", f"reading the {what}", "image")
    try:
        with open_image(path, what) as image:
            if draft is not None and image.format == "JPEG":
                image.draft(None, draft)
            image.load()
            return image
    except EatkitError:  # (no regular file: open_image's own line)
        raise
    except (OSError, SyntaxError, ValueError, pil.DecompressionBombError) as err:
        raise EatkitError(f"cannot read {what} {path}: {one_line(err)}") from None


# ---------------------------------------------------------------- numpy and pandas files: parsed here only

_NPY_MAGIC, _NPZ_MAGIC = b"\x93NUMPY", b"PK"
_PICKLED = "it holds pickled Python objects, which eatkit never loads; save plain numeric arrays"


def load_npy(path: str | os.PathLike[str], what: str, *, data: bytes | None = None, mmap: bool = False,
             max_bytes: int = MAX_ARRAY_BYTES) -> Any:
    """The numeric array of a ``.npy`` file: never pickled objects (``allow_pickle=False``); the size its header
    declares checked against the data the file holds before numpy allocates it (a truncated file, or a header
    declaring terabytes, says so); ``mmap=True`` maps the file read-only instead of reading it. ``data``: the
    file's bytes when the caller has read them already (through :func:`read_input`, e.g. to hash them);
    ``path`` then only names the file. Any problem is one line naming ``what`` and ``path``.

    >>> import pathlib, tempfile, numpy as np; p = pathlib.Path(tempfile.mkdtemp()) / "m.npy"; np.save(p, np.eye(2))
    >>> load_npy(p, "matrix file").tolist(), load_npy(p, "matrix file", mmap=True).shape
    ([[1.0, 0.0], [0.0, 1.0]], (2, 2))
    >>> load_npy(p, "matrix file", data=p.read_bytes()[:-8])   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: matrix file .../m.npy is not a readable .npy array (its header declares a float64 array of shape (2, 2), 32 bytes of data, but the file holds 24)
    """
    import numpy as np

    if mmap and data is None:
        with open_input(path, what) as handle:
            shape, order, dtype, offset = _parse_numpy(path, what, lambda: _npy_header(handle))
        return _parse_numpy(path, what, lambda: np.memmap(path, dtype, "r", offset, shape, order))
    raw = read_input(path, what, max_bytes=max_bytes) if data is None else data

    def parse() -> Any:  # the header parsed once (numpy's literal_eval of it costs more than a small array)
        shape, order, dtype, offset = _npy_header(io.BytesIO(raw))
        flat = np.frombuffer(raw, dtype, count=math.prod(shape), offset=offset)
        return flat.reshape(shape, order=order).copy(order="A")  # (a writable array, as numpy's load gives)

    return _parse_numpy(path, what, parse)


def load_npz(path: str | os.PathLike[str], what: str, *, data: bytes | None = None,
             max_bytes: int = MAX_ARRAY_BYTES) -> dict[str, Any]:
    """The arrays of an ``.npz`` archive by name, read whole (:func:`read_input`, at most ``max_bytes``), never
    pickled objects; ``data`` and the one-line errors as :func:`load_npy`.

    >>> import pathlib, tempfile, numpy as np; p = pathlib.Path(tempfile.mkdtemp()) / "e.npz"
    >>> np.savez(p, ids=np.array(["rose"]), vectors=np.ones((1, 2))); sorted(load_npz(p, "embeddings file"))
    ['ids', 'vectors']
    >>> load_npz(p, "embeddings file", data=b"garbage")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: embeddings file .../e.npz is not a readable .npz archive (it does not start as an .npz (zip) file does)
    """
    import numpy as np

    def parse(buffer: io.BytesIO) -> dict[str, Any]:
        if not buffer.getvalue().startswith(_NPZ_MAGIC):
            raise ValueError("it does not start as an .npz (zip) file does")
        with np.load(buffer, allow_pickle=False) as archive:
            unpacked = sum(info.file_size for info in archive.zip.infolist())
            if unpacked > max_bytes:
                raise ValueError(f"its arrays unpack to {unpacked} bytes, more than eatkit reads ({max_bytes})")
            arrays = {key: archive[key] for key in archive.files}
        other = next((key for key, value in arrays.items() if not isinstance(value, np.ndarray)), None)
        if other is not None:  # (numpy returns the bytes of a member that is no .npy file)
            raise ValueError(f"its member {other!r} is not a .npy array")
        return arrays

    buffer = io.BytesIO(read_input(path, what, max_bytes=max_bytes) if data is None else data)
    return _parse_numpy(path, what, lambda: parse(buffer), kind=".npz archive")


def _parse_numpy(path: str | os.PathLike[str], what: str, parse: Callable[[], Any], kind: str = ".npy array") -> Any:
    """``parse()``, its errors (garbage, truncation, pickles, a bad zip) as one line naming the file."""
    import zipfile
    import zlib

    try:
        return parse()
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise EatkitError(f"{what} {path} is not a readable {kind} ({_numpy_reason(exc)})") from None


def _npy_header(data: Any) -> tuple[tuple[int, ...], str, Any, int]:
    """The shape, order (``"C"`` or ``"F"``), dtype and data offset of the .npy file ``data`` (a binary handle at
    its start), read before numpy allocates the array; a ValueError unless the file holds exactly the data its
    header declares (shape x item size: a truncated file, or a header declaring terabytes) of a dtype without
    Python objects (numpy would unpickle them)."""
    import numpy as np
    from numpy.lib import format as npy

    if data.read(len(_NPY_MAGIC)) != _NPY_MAGIC:
        raise ValueError("it does not start as a .npy file does")
    data.seek(0)
    version = npy.read_magic(data)
    readers = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}
    if version not in readers:
        raise ValueError(f"it is a .npy file of format version {version[0]}.{version[1]}; eatkit reads 1.0 and 2.0")
    shape, fortran, dtype = readers[version](data)  # a header over numpy's max_header_size: its ValueError
    if dtype.hasobject:
        raise ValueError(_PICKLED)
    declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
    offset = data.tell()
    held = data.seek(0, io.SEEK_END) - offset
    if declared != held:
        raise ValueError(f"its header declares a {dtype} array of shape {tuple(shape)}, {declared} bytes of data, "
                         f"but the file holds {held}")
    return tuple(shape), "F" if fortran else "C", dtype, offset


def _numpy_reason(exc: Exception) -> str:
    """numpy's reason for refusing a file, without its advice to load pickled objects."""
    import re

    header = re.match(r"Header info length \((\d+)\) is large", str(exc))
    if header:
        return f"its header has {header[1]} bytes, more than numpy reads safely"
    if "allow_pickle" in str(exc):
        return _PICKLED
    return one_line(exc)


def read_frame(path: str | os.PathLike[str], what: str, *, data: bytes | None = None, kind: str = "csv",
               max_bytes: int = MAX_ARRAY_BYTES, **options: Any) -> Any:
    """A :class:`pandas.DataFrame` of a ``kind`` ``"csv"`` (pandas' C parser, with ``options`` as
    :func:`pandas.read_csv` takes them) or ``"parquet"`` file, read whole through :func:`read_input` (or its
    ``data``, as :func:`load_npy`); whatever pandas or pyarrow refuse is one line naming ``what`` and ``path``.

    >>> import pathlib, tempfile; p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"; _ = p.write_text("r,x\\na,1\\n")
    >>> read_frame(p, "region table", index_col=0).loc["a", "x"]
    np.int64(1)
    >>> read_frame(p, "vectors file", data=b"1 2\\n3", sep=" ", header=None).shape
    (2, 2)
    """
    import pandas as pd

    buffer = io.BytesIO(read_input(path, what, max_bytes=max_bytes) if data is None else data)
    try:
        if kind == "parquet":
            return pd.read_parquet(buffer, **options)
        return pd.read_csv(buffer, **options)
    except ImportError:
        raise MissingExtraError(f"reading {kind} files", kind, "pyarrow") from None
    except Exception as exc:  # noqa: BLE001 -- pandas and pyarrow raise many types for a bad file
        raise EatkitError(f"{what} {path} is not a readable {kind} file ({one_line(exc)})") from None


def read_parquet_columns(path: str | os.PathLike[str], what: str, columns: Sequence[str]) -> dict[str, list[Any]]:
    """The ``columns`` of a parquet file as lists, read by pyarrow alone (without pandas: a second less before a
    first result), after :func:`check_regular`; one line naming the file for what pyarrow refuses.

    >>> import pathlib, tempfile, pyarrow as pa, pyarrow.parquet as pq; p = pathlib.Path(tempfile.mkdtemp()) / "i.parquet"
    >>> pq.write_table(pa.table({"index": ["the", "of"], "n": [1, 2]}), p); read_parquet_columns(p, "index", ["index"])
    {'index': ['the', 'of']}
    """
    target = check_regular(path, what)
    parquet = require("pyarrow.parquet", f"reading the {what}", "parquet")
    try:
        table = parquet.ParquetFile(target).read(columns=list(columns))  # (no pyarrow.dataset: faster)
    except Exception as exc:  # noqa: BLE001 -- pyarrow raises its own error types for a bad file
        raise EatkitError(f"{what} {target} is not a readable parquet file ({one_line(exc)})") from None
    return {name: table.column(name).to_pylist() for name in columns}


def parse_csv(text: str, where: str, *, delimiter: str = ",") -> list[tuple[int, list[str]]]:
    """The non-blank rows of CSV ``text`` (read through :func:`read_text`), each with the number of the line it
    ends on; a malformed file (an unclosed quote at its end, a NUL byte) is one line prefixed ``where``.

    >>> parse_csv('a,b\\n\\n1,"x\\ny"\\n', "t.csv")
    [(1, ['a', 'b']), (4, ['1', 'x\\ny'])]
    >>> parse_csv("a\\tb\\n", "t.tsv", delimiter="\\t")
    [(1, ['a', 'b'])]
    """
    import csv

    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        return [(reader.line_num, row) for row in reader if row]
    except csv.Error as err:
        raise EatkitError(f"{where} is not a readable CSV file: {one_line(err)}") from None
