"""Files from others never run code or reach outside their folder (eatkit.io), on crafted files."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest

from eatkit.stimuli.images import resolve_image_set
from eatkit.errors import EatkitError
from eatkit.io import inside, load_pickle, load_torch_weights
from eatkit.sources.precomputed import IEATEmbeddings
from eatkit.stimuli.datasets import download_dataset
from eatkit.stimuli.types import StimulusSet


class _Payload:
    """Unpickling this runs ``os.system`` (the classic malicious pickle)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_malicious_pickle_is_refused_without_running_code(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = tmp_path / "vocab.pkl"
    evil.write_bytes(pickle.dumps(["rose", _Payload(marker)]))
    with pytest.raises(EatkitError, match=r"refusing pickle file .*vocab.pkl: it names (posix|os|nt)\.system"):
        load_pickle(evil)
    assert not marker.exists()
    # the same payload unpickled with the standard library does run (the test is not vacuous)
    pickle.loads(evil.read_bytes())
    assert marker.exists()


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_plain_pickles_load(tmp_path: Path, protocol: int) -> None:
    data = {"words": ["rose", "ant", "é"], "counts": (1, 2.5, None, True), "set": {3, 4}, "frozen": frozenset("a"),
            "complex": 1 + 2j, **({"bytes": b"\x00\xff"} if protocol >= 3 else {})}
    path = tmp_path / "plain.pkl"
    path.write_bytes(pickle.dumps(data, protocol=protocol))
    assert load_pickle(path) == data


@pytest.mark.parametrize("payload", [
    pickle.dumps(np.arange(3)),                 # a numpy array names numpy's reconstructor
    b"cbuiltins\neval\n(S'1+1'\ntR.",           # eval by name, protocol 0
    b"not a pickle at all",
    pickle.dumps([1, 2])[:-3],                   # truncated
])
def test_other_pickles_are_refused(tmp_path: Path, payload: bytes) -> None:
    path = tmp_path / "x.pkl"
    path.write_bytes(payload)
    with pytest.raises(EatkitError, match=r"^refusing pickle file .*x\.pkl: "):
        load_pickle(path)


def test_missing_pickle_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(EatkitError, match=r"pickle file .*none\.pkl does not exist"):
        load_pickle(tmp_path / "none.pkl")


def test_torch_checkpoint_with_code_is_refused(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    marker = tmp_path / "pwned"
    evil = tmp_path / "model.pt"
    torch.save({"w": torch.ones(2), "hook": _Payload(marker)}, evil)
    with pytest.raises(EatkitError, match=r"refusing weights file .*model\.pt \(only tensors"):
        load_torch_weights(evil)
    assert not marker.exists()
    good = tmp_path / "good.pt"
    torch.save({"w": torch.arange(3.0)}, good)
    assert load_torch_weights(good)["w"].tolist() == [0.0, 1.0, 2.0]


def test_safetensors_checkpoint_loads(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    save_file = pytest.importorskip("safetensors.torch").save_file
    path = tmp_path / "w.safetensors"
    save_file({"w": torch.full((2, 2), 3.0)}, str(path))
    assert load_torch_weights(path)["w"].sum().item() == 12.0
    (tmp_path / "bad.safetensors").write_bytes(b"garbage")
    with pytest.raises(EatkitError, match=r"refusing weights file .*bad\.safetensors"):
        load_torch_weights(tmp_path / "bad.safetensors")


@pytest.mark.parametrize(("name", "why"), [
    ("../secret", "no '..' component"),
    ("a/../../secret", "no '..' component"),
    ("a\\..\\..\\secret", "no '..' component"),
    ("/etc/passwd", "an absolute path"),
    ("C:\\Windows", "an absolute path"),
    ("", "non-empty relative path"),
])
def test_inside_refuses_names_that_escape(tmp_path: Path, name: str, why: str) -> None:
    with pytest.raises(EatkitError, match=f"must .*{why}"):
        inside(tmp_path, name)


def test_inside_refuses_a_symbolic_link_out_but_not_one_within(tmp_path: Path) -> None:
    outside, root = tmp_path / "outside", tmp_path / "root"
    outside.mkdir()
    (root / "sub").mkdir(parents=True)
    (root / "out").symlink_to(outside)
    (root / "alias").symlink_to(root / "sub")
    with pytest.raises(EatkitError, match=r"'out/x' must stay inside .*a symbolic link leads to .*outside"):
        inside(root, "out/x")
    assert inside(root, "alias/x") == root / "alias" / "x"
    assert inside(root, "sub/./x") == root / "sub" / "x"


def _png(path: Path) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (2, 2)).save(path)


def test_image_category_from_a_suite_cannot_leave_the_image_folder(tmp_path: Path) -> None:
    # the category name (from the suite) cannot climb out; links the user made in the folder are followed
    pytest.importorskip("PIL")
    root = tmp_path / "images"
    _png(root / "t" / "c" / "a.png")
    _png(tmp_path / "private" / "p.png")
    with pytest.raises(EatkitError, match=r"image category of set 'C' '\.\./private' must stay inside"):
        resolve_image_set(StimulusSet("C", "image", category="../private"), root)
    with pytest.raises(EatkitError, match=r"an absolute path"):
        resolve_image_set(StimulusSet("C", "image", category=str(tmp_path / "private")), root)
    (root / "t" / "linked").symlink_to(tmp_path / "private")
    assert [Path(p).name for p in resolve_image_set(StimulusSet("C", "image", category="t/linked"), root).items] == [
        "p.png"]
    assert inside(root, "t/linked/p.png", links_out=True) == root / "t" / "linked" / "p.png"
    with pytest.raises(EatkitError, match="a symbolic link leads to"):
        inside(root, "t/linked/p.png")


def test_ieat_embeddings_file_cannot_be_a_symbolic_link_out(tmp_path: Path) -> None:
    root = tmp_path / "emb"
    root.mkdir()
    (tmp_path / "elsewhere.csv").write_text("0,img\n1.0,a.png\n")
    (root / "age_young_m.csv").symlink_to(tmp_path / "elsewhere.csv")
    source = IEATEmbeddings(root, "m")
    with pytest.raises(EatkitError, match=r"embeddings file 'age_young_m\.csv' must stay inside"):
        source.embed(StimulusSet("Young", "image", category="age/young"))


def test_dataset_manifest_cannot_write_outside_its_folder(tmp_path: Path) -> None:
    src = tmp_path / "mirror"
    src.mkdir()
    (tmp_path / "victim").write_text("keep")
    manifest = {"base_url": src.as_uri(), "files": {"../victim": {"sha256": "0" * 64, "size": 1}}}
    with pytest.raises(EatkitError, match=r"dataset file '\.\./victim' must stay inside"):
        download_dataset("ieat", tmp_path / "dest", manifest=manifest, progress=False)
    assert (tmp_path / "victim").read_text() == "keep"


def test_a_series_file_cannot_name_a_run_folder_outside_it(tmp_path: Path) -> None:
    import json

    from eatkit.report.series import load_series

    series = tmp_path / "series"
    series.mkdir()
    (series / "series.json").write_text(json.dumps({"schema": "eatkit.series/1", "kind": "series", "points": [
        {"label": "a", "folder": "../elsewhere"}, {"label": "b", "folder": "/etc"}]}))
    with pytest.raises(EatkitError, match=r"series.json: point folder '\.\./elsewhere' must stay inside .*no '\.\.'"):
        load_series(series)
