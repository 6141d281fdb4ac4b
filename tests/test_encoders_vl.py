"""Vision-language encoders on tiny models built offline: CLIP (transformers and open_clip) and BLIP.

Each test checks that images and texts land in one space, that the values equal the model's own forward
pass on the same inputs, that prompts are applied, and that images go through the model's preprocessing.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from eatkit.encoders.images import Preprocessing
from eatkit.registry import build_model
from eatkit.encoders.vision_language import hf_image_preprocessing
from eatkit.errors import EatkitError
from eatkit.stimuli.types import StimulusSet
from tiny_vl import TOWER
from tiny_vl import tiny_clip as build_tiny_clip

from conftest import lazy_module
torch = lazy_module("torch")
transformers = lazy_module("transformers")
Image = lazy_module("PIL.Image")

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
FLOWERS = StimulusSet("Flowers", "image", category="t/flowers")
WORDS = StimulusSet("Pleasant", "word", ("rose", "love"))


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory):
    """An iEAT-layout folder: ``t/flowers`` and ``t/insects``, three random images each, of different
    shapes and modes."""
    root = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(0)
    for category in ("flowers", "insects"):
        folder = root / "t" / category
        folder.mkdir(parents=True)
        for name, (w, h), mode in (("a.png", (40, 56), "RGB"), ("b.png", (64, 36), "RGBA"),
                                   ("c.jpg", (33, 33), "RGB")):
            pixels = rng.integers(0, 256, size=(h, w, len(mode)), dtype=np.uint8)
            Image.fromarray(pixels, mode).save(folder / name)
    return root


def pixels(preprocessing: Preprocessing, root, names=("a.png", "b.png", "c.jpg")):
    return torch.from_numpy(np.stack([preprocessing.array(root / "t" / "flowers" / n) for n in names]))


# -- CLIP through transformers -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_tiny_clip(tmp_path_factory.mktemp("tiny-clip"), max_positions=40, shortest_edge=36)


def test_hf_clip_preprocessing_is_the_models_own(tiny_clip):
    assert hf_image_preprocessing(tiny_clip) == Preprocessing(
        size=32, crop="resize-shorter+center-crop", resize=36, interpolation="bicubic", mean=CLIP_MEAN, std=CLIP_STD,
        jpeg_draft=False)


def test_hf_clip_embeds_images_and_words_into_one_space(tiny_clip, images):
    enc = build_model(f"hf-clip:{tiny_clip}", prompt="a photo of {x}", images=images, cache=False)
    img = enc.embed(FLOWERS)
    txt = enc.embed(WORDS)
    assert img.ids == ("t/flowers/a.png", "t/flowers/b.png", "t/flowers/c.jpg")
    assert img.vectors.shape == (3, 16) and txt.vectors.shape == (2, 16)
    # the model's own forward pass (CLIPModel.forward: image_embeds, text_embeds) on the same inputs
    model = transformers.CLIPModel.from_pretrained(tiny_clip).eval()
    tokenizer = transformers.CLIPTokenizer.from_pretrained(tiny_clip)
    tokens = tokenizer(["a photo of rose", "a photo of love", "a photo of love"], padding=True, return_tensors="pt")
    with torch.no_grad():
        out = model(**tokens, pixel_values=pixels(enc.preprocessing, images))
    np.testing.assert_allclose(img.vectors, out.image_embeds.numpy(), atol=1e-6)
    np.testing.assert_allclose(txt.vectors, out.text_embeds[:2].numpy(), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(img.vectors, axis=1), 1.0, atol=1e-6)


def test_hf_clip_prompt_is_applied_to_words_only_and_recorded(tiny_clip):
    enc = build_model(f"hf-clip:{tiny_clip}", prompt="a picture that brings to mind {x}", cache=False)
    word = enc.embed(StimulusSet("W", "word", ("rose",))).vectors
    sentence = enc.embed(StimulusSet("S", "sentence", ("a picture that brings to mind rose",))).vectors
    bare = enc.embed(StimulusSet("S", "sentence", ("rose",))).vectors
    np.testing.assert_allclose(word, sentence, atol=1e-6)
    assert np.abs(word - bare).max() > 1e-3
    config = enc.config()
    assert config["prompt"] == "a picture that brings to mind {x}"
    assert config["preprocessing"]["resize"] == 36 and config["preprocessing"]["size"] == 32
    assert config["weights"].startswith("config.json:")


def test_hf_clip_matches_the_transformers_image_processor(tiny_clip, images):
    ours = pixels(hf_image_preprocessing(tiny_clip), images, ("a.png",)).numpy()
    image = Image.open(images / "t" / "flowers" / "a.png")
    # transformers' Pillow backend is the same computation; its default torchvision backend resizes
    # tensors and differs by a few grey levels on some pixels
    pil = getattr(transformers, "CLIPImageProcessorPil", transformers.CLIPImageProcessor).from_pretrained(tiny_clip)
    np.testing.assert_allclose(ours, pil(image, return_tensors="np")["pixel_values"], atol=1e-6)
    default = transformers.CLIPImageProcessor.from_pretrained(tiny_clip)(image, return_tensors="np")["pixel_values"]
    assert ours.shape == default.shape == (1, 3, 32, 32)
    assert np.abs(ours - default).max() < 0.02 and np.abs(ours - default).mean() < 1e-3


# -- BLIP through transformers -----------------------------------------------------------------------

BLIP_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "photo", "of", "rose", "love", "picture"]


@pytest.fixture(scope="module")
def tiny_blip(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("tiny-blip")
    torch.manual_seed(0)
    config = transformers.BlipConfig(
        text_config={**TOWER, "vocab_size": len(BLIP_VOCAB), "max_position_embeddings": 40,
                     "encoder_hidden_size": 32},
        vision_config={**TOWER, "image_size": 32, "patch_size": 8},
        image_text_hidden_size=16)
    transformers.BlipForImageTextRetrieval(config).save_pretrained(folder)
    transformers.BertTokenizerFast(vocab={w: i for i, w in enumerate(BLIP_VOCAB)}).save_pretrained(folder)
    transformers.BlipImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    return str(folder)


def test_blip_itc_embeddings_equal_the_models_retrieval_scores(tiny_blip, images):
    enc = build_model(f"hf-blip:{tiny_blip}", prompt="a photo of {x}", images=images, cache=False)
    assert enc.preprocessing == Preprocessing(size=32, crop="stretch", interpolation="bicubic",
                                              mean=CLIP_MEAN, std=CLIP_STD, jpeg_draft=False)
    processor = getattr(transformers, "BlipImageProcessorPil", transformers.BlipImageProcessor)
    theirs = processor.from_pretrained(tiny_blip)(Image.open(images / "t" / "flowers" / "a.png"), return_tensors="np")
    np.testing.assert_allclose(pixels(enc.preprocessing, images, ("a.png",)), theirs["pixel_values"], atol=1e-6)
    img, txt = enc.embed(FLOWERS).vectors, enc.embed(WORDS).vectors
    assert img.shape == (3, 16) and txt.shape == (2, 16)
    model = transformers.BlipForImageTextRetrieval.from_pretrained(tiny_blip).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(tiny_blip)
    tokens = tokenizer(["a photo of rose", "a photo of love"], padding=True, return_tensors="pt")
    with torch.no_grad():
        out = model(**tokens, pixel_values=pixels(enc.preprocessing, images), use_itm_head=False)
    # the ITC path's score is normalize(vision_proj(image CLS)) @ normalize(text_proj(text CLS)).T
    np.testing.assert_allclose(img @ txt.T, out.itm_score.numpy(), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(txt, axis=1), 1.0, atol=1e-6)


def test_hf_families_refuse_each_others_models(tiny_blip, tiny_clip):
    with pytest.raises(EatkitError) as err:
        build_model(f"hf-clip:{tiny_blip}", cache=False).embed(WORDS)
    assert str(err.value) == (f"cannot load the model 'hf-clip:{tiny_blip}': its config.json says model_type 'blip', "
                              "not 'clip'")
    with pytest.raises(EatkitError) as err:
        build_model(f"hf:{tiny_clip}", cache=False).embed(WORDS)
    assert str(err.value) == (f"cannot load the text model 'hf:{tiny_clip}': its config.json says model_type 'clip': "
                              f"use hf-clip:{tiny_clip}")


def test_library_versions_are_recorded(tiny_clip, open_clip_weights):
    import importlib.metadata

    hf = build_model(f"hf-clip:{tiny_clip}").manifest()["libraries"]
    assert hf == {name: importlib.metadata.version(name) for name in ("torch", "transformers", "pillow")}
    oc = build_model(f"open_clip:eatkit-tiny-vit/{open_clip_weights}").cache_config()["libraries"]
    assert oc == {name: importlib.metadata.version(name) for name in ("torch", "open_clip_torch", "pillow")}


def test_unsupported_preprocessor_config_is_a_one_line_error(tmp_path):
    (tmp_path / "preprocessor_config.json").write_text(json.dumps(
        {"do_center_crop": True, "size": {"height": 32, "width": 40}, "crop_size": {"height": 32, "width": 32}}))
    with pytest.raises(EatkitError) as err:
        hf_image_preprocessing(str(tmp_path))
    assert str(err.value) == (f"the image preprocessing of model '{tmp_path}' (size {{'height': 32, 'width': 40}}, "
                              "crop {'height': 32, 'width': 32}) is not supported")
    (tmp_path / "preprocessor_config.json").unlink()
    with pytest.raises(EatkitError, match=r"has no preprocessor_config\.json \(not an image-text model\?\)$"):
        hf_image_preprocessing(str(tmp_path))


# -- CLIP through open_clip --------------------------------------------------------------------------

TINY_OPEN_CLIP = {"embed_dim": 16,
                  "vision_cfg": {"image_size": 32, "layers": 2, "width": 32, "patch_size": 8, "head_width": 16},
                  "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 2}}


@pytest.fixture(scope="module")
def open_clip_weights(tmp_path_factory: pytest.TempPathFactory):
    """A tiny open_clip architecture ``eatkit-tiny-vit`` (registered from a config file) and a weights file."""
    open_clip = pytest.importorskip("open_clip")
    folder = tmp_path_factory.mktemp("tiny-open-clip")
    (folder / "eatkit-tiny-vit.json").write_text(json.dumps(TINY_OPEN_CLIP))
    open_clip.add_model_config(folder / "eatkit-tiny-vit.json")
    torch.manual_seed(0)
    model = open_clip.create_model("eatkit-tiny-vit")
    torch.save(model.state_dict(), folder / "weights.pt")
    return folder / "weights.pt"


def test_open_clip_embeds_images_and_words_into_one_space(open_clip_weights, images):
    import open_clip

    enc = build_model(f"open_clip:eatkit-tiny-vit/{open_clip_weights}", prompt="a photo of {x}", images=images,
                      cache=False)
    img, txt = enc.embed(FLOWERS).vectors, enc.embed(WORDS).vectors
    assert img.shape == (3, 16) and txt.shape == (2, 16)
    model, _, preprocess = open_clip.create_model_and_transforms("eatkit-tiny-vit", pretrained=str(open_clip_weights))
    model.eval()
    tokens = open_clip.get_tokenizer("eatkit-tiny-vit")(["a photo of rose", "a photo of love"])
    names = ("a.png", "c.jpg")  # b.png has an alpha channel: eatkit composites it onto white (recorded),
    # open_clip's transform drops it, so only the RGB images are comparable end to end
    theirs = torch.stack([preprocess(Image.open(images / "t" / "flowers" / n)) for n in names])
    with torch.no_grad():
        image_features, text_features, _ = model(theirs, tokens)  # open_clip's own transform and forward
    np.testing.assert_allclose(txt, text_features.numpy(), atol=1e-6)
    np.testing.assert_allclose(img[[0, 2]], image_features.numpy(), atol=1e-5)
    np.testing.assert_allclose(pixels(enc.preprocessing, images, names).numpy(), theirs.numpy(), atol=1e-5)


def test_large_jpegs_are_decoded_in_full_as_open_clip_does(open_clip_weights, tmp_path):
    import open_clip

    path = tmp_path / "large.jpg"
    Image.fromarray(np.random.default_rng(1).integers(0, 256, (480, 640, 3), dtype=np.uint8)).save(path)
    enc = build_model(f"open_clip:eatkit-tiny-vit/{open_clip_weights}")
    _, _, preprocess = open_clip.create_model_and_transforms("eatkit-tiny-vit", pretrained=str(open_clip_weights))
    theirs = preprocess(Image.open(path)).numpy()
    np.testing.assert_allclose(enc.preprocessing.array(path), theirs, atol=1e-5)
    assert enc.config()["preprocessing"]["jpeg_draft"] is False


def test_open_clip_config_records_weights_and_preprocessing(open_clip_weights):
    from eatkit.io import file_sha256

    enc = build_model(f"open_clip:eatkit-tiny-vit/{open_clip_weights}")
    config = enc.config()
    assert enc.id == f"open_clip:eatkit-tiny-vit/{open_clip_weights}"
    assert config["model"] == "eatkit-tiny-vit"
    assert config["weights"] == f"weights.pt:{file_sha256(open_clip_weights)}"
    assert config["preprocessing"]["size"] == 32 and config["preprocessing"]["crop"] == "resize-shorter+center-crop"
    assert config["prompt"] is None


def test_open_clip_pretrained_tags_resolve_their_preprocessing_without_downloading():
    pytest.importorskip("open_clip")
    openai = build_model("open_clip:ViT-B-32/openai")
    assert openai.preprocessing == Preprocessing(size=224, crop="resize-shorter+center-crop", resize=224,
                                                 interpolation="bicubic", mean=CLIP_MEAN, std=CLIP_STD,
                                                 jpeg_draft=False)
    assert openai.config()["weights"].startswith("ViT-B-32/openai ")
    siglip = build_model("open_clip:ViT-B-16-SigLIP/webli")
    assert siglip.preprocessing == Preprocessing(size=224, crop="stretch", interpolation="bicubic",
                                                 mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5), jpeg_draft=False)


def test_open_clip_uses_quick_gelu_where_the_weights_were_trained_with_it(monkeypatch):
    open_clip = pytest.importorskip("open_clip")
    calls = []

    def offline(*args, **kwargs):
        calls.append((args, kwargs))
        raise RuntimeError("Failed to download weights for tag 'openai'")

    monkeypatch.setattr(open_clip, "create_model", offline)
    enc = build_model("open_clip:ViT-B-32/openai", cache=False)
    assert enc.config()["quick_gelu"] is True  # OpenAI's CLIP was trained with QuickGELU
    with pytest.raises(EatkitError) as err:
        enc.embed(WORDS)
    assert str(err.value) == ("cannot load the model 'open_clip:ViT-B-32/openai': "
                              "it is not in the local cache and the Hugging Face hub cannot be reached (HF_HUB_OFFLINE=1 or no network)")
    assert calls == [(("ViT-B-32",), {"pretrained": "openai", "force_quick_gelu": True, "weights_only": True})]
    assert build_model("open_clip:ViT-B-32/laion2b_s34b_b79k").config()["quick_gelu"] is False


def test_open_clip_bad_names_are_one_line_errors(open_clip_weights):
    with pytest.raises(EatkitError) as err:
        build_model("open_clip:eatkit-tiny-vit/nope")
    assert str(err.value) == ("open_clip model 'open_clip:eatkit-tiny-vit/nope' needs <architecture>/<pretrained "
                              "tag or weights file> (tags of eatkit-tiny-vit: none)")
    with pytest.raises(EatkitError) as err:
        build_model("open_clip:No-Such-Arch/openai")
    assert str(err.value) == "unknown open_clip architecture 'No-Such-Arch' (see open_clip.list_models())"


def test_open_clip_embeddings_are_deterministic_and_cached(open_clip_weights, images, tmp_path):
    name = f"open_clip:eatkit-tiny-vit/{open_clip_weights}"
    first = build_model(name, images=images, cache_dir=tmp_path).embed(FLOWERS).vectors
    again = build_model(name, images=images, cache=False).embed(FLOWERS).vectors
    np.testing.assert_array_equal(first, again)
    cached = build_model(name, images=images, cache_dir=tmp_path)
    np.testing.assert_array_equal(cached.embed(FLOWERS).vectors, first)
    assert cached.stats == {"hits": 3, "misses": 0, "batches": 0}


def test_mixed_modality_test_images_against_prompted_words(open_clip_weights, images):
    from eatkit.run.runner import RunOptions, run_suite
    from eatkit.stimuli.types import AssociationTest, Suite

    insects = StimulusSet("Insects", "image", category="t/insects")
    unpleasant = StimulusSet("Unpleasant", "word", ("filth", "agony"))
    suite = Suite("mixed", "mixed", (AssociationTest("flowers-insects", "", "eat", (("X", FLOWERS), ("Y", insects), ("A", WORDS), ("B", unpleasant))),))
    enc = build_model(f"open_clip:eatkit-tiny-vit/{open_clip_weights}", prompt="a picture that brings to mind {x}",
                      images=images, cache=False)
    result = run_suite(suite, enc, options=RunOptions(permutations="exact", n_bootstrap=0, seed=0))
    x, a = enc.embed(FLOWERS).vectors, enc.embed(WORDS).vectors  # images and words in one space
    cosines = (x / np.linalg.norm(x, axis=1, keepdims=True)) @ (a / np.linalg.norm(a, axis=1, keepdims=True)).T
    np.testing.assert_allclose(result.records[0].level3["xa"]["mean"], cosines.mean(), atol=1e-12)
    assert result.manifest["source"]["prompt"] == "a picture that brings to mind {x}"


def test_vl_models_reject_text_options(tiny_clip):
    with pytest.raises(EatkitError, match="does not take the option 'layer'"):
        build_model(f"hf-clip:{tiny_clip}", layer=3)
    with pytest.raises(EatkitError, match=r"^prompt 'a photo' must contain the placeholder \{x\} exactly once$"):
        build_model(f"hf-clip:{tiny_clip}", prompt="a photo")


def test_missing_open_clip_is_a_one_line_error_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "open_clip", None)  # makes `import open_clip` fail
    with pytest.raises(EatkitError) as err:
        build_model("open_clip:ViT-B-32/openai")
    assert str(err.value) == ("the model 'open_clip:ViT-B-32/openai' needs the optional dependency 'open_clip': "
                              "install it with pip install 'eatkit[vl]'")


# -- single-category tests from a suite: a one-sentence target against two image groups ---------------

SC_SUITE = {
    "schema": "eatkit.suite/1", "id": "sc", "title": "SC-EAT on images",
    "tests": [{"id": "patriotic", "title": "A patriot: flowers vs. insects", "kind": "sc-eat",
               "T": {"name": "Patriot", "modality": "sentence", "items": ["a photo of someone who is patriotic"]},
               "A": {"name": "Flowers", "modality": "image", "category": "t/flowers"},
               "B": {"name": "Insects", "modality": "image", "category": "t/insects"}}],
}


@pytest.mark.parametrize("ddof", [0, 1])
def test_sc_eat_suite_with_a_one_sentence_target_runs_from_the_cli_and_matches_scipy(
        open_clip_weights, images, tmp_path, capsys, ddof):
    from scipy import stats

    from eatkit.cli import main

    extra = images / "t" / "insects" / "e.png"  # unequal groups: 3 flowers, 4 insects
    Image.fromarray(np.random.default_rng(1).integers(0, 256, (20, 30, 3), dtype=np.uint8)).save(extra)
    try:
        suite = tmp_path / "sc.json"
        suite.write_text(json.dumps(SC_SUITE))
        model = f"open_clip:eatkit-tiny-vit/{open_clip_weights}"
        code = main(["run", str(suite), "--model", model, "--images", str(images), "--ddof", str(ddof),
                     "--sd", "pooled", "--p-method", "welch", "--no-cache", "--seed", "0", "-o", str(tmp_path / "out"),
                     "--quiet"])
        assert code == 0, capsys.readouterr().err
        (record,) = json.loads((tmp_path / "out" / "results.json").read_text())
        enc = build_model(model, images=images, cache=False)
        t = enc.embed(StimulusSet("T", "sentence", ("a photo of someone who is patriotic",))).vectors[0]
        u = [enc.embed(StimulusSet(n, "image", category=f"t/{n}")).vectors for n in ("flowers", "insects")]
        ua, ub = ((v @ t) / (np.linalg.norm(v, axis=1) * np.linalg.norm(t)) for v in u)
        pooled = np.sqrt(((ua.size - 1) * ua.var(ddof=ddof) + (ub.size - 1) * ub.var(ddof=ddof))
                         / (ua.size + ub.size - 2))  # "American == White" eq. 4, group SDs with ddof
        assert (record["kind"], record["n_t"], record["n_a"], record["n_b"]) == ("sc-eat", 1, 3, 4)
        assert (record["sd"], record["ddof"], record["p_method"]) == ("pooled", ddof, "welch")
        assert record["effect_size"] == pytest.approx((ua.mean() - ub.mean()) / pooled, rel=1e-9)
        welch = stats.ttest_ind_from_stats(ua.mean(), ua.std(ddof=ddof), ua.size, ub.mean(), ub.std(ddof=ddof),
                                           ub.size, equal_var=False, alternative="greater")
        assert record["p_value"] == pytest.approx(welch.pvalue, rel=1e-9)
        if ddof == 1:  # the sample-SD Welch test is scipy's ttest_ind
            assert record["p_value"] == pytest.approx(
                stats.ttest_ind(ua, ub, equal_var=False, alternative="greater").pvalue, rel=1e-9)
    finally:
        extra.unlink()


def test_openai_weights_from_a_file_run_quick_gelu(open_clip_weights, images, monkeypatch):
    """A weights file whose SHA-256 is the one in OpenAI's download address (open_clip's "openai" tag) was
    trained with QuickGELU: open_clip-image: and open_clip: build the model with it (open_clip would only
    warn), as open_clip's own "openai" loading does; quick_gelu= says it for any other file."""
    import hashlib

    import open_clip

    digest = hashlib.sha256(open_clip_weights.read_bytes()).hexdigest()
    real = open_clip.get_pretrained_cfg
    monkeypatch.setattr(open_clip, "get_pretrained_cfg", lambda arch, tag: (
        {"url": f"https://openaipublic.azureedge.net/clip/models/{digest}/x.pt", "quick_gelu": True}
        if (arch, tag) == ("eatkit-tiny-vit", "openai") else real(arch, tag)))
    tower = build_model(f"open_clip-image:eatkit-tiny-vit/{open_clip_weights}", images=images, cache=False)
    assert tower.config()["quick_gelu"] is True
    ours = tower.embed(FLOWERS).vectors
    model = open_clip.create_model("eatkit-tiny-vit", pretrained=str(open_clip_weights), force_quick_gelu=True)
    gelu = open_clip.create_model("eatkit-tiny-vit", pretrained=str(open_clip_weights))
    x = pixels(tower.preprocessing, images, ("a.png", "b.png", "c.jpg"))
    with torch.no_grad():
        np.testing.assert_allclose(ours, model.eval().visual(x).numpy(), atol=1e-5)
        assert np.abs(ours - gelu.eval().visual(x).numpy()).max() > 1e-4
    assert build_model(f"open_clip:eatkit-tiny-vit/{open_clip_weights}", quick_gelu=False).quick_gelu is False
