"""The one reader's general functions for arrays, images and tables (eatkit.io, issue 45): each refuses a
FIFO (which would block), /dev/zero (read until memory runs out), a folder and a missing file with one line
naming the path, and reads what eatkit and numpy / Pillow write."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from eatkit.errors import EatkitError
from eatkit.io import load_npz, read_config, read_csv, read_image


def _bad_paths(tmp_path: Path) -> list[tuple[Path, str]]:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    return [(tmp_path / "fifo", "is a FIFO (named pipe), not a regular file"),
            (Path("/dev/zero"), "is a character device, not a regular file"),
            (tmp_path / "folder", "is a folder, not a regular file"),
            (tmp_path / "missing", "does not exist")]


@pytest.mark.parametrize("read", [lambda p: load_npz(p, "arrays file"), lambda p: read_image(p, "arrays file"),
                                  lambda p: read_csv(p, "arrays file", ["a"]), lambda p: read_config(p, "arrays file")],
                         ids=["npz", "image", "csv", "config"])
def test_what_is_no_regular_file_is_one_line_naming_it(tmp_path: Path, read) -> None:
    for path, reason in _bad_paths(tmp_path):
        with pytest.raises(EatkitError) as info:
            read(path)  # (a FIFO would block here, /dev/zero never end)
        assert str(info.value) == f"arrays file {path} {reason}"


def test_load_npz_reads_arrays_and_refuses_what_numpy_should_not_load(tmp_path: Path) -> None:
    path = tmp_path / "a.npz"
    np.savez_compressed(path, **{"t1/x": np.arange(4.0), "t1/y": np.ones((2, 3), dtype=np.int32)})
    arrays = load_npz(path, "arrays file")
    assert sorted(arrays) == ["t1/x", "t1/y"] and arrays["t1/x"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert arrays["t1/y"].shape == (2, 3) and arrays["t1/y"].dtype == np.int32

    def error(**kwargs) -> str:
        with pytest.raises(EatkitError) as info:
            load_npz(path, "arrays file", **kwargs)
        return str(info.value)

    prefix = f"arrays file {path} is not a readable .npz archive"
    np.savez(path, x=np.array([{"a": 1}], dtype=object))
    assert error() == f"{prefix} (it holds pickled Python objects, which eatkit never loads; save plain numeric arrays)"
    np.savez_compressed(path, x=np.zeros(1000))  # 8,000 bytes of data, 8,128 with the .npy header; ~60 packed
    assert error(max_bytes=4000).startswith(f"{prefix} (its arrays unpack to 8128 bytes, more than eatkit reads")
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    assert error().startswith(f"{prefix} (")
    path.write_bytes(b"")
    assert error() == f"{prefix} (it does not start as an .npz (zip) file does)"
    with zipfile.ZipFile(path, "w") as archive:  # a zip holding no .npy
        archive.writestr("x.npy", b"garbage")
    assert error() == f"{prefix} (its member 'x' is not a .npy array)"
    assert "\n" not in error()


def test_read_image_decodes_and_refuses_what_is_no_image(tmp_path: Path) -> None:
    path = tmp_path / "a.jpg"
    Image.new("RGB", (400, 300), (200, 10, 10)).save(path)
    image = read_image(path)
    assert (image.size, image.mode, image.getpixel((0, 0))[0] > 190) == ((400, 300), "RGB", True)
    assert read_image(path, draft=(64, 64)).size == (100, 75)  # JPEG decoded at 1/4 scale: both sides >= 64
    Image.new("LA", (2, 2)).save(tmp_path / "b.png")
    assert read_image(tmp_path / "b.png").mode == "LA"  # as stored (conversions are the caller's)
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(EatkitError, match=rf"^cannot read face image {path}: ") as info:
        read_image(path, "face image")
    assert "\n" not in str(info.value)


def test_read_csv_keeps_line_breaks_inside_quoted_fields(tmp_path: Path) -> None:
    """csv.reader over splitlines() dropped them silently ("x\\ny" read as "xy")."""
    path = tmp_path / "t.csv"
    buffer = io.StringIO()
    import csv

    csv.writer(buffer, lineterminator="\n").writerows([["a", "b"], ["x\ny", "2"], ["p\u2028q", "3"]])
    path.write_text(buffer.getvalue(), encoding="utf-8")
    assert read_csv(path, "table", ["a"]) == [{"a": "x\ny", "b": "2"}, {"a": "p\u2028q", "b": "3"}]


def test_read_config_parses_toml_and_yaml_within_the_limits(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text('models = ["m"]\n[x]\ny = 1.5\n')
    (tmp_path / "s.yml").write_text("models: [m]\nx: {y: 1.5}\n")
    assert read_config(tmp_path / "s.toml", "sweep file") == read_config(tmp_path / "s.yml", "sweep file") == {
        "models": ["m"], "x": {"y": 1.5}}
    (tmp_path / "deep.yaml").write_text("a: " + "[" * 80 + "]" * 80 + "\n")
    with pytest.raises(EatkitError, match=r"^sweep file .*deep.yaml: JSON nested deeper than 64 levels$"):
        read_config(tmp_path / "deep.yaml", "sweep file")
    (tmp_path / "bad.yaml").write_text("a: [\n")
    with pytest.raises(EatkitError, match=r"^sweep file .*bad.yaml: not valid YAML: ") as info:
        read_config(tmp_path / "bad.yaml", "sweep file")
    assert "\n" not in str(info.value)
    (tmp_path / "code.yaml").write_text("a: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(EatkitError, match="not valid YAML"):  # safe_load: plain data only, never code
        read_config(tmp_path / "code.yaml", "sweep file")
