"""``eatkit analysis-set``: build an analysis set (classes of images) for geometry tests (seed 004)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from eatkit.cli import add_declared, declared_warnings, print_warnings
from eatkit.errors import EatkitError
from eatkit.io import atomic_write_bytes, check_output_file, read_json


def register(sub: Any) -> None:
    aset = sub.add_parser("analysis-set", help="build a geometry analysis set from COCO annotations or folders",
                          description="Build classes of images (man, woman, <object>, <object>+man, "
                          "<object>+woman, random, stop-sign) from COCO-format annotations or Open Images box "
                          "annotations, or take DIR/<class>/* "
                          "folders, and write a suite of one geometry test for 'eatkit run'.")
    aset.add_argument("source", choices=("coco", "open-images", "folders"))
    aset.add_argument("--instances", type=Path, help="coco: instances_*.json")
    aset.add_argument("--captions", type=Path, help="coco: captions_*.json (gender from caption words)")
    aset.add_argument("--boxes", type=Path, help="open-images: the box annotations, *-annotations-bbox.csv")
    aset.add_argument("--class-descriptions", type=Path,
                      help="open-images: class-descriptions-boxable.csv (label id, display name)")
    aset.add_argument("--images", type=Path, required=True,
                      help="coco, open-images: the image folder (open-images: <ImageID>.jpg); folders: DIR")
    aset.add_argument("--objects", help="coco, open-images: comma-separated object categories, e.g. car,refrigerator,surfboard")
    aset.add_argument("--classes", help="folders: comma-separated class folders (default: all)")
    add_declared(aset, "analysis-set", "per_class")
    aset.add_argument("--seed", type=int, default=0, help="coco: seed of the sampling (default 0)")
    aset.add_argument("--lexicon", type=Path, help='coco: JSON {"man": [...], "woman": [...]} of caption words')
    aset.add_argument("--no-control", action="store_true", help="coco: no stop-sign control class")
    aset.add_argument("--exclusive", action="store_true",
                      help="coco: object and gender classes take only images with no other annotated category")
    aset.add_argument("--output", "-o", type=Path, required=True,
                      help="coco: a new folder (images/<class>/ links and suite.json); folders: the suite file")
    aset.set_defaults(func=_cmd_analysis_set)


def _cmd_analysis_set(args: argparse.Namespace) -> int:
    aset, suite, images = {"folders": _folders, "open-images": _open_images, "coco": _coco}[args.source](args)
    width = max(len(n) for n in aset.classes)
    for name, n in aset.sizes().items():
        print(f"{name:{width}s} {n:6d} images ({aset.available.get(name, n)} available)")
    print(f"wrote {suite}; run it with: eatkit run {suite} --images {images} --model <image model>")
    print_warnings(declared_warnings("analysis-set", args))  # recorded in the suite's source by the analysis set
    return 0


def _objects(args: argparse.Namespace) -> list[str]:
    return [o.strip() for o in args.objects.split(",") if o.strip()]


def _folders(args: argparse.Namespace) -> tuple[Any, Path, Path]:
    from eatkit.stimuli.analysis_sets import folder_analysis_set

    classes = [c.strip() for c in args.classes.split(",")] if args.classes else None
    out = check_output_file(args.output, "suite file", inputs=[args.images])  # never over a user's file
    aset = folder_analysis_set(args.images, classes)
    atomic_write_bytes(out, (json.dumps(aset.suite(), indent=1) + "\n").encode("utf-8"))
    return aset, args.output, args.images


def _open_images(args: argparse.Namespace) -> tuple[Any, Path, Path]:
    from eatkit.stimuli.analysis_sets import open_images_analysis_set

    if not (args.boxes and args.class_descriptions and args.objects):
        raise EatkitError("analysis-set open-images needs --boxes, --class-descriptions and --objects")
    if args.lexicon:
        raise EatkitError("--lexicon applies to coco (Open Images labels say the gender)")
    aset = open_images_analysis_set(args.boxes, args.class_descriptions, args.images, _objects(args),
                                    per_class=args.per_class, seed=args.seed, control=not args.no_control,
                                    exclusive=args.exclusive)
    return aset, aset.write(args.output), args.output / "images"


def _coco(args: argparse.Namespace) -> tuple[Any, Path, Path]:
    from eatkit.stimuli.analysis_sets import coco_analysis_set

    if not (args.instances and args.captions and args.objects):
        raise EatkitError("analysis-set coco needs --instances, --captions and --objects")
    aset = coco_analysis_set(args.instances, args.captions, args.images, _objects(args), per_class=args.per_class,
                             seed=args.seed, lexicon=_lexicon(args.lexicon), control=not args.no_control,
                             exclusive=args.exclusive)
    return aset, aset.write(args.output), args.output / "images"


def _lexicon(path: Path | None) -> dict[str, list[str]] | None:
    """The coco gender lexicon of --lexicon (word lists by gender), or None."""
    if path is None:
        return None
    lexicon = read_json(path, "lexicon")  # the one reader: regular files only, bounded
    if not isinstance(lexicon, dict) or not all(isinstance(v, list) for v in lexicon.values()):
        raise EatkitError(f"the lexicon {path} must be a JSON object of word lists")
    return lexicon
