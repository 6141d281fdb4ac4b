"""The one reader's general functions (eatkit.io: open_input, open_image, load_npy, load_npz, read_frame,
read_parquet_columns, safetensors_metadata, parse_csv): a FIFO, /dev/zero, a folder and a missing file are each one line naming the path, before anything
opens them (a FIFO would block, /dev/zero never ends); the bytes that parse give what the libraries give."""

from __future__ import annotations

import io
import os
import pickle
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from eatkit.errors import EatkitError
from eatkit.io import (load_npy, load_npz, load_torch_weights, open_image, open_input, parse_csv, read_frame,
                       read_parquet_columns, safetensors_metadata)


def _open_input(path: Path) -> Any:
    with open_input(path, "vectors file") as handle:
        return handle.read()


def _open_image(path: Path) -> Any:
    with open_image(path) as image:
        return image.size


READERS: dict[str, tuple[str, Callable[[Path], Any]]] = {
    "open_input": ("vectors file", _open_input),
    "open_image": ("image", _open_image),
    "load_npy": ("matrix file", lambda p: load_npy(p, "matrix file")),
    "load_npy-mmap": ("matrix file", lambda p: load_npy(p, "matrix file", mmap=True)),
    "load_npz": ("region file", lambda p: load_npz(p, "region file")),
    "read_frame": ("region table", lambda p: read_frame(p, "region table")),
    "read_parquet_columns": ("glove-6b-50d index", lambda p: read_parquet_columns(p, "glove-6b-50d index", ["index"])),
    "safetensors_metadata": ("checkpoint", lambda p: safetensors_metadata(p, "checkpoint")),
    "load_torch_weights": ("checkpoint", lambda p: load_torch_weights(p, what="checkpoint", safetensors=True)),
}
NOT_REGULAR = {
    "fifo": "is a FIFO (named pipe), not a regular file",
    "zero": "is a character device, not a regular file",
    "folder": "is a folder, not a regular file",
    "missing": "does not exist",
}


def _bad_path(tmp_path: Path, case: str) -> Path:
    if case == "zero":
        return Path("/dev/zero")
    path = tmp_path / f"{case}.x"
    if case == "fifo":
        os.mkfifo(path)
    elif case == "folder":
        path.mkdir()
    return path


@pytest.mark.parametrize("case", sorted(NOT_REGULAR))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_what_is_not_a_regular_file_is_one_line_naming_it(tmp_path: Path, reader: str, case: str) -> None:
    what, read = READERS[reader]
    path = _bad_path(tmp_path, case)
    with pytest.raises(EatkitError) as err:
        read(path)  # a FIFO would block here, /dev/zero would fill the memory
    assert str(err.value) == f"{what} {path} {NOT_REGULAR[case]}"


def test_load_npy_reads_what_numpy_saved_and_maps_it(tmp_path: Path) -> None:
    path = tmp_path / "m.npy"
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.save(path, matrix)
    assert np.array_equal(load_npy(path, "matrix file"), matrix)
    mapped = load_npy(path, "matrix file", mmap=True)
    assert isinstance(mapped, np.memmap) and not mapped.flags.writeable and np.array_equal(mapped, matrix)
    assert np.array_equal(load_npy(path, "cache entry", data=path.read_bytes()), matrix)


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def _npy_header(header: bytes) -> bytes:
    """A version-2 .npy file with ``header`` (padded as numpy pads it) and 9 float64 values."""
    header += b" " * (-(12 + len(header) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x02\x00" + struct.pack("<I", len(header)) + header + np.eye(3).tobytes()


@pytest.mark.parametrize("mmap", [False, True])
def test_load_npy_refuses_bad_files_in_one_line(tmp_path: Path, mmap: bool) -> None:
    whole = _npy_bytes(np.zeros((3, 3)))
    tera = _npy_header(b"{'descr': '<f8', 'fortran_order': False, 'shape': (3000000, 1000000), }")
    huge = _npy_header(b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 3), " + b" " * 100_000 + b"}")
    cases = {
        "cut.npy": (whole[:-10], "its header declares a float64 array of shape (3, 3), 72 bytes of data, but the "
                                 "file holds 62"),
        "tera.npy": (tera, "its header declares a float64 array of shape (3000000, 1000000), 24000000000000 bytes"),
        "huge.npy": (huge, "its header has 100"),
        "text.npy": (b"1,2,3\n", "it does not start as a .npy file does"),
        "objects.npy": (_npy_bytes(np.array([{"a": 1}], dtype=object)), "it holds pickled Python objects, which "
                                                                        "eatkit never loads"),
        "empty.npy": (b"", "it does not start as a .npy file does"),
    }
    for name, (data, reason) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(EatkitError) as err:
            load_npy(tmp_path / name, "matrix file", mmap=mmap)
        assert str(err.value).startswith(f"matrix file {tmp_path / name} is not a readable .npy array ({reason}"), name
        assert "\n" not in str(err.value)


def test_load_npz_reads_arrays_and_refuses_garbage_and_pickles(tmp_path: Path) -> None:
    path = tmp_path / "r.npz"
    np.savez(path, features=np.ones((2, 3)), labels=np.array(["person", "car"]))
    arrays = load_npz(path, "region file")
    assert sorted(arrays) == ["features", "labels"] and arrays["labels"].tolist() == ["person", "car"]
    np.savez(path, objects=np.array([None, {"x": 1}], dtype=object))
    with pytest.raises(EatkitError, match=r"^region file .*r\.npz is not a readable \.npz archive \(it holds "
                                          r"pickled Python objects"):
        load_npz(path, "region file")
    path.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(EatkitError, match=r"\(it does not start as an \.npz \(zip\) file does\)$"):
        load_npz(path, "region file")
    path.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    with pytest.raises(EatkitError, match=r"^region file .*r\.npz is not a readable \.npz archive \(.+\)$"):
        load_npz(path, "region file")


def test_load_npy_and_npz_respect_the_size_limit(tmp_path: Path) -> None:
    np.save(tmp_path / "m.npy", np.zeros(100))
    with pytest.raises(EatkitError, match=r"m\.npy has 928 bytes, more than eatkit reads from one \(100\)$"):
        load_npy(tmp_path / "m.npy", "matrix file", max_bytes=100)
    np.savez(tmp_path / "m.npz", a=np.zeros(100))
    with pytest.raises(EatkitError, match=r"more than eatkit reads from one \(100\)$"):
        load_npz(tmp_path / "m.npz", "region file", max_bytes=100)


def test_read_frame_reads_csv_and_parquet_and_names_what_pandas_refuses(tmp_path: Path) -> None:
    import pandas as pd

    path = tmp_path / "t.csv"
    path.write_text("region,a,b\nnorth,1,2.5\nsouth,3,4\n")
    frame = read_frame(path, "region table", index_col=0)
    pd.testing.assert_frame_equal(frame, pd.read_csv(path, index_col=0))
    pytest.importorskip("pyarrow")
    frame.to_parquet(tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(read_frame(tmp_path / "t.parquet", "embeddings file", kind="parquet"), frame)
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(EatkitError, match=r"^embeddings file .*bad\.parquet is not a readable parquet file \(.+\)$"):
        read_frame(tmp_path / "bad.parquet", "embeddings file", kind="parquet")
    (tmp_path / "ragged.csv").write_text('a,b\n1,2\n3,4,5,6\n7,"8\n')
    with pytest.raises(EatkitError, match=r"^region table .*ragged\.csv is not a readable csv file \(.+\)$"):
        read_frame(tmp_path / "ragged.csv", "region table")


def test_parse_csv_numbers_rows_by_line_and_names_a_malformed_file() -> None:
    assert parse_csv('a,b\r\n\r\n"x\ny",2\n', "t.csv") == [(1, ["a", "b"]), (4, ["x\ny", "2"])]
    with pytest.raises(EatkitError, match=r"^t\.csv is not a readable CSV file: field larger than field limit"):
        parse_csv("a\n" + "x" * 200_000 + "\n", "t.csv")


def test_open_image_opens_a_regular_image_lazily(tmp_path: Path) -> None:
    path = tmp_path / "a.png"
    Image.new("RGB", (5, 3), (1, 2, 3)).save(path)
    with open_image(path) as image:
        assert image.size == (5, 3) and image.getpixel((0, 0)) == (1, 2, 3)
    (tmp_path / "dir.jpg").mkdir()
    with pytest.raises(EatkitError, match=r"^image .*dir\.jpg is a folder, not a regular file$"):
        open_image(tmp_path / "dir.jpg")


def test_safetensors_are_read_by_content_not_by_name(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    path = tmp_path / "model.bin"  # a safetensors file under another name: read as safetensors when asked
    save_file({"w": np.arange(3, dtype=np.float32)}, str(path), metadata={"format": "x"})
    assert safetensors_metadata(path) == {"format": "x"}
    assert load_torch_weights(path, what="checkpoint", safetensors=True)["w"].tolist() == [0.0, 1.0, 2.0]
    (tmp_path / "bad.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00not json")
    with pytest.raises(EatkitError, match=r"^checkpoint .*bad\.safetensors is not a safetensors file: .+$"):
        safetensors_metadata(tmp_path / "bad.safetensors")


def test_read_parquet_columns_reads_columns_without_pandas(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"index": ["the", ",", "of"], "n": [1, 2, 3]}), tmp_path / "i.parquet")
    assert read_parquet_columns(tmp_path / "i.parquet", "index", ["index", "n"]) == {"index": ["the", ",", "of"],
                                                                                     "n": [1, 2, 3]}
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 but no parquet")
    with pytest.raises(EatkitError, match=r"^index .*bad\.parquet is not a readable parquet file \(.+\)$"):
        read_parquet_columns(tmp_path / "bad.parquet", "index", ["index"])
