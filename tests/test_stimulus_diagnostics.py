"""Stimulus-set diagnostics: near-duplicate images (dHash), image properties, near-duplicate vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import shared_path
from eatkit.errors import EatkitError
from eatkit.stats.set_diagnostics import vector_set_diagnostics
from eatkit.stimuli.image_diagnostics import (
    NEAR_DUPLICATE_BITS,
    image_set_diagnostics,
    property_imbalance,
    unbalanced,
)


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def test_ieat_near_duplicates_are_the_coffins_and_the_diamonds():
    """Over every iEAT image set, the only near-duplicates are the byte-identical coffins of the valence
    set and one diamond photo saved at two sizes (197 x 255 and 925 x 1196: the same picture), also when the
    threshold is raised from NEAR_DUPLICATE_BITS (12) to 16."""
    assert NEAR_DUPLICATE_BITS == 12
    root = shared_path("ieat", "images")
    found = {}
    for folder in sorted(p for p in root.rglob("*") if p.is_dir()):
        files = _files(folder)
        if len(files) > 1:
            # 16 bits, beyond the default 12: distinct images of one set differ in 17 or more
            pairs = image_set_diagnostics(files, [f.name for f in files], max_distance=16).near_duplicates
            if pairs:
                found[folder.relative_to(root).as_posix()] = pairs
    assert found == {
        "valence/unpleasant": (("coffin1_google.jpg", "coffin4_google.jpg", 0),),
        "valence/pleasant": (("diamond4_google.jpeg", "diamond5_google.jpg", 4),),
    }
    coffins = root / "valence" / "unpleasant"
    assert (coffins / "coffin1_google.jpg").read_bytes() == (coffins / "coffin4_google.jpg").read_bytes()


def test_a_planted_resized_copy_is_found(tmp_path):
    from PIL import Image

    source = shared_path("ieat", "images", "insect-flower", "flower")
    files = _files(source)[:8]
    planted = tmp_path / "copy_of_first.jpg"
    with Image.open(files[0]) as image:
        image.convert("RGB").resize((image.width // 2 + 3, image.height // 2)).save(planted, quality=70)
    d = image_set_diagnostics(files + [planted], [f.name for f in files] + [planted.name])
    assert [(a, b) for a, b, _ in d.near_duplicates] == [(files[0].name, planted.name)]
    assert d.near_duplicates[0][2] <= NEAR_DUPLICATE_BITS


def test_image_properties_and_imbalance(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(0)
    for k in range(4):
        Image.fromarray(rng.integers(0, 100, (20, 30, 3), dtype=np.uint8)).save(tmp_path / f"dark{k}.png")
        Image.fromarray(rng.integers(150, 256, (20, 30 + k, 3), dtype=np.uint8)).save(tmp_path / f"light{k}.png")
    dark = image_set_diagnostics(sorted(tmp_path.glob("dark*")))
    light = image_set_diagnostics(sorted(tmp_path.glob("light*")))
    assert dark.summary()["width"] == {"mean": 30.0, "sd": 0.0}
    assert light.values["width"].tolist() == [30.0, 31.0, 32.0, 33.0]
    expected = [np.asarray(Image.open(p).convert("L"), dtype=float).mean() / 255 for p in sorted(tmp_path.glob("dark*"))]
    np.testing.assert_allclose(dark.values["brightness"], expected, atol=0.01)  # BT.601 luma, as PIL's "L"
    imbalance = property_imbalance(dark, light)
    assert imbalance["brightness"] < -3 and imbalance["height"] == 0.0
    assert "brightness" in unbalanced(imbalance) and "height" not in unbalanced(imbalance)


def test_image_diagnostics_bad_input(tmp_path):
    (tmp_path / "broken.jpg").write_bytes(b"not an image")
    with pytest.raises(EatkitError, match="cannot read image .*broken.jpg"):
        image_set_diagnostics([tmp_path / "broken.jpg"])
    with pytest.raises(EatkitError, match="needs at least one image"):
        image_set_diagnostics([])


def test_vector_set_diagnostics():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6, 30))
    X[4] = X[1] * 3 + 1e-3 * rng.normal(size=30)  # nearly the same direction as X[1]
    Y = rng.normal(size=(5, 30))
    d = vector_set_diagnostics(X=X, Y=Y)
    assert [(i, j) for i, j, _ in d["X"].near_duplicates] == [(1, 4)]
    assert d["Y"].near_duplicates == ()
    unit = X / np.linalg.norm(X, axis=1, keepdims=True)
    pairs = [unit[i] @ unit[j] for i in range(6) for j in range(i + 1, 6)]
    assert d["X"].mean_similarity == pytest.approx(np.mean(pairs), rel=1e-12)
    assert 3 < d["Y"].effective_size <= 5 and not d["Y"].concentrated
    # one stimulus far from the rest carries the set's variation: about one effective stimulus
    Z = np.ones((5, 30)) + 1e-3 * rng.normal(size=(5, 30))
    Z[0] = -Z[0]
    dz = vector_set_diagnostics(Z=Z, Y=Y)
    assert dz["Z"].effective_size < 1.5 and dz["Z"].concentrated
    with pytest.raises(EatkitError, match="set 'X' has zero-norm"):
        vector_set_diagnostics(X=np.zeros((2, 3)))
