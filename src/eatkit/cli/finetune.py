"""``eatkit finetune``: fine-tune an image classifier on COCO-format data (multilabel; seed 004)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from eatkit.cli import add_declared, declared_warnings, print_warnings


def register(sub: Any) -> None:
    ft = sub.add_parser("finetune", help="fine-tune an image model on COCO-format data (multilabel)",
                        description="Fine-tune a timm, torchvision, EfficientNet-Lite or CLIP image-tower model for multilabel "
                        "classification (BCE with logits, SGD with momentum); print the validation mAP and "
                        "micro-F1 after each epoch; write a safetensors checkpoint that 'eatkit run --model "
                        "<model> --weights <checkpoint>' loads.")
    ft.add_argument("--model", required=True, help="timm:<name>, torchvision:<name>, efficientnet_lite0/1/2, "
                    "open_clip-image:<architecture>/<pretrained> or hf-clip-image:<name>")
    ft.add_argument("--instances", required=True, type=Path, help="COCO instances_*.json of the training images")
    ft.add_argument("--images", required=True, type=Path, help="folder of the training images")
    ft.add_argument("--val-instances", type=Path, help="COCO instances_*.json of a validation split")
    ft.add_argument("--val-images", type=Path, help="folder of the validation images (default: --images)")
    add_declared(ft, "finetune", "val_fraction")
    ft.add_argument("--categories", help="comma-separated category names to learn (default: all annotated)")
    add_declared(ft, "finetune", "epochs")
    ft.add_argument("--lr", type=float, default=0.001, help="learning rate (default 0.001, thesis Table 3)")
    add_declared(ft, "finetune", "batch_size")
    add_declared(ft, "finetune", "momentum")
    add_declared(ft, "finetune", "weight_decay")
    ft.add_argument("--scheduler", choices=("none", "plateau"), default="none",
                    help="plateau: reduce the learning rate when the validation loss stalls")
    ft.add_argument("--no-pretrained", action="store_true",
                    help="start from random weights (no download; not for efficientnet_lite)")
    ft.add_argument("--seed", type=int, default=0)
    ft.add_argument("--device", default="auto", help="auto (a GPU when present), cpu or cuda[:N]")
    add_declared(ft, "finetune", "workers")
    ft.add_argument("--output", "-o", type=Path, required=True, help="the checkpoint file to write (.safetensors)")
    ft.add_argument("--quiet", "-q", action="store_true")
    ft.set_defaults(func=_cmd_finetune)


def _cmd_finetune(args: argparse.Namespace) -> int:
    from eatkit.encoders.finetune import finetune

    categories = [c.strip() for c in args.categories.split(",") if c.strip()] if args.categories else None
    result = finetune(
        args.model, args.instances, args.images, args.output, val_instances=args.val_instances,
        val_images=args.val_images, val_fraction=args.val_fraction, categories=categories, epochs=args.epochs,
        lr=args.lr, batch_size=args.batch_size, momentum=args.momentum, weight_decay=args.weight_decay,
        scheduler=args.scheduler, pretrained=not args.no_pretrained, seed=args.seed, device=args.device,
        workers=args.workers, log=None if args.quiet else print,
    )
    print_warnings(declared_warnings("finetune", args))  # recorded in the metrics file by finetune
    if not args.quiet:
        last = result.history[-1]
        print(f"labels: {', '.join(result.labels)}; device {result.device}")
        print(f"final: mAP {last.map:.4f}, micro-F1 {last.micro_f1:.4f}")
        print(f"wrote {result.checkpoint} and {result.checkpoint}.json")
    return 0
