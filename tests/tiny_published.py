"""Tiny stand-ins of published checkpoints, written in their authors' layouts (keys and shapes as the
original code saves them): MoCo v2/v3 (facebookresearch/moco, moco-v3), SimCLRv2 converted to PyTorch
(Separius/SimCLRv2-Pytorch) and SLIP (facebookresearch/SLIP)."""

from __future__ import annotations

import argparse
import pathlib

from conftest import lazy_module

torch = lazy_module("torch")


def randomise_batch_norms(net):
    """Non-trivial running statistics, so that evaluation-mode batch norm matters."""
    gen = torch.Generator().manual_seed(3)
    for m in net.modules():
        if isinstance(m, (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)):
            m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=gen) + 0.5)


# -- MoCo v2 / v3 ------------------------------------------------------------------------------------


def moco_checkpoint(path, version):
    """A MoCo checkpoint as main_moco.py saves it: epoch, arch, the DistributedDataParallel state dict of
    the whole MoCo module (``module.`` prefix; v2: encoder_q/encoder_k with an MLP fc and the queue; v3:
    base_encoder/momentum_encoder with a BN MLP fc and the predictor) and the optimizer state."""
    from torchvision.models.resnet import Bottleneck, ResNet

    torch.manual_seed(0)
    nets = {}
    for role in (("encoder_q", "encoder_k") if version == "v2" else ("base_encoder", "momentum_encoder")):
        net = ResNet(Bottleneck, [1, 2, 1, 1])
        randomise_batch_norms(net)
        net.fc = (torch.nn.Sequential(torch.nn.Linear(2048, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 128))
                  if version == "v2" else
                  torch.nn.Sequential(torch.nn.Linear(2048, 64, bias=False), torch.nn.BatchNorm1d(64),
                                      torch.nn.ReLU(), torch.nn.Linear(64, 32, bias=False),
                                      torch.nn.BatchNorm1d(32, affine=False)))
        nets[role] = net
    state = {f"module.{role}.{k}": v for role, net in nets.items() for k, v in net.state_dict().items()}
    if version == "v2":
        state |= {"module.queue": torch.randn(128, 16), "module.queue_ptr": torch.zeros(1, dtype=torch.long)}
    else:
        state |= {"module.predictor.0.weight": torch.randn(64, 32)}
    optimizer = torch.optim.SGD(nets[next(iter(nets))].parameters(), lr=0.03, momentum=0.9)
    torch.save({"epoch": 200, "arch": "resnet50", "state_dict": state, "optimizer": optimizer.state_dict()}, path)
    reference = nets[next(iter(nets))]
    reference.fc = torch.nn.Identity()
    return reference.eval()


def conv(state, key, cout, cin, k):
    state[key] = torch.randn(cout, cin, k, k) * (2.0 / (cin * k * k)) ** 0.5


def bn(state, key, c):
    state |= {f"{key}.weight": 1 + 0.1 * torch.randn(c), f"{key}.bias": 0.1 * torch.randn(c),
              f"{key}.running_mean": 0.1 * torch.randn(c), f"{key}.running_var": torch.rand(c) + 0.5,
              f"{key}.num_batches_tracked": torch.tensor(0)}


def simclr_state(layers, width, sk, sk_ratio=0.0625, min_dim=4):
    """The ``resnet`` state dict of Separius/SimCLRv2-Pytorch's resnet.py (as convert.py saves it) for a
    ResNet of ``layers`` blocks with stage widths ``width * (64, 128, 256, 512) / 64``, written out key by key."""
    torch.manual_seed(0)
    s: dict = {}
    half = width // 2
    if sk:  # Stem: conv3x3/2, BN-ReLU, conv3x3, BN-ReLU, conv3x3, BN-ReLU, maxpool
        conv(s, "net.0.0.weight", half, 3, 3), bn(s, "net.0.1.0", half), conv(s, "net.0.2.weight", half, half, 3)
        bn(s, "net.0.3.0", half), conv(s, "net.0.4.weight", width, half, 3), bn(s, "net.0.5.0", width)
    else:
        conv(s, "net.0.0.weight", width, 3, 7), bn(s, "net.0.1.0", width)
    cin = width
    for stage, n in enumerate(layers, start=1):
        c = width * 2 ** (stage - 1)
        for b in range(n):
            p = f"net.{stage}.blocks.{b}"
            if b == 0:
                conv(s, f"{p}.projection.shortcut{'.2' if sk else ''}.weight", 4 * c, cin, 1)
                bn(s, f"{p}.projection.bn.0", 4 * c)
            conv(s, f"{p}.net.0.weight", c, cin if b == 0 else 4 * c, 1), bn(s, f"{p}.net.1.0", c)
            if sk:
                mid = max(int(c * sk_ratio), min_dim)
                conv(s, f"{p}.net.2.main_conv.0.weight", 2 * c, c, 3), bn(s, f"{p}.net.2.main_conv.1.0", 2 * c)
                conv(s, f"{p}.net.2.mixing_conv.0.weight", mid, c, 1), bn(s, f"{p}.net.2.mixing_conv.1.0", mid)
                conv(s, f"{p}.net.2.mixing_conv.2.weight", 2 * c, mid, 1)
                conv(s, f"{p}.net.3.weight", 4 * c, c, 1), bn(s, f"{p}.net.4.0", 4 * c)
            else:
                conv(s, f"{p}.net.2.weight", c, c, 3), bn(s, f"{p}.net.3.0", c)
                conv(s, f"{p}.net.4.weight", 4 * c, c, 1), bn(s, f"{p}.net.5.0", 4 * c)
        cin = 4 * c
    s |= {"fc.weight": torch.randn(10, cin), "fc.bias": torch.randn(10)}
    return s


def slip_checkpoint(path, *, slip=True, text_width=16, text_layers=2):
    """A SLIP checkpoint as main.py saves it: ``state_dict`` of the DistributedDataParallel SLIP module
    (``module.``; visual = a timm VisionTransformer with num_classes=0; the CLIP text transformer with
    nn.MultiheadAttention; projections; the SimCLR head image_mlp) and ``args`` an argparse.Namespace."""
    import timm

    torch.manual_seed(0)
    visual = timm.models.vision_transformer.VisionTransformer(img_size=224, patch_size=16, embed_dim=32, depth=2,
                                                              num_heads=1, num_classes=0)
    s = {f"visual.{k}": v.clone() for k, v in visual.state_dict().items()}
    s["visual.pos_embed"] = torch.randn_like(s["visual.pos_embed"]) * 0.1
    s["visual.cls_token"] = torch.randn_like(s["visual.cls_token"])
    w = text_width
    for i in range(text_layers):
        p = f"transformer.resblocks.{i}"
        s |= {f"{p}.attn.in_proj_weight": torch.randn(3 * w, w) * w ** -0.5,
              f"{p}.attn.in_proj_bias": torch.randn(3 * w) * 0.1,
              f"{p}.attn.out_proj.weight": torch.randn(w, w) * w ** -0.5,
              f"{p}.attn.out_proj.bias": torch.randn(w) * 0.1,
              f"{p}.ln_1.weight": 1 + 0.1 * torch.randn(w), f"{p}.ln_1.bias": 0.1 * torch.randn(w),
              f"{p}.mlp.c_fc.weight": torch.randn(4 * w, w) * w ** -0.5, f"{p}.mlp.c_fc.bias": 0.1 * torch.randn(4 * w),
              f"{p}.mlp.c_proj.weight": torch.randn(w, 4 * w) * (4 * w) ** -0.5,
              f"{p}.mlp.c_proj.bias": 0.1 * torch.randn(w),
              f"{p}.ln_2.weight": 1 + 0.1 * torch.randn(w), f"{p}.ln_2.bias": 0.1 * torch.randn(w)}
    s |= {"token_embedding.weight": torch.randn(49408, w) * 0.02, "positional_embedding": torch.randn(77, w) * 0.01,
          "ln_final.weight": torch.ones(w), "ln_final.bias": torch.zeros(w),
          "image_projection": torch.randn(32, 8), "text_projection": torch.randn(w, 8),
          "logit_scale": torch.tensor(2.6)}
    if slip:
        for name, shape in (("layer1", (24, 32)), ("layer2", (24, 24)), ("layer3", (6, 24))):
            s |= {f"image_mlp.{name}.weight": torch.randn(shape), f"image_mlp.{name}.bias": torch.zeros(shape[0])}
        for name in ("bn1", "bn2"):
            s |= {f"image_mlp.{name}.weight": torch.ones(24), f"image_mlp.{name}.bias": torch.zeros(24),
                  f"image_mlp.{name}.running_mean": torch.zeros(24), f"image_mlp.{name}.running_var": torch.ones(24),
                  f"image_mlp.{name}.num_batches_tracked": torch.tensor(0)}
    # SLIP's submitit launcher stores its folders as paths in args (run_with_submitit.py: job_dir, output_dir)
    args = argparse.Namespace(model="SLIP_VITS16" if slip else "CLIP_VITS16", ssl_mlp_dim=24, ssl_emb_dim=6,
                              output_dir=pathlib.PosixPath("/checkpoint/slip/run"),
                              job_dir=pathlib.PosixPath("/checkpoint/slip/run/%j"))
    torch.save({"epoch": 25, "state_dict": {f"module.{k}": v for k, v in s.items()}, "optimizer": {},
                "scaler": {}, "best_acc1": 0.0, "args": args}, path)
    return s, visual
