"""Study presets and declared preprocessing against the authors' own libraries (independent references):
OpenCV (``cv2.imread`` with default flags, ``cv2.resize(..., INTER_AREA)``: the iEAT authors' pipeline) and
transformers' ``CLIPImageProcessor`` (the ML-EAT authors'). OpenCV is used here only, never by eatkit."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from conftest import lazy_module, shared_path
from eatkit.encoders.images import PRESETS, Preprocessing, load_image
from eatkit.encoders.resample import area_resize
from eatkit.errors import EatkitError

cv2 = lazy_module("cv2")

IEAT_SIZES = (32, 224)


def _cv2_square(path: str | Path) -> np.ndarray:
    """The iEAT authors' decode and crop, in OpenCV: ``cv2.imread`` (alpha dropped, BGR) then the top-left
    square, as RGB."""
    image = cv2.imread(str(path))
    side = min(image.shape[:2])
    return np.ascontiguousarray(image[:side, :side, ::-1])


@pytest.mark.parametrize("seed", range(6))
def test_area_resize_is_opencv_inter_area(seed: int) -> None:
    """Reductions by integer and non-integer factors, enlargements, one and three channels, odd shapes."""
    rng = np.random.default_rng(seed)
    for _ in range(25):
        h, w = (int(v) for v in rng.integers(1, 160, 2))
        dw, dh = (int(v) for v in rng.integers(1, 140, 2))
        if rng.random() < 0.3:  # integer factors: OpenCV's "fast area" path
            k = int(rng.integers(2, 6))
            h, w, dh, dw = dh * k, dw * k, dh, dw
        image = rng.integers(0, 256, (h, w, 3) if rng.random() < 0.8 else (h, w), dtype=np.uint8)
        expected = cv2.resize(image, (dw, dh), interpolation=cv2.INTER_AREA)
        np.testing.assert_array_equal(area_resize(image, dw, dh), expected, err_msg=f"{(h, w)} -> {(dh, dw)}")


def test_box_is_not_inter_area() -> None:
    """Pillow's box filter (eatkit's former closest setting) differs from INTER_AREA off integer factors:
    the reason for the numpy resampler."""
    from PIL import Image

    image = np.random.default_rng(1).integers(0, 256, (97, 97, 3), dtype=np.uint8)
    box = np.asarray(Image.fromarray(image).resize((32, 32), Image.Resampling.BOX))
    assert not np.array_equal(box, cv2.resize(image, (32, 32), interpolation=cv2.INTER_AREA))


def test_alpha_policies(tmp_path: Path) -> None:
    """``alpha="drop"`` keeps the colour under a transparent pixel, as cv2.imread does; "white" composites."""
    from PIL import Image

    path = tmp_path / "a.png"
    Image.fromarray(np.array([[[20, 30, 40, 0], [200, 100, 50, 128]]], dtype=np.uint8), "RGBA").save(path)
    dropped = np.asarray(load_image(path, decoder="opencv", alpha="drop"))
    np.testing.assert_array_equal(dropped, cv2.imread(str(path))[:, :, ::-1])
    white = np.asarray(load_image(path))
    assert white[0, 0].tolist() == [255, 255, 255] and dropped[0, 0].tolist() == [20, 30, 40]


def test_overrides_and_the_record() -> None:
    base = Preprocessing(size=224, resize=256, mean=(0.5,) * 3, std=(0.5,) * 3)
    steed = base.override(preprocess="steed2021")
    assert (steed.decoder, steed.alpha, steed.crop, steed.interpolation, steed.resize) == (
        "opencv", "drop", "top-left-square", "area", None)
    assert steed.mean == base.mean and steed.size == 224  # the network's own scaling stays
    record = steed.to_dict()
    assert record["decoder"] == "opencv" and record["alpha"] == "drop" and "alpha dropped" in record["decode"]
    assert "decoder" not in base.to_dict()  # eatkit's defaults are recorded (and cached) as before
    assert base.override(alpha="drop").alpha == "drop"
    assert base.override(preprocess="steed2021", interpolation="box").interpolation == "box"
    with pytest.raises(EatkitError, match="unknown preprocess preset 'nope'"):
        base.override(preprocess="nope")
    with pytest.raises(EatkitError, match="unknown alpha 'grey'"):
        Preprocessing(alpha="grey")


def test_centre_crop_rounding() -> None:
    """The centre crop's offset: torchvision rounds, Hugging Face floors (an odd margin tells them apart)."""
    from PIL import Image

    image = Image.fromarray(np.arange(5 * 3 * 3, dtype=np.uint8).reshape(3, 5, 3))
    left = {r: np.asarray(Preprocessing(size=2, resize=3, crop="resize-shorter+center-crop", rounding=r,
                                        interpolation="nearest").geometry(image)) for r in ("round", "floor")}
    assert not np.array_equal(left["round"], left["floor"])
    np.testing.assert_array_equal(left["floor"], np.asarray(image)[0:2, 1:3])  # (5 - 2) // 2 = 1, (3 - 2) // 2 = 0
    np.testing.assert_array_equal(left["round"], np.asarray(image)[0:2, 2:4])  # round(1.5) = 2, round(0.5) = 0


@pytest.fixture(scope="module")
def ieat_files() -> list[Path]:
    root = shared_path("ieat", "images")
    files = sorted(p for p in root.rglob("*") if p.is_file())
    assert len(files) == 869
    return files


@pytest.mark.slow  # about 40 s alone, two minutes on a loaded 2-core machine
@pytest.mark.shared_data
def test_steed2021_is_the_authors_opencv_pipeline_on_every_ieat_image(ieat_files: list[Path]) -> None:
    """All 869 iEAT images: eatkit's steed2021 decode equals cv2.imread, and its top-left square resized to
    32 and 224 pixels equals cv2.resize(INTER_AREA) (pixel-identical; OpenCV decodes once per image)."""
    presets = {n: Preprocessing(size=n).override(preprocess="steed2021") for n in IEAT_SIZES}
    differing: list[str] = []
    for path in ieat_files:
        reference = _cv2_square(path)
        decoded = presets[32].decode(path)
        side = min(decoded.size)
        if not np.array_equal(np.asarray(decoded)[:side, :side], reference):
            differing.append(f"{path.name} (decode)")
            continue
        for n, preset in presets.items():
            expected = cv2.resize(reference, (n, n), interpolation=cv2.INTER_AREA).transpose(2, 0, 1)
            if not np.array_equal(preset.pixels_of(decoded), expected):
                differing.append(f"{path.name} ({n} px)")
    assert not differing, f"{len(differing)} differ: {differing[:5]}"


def _clip_processor() -> object:
    """transformers' CLIPImageProcessor with Pillow, as the ML-EAT authors ran it (transformers 4; version 5
    defaults to a torchvision backend, whose bicubic resize differs by a grey level), configured as
    openai/clip-vit-base-patch32's (the defaults)."""
    try:
        from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil
    except ImportError:  # transformers 4: the Pillow processor is CLIPImageProcessor itself
        from transformers import CLIPImageProcessor as CLIPImageProcessorPil
    return CLIPImageProcessorPil()


def _clip_worst(paths: list[Path]) -> float:
    """The largest difference between the wolfe2022-clip preset's input and CLIPImageProcessor's (given the
    file opened with Pillow and converted to RGB, as its do_convert_rgb does)."""
    processor, preset = _clip_processor(), Preprocessing().override(preprocess="wolfe2022-clip")
    worst = 0.0
    for path in paths:
        decoded = preset.decode(path)
        expected = processor(images=decoded, return_tensors="np")["pixel_values"][0]
        worst = max(worst, float(np.abs(preset.normalize_pixels(preset.pixels_of(decoded)) - expected).max()))
    return worst


def test_clip_preset_is_clip_image_processor(tmp_path: Path) -> None:
    """Odd margins on both sides (where floor and round part), portrait and landscape, an RGBA file."""
    from PIL import Image

    rng = np.random.default_rng(2)
    paths = []
    for k, (w, h) in enumerate([(301, 250), (250, 333), (225, 224), (500, 411)]):
        path = tmp_path / f"{k}.png"
        Image.fromarray(rng.integers(0, 256, (h, w, 4 if k == 3 else 3), dtype=np.uint8)).save(path)
        paths.append(path)
    assert _clip_worst(paths) < 1e-5  # one grey level is 0.0145 after CLIP's normalisation
    rounded = Preprocessing().override(preprocess="wolfe2022-clip", crop="resize-shorter+center-crop")
    assert rounded.rounding == "floor"


@pytest.mark.slow  # about 60 s alone, three minutes on a loaded 2-core machine
@pytest.mark.shared_data
def test_clip_preset_is_clip_image_processor_on_every_ieat_image(ieat_files: list[Path]) -> None:
    """All 869 iEAT images: the ML-EAT CLIP preset's model input equals CLIPImageProcessor's (floor in the
    centre crop: rounding, eatkit's former default, moves 119 of them by a pixel)."""
    assert _clip_worst(ieat_files) < 1e-5


def test_presets_are_listed(capsys: pytest.CaptureFixture[str]) -> None:
    from eatkit.cli import main

    assert main(["list", "presets"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in PRESETS)
    assert "interpolation=area" in out


def test_run_flags_reach_the_model(tmp_path: Path) -> None:
    """``eatkit run --preprocess --alpha`` build the model's preprocessing (recorded in its configuration)."""
    from eatkit.run.runner import build_source

    source = build_source({"name": "efficientnet_lite0", "preprocess": "steed2021", "alpha": "white",
                           "cache": False}, None)
    record = source.config()["preprocessing"]
    assert (record["interpolation"], record["decoder"], "alpha" in record) == ("area", "opencv", False)
    with pytest.raises(EatkitError, match="does not take the option 'preprocess'"):  # named as given
        build_source({"name": "glove-6b-50d", "preprocess": "steed2021"}, None)


def _effect_size(x: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray, ddof: int) -> float:
    """iEAT eq. 1's effect size written out: s(w) = mean cos(w, A) - mean cos(w, B);
    d = (mean_X s - mean_Y s) / SD(s over X and Y)."""
    def unit(v: np.ndarray) -> np.ndarray:
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def s(w: np.ndarray) -> np.ndarray:
        return (unit(w) @ unit(a).T).mean(1) - (unit(w) @ unit(b).T).mean(1)

    sx, sy = s(x), s(y)
    return float((sx.mean() - sy.mean()) / np.concatenate([sx, sy]).std(ddof=ddof))


@pytest.mark.slow  # two passes of 869 images through EfficientNet-Lite0 on the CPU
@pytest.mark.shared_data
def test_steed2021_run_gives_the_d_of_the_opencv_pipeline(tmp_path: Path) -> None:
    """``eatkit run ieat --model efficientnet_lite0 --preprocess steed2021`` gives, for every test, the d of
    embeddings computed from the OpenCV pipeline (cv2.imread, top-left square, INTER_AREA, then
    EfficientNet-Lite's own scaling, mean = std = 0.5) through the same network."""
    import timm
    import torch

    from eatkit.cli import main
    from eatkit.encoders.image_models import efficientnet_lite_state_dict
    from eatkit.stimuli.images import resolve_image_set
    from eatkit.stimuli.loader import load_suite

    root = shared_path("ieat", "images")
    out = tmp_path / "run"
    assert main(["run", "ieat", "--model", "efficientnet_lite0", "--preprocess", "steed2021", "--images",
                 str(root), "--permutations", "100", "-o", str(out), "-q", "--no-cache"]) == 0
    records = {r["test"]: r for r in json.loads((out / "results.json").read_text())}

    net = timm.create_model("tf_efficientnet_lite0", pretrained=False)
    net.load_state_dict(efficientnet_lite_state_dict(0))
    net.eval()
    vectors: dict[str, np.ndarray] = {}

    def embed(files: tuple[str, ...]) -> np.ndarray:
        todo = [f for f in files if f not in vectors]
        for start in range(0, len(todo), 32):
            batch = [cv2.resize(_cv2_square(f), (224, 224), interpolation=cv2.INTER_AREA) for f in todo[start:start + 32]]
            x = torch.from_numpy((np.stack(batch).astype(np.float32) / 255 - 0.5) / 0.5).permute(0, 3, 1, 2)
            with torch.inference_mode():
                for f, v in zip(todo[start:start + 32], net.forward_head(net.forward_features(x), pre_logits=True)):
                    vectors[f] = v.numpy().astype(np.float64)
        return np.stack([vectors[f] for f in files])

    def distinct(files: tuple[str, ...]) -> tuple[str, ...]:  # byte-identical copies count once (eatkit's rule)
        first: dict[str, str] = {}
        for f in files:
            first.setdefault(hashlib.sha256(Path(f).read_bytes()).hexdigest(), f)
        return tuple(first.values())

    suite = load_suite("ieat")
    assert set(records) == {t.id for t in suite.tests}
    for test in suite.tests:
        sets = {role: embed(distinct(resolve_image_set(s, root).items)) for role, s in test.sets().items()}
        record = records[test.id]
        expected = _effect_size(sets["X"], sets["Y"], sets["A"], sets["B"], ddof=record.get("ddof", 1))
        assert record["effect_size"] == pytest.approx(expected, abs=1e-4), test.id
