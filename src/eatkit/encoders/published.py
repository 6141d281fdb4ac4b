"""Self-supervised ResNets from the checkpoints their authors (or converters) published: MoCo v2 and v3
ResNet-50 (seed 004) and SimCLRv2's selective-kernel ResNets (iEAT, seed 000).

Embedding definitions (each the globally average-pooled output of the last residual stage, the
"penultimate layer" of seed 004 and SimCLRv2's ``h_i`` "after the average pooling layer" of seed 000 §4.2;
projection heads and classifiers are not applied):

- **MoCo** (:class:`MoCoResNet`): a torchvision ResNet with bottleneck blocks (ResNet-50: 3, 4, 6, 3
  blocks) loaded from the query encoder of a MoCo v2 checkpoint (``state_dict`` keys
  ``module.encoder_q.*``, facebookresearch/moco) or the base encoder of a MoCo v3 checkpoint
  (``module.base_encoder.*``, facebookresearch/moco-v3), without their ``fc`` heads (as their linear
  evaluation scripts load them). Preprocessing: the ImageNet evaluation transform of both repositories
  (shorter side 256, bilinear, centre crop 224, ImageNet mean and std).
- **SimCLRv2** (:class:`SimCLRv2ResNet`): the ResNet of the PyTorch conversion of the TensorFlow
  checkpoints (Separius/SimCLRv2-Pytorch ``convert.py``: a ``{"resnet": ..., "head": ...}`` file; the
  paper's model is ``r152_3x_sk1``). Depth, width and selective kernels are read from the checkpoint's
  shapes. Preprocessing: the converter's evaluation transform (shorter side 256, bilinear, centre crop
  224, pixels in [0, 1] with no mean/std normalisation, as SimCLR's TensorFlow code feeds them).

A checkpoint is read without running code (``torch.load(weights_only=True)`` or safetensors); one that
does not fit the architecture is a one-line error naming the first missing or unexpected key, and
nothing is loaded.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eatkit.encoders.checkpoints import checkpoint_identity, load_state_strict, required_checkpoint
from eatkit.encoders.image_models import ClassifierFeatures
from eatkit.encoders.images import Preprocessing
from eatkit.errors import EatkitError
from eatkit.io import load_torch_weights, require

#: the ImageNet evaluation transform of the MoCo repositories (torchvision Resize(256), CenterCrop(224))
IMAGENET_EVAL = Preprocessing(size=224, crop="resize-shorter+center-crop", resize=256, interpolation="bilinear")
#: the SimCLRv2 converter's evaluation transform: the same geometry, pixels in [0, 1] (ToTensor only)
SIMCLR_EVAL = Preprocessing(size=224, crop="resize-shorter+center-crop", resize=256, interpolation="bilinear",
                            mean=(0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0))
#: where each MoCo version keeps the encoder whose features are used, inside the ``state_dict`` entry
MOCO_PREFIXES: dict[str, str] = {"v2": "module.encoder_q.", "v3": "module.base_encoder."}


def published_state(path: str | Path, entry: str, prefix: str, model: str,
                    allow: tuple[type, ...] = ()) -> tuple[dict[str, Any], Any]:
    """The tensors of checkpoint ``path`` under ``entry`` whose keys start with ``prefix``, with the prefix
    removed, and the whole checkpoint; a checkpoint without them is an error naming what was expected."""
    checkpoint = load_torch_weights(path, allow)
    state = checkpoint.get(entry) if isinstance(checkpoint, dict) else None
    if not isinstance(state, dict):
        raise EatkitError(f"checkpoint {path} has no '{entry}' entry of tensors (is it a {model} checkpoint?)")
    picked = {k[len(prefix):]: v for k, v in state.items() if isinstance(k, str) and k.startswith(prefix)}
    if not picked:
        first = next(iter(state), "none")
        raise EatkitError(f"checkpoint {path} has no key starting with '{prefix}' (first key: {first}; is it a "
                          f"{model} checkpoint?)")
    return picked, checkpoint


def blocks_per_stage(state: dict[str, Any], pattern: str, first: int, path: Path, model: str) -> list[int]:
    r"""How many residual blocks each of the four stages holds, counted from the keys (``pattern`` has two
    groups: the stage, numbered from ``first``, and the block); a stage without blocks is an error.

    >>> blocks_per_stage({f"layer{s}.{b}.w": 0 for s in (1, 2, 3, 4) for b in range(s)}, r"layer(\d)\.(\d+)\.",
    ...                  1, Path("x.pt"), "m")
    [1, 2, 3, 4]
    """
    counts = [0] * 4
    for key in state:
        found = re.match(pattern, key)
        if found and 0 <= int(found[1]) - first < 4:
            stage = int(found[1]) - first
            counts[stage] = max(counts[stage], int(found[2]) + 1)
    if not all(counts):
        raise EatkitError(f"checkpoint {path} does not fit {model}: it has no blocks in stage {counts.index(0) + 1}")
    return counts


class PublishedResNet(ClassifierFeatures):
    """A ResNet whose weights come from a published checkpoint file (``checkpoint``, the ``--weights`` of
    ``eatkit run``): the weights identity is the file's name and SHA-256."""

    #: the model name and its preprocessing (subclasses)
    family: str = ""
    default_preprocessing: Preprocessing = IMAGENET_EVAL

    def __init__(self, *, checkpoint: str | Path | None = None, crop: str | None = None,
                 interpolation: str | None = None, id: str | None = None, **options: Any) -> None:
        self._path = required_checkpoint(self.family, checkpoint)
        super().__init__(id=id or self.family, model=self.family, weights=checkpoint_identity(self._path),
                         preprocessing=self.default_preprocessing, crop=crop, interpolation=interpolation,
                         **options)


class MoCoResNet(PublishedResNet):
    """MoCo v2 (``version="v2"``) or v3 (``"v3"``) ResNet features from the authors' checkpoint
    (``moco_v2_800ep_pretrain.pth.tar``, ``r-50-1000ep.pth.tar``): the 2048-d global average pool.

    The number of blocks per stage is counted from the checkpoint (ResNet-50: 3, 4, 6, 3).
    """

    libraries = ("torch", "torchvision", "pillow")

    def __init__(self, version: str = "v2", **options: Any) -> None:
        if version not in MOCO_PREFIXES:
            raise EatkitError(f"unknown MoCo version '{version}' (known: {', '.join(MOCO_PREFIXES)})")
        self.version = version
        self.family = f"moco-{version}-resnet50"
        super().__init__(**options)

    def config(self) -> dict[str, Any]:
        return {**super().config(), "checkpoint_layout": f"state_dict/{MOCO_PREFIXES[self.version]}* without fc"}

    def _build(self) -> Callable[[Any], Any]:
        torch = require("torch", self.family, "image")
        resnet = require("torchvision.models.resnet", self.family, "image")
        state, _ = published_state(self._path, "state_dict", MOCO_PREFIXES[self.version], self.family)
        state = {k: v for k, v in state.items() if not k.startswith("fc.")}
        if any(k.startswith(("blocks.", "patch_embed.")) for k in state):  # MoCo v3's vit_small / vit_base
            raise EatkitError(f"checkpoint {self._path} is a MoCo {self.version} ViT (keys blocks.*, patch_embed.*): "
                              f"not supported; {self.family} reads the authors' ResNet-50 checkpoints only")
        layers = blocks_per_stage(state, r"layer(\d)\.(\d+)\.", 1, self._path, self.family)
        net = resnet.ResNet(resnet.Bottleneck, layers)
        net.fc = torch.nn.Identity()
        load_state_strict(net, state, f"checkpoint {self._path}", self.family)
        return self._place(net)


class SimCLRv2ResNet(PublishedResNet):
    """SimCLRv2 ResNet features from the converted checkpoint (``r152_3x_sk1.pth``, whose ``resnet``
    entry holds the network): the global average pool of the last stage (6144-d for ResNet-152 3x SK).

    The network (:func:`sk_resnet`) is rebuilt from the checkpoint's shapes: blocks per stage, channels,
    and selective kernels when the blocks have them.
    """

    family = "simclrv2"
    default_preprocessing = SIMCLR_EVAL
    libraries = ("torch", "pillow")

    def config(self) -> dict[str, Any]:
        return {**super().config(), "checkpoint_layout": "resnet/* (Separius/SimCLRv2-Pytorch convert.py)"}

    def _build(self) -> Callable[[Any], Any]:
        state, _ = published_state(self._path, "resnet", "", self.family)
        net = sk_resnet(state, self._path, self.family)
        load_state_strict(net, state, f"checkpoint {self._path}", self.family)
        net = self._place(net)
        return lambda x: net.net(x).mean(dim=(2, 3))


def sk_resnet(state: dict[str, Any], path: Path, model: str) -> Any:
    """SimCLRv2's ResNet (Chen et al. 2020, "Big Self-Supervised Models are Strong Semi-Supervised
    Learners", §3 and appendix) with the module names of the PyTorch conversion, sized from ``state``.

    Bottleneck blocks (1x1, 3x3, 1x1 convolutions, batch norm with epsilon 1e-5); with selective kernels
    (SK, Li et al. 2019) the 3x3 convolution yields two branches of which a softmax over a squeezed,
    two-layer mixing convolution takes a per-channel convex combination, the stem is three 3x3
    convolutions, and the projection shortcut of a strided block is 2x2 average pooling (after padding
    the right and bottom edge by one) then a 1x1 convolution.
    """
    torch = require("torch", model, "image")
    nn = torch.nn
    layers = blocks_per_stage(state, r"net\.(\d)\.blocks\.(\d+)\.", 1, path, model)
    sk = "net.1.blocks.0.net.2.mixing_conv.0.weight" in state

    def shape(key: str) -> tuple[int, ...]:
        if key not in state:
            raise EatkitError(f"checkpoint {path} does not fit {model}: 1 missing tensor(s) (e.g. {key})")
        return tuple(state[key].shape)

    def conv(cin: int, cout: int, k: int = 3, stride: int = 1) -> Any:
        return nn.Conv2d(cin, cout, k, stride=stride, padding=(k - 1) // 2, bias=False)

    def bn(channels: int, relu: bool = True) -> Any:
        return nn.Sequential(nn.BatchNorm2d(channels, eps=1e-5), nn.ReLU() if relu else nn.Identity())

    class SelectiveKernel(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int, mid: int) -> None:
            super().__init__()
            self.main_conv = nn.Sequential(conv(cin, 2 * cout, stride=stride), bn(2 * cout))
            self.mixing_conv = nn.Sequential(conv(cout, mid, 1), bn(mid), conv(mid, 2 * cout, 1))

        def forward(self, x: Any) -> Any:
            branches = torch.stack(torch.chunk(self.main_conv(x), 2, dim=1))        # (2, n, c, h, w)
            mix = self.mixing_conv(branches.sum(0).mean(dim=(2, 3), keepdim=True))  # (n, 2c, 1, 1)
            weights = torch.softmax(torch.stack(torch.chunk(mix, 2, dim=1)), dim=0)
            return (branches * weights).sum(0)

    class Projection(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.shortcut = (nn.Sequential(nn.ZeroPad2d((0, 1, 0, 1)), nn.AvgPool2d(2, stride), conv(cin, cout, 1))
                             if sk else conv(cin, cout, 1, stride))
            self.bn = bn(cout, relu=False)

        def forward(self, x: Any) -> Any:
            return self.bn(self.shortcut(x))

    class Block(nn.Module):
        def __init__(self, prefix: str, cin: int, width: int, stride: int, project: bool) -> None:
            super().__init__()
            self.projection = Projection(cin, 4 * width, stride) if project else nn.Identity()
            ops = [conv(cin, width, 1), bn(width)]
            if sk:
                ops.append(SelectiveKernel(width, width, stride, shape(f"{prefix}.net.2.mixing_conv.0.weight")[0]))
            else:
                ops += [conv(width, width, stride=stride), bn(width)]
            self.net = nn.Sequential(*ops, conv(width, 4 * width, 1), bn(4 * width, relu=False))

        def forward(self, x: Any) -> Any:
            return torch.relu(self.projection(x) + self.net(x))

    class Blocks(nn.Module):
        def __init__(self, stage: int, cin: int, stride: int) -> None:
            super().__init__()
            width = shape(f"net.{stage}.blocks.0.net.0.weight")[0]
            self.blocks = nn.ModuleList(
                Block(f"net.{stage}.blocks.{i}", cin if i == 0 else 4 * width, width, stride if i == 0 else 1, i == 0)
                for i in range(layers[stage - 1]))
            self.channels_out = 4 * width

        def forward(self, x: Any) -> Any:
            for block in self.blocks:
                x = block(x)
            return x

    half = shape("net.0.0.weight")[0]
    stem = ([conv(3, half, stride=2), bn(half), conv(half, half), bn(half), conv(half, 2 * half)] if sk
            else [conv(3, half, 7, 2)])
    channels = 2 * half if sk else half
    stages = [nn.Sequential(*stem, bn(channels), nn.MaxPool2d(3, 2, 1))]
    for stage in range(1, 5):
        stages.append(Blocks(stage, channels, 1 if stage == 1 else 2))
        channels = stages[-1].channels_out
    net = nn.Module()
    net.net = nn.Sequential(*stages)
    net.fc = nn.Linear(channels, shape("fc.weight")[0])
    return net
