"""docs/models.md: every command it shows runs, on tiny stand-ins of the published files, and what it
records (weights identity, preprocessing) is what the page says; fine-tuning CLIP image towers."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from eatkit.cli import main
from tiny_coco import write_coco

from conftest import lazy_module, require
torch = lazy_module("torch")
require("timm")
require("open_clip")
require("transformers")
pytestmark = pytest.mark.slow   # builds several tiny networks and fine-tunes one (about a minute on 2 cores)

DOC = Path(__file__).resolve().parents[1] / "docs" / "models.md"


def doc_commands() -> list[str]:
    blocks = re.findall(r"```\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    return [line for block in blocks for line in block.splitlines() if line.startswith("eatkit ")]


def ieat_images(root: Path) -> Path:
    """insect-flower's four categories, three small random images each."""
    from PIL import Image

    rng = np.random.default_rng(0)
    for level, category in enumerate(("insect-flower/flower", "insect-flower/insect", "valence/pleasant",
                                      "valence/unpleasant")):
        (root / category).mkdir(parents=True)
        for i in range(3):
            pixels = np.clip(40 * level + rng.integers(0, 90, (36, 30, 3)), 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(root / category / f"{i}.png")
    return root


def test_the_documented_commands_run_on_tiny_stand_ins(tmp_path, monkeypatch, capsys):
    from tiny_published import moco_checkpoint, simclr_state, slip_checkpoint
    from tiny_vl import tiny_clip

    monkeypatch.chdir(tmp_path)
    ieat_images(tmp_path / "ieat-images")
    torch.save({"resnet": simclr_state((1, 1, 1, 1), 8, True), "head": {}}, "r152_3x_sk1.pth")
    moco_checkpoint(tmp_path / "moco_v2_800ep_pretrain.pth.tar", "v2")
    slip_checkpoint(tmp_path / "slip_base_100ep.pt")
    tiny_clip(tmp_path / "clip-vit-base-patch32")
    write_coco(tmp_path, {i: ((["person"] if i % 2 else ["car"]), ["x"]) for i in range(1, 7)}, split="train2017")
    commands = doc_commands()
    assert len(commands) == 5
    for command in commands:
        code = main(shlex.split(command)[1:])
        assert code == 0, (command, capsys.readouterr().err)
    capsys.readouterr()
    manifests = {name: json.loads((tmp_path / name / "manifest.json").read_text())
                 for name in ("simclr", "moco", "slip", "clip-coco")}
    text = json.dumps(manifests)
    for name, file in (("simclr", "r152_3x_sk1.pth"), ("moco", "moco_v2_800ep_pretrain.pth.tar"),
                       ("slip", "slip_base_100ep.pt"), ("clip-coco", "clip-coco.safetensors")):
        assert re.search(rf"checkpoint {re.escape(file)} sha256:[0-9a-f]{{64}}", json.dumps(manifests[name])), name
    assert '"std": [1.0, 1.0, 1.0]' in json.dumps(manifests["simclr"]) and '"checkpoint_model": "SLIP_VITS16"' in text


def test_open_clip_tower_fine_tunes_and_loads_as_the_trained_tower(tmp_path):
    import open_clip

    from eatkit.encoders.finetune import finetune
    from eatkit.registry import build_model
    from eatkit.stimuli.types import StimulusSet

    config = {"embed_dim": 16, "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 8,
                                              "head_width": 16},
              "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 16, "heads": 1, "layers": 1}}
    (tmp_path / "eatkit-ft-tower.json").write_text(json.dumps(config))
    open_clip.add_model_config(tmp_path / "eatkit-ft-tower.json")
    torch.manual_seed(0)
    torch.save(open_clip.create_model("eatkit-ft-tower").state_dict(), tmp_path / "w.pt")
    train = write_coco(tmp_path, {i: ((["person"] if i % 2 else ["car"]), ["x"]) for i in range(1, 9)})
    name = f"open_clip-image:eatkit-ft-tower/{tmp_path / 'w.pt'}"
    result = finetune(name, train[0], train[2], tmp_path / "ft.safetensors", epochs=1, batch_size=4, lr=0.01,
                      device="cpu")
    meta = json.loads((tmp_path / "ft.safetensors.json").read_text())
    assert meta["architecture"] == "open_clip-image:eatkit-ft-tower" and meta["num_classes"] == 2
    enc = build_model(name, checkpoint=result.checkpoint, cache=False, device="cpu")
    images = StimulusSet("i", "image", tuple(str(p) for p in sorted(train[2].iterdir())[:3]))
    ours = enc.embed(images).vectors
    from safetensors.torch import load_file

    tuned = load_file(str(result.checkpoint))
    base = open_clip.create_model("eatkit-ft-tower", pretrained=str(tmp_path / "w.pt"))
    before = {k: v.clone() for k, v in base.visual.state_dict().items()}
    base.visual.load_state_dict({k[2:]: v for k, v in tuned.items() if k.startswith("0.")})
    assert any(not torch.equal(before[k], tuned["0." + k]) for k in before)   # training changed the tower
    x = torch.from_numpy(np.stack([enc.preprocessing.array(p) for p in images.items]))
    with torch.inference_mode():
        np.testing.assert_allclose(ours, base.eval().encode_image(x).numpy(), rtol=1e-5, atol=1e-6)
