"""The run folder, written and read in one place: ``results.json``, ``results.csv``, ``similarities.npz``,
``manifest.json`` and the files a kind adds (:meth:`eatkit.analyses.base.Analysis.files`, e.g. a caption
probe's ``captions.csv`` or a generation probe's ``frames/``).

:func:`write_run` writes a folder atomically, :func:`read_run` reads one back (records typed by their
kind), :func:`read_manifest` reads its manifest (for :mod:`eatkit.run.verify`), and :func:`set_fingerprint`
is the one SHA-256 over a stimulus set's items that the manifest records and ``eatkit verify`` checks.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import secrets
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.errors import EatkitError, one_line
from eatkit.io import atomic_write, checked_path, load_npz, os_error, parse_json, read_json, read_text, text_sha256
from eatkit.records import Record, flatten_record, plain_json

#: the files every run writes into its output folder
RUN_FILES: tuple[str, ...] = ("results.json", "results.csv", "similarities.npz", "manifest.json")
#: files made from an earlier run's results (``--report``, :func:`eatkit.report.tables.write_tables`), which
#: a new run into the same folder removes, so that no file describes another run than the folder's
DERIVED_FILES: tuple[str, ...] = ("report.html", "table.md", "table.csv", "table.tex")


def set_fingerprint(items: Sequence[Sequence[str]]) -> str:
    """The SHA-256 of a stimulus set: over its ``[id, sha256]`` items, one ``id<TAB>sha256`` line each.

    >>> set_fingerprint([["a", "x"]]) == text_sha256("a\\tx")
    True
    """
    return text_sha256("\n".join(f"{i}\t{h}" for i, h in items))


def set_entry(name: str, modality: str | None, items: list[list[str]], dropped: Sequence[str] = ()) -> dict[str, Any]:
    """What the manifest records of one set of a test: every stimulus with its SHA-256 and the set's
    fingerprint (:func:`set_fingerprint`)."""
    return {"name": name, "modality": modality, "n": len(items), "sha256": set_fingerprint(items),
            "items": items, "dropped": list(dropped)}


#: the parent of the new output folder of each run not given one (``eatkit run`` without ``-o``)
DEFAULT_OUTPUT = Path("eatkit-results")


def prepare_output(out_dir: str | Path | None, command: str = "run",
                   inputs: Sequence[str | os.PathLike[str] | None] = ()) -> Path:
    """Check, before any work is done, that the results can be written to ``out_dir``: a new folder whose
    nearest existing parent is a writable folder, an empty one, or one that holds an earlier eatkit output
    (:func:`is_eatkit_output`), whose own files only are replaced; a folder holding other files is refused
    (eatkit never writes over, or deletes, a file it did not create). ``None``: a new folder under
    :data:`DEFAULT_OUTPUT` named by the date and time (:func:`new_output_folder`), so that no run replaces
    another. Nothing is created (:func:`write_run` creates the folder with the results in it).
    ``command`` is the command that will own the folder (:func:`output_owner`): a folder another command
    made is refused, and so is a folder holding one of the command's ``inputs`` (:func:`check_not_input`).

    >>> import tempfile; root = Path(tempfile.mkdtemp()); _ = (root / "notes.txt").write_text("mine")
    >>> prepare_output(root)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: output folder ... holds files eatkit did not write (notes.txt): give a new or empty folder
    """
    out = new_output_folder() if out_dir is None else checked_path(out_dir, "output folder")
    if out.exists() and not out.is_dir():
        raise EatkitError(f"output folder {out} exists and is not a folder")
    for name in (*RUN_FILES, *DERIVED_FILES):
        if (out / name).is_dir():
            raise EatkitError(f"cannot write {out / name}: it is a folder")
    check_owner(out, command)
    check_not_input(out, inputs, "output folder")
    if out.is_dir() and not is_eatkit_output(out):
        _check_empty(out)
    _check_writable_parent(out)
    return out


def _check_empty(out: Path) -> None:
    """A folder that is not an eatkit output must be empty (eatkit never writes over another's files)."""
    try:
        names = sorted(p.name for p in out.iterdir())
    except OSError as err:
        raise os_error(err, "read the output folder") from None
    if names:
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        raise EatkitError(f"output folder {out} holds files eatkit did not write ({shown}): give a new or "
                          "empty folder")


def _check_writable_parent(out: Path) -> None:
    """The nearest existing folder of ``out`` (itself, or a parent) is a writable folder."""
    parent = next(p for p in (out, *out.absolute().parents) if p.exists())
    if not parent.is_dir():
        raise EatkitError(f"cannot create output folder {out}: {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        what = "output folder" if parent == out else f"folder {parent}, where the output folder {out} would go,"
        raise EatkitError(f"{what} is not writable")


#: the marker of the command that made an output folder (:func:`claim_output`, :func:`output_owner`)
OWNER_FILE = ".eatkit-output.json"
#: the commands that own output folders, and the files that tell a folder written before the marker existed
OWNERS: dict[str, tuple[str, ...]] = {"sweep": ("cells.csv", "decoding.json", "cells"), "series": ("series.json",),
                                      "debias": ("vectors.txt", "before-after.csv"), "run": ("results.json",)}


def owner_marker(command: str) -> bytes:
    """The bytes of :data:`OWNER_FILE` for a folder made by ``command`` (a key of :data:`OWNERS`).

    >>> json.loads(owner_marker("run"))["command"]
    'run'
    """
    if command not in OWNERS:
        raise ValueError(f"unknown owner command {command!r} (add it to OWNERS)")
    from eatkit._version import __version__

    return (json.dumps({"command": command, "eatkit_version": __version__}) + "\n").encode("utf-8")


def claim_output(out: Path, command: str) -> None:
    """Create ``out`` (checked by :func:`prepare_output`) and mark it as ``command``'s."""
    from eatkit.io import atomic_write_bytes

    try:
        out.mkdir(parents=True, exist_ok=True)
        if output_owner(out) is None or not (out / OWNER_FILE).is_file():
            atomic_write_bytes(out / OWNER_FILE, owner_marker(command))
    except OSError as err:
        raise os_error(err, "create the output folder") from None


@contextlib.contextmanager
def filling(out: Path, command: str) -> Iterator[Path]:
    """:func:`claim_output`, then yield ``out`` to be filled by ``command``; if that fails or is interrupted
    (Ctrl-C) and the folder was new or empty, it is removed whole: no half output, not even its marker.

    >>> import tempfile; out = Path(tempfile.mkdtemp()) / "d"
    >>> try:
    ...     with filling(out, "debias"):
    ...         raise KeyboardInterrupt
    ... except KeyboardInterrupt:
    ...     out.exists()
    False
    """
    fresh = not out.exists() or not any(out.iterdir())
    claim_output(out, command)
    try:
        yield out
    except BaseException:
        if fresh:
            shutil.rmtree(out, ignore_errors=True)
        raise


def output_owner(folder: Path) -> str | None:
    """The command that made ``folder``: its :data:`OWNER_FILE`, else (a folder of an older eatkit) the
    first command of :data:`OWNERS` whose files it holds; None for a new folder or a user's.

    >>> import tempfile; d = Path(tempfile.mkdtemp()); _ = (d / "cells.csv").write_text(""); output_owner(d)
    'sweep'
    """
    try:
        data = read_json(folder / OWNER_FILE, "owner file")
        if isinstance(data, dict) and data.get("command") in OWNERS:
            return str(data["command"])
    except (OSError, ValueError):
        pass
    if not is_eatkit_output(folder) and not (folder / "vectors.txt").is_file():
        return None
    try:
        return next((command for command, names in OWNERS.items() if any((folder / n).exists() for n in names)), None)
    except OSError:
        return None


def check_owner(out: Path, command: str) -> None:
    """Refuse to write ``command``'s output into a folder another command made (a sweep's folder given to
    ``eatkit run -o``, a run folder given to ``eatkit debias -o``...): its files would be mixed or replaced.

    >>> import tempfile; d = Path(tempfile.mkdtemp()); _ = (d / "cells.csv").write_text("")
    >>> check_owner(d, "run")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: output folder ... was made by 'eatkit sweep'; 'eatkit run' does not write into it (give a new folder)
    """
    owner = output_owner(out) if out.is_dir() else None
    if owner is not None and owner != command:
        raise EatkitError(f"output folder {out} was made by 'eatkit {owner}'; 'eatkit {command}' does not write into "
                          "it (give a new folder)")


def check_not_input(out: Path, inputs: Sequence[str | os.PathLike[str] | None], what: str) -> None:
    """Refuse an output path that is one of the command's ``inputs`` or a folder holding one (writing it
    would replace what is being read).

    >>> import tempfile; d = Path(tempfile.mkdtemp()); _ = (d / "v.txt").write_text("a 1 2")
    >>> check_not_input(d, [d / "v.txt"], "output folder")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: output folder ... holds the input .../v.txt: give an output that is not an input
    """
    target = out.absolute().resolve()
    for given in inputs:
        try:
            if given is None or not Path(given).exists():  # (a bundled name such as "weat" is no file)
                continue
            path = Path(given).absolute().resolve()
        except OSError:  # a name no file system holds: its reader says so, by name
            continue
        if path == target or target in path.parents:
            shown = "is" if path == target else "holds"
            raise EatkitError(f"{what} {out} {shown} the input {given}: give an output that is not an input")


def is_eatkit_output(folder: Path) -> bool:
    """Whether ``folder`` holds an earlier eatkit output: a run (a ``manifest.json`` with eatkit's version),
    a series (``series.json`` of an ``eatkit.series`` schema) or a sweep (``cells.csv``, ``decoding.json``, or
    a ``cells`` folder whose cells hold ``cell.json``). Only such a folder's own files are ever replaced.

    >>> import tempfile; is_eatkit_output(Path(tempfile.mkdtemp()))
    False
    """
    if (folder / OWNER_FILE).is_file():
        return True
    if _has_eatkit_json(folder):
        return True
    cells = folder / "cells"
    try:
        if any((folder / name).is_file() for name in ("cells.csv", "decoding.json")):  # (a sweep's own files)
            return True
        return cells.is_dir() and any((c / "cell.json").exists() for c in cells.iterdir())
    except OSError:
        return False


def _has_eatkit_json(folder: Path) -> bool:
    """Whether ``folder`` holds a run's manifest (with eatkit's version) or a series file of eatkit's schema."""
    for name, key in (("manifest.json", "eatkit_version"), ("series.json", "schema")):
        try:
            data = read_json(folder / name, "eatkit file")
        except (OSError, ValueError):  # (an EatkitError too: missing, no regular file, no JSON)
            continue
        if isinstance(data, dict) and key in data and (key != "schema" or str(data[key]).startswith("eatkit.")):
            return True
    return False


def new_output_folder(parent: Path = DEFAULT_OUTPUT) -> Path:
    """A folder under ``parent`` that does not exist yet, named by the local date and time (``-2``, ``-3``...
    appended when that name is taken).

    >>> new_output_folder().parent.name
    'eatkit-results'
    """
    from datetime import datetime

    stamp = datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    folder, n = parent / stamp, 2
    while folder.exists():
        folder, n = parent / f"{stamp}-{n}", n + 1
    return folder


def record_tables(records: Sequence[Record]) -> dict[str, bytes]:
    """``results.csv`` (one row per record, one column per value) and ``tables/*.csv`` (the panels and
    lists of objects, each row naming the ``row`` of its record in ``results.csv``, its kind and test), as
    CSV bytes by file name."""
    tables: dict[str, list[dict[str, Any]]] = {}
    rows = []
    for i, record in enumerate(records, start=1):
        data = record.to_json()
        ident = {"row": i, "kind": data.get("kind"), "test": data.get("test")}
        rows.append(flatten_record(data, tables, ident))
    return {name: _csv(table) for name, table in {"results.csv": rows, **tables}.items() if table}


def records_frame(records: Sequence[Record]) -> Any:
    """The rows of ``results.csv`` as a pandas DataFrame (read back with the same columns and types)."""
    import pandas as pd

    return pd.DataFrame([flatten_record(r.to_json()) for r in records])


def _csv(rows: list[dict[str, Any]]) -> bytes:
    columns = list(dict.fromkeys(key for row in rows for key in row))
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return table.getvalue().encode("utf-8")


def results_json(records: Sequence[Record]) -> str:
    """``results.json``: the records as a JSON list."""
    return json.dumps([r.to_json() for r in records], indent=2, allow_nan=False)


def write_run(out_dir: str | Path, records: Sequence[Record], arrays: Mapping[str, np.ndarray],
              manifest: Mapping[str, Any], extra: Mapping[str, bytes] | None = None, *, command: str = "run") -> Path:
    """Write a run folder: the records, the ``arrays`` (``"<test>/<name>"``), the manifest and ``extra``
    files (relative path -> bytes, e.g. ``"frames/a/x-step0010.png"``).

    The files are written into a temporary folder beside ``out_dir`` first: a new folder is then
    renamed into place whole; into an existing folder each file (each top-level folder of ``extra``) is
    moved atomically, and the files made from an earlier run there (:data:`DERIVED_FILES`, e.g. its
    ``report.html``) are removed. A failure leaves no new folder and no partial file."""
    out = prepare_output(out_dir, command)
    tables = record_tables(records)
    files: dict[str, Callable[[Any], Any]] = {
        "results.json": lambda fh: fh.write((results_json(records) + "\n").encode("utf-8")),
        **{name: (lambda fh, data=data: fh.write(data)) for name, data in tables.items()},
        "similarities.npz": lambda fh: np.savez_compressed(fh, **arrays),
        "manifest.json": lambda fh: fh.write(
            (json.dumps(plain_json(manifest), indent=2, allow_nan=False) + "\n").encode("utf-8")),
    }
    files |= {name: (lambda fh, data=data: fh.write(data)) for name, data in (extra or {}).items()}
    files[OWNER_FILE] = lambda fh: fh.write(owner_marker(command))  # which command made the folder
    staging: Path | None = None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = out.parent / f".{out.name[:32]}.{secrets.token_hex(4)}.partial"
        staging.mkdir()  # (not mkdtemp, whose private mode the renamed folder would keep)
        for name, write in files.items():
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            atomic_write(staging / name, write)
        if not out.exists():
            staging.rename(out)  # the whole folder appears at once
            return out
        _replace_into(out, staging, list(files))
    except OSError as err:
        raise EatkitError(f"cannot write results to {out}: {one_line(err.strerror or err)}") from None
    finally:
        if staging is not None and staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return out


def _replace_into(out: Path, staging: Path, files: list[str]) -> None:
    """Move each staged file (each top-level folder) into the existing ``out`` atomically, and remove the
    files made from an earlier run there (:data:`DERIVED_FILES`, its panels' ``tables``)."""
    for name in dict.fromkeys(Path(name).parts[0] for name in files):
        if (out / name).is_dir() and name not in RUN_FILES:
            shutil.rmtree(out / name)
        os.replace(staging / name, out / name)
    for name in DERIVED_FILES:
        (out / name).unlink(missing_ok=True)
    if not any(name.startswith("tables/") for name in files) and (out / "tables").is_dir():
        shutil.rmtree(out / "tables")  # an earlier run's panels


def _run_json(path: Path, run_dir: Path) -> Any:
    """A JSON file of a run folder, through eatkit's one reader (a regular file, bounded, nesting checked); a
    missing, unreadable or malformed one is a one-line error naming it."""
    if not path.exists():
        raise EatkitError(f"run folder {run_dir} has no {path.name} (is it an eatkit run folder?)")
    return parse_json(read_text(path, "run file"), str(path))


def read_manifest(run_dir: str | Path) -> dict[str, Any]:
    """The ``manifest.json`` of a run folder, a JSON object."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise EatkitError(f"run folder {run_dir} does not exist or is not a folder")
    manifest = _run_json(run_dir / "manifest.json", run_dir)
    if not isinstance(manifest, dict):
        raise EatkitError(f"{run_dir / 'manifest.json'} must be a JSON object")
    return manifest


def read_run(run_dir: str | Path) -> tuple[tuple[Record, ...], dict[str, Any], dict[str, dict[str, np.ndarray]] | None]:
    """The records (typed by kind; eatkit 0.1.0 and 0.2 folders load too), manifest and arrays (``None``
    without ``similarities.npz``) of a run folder."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise EatkitError(f"run folder {run_dir} does not exist or is not a folder")
    records = _run_json(run_dir / "results.json", run_dir)
    manifest = read_manifest(run_dir)
    typed = _typed(records, run_dir)
    npz = run_dir / "similarities.npz"
    return typed, manifest, _read_arrays(npz) if npz.exists() else None


def read_records(run_dir: str | Path) -> tuple[Record, ...]:
    """The records of a run folder's ``results.json``, each checked against its kind's schema (types, required
    fields) and declared ranges (:data:`eatkit.records.FIELD_RANGES`): a hand-edited file is a one-line error
    naming the file and the field. The one reader of records: :func:`read_run`, ``report``, ``verify`` and a
    sweep's tables read records through it."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise EatkitError(f"run folder {run_dir} does not exist or is not a folder")
    return _typed(_run_json(run_dir / "results.json", run_dir), run_dir)


def _typed(records: Any, run_dir: Path) -> tuple[Record, ...]:
    """The records of ``run_dir``'s results.json, read as JSON, typed and checked (:func:`read_records`)."""
    from eatkit.analyses import record_from_json

    where = str(run_dir / "results.json")
    if not isinstance(records, list) or not records:
        raise EatkitError(f"{where} must be a non-empty JSON list of results")
    typed = tuple(record_from_json(record, where) for record in records)
    seen: set[tuple[Any, ...]] = set()
    for r in typed:  # a record's key: kind and test, and what tells apart the records of one test (grounded)
        if r.key() in seen:
            what = ", ".join(map(str, r.key()[2:]))
            raise EatkitError(f"{where} holds test {r.test!r}{f' ({what})' if what else ''} more than once")
        seen.add(r.key())
    return typed


def _read_arrays(path: Path) -> dict[str, dict[str, np.ndarray]]:
    """The arrays of a run's ``similarities.npz`` (eatkit's one reader, :func:`eatkit.io.load_npz`) by test and
    name, as flat float arrays."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for key, array in load_npz(path, "similarities file").items():
        if array.dtype.kind not in "biuf":  # (booleans, integers, floats)
            raise EatkitError(f"{path}: array {key!r} holds {array.dtype} values, not real numbers")
        test, _, name = key.rpartition("/")
        out.setdefault(test, {})[name] = np.asarray(array, dtype=float).ravel()
    return out
