"""Reading files that others made, safely: the one rule every eatkit loader follows.

A file someone sent (a suite, a run folder, a vocabulary pickle, a checkpoint, a config) must never run
code and a file name read from it must never reach outside its folder:

- **pickles** are read by :func:`load_pickle`, whose unpickler admits only plain data (``dict``, ``list``,
  ``tuple``, ``set``, ``frozenset``, ``str``, ``bytes``, ``int``, ``float``, ``complex``, ``bool``,
  ``None``); any other class or function named by the pickle is refused before it is looked up;
- **PyTorch checkpoints** are read by :func:`load_torch_weights`: ``.safetensors`` with safetensors,
  anything else with ``torch.load(weights_only=True)`` (tensors and plain containers only);
- **file names** read from a suite, manifest or config are resolved by :func:`inside`, which refuses an
  absolute path, a ``..`` component, and a path whose symbolic links lead out of the folder.
"""

from __future__ import annotations

import io
import os
import pickle
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from eatkit.errors import EatkitError, one_line

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


def load_pickle(path: str | os.PathLike[str], *, encoding: str = "ASCII") -> Any:
    """The plain data (containers, strings, numbers) held in a pickle file, without running any code.

    ``encoding`` decodes the byte strings of Python 2 pickles (``"latin1"`` or ``"bytes"``, as
    :func:`pickle.load`). A pickle that names any other class or function is refused with an
    :class:`EatkitError` naming the file and the global.

    >>> import tempfile, pathlib; p = pathlib.Path(tempfile.mkdtemp()) / "v.pkl"
    >>> _ = p.write_bytes(pickle.dumps({"words": ["rose", "ant"], "n": 2}))
    >>> load_pickle(p)
    {'words': ['rose', 'ant'], 'n': 2}
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise EatkitError(f"cannot read pickle file {path}: {one_line(err.strerror or err)}") from None
    try:
        return _PlainUnpickler(io.BytesIO(data), encoding=encoding).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, KeyError,
            AttributeError, UnicodeDecodeError, OverflowError, MemoryError) as err:
        raise EatkitError(f"refusing pickle file {path}: {one_line(err)}") from None


def load_torch_weights(path: str | os.PathLike[str]) -> Any:
    """A PyTorch checkpoint's tensors without running code: a ``.safetensors`` file through safetensors,
    any other file through ``torch.load(weights_only=True)`` (tensors, plain containers, numbers).

    A checkpoint holding anything else (a pickled class or function) is an :class:`EatkitError`.

    >>> import tempfile, pathlib, torch; p = pathlib.Path(tempfile.mkdtemp()) / "w.pt"
    >>> torch.save({"w": torch.ones(2)}, p); load_torch_weights(p)["w"].tolist()
    [1.0, 1.0]
    """
    from eatkit.errors import MissingExtraError

    path = Path(path)
    if not path.is_file():
        raise EatkitError(f"weights file {path} does not exist")
    try:
        if path.suffix == ".safetensors":
            try:
                from safetensors.torch import load_file
            except ImportError:
                raise MissingExtraError(f"reading {path.name}", "image", "safetensors") from None
            return load_file(str(path), device="cpu")
        try:
            import torch
        except ImportError:
            raise MissingExtraError(f"reading {path.name}", "image", "torch") from None
        return torch.load(path, map_location="cpu", weights_only=True)
    except EatkitError:
        raise
    except Exception as err:  # noqa: BLE001 -- torch and safetensors raise many types for a bad file
        raise EatkitError(f"refusing weights file {path} (only tensors and plain containers are loaded): "
                          f"{one_line(err)}") from None


def inside(folder: str | os.PathLike[str], name: str, what: str = "file") -> Path:
    """``folder / name`` for a relative ``name`` read from a suite, manifest or config, refusing a name
    that would reach outside ``folder``: an absolute path, a ``..`` component, or a path that leaves the
    folder through a symbolic link. The returned path need not exist.

    >>> inside("/data/ieat", "age/young")
    PosixPath('/data/ieat/age/young')
    >>> inside("/data/ieat", "../etc/passwd", "image category")
    Traceback (most recent call last):
    eatkit.errors.EatkitError: image category '../etc/passwd' must stay inside /data/ieat (no '..' component)
    """
    if not isinstance(name, str) or not name:
        raise EatkitError(f"{what} name {name!r} must be a non-empty relative path")
    base = Path(folder)
    if "\x00" in name:
        raise EatkitError(f"{what} {name!r} must stay inside {base} (contains a NUL byte)")
    if PurePosixPath(name).is_absolute() or PureWindowsPath(name).is_absolute() or PureWindowsPath(name).drive:
        raise EatkitError(f"{what} '{name}' must stay inside {base} (an absolute path)")
    if ".." in PurePosixPath(name.replace("\\", "/")).parts:
        raise EatkitError(f"{what} '{name}' must stay inside {base} (no '..' component)")
    path = base / name
    real_base = base.resolve()
    real = path.resolve()
    if real != real_base and real_base not in real.parents:
        raise EatkitError(f"{what} '{name}' must stay inside {base} (a symbolic link leads to {real})")
    return path
