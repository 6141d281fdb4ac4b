"""Models from their published checkpoints (MoCo v2/v3, SimCLRv2) and CLIP's image tower as an image
encoder: tiny networks of each architecture saved in the published layout (keys and shapes as the original
code writes them), loaded through eatkit's registered names, and compared with an independent forward pass."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from eatkit.errors import EatkitError
from eatkit.registry import build_model, get_model
from eatkit.stimuli.types import StimulusSet
from tiny_published import moco_checkpoint, simclr_state, slip_checkpoint

from conftest import lazy_module
torch = lazy_module("torch")
F = lazy_module("torch.nn.functional")
Image = lazy_module("PIL.Image")


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    """Three random RGB images of different sizes."""
    root = tmp_path_factory.mktemp("photos")
    rng = np.random.default_rng(1)
    paths = []
    for i, (h, w) in enumerate(((40, 30), (33, 47), (64, 64))):
        paths.append(str(root / f"{i}.png"))
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(paths[-1])
    return StimulusSet("photos", "image", tuple(paths))


def _batch(encoder, stimuli):
    return torch.from_numpy(np.stack([encoder.preprocessing.array(p) for p in stimuli.items]))


@pytest.mark.parametrize("version", ["v2", "v3"])
def test_moco_equals_torchvision_resnet_with_the_query_encoder_weights(tmp_path, photos, version):
    reference = moco_checkpoint(tmp_path / "moco.pth.tar", version)
    enc = build_model(f"moco-{version}-resnet50", checkpoint=tmp_path / "moco.pth.tar", cache=False, device="cpu")
    ours = enc.embed(photos).vectors
    with torch.inference_mode():
        theirs = reference(_batch(enc, photos)).numpy()
    assert ours.shape == (3, 2048)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    config = enc.config()
    assert config["preprocessing"]["resize"] == 256 and config["preprocessing"]["size"] == 224
    assert config["preprocessing"]["interpolation"] == "bilinear"
    assert config["preprocessing"]["mean"] == [0.485, 0.456, 0.406]
    assert re.fullmatch(r"checkpoint moco\.pth\.tar sha256:[0-9a-f]{64}", config["weights"])


def test_moco_checkpoint_errors_are_one_line_and_load_nothing(tmp_path, photos):
    moco_checkpoint(tmp_path / "v2.pth.tar", "v2")
    with pytest.raises(EatkitError, match=r"has no key starting with 'module\.base_encoder\.' \(first key: "
                                          r"module\.encoder_q\.conv1\.weight; is it a moco-v3-resnet50"):
        build_model("moco-v3-resnet50", checkpoint=tmp_path / "v2.pth.tar", cache=False).embed(photos)
    checkpoint = torch.load(tmp_path / "v2.pth.tar", weights_only=True)
    del checkpoint["state_dict"]["module.encoder_q.layer2.1.bn3.running_var"]
    torch.save(checkpoint, tmp_path / "cut.pth.tar")
    with pytest.raises(EatkitError) as err:
        build_model("moco-v2-resnet50", checkpoint=tmp_path / "cut.pth.tar", cache=False).embed(photos)
    assert str(err.value) == (f"checkpoint {tmp_path / 'cut.pth.tar'} does not fit moco-v2-resnet50: 1 missing "
                              "tensor(s) (e.g. layer2.1.bn3.running_var)")
    with pytest.raises(EatkitError, match=r"^moco-v2-resnet50 needs its checkpoint file: --weights PATH"):
        build_model("moco-v2-resnet50")
    with pytest.raises(EatkitError, match=r"^checkpoint .*nope\.pth not found$"):
        build_model("moco-v2-resnet50", checkpoint=tmp_path / "nope.pth")


def test_moco_v3_vit_checkpoint_is_one_line_not_supported(tmp_path, photos):
    """MoCo v3's ViT checkpoints (vit_small / vit_base: blocks, patch_embed under module.base_encoder.)."""
    state = {f"module.base_encoder.{k}": torch.zeros(2) for k in ("cls_token", "pos_embed", "patch_embed.proj.weight",
                                                                   "blocks.0.attn.qkv.weight", "norm.weight")}
    torch.save({"epoch": 300, "arch": "vit_small", "state_dict": state}, tmp_path / "vit-s-300ep.pth.tar")
    with pytest.raises(EatkitError) as err:
        build_model("moco-v3-resnet50", checkpoint=tmp_path / "vit-s-300ep.pth.tar", cache=False).embed(photos)
    assert str(err.value) == (f"checkpoint {tmp_path / 'vit-s-300ep.pth.tar'} is a MoCo v3 ViT (keys blocks.*, "
                              "patch_embed.*): not supported; moco-v3-resnet50 reads the authors' ResNet-50 "
                              "checkpoints only")


def test_checkpoints_holding_code_are_refused(tmp_path, photos):
    torch.save({"state_dict": {"module.encoder_q.x": torch.ones(1)}, "hook": re.compile("x")}, tmp_path / "evil.pth")
    with pytest.raises(EatkitError, match=r"^refusing weights file .*evil\.pth \(only tensors"):
        build_model("moco-v2-resnet50", checkpoint=tmp_path / "evil.pth", cache=False).embed(photos)


# -- SimCLRv2 (the PyTorch conversion's layout) ------------------------------------------------------


def _simclr_forward(s, x, layers, sk):
    """SimCLRv2's ResNet written out from its description: functional ops on the state dict."""
    def bn(x, key, relu=True):
        y = F.batch_norm(x, s[f"{key}.running_mean"], s[f"{key}.running_var"], s[f"{key}.weight"],
                         s[f"{key}.bias"], eps=1e-5)
        return F.relu(y) if relu else y

    def conv(x, key, stride=1):
        w = s[key]
        return F.conv2d(x, w, stride=stride, padding=(w.shape[-1] - 1) // 2)

    if sk:
        x = bn(conv(x, "net.0.0.weight", 2), "net.0.1.0")
        x = bn(conv(x, "net.0.2.weight"), "net.0.3.0")
        x = bn(conv(x, "net.0.4.weight"), "net.0.5.0")
    else:
        x = bn(conv(x, "net.0.0.weight", 2), "net.0.1.0")
    x = F.max_pool2d(x, 3, 2, 1)
    for stage, n in enumerate(layers, start=1):
        for b in range(n):
            p, stride = f"net.{stage}.blocks.{b}", (1 if stage == 1 or b > 0 else 2)
            if b > 0:
                shortcut = x
            elif sk:  # pad right/bottom by one, 2x2 average pool, 1x1 conv
                pooled = F.avg_pool2d(F.pad(x, (0, 1, 0, 1)), 2, stride)
                shortcut = bn(conv(pooled, f"{p}.projection.shortcut.2.weight"), f"{p}.projection.bn.0", relu=False)
            else:
                shortcut = bn(conv(x, f"{p}.projection.shortcut.weight", stride), f"{p}.projection.bn.0", relu=False)
            h = bn(conv(x, f"{p}.net.0.weight"), f"{p}.net.1.0")
            if sk:
                both = bn(conv(h, f"{p}.net.2.main_conv.0.weight", stride), f"{p}.net.2.main_conv.1.0")
                a, b_ = both.chunk(2, dim=1)
                g = (a + b_).mean(dim=(2, 3), keepdim=True)
                m = conv(bn(conv(g, f"{p}.net.2.mixing_conv.0.weight"), f"{p}.net.2.mixing_conv.1.0"),
                         f"{p}.net.2.mixing_conv.2.weight")
                ma, mb = m.chunk(2, dim=1)
                wa = torch.exp(ma) / (torch.exp(ma) + torch.exp(mb))
                h = a * wa + b_ * (1 - wa)
                h = bn(conv(h, f"{p}.net.3.weight"), f"{p}.net.4.0", relu=False)
            else:
                h = bn(conv(h, f"{p}.net.2.weight", stride), f"{p}.net.3.0")
                h = bn(conv(h, f"{p}.net.4.weight"), f"{p}.net.5.0", relu=False)
            x = F.relu(shortcut + h)
    return x.mean(dim=(2, 3))


@pytest.mark.parametrize("sk", [True, False])
def test_simclrv2_equals_the_resnet_written_out(tmp_path, photos, sk):
    layers, width = (1, 2, 1, 1), 8
    state = simclr_state(layers, width, sk)
    head = {"layers.0.weight": torch.randn(32, 32)}   # the contrastive head, not used
    torch.save({"resnet": state, "head": head}, tmp_path / "r_sk.pth")
    enc = build_model("simclrv2", checkpoint=tmp_path / "r_sk.pth", cache=False, device="cpu")
    ours = enc.embed(photos).vectors
    with torch.inference_mode():
        theirs = _simclr_forward(state, _batch(enc, photos), layers, sk).numpy()
    assert ours.shape == (3, 32 * width)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
    prep = enc.config()["preprocessing"]
    assert (prep["mean"], prep["std"], prep["resize"], prep["size"]) == ([0.0] * 3, [1.0] * 3, 256, 224)
    # pixels in [0, 1]: an all-white image is all ones
    Image.new("RGB", (30, 30), (255, 255, 255)).save(tmp_path / "white.png")
    assert np.all(enc.preprocessing.array(tmp_path / "white.png") == 1.0)


def test_simclrv2_mismatched_checkpoint_is_one_line(tmp_path, photos):
    state = simclr_state((1, 1, 1, 1), 8, True)
    state["net.2.blocks.0.extra.weight"] = torch.ones(1)
    torch.save({"resnet": state}, tmp_path / "bad.pth")
    with pytest.raises(EatkitError) as err:
        build_model("simclrv2", checkpoint=tmp_path / "bad.pth", cache=False).embed(photos)
    assert str(err.value) == (f"checkpoint {tmp_path / 'bad.pth'} does not fit simclrv2: 1 unexpected tensor(s) "
                              "(e.g. net.2.blocks.0.extra.weight)")
    torch.save({"head": {}}, tmp_path / "head.pth")
    with pytest.raises(EatkitError, match=r"has no 'resnet' entry of tensors \(is it a simclrv2 checkpoint\?\)"):
        build_model("simclrv2", checkpoint=tmp_path / "head.pth", cache=False).embed(photos)


# -- names, descriptions and CLIP's image tower --------------------------------------------------------


def test_the_study_models_are_listed_with_layer_pooling_and_preprocessing(capsys):
    from eatkit.cli import main

    expected = {"moco-v2-resnet50": ("penultimate layer", "2048-d global average pool", "centre crop 224"),
                "moco-v3-resnet50": ("penultimate layer", "2048-d global average pool", "ImageNet mean and std"),
                "simclrv2": ("final layer", "global average pool", "pixels in [0, 1] (no mean/std)"),
                "bit-m-r50x1": ("penultimate layer", "2048-d global average pool", "mean = std = 0.5"),
                "open_clip-image:<name>": ("projected class token", "not normalised", "inference preprocessing"),
                "hf-clip-image:<name>": ("visual_projection(pooled class token)", "not normalised",
                                         "preprocessor_config.json"),
                "slip": ("ViT class token after its final layer norm", "end-of-text token", "centre crop 224"),
                "volta:<name>": ("last sublayer's text state", "[CLS] or the first sub-token", "mean region feature")}
    for name, parts in expected.items():
        assert main(["list", "models", name]) == 0
        described = " ".join(capsys.readouterr().out.split())  # the description, unwrapped
        assert described.startswith(name) and all(part in described for part in parts), name


def test_bit_is_timm_bit_m_r50x1_with_its_preprocessing():
    pytest.importorskip("timm")
    enc = build_model("bit-m-r50x1")
    config = enc.config()
    assert enc.id == "bit-m-r50x1" and config["model"] == "timm:resnetv2_50x1_bit.goog_in21k"
    prep = config["preprocessing"]
    assert (prep["size"], prep["resize"], prep["interpolation"], prep["mean"]) == (224, 256, "bilinear", [0.5] * 3)


TINY_TOWER = {"embed_dim": 16,
              "vision_cfg": {"image_size": 32, "layers": 2, "width": 32, "patch_size": 8, "head_width": 16},
              "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 2}}


@pytest.fixture(scope="module")
def tower_weights(tmp_path_factory):
    """A tiny open_clip architecture ``eatkit-tiny-tower`` and its weights file."""
    open_clip = pytest.importorskip("open_clip")
    folder = tmp_path_factory.mktemp("tiny-tower")
    (folder / "eatkit-tiny-tower.json").write_text(json.dumps(TINY_TOWER))
    open_clip.add_model_config(folder / "eatkit-tiny-tower.json")
    torch.manual_seed(0)
    torch.save(open_clip.create_model("eatkit-tiny-tower").state_dict(), folder / "weights.pt")
    return folder / "weights.pt"


def test_open_clip_image_tower_is_encode_image_unnormalised(tower_weights, photos):
    import open_clip

    enc = build_model(f"open_clip-image:eatkit-tiny-tower/{tower_weights}", cache=False, device="cpu")
    ours = enc.embed(photos).vectors
    model = open_clip.create_model("eatkit-tiny-tower", pretrained=str(tower_weights)).eval()
    with torch.inference_mode():
        theirs = model.encode_image(_batch(enc, photos)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert not np.allclose(np.linalg.norm(ours, axis=1), 1.0)
    assert enc.modalities == frozenset({"image"}) and enc.config()["normalize"] is False


def test_hf_clip_image_tower_is_the_projected_pooled_output(tmp_path, photos):
    pytest.importorskip("transformers")
    from tiny_vl import tiny_clip

    folder = tiny_clip(tmp_path / "clip")
    enc = build_model(f"hf-clip-image:{folder}", cache=False, device="cpu")
    import transformers

    model = transformers.CLIPModel.from_pretrained(folder).eval()
    with torch.inference_mode():
        theirs = model.get_image_features(pixel_values=_batch(enc, photos))
    theirs = getattr(theirs, "pooler_output", theirs).numpy()
    np.testing.assert_allclose(enc.embed(photos).vectors, theirs, rtol=1e-5, atol=1e-6)


# -- SLIP (facebookresearch/SLIP checkpoints) ----------------------------------------------------------


def _slip_text(s, tokens, layers=2):
    """SLIP's encode_text written out: causal pre-norm transformer, QuickGELU, end-of-text token."""
    x = s["token_embedding.weight"][tokens] + s["positional_embedding"]
    n = x.shape[1]
    mask = torch.full((n, n), float("-inf")).triu(1)
    for i in range(layers):
        p = f"transformer.resblocks.{i}."
        h = F.layer_norm(x, x.shape[-1:], s[p + "ln_1.weight"], s[p + "ln_1.bias"])
        q, k, v = (h @ s[p + "attn.in_proj_weight"].T + s[p + "attn.in_proj_bias"]).chunk(3, dim=-1)
        att = torch.softmax(q @ k.transpose(1, 2) / q.shape[-1] ** 0.5 + mask, dim=-1)
        x = x + (att @ v) @ s[p + "attn.out_proj.weight"].T + s[p + "attn.out_proj.bias"]
        h = F.layer_norm(x, x.shape[-1:], s[p + "ln_2.weight"], s[p + "ln_2.bias"])
        h = h @ s[p + "mlp.c_fc.weight"].T + s[p + "mlp.c_fc.bias"]
        x = x + (h * torch.sigmoid(1.702 * h)) @ s[p + "mlp.c_proj.weight"].T + s[p + "mlp.c_proj.bias"]
    x = F.layer_norm(x, x.shape[-1:], s["ln_final.weight"], s["ln_final.bias"])
    return x[torch.arange(len(x)), tokens.argmax(dim=-1)] @ s["text_projection"]


@pytest.mark.parametrize("slip", [True, False])
def test_slip_embeds_images_and_words_as_its_eval_code(tmp_path, photos, slip):
    open_clip = pytest.importorskip("open_clip")
    state, visual = slip_checkpoint(tmp_path / "slip_small_25ep.pt", slip=slip)
    enc = build_model("slip", checkpoint=tmp_path / "slip_small_25ep.pt", prompt="a photo of {x}", cache=False,
                      device="cpu")
    images = enc.embed(photos).vectors
    words = enc.embed(StimulusSet("w", "word", ("Rose", "ant"))).vectors
    visual.load_state_dict({k[len("visual."):]: v for k, v in state.items() if k.startswith("visual.")})
    with torch.inference_mode():
        image_ref = visual.eval()(_batch(enc, photos)) @ state["image_projection"]
        tokens = open_clip.tokenize(["a photo of rose", "a photo of ant"])   # CLIP's BPE, lower-cased
        text_ref = _slip_text(state, tokens)
    np.testing.assert_allclose(images, F.normalize(image_ref, dim=-1).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(words, F.normalize(text_ref, dim=-1).numpy(), rtol=1e-4, atol=1e-5)
    assert enc.manifest()["checkpoint_model"] == ("SLIP_VITS16" if slip else "CLIP_VITS16")
    prep = enc.config()["preprocessing"]
    assert (prep["resize"], prep["size"], prep["interpolation"]) == (224, 224, "bilinear")


def test_slip_checkpoint_with_another_global_is_refused_in_one_clean_line(tmp_path, photos):
    """Paths in args load (the test above); any other class is refused, the line saying which, uncut and
    without torch's terminal colour codes."""
    import datetime

    state, _ = slip_checkpoint(tmp_path / "s.pt")
    checkpoint = torch.load(tmp_path / "s.pt", weights_only=False)
    checkpoint["args"].started = datetime.datetime(2022, 1, 1)
    torch.save(checkpoint, tmp_path / "s2.pt")
    with pytest.raises(EatkitError) as err:
        build_model("slip", checkpoint=tmp_path / "s2.pt", cache=False).embed(photos)
    message = str(err.value)
    assert "\x1b" not in message and "\n" not in message
    assert "Unsupported global: GLOBAL datetime.datetime was not an allowed global by default" in message


def test_slip_truncates_as_its_tokenizer():
    pytest.importorskip("open_clip")
    from eatkit.encoders.slip import slip_tokens

    tokens = slip_tokens(["word " * 100, "a b"], 77)
    assert tokens.shape == (2, 77) and tokens[0, 0] == 49406 and 49407 not in tokens[0].tolist()
    assert tokens[1, :4].tolist() == [49406, 320, 321, 49407] and tokens[1, 4:].sum() == 0


def test_slip_bad_checkpoint_is_one_line(tmp_path, photos):
    state, _ = slip_checkpoint(tmp_path / "s.pt")
    checkpoint = torch.load(tmp_path / "s.pt", weights_only=False)
    checkpoint["state_dict"]["module.visual.head.weight"] = torch.ones(2, 32)
    torch.save(checkpoint, tmp_path / "s2.pt")
    with pytest.raises(EatkitError) as err:
        build_model("slip", checkpoint=tmp_path / "s2.pt", cache=False).embed(photos)
    assert str(err.value) == (f"checkpoint {tmp_path / 's2.pt'} does not fit slip: 1 unexpected tensor(s) "
                              "(e.g. visual.head.weight)")


def test_preprocessing_and_weights_are_in_the_cache_key_and_manifest(tmp_path):
    moco_checkpoint(tmp_path / "moco.pth.tar", "v2")
    torch.save({"resnet": simclr_state((1, 1, 1, 1), 8, True)}, tmp_path / "simclr.pth")
    slip_checkpoint(tmp_path / "slip.pt")
    for name, file, resize, std in (("moco-v2-resnet50", "moco.pth.tar", 256, [0.229, 0.224, 0.225]),
                                    ("simclrv2", "simclr.pth", 256, [1.0, 1.0, 1.0]),
                                    ("slip", "slip.pt", 224, [0.229, 0.224, 0.225])):
        enc = build_model(name, checkpoint=tmp_path / file)
        key, manifest = enc.cache_config(), enc.manifest()
        assert key["preprocessing"] == manifest["preprocessing"] == enc.preprocessing.to_dict()
        assert (key["preprocessing"]["resize"], key["preprocessing"]["std"]) == (resize, std)
        assert key["weights"] == manifest["weights"] and file in key["weights"]
        # another interpolation is another cache entry
        if name != "slip":
            other = build_model(name, checkpoint=tmp_path / file, interpolation="bicubic").cache_config()
            assert other["preprocessing"]["interpolation"] == "bicubic" and other != key


def _bit_npz(net, path):
    """A BiT checkpoint in Google's published layout (``resnet/...``: HWIO kernels, group-norm gamma/beta),
    written from a timm ResNetV2's parameters (the layout of big_transfer's ``BiT-M-R50x1.npz``)."""
    def hwio(w):
        return w.detach().numpy().transpose(2, 3, 1, 0)

    arrays = {"resnet/root_block/standardized_conv2d/kernel": hwio(net.stem.conv.weight),
              "resnet/group_norm/gamma": net.norm.weight.detach().numpy(),
              "resnet/group_norm/beta": net.norm.bias.detach().numpy(),
              "resnet/head/conv2d/kernel": hwio(net.head.fc.weight), "resnet/head/conv2d/bias": net.head.fc.bias.detach().numpy()}
    for i, stage in enumerate(net.stages):
        for j, block in enumerate(stage.blocks):
            unit = f"resnet/block{i + 1}/unit{j + 1:02d}/"
            for part, conv, norm in (("a", block.conv1, block.norm1), ("b", block.conv2, block.norm2),
                                     ("c", block.conv3, block.norm3)):
                arrays[f"{unit}{part}/standardized_conv2d/kernel"] = hwio(conv.weight)
                arrays[f"{unit}{part}/group_norm/gamma"] = norm.weight.detach().numpy()
                arrays[f"{unit}{part}/group_norm/beta"] = norm.bias.detach().numpy()
            if block.downsample is not None:
                arrays[f"{unit}a/proj/standardized_conv2d/kernel"] = hwio(block.downsample.conv.weight)
    np.savez(path, **arrays)


def test_bit_npz_via_weights_is_the_networks_own_features(tmp_path, photos):
    """BiT's published .npz (--weights BiT-M-R50x1.npz) loads into bit-m-r50x1 (today: 'not a safetensors
    file'): the features equal the network the file was written from."""
    timm = pytest.importorskip("timm")
    torch.manual_seed(0)
    source = timm.create_model("resnetv2_50x1_bit.goog_in21k", pretrained=False).eval()
    for p in source.parameters():  # away from the initialisation, so that a tensor loaded wrongly shows
        p.data.add_(0.05 * torch.randn_like(p))
    _bit_npz(source, tmp_path / "BiT-M-R50x1.npz")
    enc = build_model("bit-m-r50x1", checkpoint=tmp_path / "BiT-M-R50x1.npz", cache=False, device="cpu")
    ours = enc.embed(photos).vectors
    with torch.inference_mode():
        expected = source.forward_head(source.forward_features(_batch(enc, photos)), pre_logits=True).numpy()
    np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-4)
    assert enc.config()["weights"].startswith("checkpoint BiT-M-R50x1.npz sha256:")
    np.savez(tmp_path / "cut.npz", **{"resnet/root_block/standardized_conv2d/kernel": np.zeros((7, 7, 3, 64))})
    with pytest.raises(EatkitError, match=r"cut\.npz does not fit bit-m-r50x1: it has no tensor"):
        build_model("bit-m-r50x1", checkpoint=tmp_path / "cut.npz", cache=False).embed(photos)
