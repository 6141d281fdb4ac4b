"""A tiny COCO-format data set written by tests: images, instances_*.json and captions_*.json."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

CATEGORIES = [{"id": 1, "name": "person", "supercategory": "person"},
              {"id": 3, "name": "car", "supercategory": "vehicle"},
              {"id": 13, "name": "stop sign", "supercategory": "outdoor"},
              {"id": 82, "name": "refrigerator", "supercategory": "appliance"}]


def write_coco(root: Path, images: dict[int, tuple[list[str], list[str]]], *, split: str = "train",
               pixels: bool = True, size: int = 16, categories: list[dict] = CATEGORIES) -> tuple[Path, Path, Path]:
    """Write ``root/{split}/<id>.png`` (when ``pixels``) and the two annotation files for ``images``
    (image id -> (category names, captions)) with ``categories`` (COCO's ids and names); returns
    (instances, captions, image folder).

    Each category paints its own colour block, so a model can learn the labels."""
    ids = {c["name"]: c["id"] for c in categories}
    folder = root / split
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    entries, anns, caps = [], [], []
    for image_id, (cats, captions) in images.items():
        name = f"{image_id:06d}.png"
        entries.append({"id": image_id, "file_name": name, "width": size, "height": size})
        for cat in cats:
            anns.append({"id": len(anns) + 1, "image_id": image_id, "category_id": ids[cat],
                         "bbox": [0, 0, 4, 4], "area": 16, "iscrowd": 0})
        for text in captions:
            caps.append({"id": len(caps) + 1, "image_id": image_id, "caption": text})
        if pixels:
            from PIL import Image

            arr = rng.integers(0, 60, size=(size, size, 3)).astype(np.uint8)
            if "car" in cats:
                arr[: size // 2, : size // 2, 0] = 250
            if "person" in cats:
                arr[size // 2:, size // 2:, 2] = 250
            Image.fromarray(arr).save(folder / name)
    instances = root / f"instances_{split}.json"
    instances.write_text(json.dumps({"images": entries, "annotations": anns, "categories": categories}))
    captions_file = root / f"captions_{split}.json"
    captions_file.write_text(json.dumps({"images": entries, "annotations": caps}))
    return instances, captions_file, folder
