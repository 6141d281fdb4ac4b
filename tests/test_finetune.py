"""Fine-tuning on a tiny COCO-format data set, checkpoints loaded as eatkit models, and the metrics."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from eatkit.errors import EatkitError
from eatkit.stats.classification import average_precisions, mean_average_precision, micro_f1
from tiny_coco import write_coco

from conftest import lazy_module
torch = lazy_module("torch")
timm = lazy_module("timm")
pytestmark = pytest.mark.slow   # trains a tiny network (a few seconds on 2 cores)


def _umask():
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def _split(n, offset):
    # person on even ids, car on multiples of 3: the two labels are learnable from their colour blocks
    return {offset + i: ([c for c, on in (("person", i % 2 == 0), ("car", i % 3 == 0)) if on], ["x"])
            for i in range(n)}


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    from eatkit.encoders.finetune import finetune

    root = tmp_path_factory.mktemp("coco")
    train = write_coco(root, _split(12, 1), split="train", size=24)
    val = write_coco(root, _split(6, 100), split="val", size=24)
    lines = []
    result = finetune("timm:test_resnet", train[0], train[2], root / "ft.safetensors", val_instances=val[0],
                      val_images=val[2], categories=["person", "car"], epochs=2, batch_size=6, lr=0.05,
                      pretrained=False, device="cpu", log=lines.append)
    return result, val, lines


def test_finetune_end_to_end_reports_map_and_f1(tuned):
    result, val, lines = tuned
    assert result.labels == ("person", "car") and len(result.history) == 2 and result.device == "cpu"
    last = result.history[-1]
    assert 0.0 <= last.map <= 1.0 and 0.0 <= last.micro_f1 <= 1.0 and last.train_images_per_s > 0
    assert lines[-1].startswith("epoch 2/2: train loss") and "mAP" in lines[-1] and "micro-F1" in lines[-1]
    meta = json.loads(result.checkpoint.with_name("ft.safetensors.json").read_text())
    assert meta["architecture"] == "timm:test_resnet" and meta["options"]["momentum"] == 0.9
    assert meta["options"]["loss"] == "BCEWithLogitsLoss" and meta["history"][1]["map"] == last.map
    # written as every eatkit output (issue 45: safetensors' save_file left the checkpoint 0600)
    from eatkit.io import FILE_MODE

    for written in (result.checkpoint, result.checkpoint.with_name("ft.safetensors.json")):
        assert written.stat().st_mode & 0o777 == FILE_MODE == 0o666 & ~_umask()

    # the checkpoint holds the trained network: its validation logits give the reported mAP and F1
    from eatkit.encoders.checkpoints import load_checkpoint_into
    from eatkit.encoders.finetune import coco_multilabel
    from eatkit.encoders.image_models import TimmFeatures

    net = timm.create_model("test_resnet", pretrained=False, num_classes=2)
    load_checkpoint_into(net, result.checkpoint, "timm:test_resnet")
    net.eval()
    files, _, y = coco_multilabel(val[0], val[2], ["person", "car"])
    prep = TimmFeatures("test_resnet", pretrained=False, cache=False).preprocessing
    with torch.inference_mode():
        logits = net(torch.from_numpy(np.stack([prep.array(f) for f in files]))).numpy()
    assert mean_average_precision(y, logits) == pytest.approx(last.map, abs=1e-6)
    assert micro_f1(y, logits >= 0) == pytest.approx(last.micro_f1)


def test_checkpoint_loads_as_an_eatkit_model(tuned, tmp_path):
    from eatkit.registry import build_model
    from eatkit.stimuli.images import resolve_image_set
    from eatkit.stimuli.types import StimulusSet

    result, val, _ = tuned
    encoder = build_model("timm:test_resnet", checkpoint=result.checkpoint, cache=False)
    assert encoder.weights.startswith("checkpoint ft.safetensors sha256:")
    images = resolve_image_set(StimulusSet("v", "image", category="val"), val[2].parent)
    features = encoder.embed(images).vectors
    net = timm.create_model("test_resnet", pretrained=False, num_classes=2)
    from eatkit.encoders.checkpoints import load_checkpoint_into

    load_checkpoint_into(net, result.checkpoint, "x")
    net.eval()
    with torch.inference_mode():
        x = torch.from_numpy(np.stack([encoder.preprocessing.array(f) for f in images.items]))
        expected = net.forward_head(net.forward_features(x), pre_logits=True).numpy()
    np.testing.assert_allclose(features, expected, rtol=1e-5, atol=1e-6)


def test_checkpoint_that_does_not_fit(tuned, tmp_path):
    from safetensors.torch import save_file

    from eatkit.registry import build_model

    result, val, _ = tuned
    with pytest.raises(EatkitError, match="was fine-tuned from timm:test_resnet .* does not fit timm:test_vit"):
        build_model("timm:test_vit", checkpoint=result.checkpoint, cache=False)
    plain = tmp_path / "plain.safetensors"
    save_file({"conv1.weight": torch.zeros(3)}, str(plain))
    encoder = build_model("timm:test_resnet", checkpoint=plain, cache=False)
    with pytest.raises(EatkitError, match="plain.safetensors does not fit timm:test_resnet: .*missing tensor"):
        encoder._load()
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"\x80\x04not a safetensors file")
    with pytest.raises(EatkitError, match="junk.pt is not a safetensors file"):
        build_model("timm:test_resnet", checkpoint=junk, cache=False)
    with pytest.raises(EatkitError, match="checkpoint .*missing.safetensors not found"):
        build_model("timm:test_resnet", checkpoint=tmp_path / "missing.safetensors", cache=False)


def test_finetune_bad_options(tmp_path):
    from eatkit.encoders.finetune import finetune

    train = write_coco(tmp_path, _split(4, 1), size=8)
    with pytest.raises(EatkitError, match=re.escape("epochs must be an integer in [1, 100000], got 0")):
        finetune("timm:test_resnet", train[0], train[2], tmp_path / "x", epochs=0, pretrained=False)
    with pytest.raises(EatkitError, match="cannot fine-tune 'glove-6b-50d'"):
        finetune("glove-6b-50d", train[0], train[2], tmp_path / "x", pretrained=False)
    with pytest.raises(EatkitError, match="category 'surfboard' is not in"):
        finetune("timm:test_resnet", train[0], train[2], tmp_path / "x", categories=["surfboard"])
    with pytest.raises(EatkitError, match="is not a COCO instances file"):
        finetune("timm:test_resnet", train[1], train[2], tmp_path / "x")
    with pytest.raises(EatkitError, match="--no-pretrained .pretrained=False. does not apply to efficientnet_lite0"):
        finetune("efficientnet_lite0", train[0], train[2], tmp_path / "x", pretrained=False)


def test_metrics_match_scikit_learn():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, size=(40, 5))
    y[:, 4] = 0
    scores = np.round(rng.normal(size=(40, 5)), 1)   # rounded: many tied scores
    ap = average_precisions(y, scores)
    for j in range(4):
        assert ap[j] == pytest.approx(metrics.average_precision_score(y[:, j], scores[:, j]))
    assert np.isnan(ap[4])   # no positive example
    assert mean_average_precision(y, scores) == pytest.approx(np.mean(ap[:4]))
    pred = scores > 0
    assert micro_f1(y, pred) == pytest.approx(metrics.f1_score(y, pred, average="micro"))


def test_torchvision_classifier_and_checkpoint(tmp_path):
    from eatkit.encoders.checkpoints import save_checkpoint
    from eatkit.encoders.finetune import classifier
    from eatkit.registry import build_model

    torch.manual_seed(0)
    net, prep, weights, arch = classifier("torchvision:resnet18", 3, pretrained=False)
    assert net.fc.out_features == 3 and arch == "torchvision:resnet18" and weights.startswith("random")
    path = save_checkpoint(tmp_path / "tv.safetensors", net, {"architecture": arch, "num_classes": 3})
    encoder = build_model("torchvision:resnet18", checkpoint=path, cache=False)
    encoder._load()
    x = torch.from_numpy(np.random.default_rng(0).normal(size=(2, 3, 64, 64)).astype(np.float32))
    net.fc = torch.nn.Identity()
    net.eval()
    with torch.inference_mode():
        expected = net(x).numpy()
    np.testing.assert_allclose(encoder._encode("image", list(x.numpy())), expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(EatkitError, match="fine-tuned from None \\(torchvision:resnet18\\), which does not fit "
                                          "timm:test_resnet"):
        build_model("timm:test_resnet", checkpoint=path, cache=False)
