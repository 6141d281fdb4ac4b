"""Joint (grounded) encoders on tiny models built offline from configs: ViLT, BLIP-ITM, VisualBERT, LXMERT.

Every family is run end to end for the three embedding kinds (word and sentence: [CLS] of a one-word or
a full caption; contextual: the contextual word's first sub-token) and both masks, and checked against
the model's own forward pass on the same inputs.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from eatkit.registry import build_model
from eatkit.encoders.regions import FasterRCNNRegions, load_regions
from eatkit.errors import EatkitError
from eatkit.stimuli.captioned import CaptionedImages

from conftest import lazy_module
torch = lazy_module("torch")
transformers = lazy_module("transformers")
Image = lazy_module("PIL.Image")

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "this", "is", "a", "man", "woman", "lawyer", "teacher",
         "here", ".", "john", "amy", "law", "##yer"]
TOWER = {"hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2, "num_attention_heads": 2}
WORDS = ("lawyer", "teacher", "John", "Amy")
PAIRS = CaptionedImages("Lawyers", "image-caption", items=("This is a lawyer.", "Lawyer", "A lawyer is here."),
                        images=("m1.png", "m1.png", "w1.jpg"), contextual_words=WORDS)


def sentences(**changes):
    return dataclasses.replace(PAIRS, **changes)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """An image folder (one image in a subfolder) and a region folder: 3 regions per image, 12-d
    features; m1 and w1 have a person box, nobody.png has none."""
    root = tmp_path_factory.mktemp("grounded")
    images, regions = root / "images", root / "regions"
    (images / "sub").mkdir(parents=True)
    regions.mkdir()
    rng = np.random.default_rng(0)
    for name, (w, h), labels in (("m1.png", (64, 48), ["person", "dog", "tie"]),
                                 ("sub/w1.jpg", (40, 56), ["chair", "person", "person"]),
                                 ("nobody.png", (32, 32), ["dog", "cat", "cat"])):
        coarse = rng.integers(0, 256, size=(4, 4, 3), dtype=np.uint8)  # blocks: structure survives resizing
        Image.fromarray(coarse).resize((w, h), Image.NEAREST).save(images / name)
        boxes = [[0, 0, w / 2, h / 2], [w / 4, h / 4, w, h], [1, 1, 9, 9]]
        np.savez(regions / (name.split("/")[-1].rsplit(".", 1)[0] + ".npz"), features=rng.normal(size=(3, 12)),
                 boxes=np.array(boxes), labels=np.array(labels), image_size=np.array([h, w]))
    return images, regions


def _tokenizer(folder):
    transformers.BertTokenizerFast(vocab={w: i for i, w in enumerate(VOCAB)}).save_pretrained(folder)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Tiny models of the four families, saved as local model folders."""
    torch.manual_seed(0)
    folders = {}
    common = {**TOWER, "vocab_size": len(VOCAB), "max_position_embeddings": 40}
    folder = folders["hf-vilt"] = tmp_path_factory.mktemp("vilt")
    transformers.ViltModel(transformers.ViltConfig(**common, image_size=32, patch_size=16, max_image_length=-1)
                           ).save_pretrained(folder)
    transformers.ViltImageProcessor(size={"shortest_edge": 32}, size_divisor=16).save_pretrained(folder)
    folder = folders["hf-blip-itm"] = tmp_path_factory.mktemp("blip")
    transformers.BlipForImageTextRetrieval(transformers.BlipConfig(
        text_config={**common, "encoder_hidden_size": 32},
        # BLIP's vision tower is initialised with std 1e-10 by default: every image would look alike
        vision_config={**TOWER, "image_size": 32, "patch_size": 8, "initializer_range": 0.02},
        image_text_hidden_size=16)).save_pretrained(folder)
    transformers.BlipImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    folder = folders["hf-visualbert"] = tmp_path_factory.mktemp("visualbert")
    transformers.VisualBertModel(transformers.VisualBertConfig(**common, visual_embedding_dim=12)
                                 ).save_pretrained(folder)
    folder = folders["hf-lxmert"] = tmp_path_factory.mktemp("lxmert")
    transformers.LxmertModel(transformers.LxmertConfig(
        vocab_size=len(VOCAB), hidden_size=32, num_attention_heads=2, intermediate_size=37, l_layers=1,
        x_layers=1, r_layers=1, visual_feat_dim=12, num_qa_labels=2, num_object_labels=3, num_attr_labels=3,
        max_position_embeddings=40)).save_pretrained(folder)
    for folder in folders.values():
        _tokenizer(folder)
    return {family: str(folder) for family, folder in folders.items()}


def encoder(tiny, data, family, **options):
    images, regions = data
    return build_model(f"{family}:{tiny[family]}", images=images, regions=regions, cache=False, **options)


# -- every family, every embedding kind and mask --------------------------------------------------------

REFUSED = {("hf-blip-itm", "language"), ("hf-blip-itm", "vision"), ("hf-visualbert", "vision")}


@pytest.mark.parametrize("family", ["hf-vilt", "hf-blip-itm", "hf-visualbert", "hf-lxmert"])
def test_every_family_embeds_every_kind_and_mask(tiny, data, family):
    enc = encoder(tiny, data, family)
    vectors = {}
    for embedding in ("cls", "contextual"):
        for mask in (None, "language", "vision"):
            stimuli = sentences(embedding=embedding, mask=mask)
            if (family, mask) in REFUSED:
                with pytest.raises(EatkitError, match=rf"^model '{family}:.*' cannot take --mask {mask}: "):
                    enc.embed(stimuli)
                continue
            out = enc.embed(stimuli)
            assert out.vectors.shape == (3, 32) and np.isfinite(out.vectors).all()
            assert out.ids == ("m1.png|This is a lawyer.", "m1.png|Lawyer", "w1.jpg|A lawyer is here.")
            vectors[embedding, mask] = out.vectors
    # the kinds and masks read different states; one-word captions ("Lawyer") are the seed's word embeddings
    def differ(a, b):  # per stimulus
        return np.linalg.norm(vectors[a] - vectors[b], axis=1)

    assert differ(("cls", None), ("contextual", None)).min() > 1e-3
    if (family, "language") not in REFUSED:
        assert differ(("cls", None), ("cls", "language")).min() > 1e-3
    if (family, "vision") not in REFUSED:  # every image has a person box
        assert differ(("cls", None), ("cls", "vision")).min() > 1e-3
    # the same input twice gives the same vector, to the digit (ViLT's random patch order is seeded)
    np.testing.assert_array_equal(enc.embed(sentences()).vectors, vectors["cls", None])


def test_vilt_equals_the_models_forward_pass(tiny, data):
    images, _ = data
    enc = encoder(tiny, data, "hf-vilt")
    model = transformers.ViltModel.from_pretrained(tiny["hf-vilt"]).eval()
    processor = transformers.ViltProcessor(transformers.ViltImageProcessor.from_pretrained(tiny["hf-vilt"]),
                                           transformers.BertTokenizerFast.from_pretrained(tiny["hf-vilt"]))
    pictures = [Image.open(images / n).convert("RGB") for n in ("m1.png", "m1.png", "sub/w1.jpg")]
    # language masking = the contextual word's sub-tokens replaced by [MASK] ("lawyer" is one token)
    masked_texts = ["This is a [MASK].", "[MASK]", "A [MASK] is here."]
    for texts, stimuli in ((list(PAIRS.items), sentences()), (masked_texts, sentences(mask="language"))):
        inputs = processor(images=pictures, text=texts, padding=True, return_tensors="pt")
        with torch.no_grad():
            torch.manual_seed(0)
            states = model(**inputs).last_hidden_state
        np.testing.assert_allclose(enc.embed(stimuli).vectors, states[:, 0].numpy(), atol=1e-5)
    # contextual: "lawyer" is token 4 of "[CLS] this is a lawyer . [SEP]", 1 of "[CLS] lawyer [SEP]"
    inputs = processor(images=pictures, text=list(PAIRS.items), padding=True, return_tensors="pt")
    with torch.no_grad():
        torch.manual_seed(0)
        states = model(**inputs).last_hidden_state
    expected = states[torch.arange(3), torch.tensor([4, 1, 2])].numpy()
    np.testing.assert_allclose(enc.embed(sentences(embedding="contextual")).vectors, expected, atol=1e-5)


def test_lxmert_vision_mask_zeroes_person_features(tiny, data):
    _, regions = data
    enc = encoder(tiny, data, "hf-lxmert")
    model = transformers.LxmertModel.from_pretrained(tiny["hf-lxmert"]).eval()
    tokenizer = transformers.BertTokenizerFast.from_pretrained(tiny["hf-lxmert"])
    r = load_regions(regions / "m1.npz")
    feats = torch.from_numpy(r.features.copy())
    feats[torch.from_numpy(r.persons())] = 0.0
    tokens = tokenizer(["This is a lawyer."], return_tensors="pt")
    with torch.no_grad():
        out = model(**tokens, visual_feats=feats[None], visual_pos=torch.from_numpy(
            r.normalized_boxes().astype(np.float32))[None])
    got = enc.embed(sentences(items=("This is a lawyer.",), images=("m1.png",), mask="vision")).vectors
    np.testing.assert_allclose(got, out.language_output[:, 0].numpy(), atol=1e-5)


def test_blip_itm_reads_the_image_grounded_text_encoder(tiny, data):
    enc = encoder(tiny, data, "hf-blip-itm")
    model = transformers.BlipForImageTextRetrieval.from_pretrained(tiny["hf-blip-itm"]).eval()
    tokenizer = transformers.BertTokenizerFast.from_pretrained(tiny["hf-blip-itm"])
    pixels = torch.from_numpy(np.stack([enc.preprocessing.array(data[0] / "m1.png")]))
    tokens = tokenizer(["This is a lawyer."], return_tensors="pt")
    with torch.no_grad():
        image = model.vision_model(pixel_values=pixels).last_hidden_state
        states = model.text_encoder(**tokens, encoder_hidden_states=image).last_hidden_state
    got = enc.embed(sentences(items=("This is a lawyer.",), images=("m1.png",))).vectors
    np.testing.assert_allclose(got, states[:, 0].numpy(), atol=1e-5)
    # the image matters: another image, another [CLS] state
    other = enc.embed(sentences(items=("This is a lawyer.",), images=("w1.jpg",))).vectors
    assert np.abs(got - other).max() > 1e-4


# -- bad input: one line each ---------------------------------------------------------------------------


def test_missing_images_error_or_drop(tiny, data):
    images, _ = data
    stimuli = sentences(items=("This is a man.", "This is a woman.", "This is a lawyer."),
                        images=("gone.png", "lost.jpg", "m1.png"))
    with pytest.raises(EatkitError) as err:
        encoder(tiny, data, "hf-vilt").embed(stimuli)
    assert str(err.value) == (f"2 of 3 images of set 'Lawyers' are missing under {images} (first: gone.png, "
                              "lost.jpg); pass --missing drop to leave their pairs out")
    # a name without an image suffix (Conceptual Captions ids) matches <name>.<image suffix>
    by_id = encoder(tiny, data, "hf-vilt").embed(sentences(items=("Lawyer",), images=("w1",)))
    by_name = encoder(tiny, data, "hf-vilt").embed(sentences(items=("Lawyer",), images=("w1.jpg",)))
    np.testing.assert_array_equal(by_id.vectors, by_name.vectors)
    out = encoder(tiny, data, "hf-vilt", missing="drop").embed(stimuli)
    assert out.ids == ("m1.png|This is a lawyer.",)
    assert out.dropped == ("gone.png|This is a man.", "lost.jpg|This is a woman.")
    with pytest.raises(EatkitError, match=r"^1 of 1 region files of images of set 'Lawyers' are missing under"):
        encoder(tiny, data, "hf-lxmert").embed(sentences(items=("a",), images=("gone.png",)))


def test_bad_inputs_are_one_line_errors(tiny, data):
    with pytest.raises(EatkitError, match=r"^caption 'This is a man\.' of set 'Lawyers' contains none of the "
                                          r"test's contextual words$"):
        encoder(tiny, data, "hf-vilt").embed(sentences(items=("This is a man.",), images=("m1.png",),
                                                       embedding="contextual"))
    with pytest.raises(EatkitError, match=r"^region file .*nobody\.npz has no person box: --mask vision"):
        encoder(tiny, data, "hf-lxmert").embed(sentences(items=("Lawyer",), images=("nobody.png",), mask="vision"))
    with pytest.raises(EatkitError, match=r"reads region features: pass --regions DIR"):
        build_model(f"hf-visualbert:{tiny['hf-visualbert']}", cache=False)
    with pytest.raises(EatkitError, match=r"^--mask vision with model 'hf-vilt:.*' needs person boxes"):
        build_model(f"hf-vilt:{tiny['hf-vilt']}", images=data[0], cache=False).embed(sentences(mask="vision"))
    from eatkit.stimuli.types import StimulusSet

    with pytest.raises(EatkitError, match=r"embeds \(image, caption\) pairs of grounded suites; set 'W' is a word"):
        encoder(tiny, data, "hf-vilt").embed(StimulusSet("W", "word", ("rose",)))
    with pytest.raises(EatkitError, match=r"are 12-d, but model 'hf-visualbert:.*' reads 16-d features"):
        transformers.VisualBertModel(transformers.VisualBertConfig(
            **TOWER, vocab_size=len(VOCAB), visual_embedding_dim=16)).save_pretrained(tiny["hf-visualbert"] + "-16")
        _tokenizer(tiny["hf-visualbert"] + "-16")
        build_model(f"hf-visualbert:{tiny['hf-visualbert']}-16", images=data[0], regions=data[1],
                    cache=False).embed(sentences())


def test_region_file_format_errors(tmp_path):
    np.savez(tmp_path / "a.npz", features=np.ones((2, 4)), boxes=np.ones((2, 4)), labels=np.array(["x", "y"]))
    with pytest.raises(EatkitError, match=r"has no 'image_size' array \(it needs features, boxes, labels, image_size\)"):
        load_regions(tmp_path / "a.npz")
    np.savez(tmp_path / "b.npz", features=np.ones((2, 4)), boxes=np.ones((3, 4)), labels=np.array(["x", "y"]),
             image_size=[4, 4])
    with pytest.raises(EatkitError, match=r"expected boxes \(2, 4\), labels \(2,\) and image_size \(2,\)"):
        load_regions(tmp_path / "b.npz")


def _region_table(tmp_path, data):
    """The same random regions as a .th region table (keys in the authors' two spellings; m1 with 150
    regions, of which the first 144 are read) and as .npz files of the first 144 (labels not person)."""
    images, _ = data
    rng = np.random.default_rng(7)
    table, npz = {}, tmp_path / "npz"
    npz.mkdir()
    for key, stem, (w, h), n in (("m1", "m1", (64, 48), 150), ("w1.jpg.npz", "w1", (40, 56), 5)):
        corner = rng.uniform(0, [w / 2, h / 2], size=(n, 2))
        boxes = np.hstack([corner, corner + rng.uniform(1, [w / 2, h / 2], size=(n, 2))])
        features = rng.normal(size=(n, 12)).astype(np.float32)
        confidence = rng.uniform(size=n)
        table[key] = (torch.from_numpy(features), torch.from_numpy(boxes), torch.from_numpy(confidence)) \
            if stem == "m1" else (features, boxes, confidence)  # tensors or numpy arrays, as torch.save keeps them
        np.savez(npz / f"{stem}.npz", features=features[:144], boxes=boxes[:144],
                 labels=np.array(["dog"] * min(n, 144)), image_size=np.array([h, w]))
    torch.save(table, tmp_path / "regions.th")
    return tmp_path / "regions.th", npz, table


@pytest.mark.parametrize("family", ["hf-visualbert", "hf-lxmert"])
def test_region_table_equals_the_same_regions_as_npz_files(tiny, data, tmp_path, family):
    """--regions FILE.th (the Grounded-WEAT authors' torch.save dict) gives, to the digit, the embeddings of
    the same regions given as .npz files; its hash is recorded, and the cap of 144 regions applies."""
    import hashlib

    images, _ = data
    th, npz, table = _region_table(tmp_path, data)
    from_th = build_model(f"{family}:{tiny[family]}", images=images, regions=th, cache=False)
    from_npz = build_model(f"{family}:{tiny[family]}", images=images, regions=npz, cache=False)
    for embedding in ("cls", "contextual"):
        out = from_th.embed(sentences(embedding=embedding))
        np.testing.assert_array_equal(out.vectors, from_npz.embed(sentences(embedding=embedding)).vectors)
        assert np.linalg.norm(out.vectors - encoder(tiny, data, family).embed(sentences(embedding=embedding)).vectors,
                              axis=1).min() > 1e-3  # other regions, other vectors
    sha = hashlib.sha256(th.read_bytes()).hexdigest()
    assert from_th.manifest()["region_file"] == str(th) and from_th.manifest()["region_file_sha256"] == sha
    assert from_th.config()["regions"]["regions_per_image"] == "the first 144"
    # each pair's checksum covers the table's hash and the image's key in it (the cache key)
    assert from_th._contents_seen[2].count(f"{sha}|w1.jpg.npz") == 1
    torch.save({**table, "m1": (torch.ones(1, 12), torch.tensor([[0.0, 0, 5, 5]]), torch.ones(1))}, th)
    changed = build_model(f"{family}:{tiny[family]}", images=images, regions=th, cache=False).embed(sentences())
    assert changed.checksums != out.checksums


def test_region_table_errors_name_the_image_and_refuse_vision_masking(tiny, data, tmp_path):
    th, _, _ = _region_table(tmp_path, data)
    lxmert = build_model(f"hf-lxmert:{tiny['hf-lxmert']}", images=data[0], regions=th, cache=False)
    with pytest.raises(EatkitError, match=r"^1 of 1 images of set 'Lawyers' are missing from region file .*regions\.th "
                                          r"\(first: nobody\.png\); pass --missing drop"):
        lxmert.embed(sentences(items=("Lawyer",), images=("nobody.png",)))
    with pytest.raises(EatkitError, match=r"^--mask vision needs person labels, which region file .*regions\.th does "
                                          r"not hold: pass --regions DIR"):
        lxmert.embed(sentences(mask="vision"))
    dropped = build_model(f"hf-lxmert:{tiny['hf-lxmert']}", images=data[0], regions=th, cache=False,
                          missing="drop").embed(sentences(items=("Lawyer", "Lawyer"), images=("nobody.png", "m1.png")))
    assert dropped.dropped == ("nobody.png|Lawyer",) and dropped.ids == ("m1.png|Lawyer",)
    with pytest.raises(EatkitError, match=r"^set 'Lawyers' holds \(image, caption\) pairs: pass --images DIR"):
        build_model(f"hf-visualbert:{tiny['hf-visualbert']}", regions=th, cache=False).embed(sentences())


class _Code:
    def __reduce__(self):
        return (print, ("this ran",))


def test_a_region_table_with_pickled_code_is_refused(tiny, data, tmp_path, capsys):
    torch.save({"m1": _Code()}, tmp_path / "code.th")
    enc = build_model(f"hf-visualbert:{tiny['hf-visualbert']}", images=data[0], regions=tmp_path / "code.th",
                      cache=False)
    with pytest.raises(EatkitError, match=r"^refusing region file .*code\.th \(only tensors and plain containers"):
        enc.embed(sentences())
    assert "this ran" not in capsys.readouterr().out


@pytest.mark.slow
def test_faster_rcnn_regions_feed_visualbert(tiny, data):
    """--regions fasterrcnn: torchvision's detector (random weights here) gives 2048-d stage-5 features of
    boxes inside the image, labelled with COCO class names."""
    images, _ = data
    detector = FasterRCNNRegions(weights=None, min_regions=2, max_regions=4, min_size=64, max_size=96)
    regions = detector(Image.open(images / "m1.png").convert("RGB"))
    assert regions.features.shape[1] == 2048 and 2 <= len(regions.labels) <= 4
    assert regions.image_size == (48, 64)
    assert (regions.boxes[:, :2] >= 0).all() and (regions.boxes[:, 2] <= 64).all() and (regions.boxes[:, 3] <= 48).all()
    assert set(regions.labels) <= set(transformers_coco_names())
    assert detector.config()["weights"] is None
    folder = tiny["hf-visualbert"] + "-2048"
    transformers.VisualBertModel(transformers.VisualBertConfig(
        **TOWER, vocab_size=len(VOCAB), visual_embedding_dim=2048)).save_pretrained(folder)
    _tokenizer(folder)
    enc = build_model(f"hf-visualbert:{folder}", images=images, regions="fasterrcnn", cache=False)
    assert enc.config()["regions"]["detector"] == "torchvision fasterrcnn_resnet50_fpn"
    enc.detector = detector
    out = enc.embed(sentences(items=("Lawyer",), images=("m1.png",)))
    assert out.vectors.shape == (1, 32)


def transformers_coco_names():
    from torchvision.models.detection import FasterRCNN_ResNet50_FPN_Weights

    return FasterRCNN_ResNet50_FPN_Weights.COCO_V1.meta["categories"]
