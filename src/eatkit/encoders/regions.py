"""Image regions for the region-based joint encoders (VisualBERT, LXMERT) and for masking people.

A region file is one ``.npz`` per image, named ``<image file name without its extension>.npz`` and found
anywhere under the region folder (``--regions DIR``), with the arrays

==============  ============  ===========================================================================
``features``    (N, D) float  one feature vector per region (D: the model's visual feature size, 2048 for
                              the published VisualBERT and LXMERT checkpoints)
``boxes``       (N, 4) float  x1, y1, x2, y2 in pixels of the image as stored (0 <= x1 < x2 <= width)
``labels``      (N,) str      the detector's class name of each region (``"person"`` marks a person)
``image_size``  (2,) int      height and width of the image in pixels
==============  ============  ===========================================================================

``--regions FILE.th`` (also ``.pt``, ``.pth``) reads the Grounded-WEAT authors' format instead
(candacelax/bias-in-vision-and-language): ONE file written by ``torch.save`` of a dict from image file
name (with or without its suffix and a trailing ``.npz``, e.g. ``COCO_val2014_000000000042`` or
``male_lawyer_0.jpg.npz``) to a tuple ``(features (N, D), boxes (N, 4), confidence (N,))`` of tensors or
arrays. It is read with ``torch.load(weights_only=True)`` (numeric numpy arrays allowed): a file that
would run code is refused. An image is found in it by its name without suffix, as a ``.npz`` file is.
As the authors' VisualBERT loader screens them (VisualBERT's ``screen_feature`` with
``image_feature_cap`` 144 and no confidence threshold), the first 144 regions as stored are read; the
confidence is checked but selects nothing. The file holds no class names (so it cannot serve
``--mask vision``) and no image size: the size is that of the image file (``--images``).

``--regions fasterrcnn`` computes them instead with torchvision's Faster R-CNN (ResNet-50 FPN, COCO
classes): the detections (at most ``max_regions``, at least ``min_regions`` by score) and, as each
region's feature, the 2048-channel ResNet stage-5 map RoI-aligned to 7 x 7 in the box and averaged (the
bottom-up-attention recipe the published checkpoints were trained on, with another backbone). Its weights
are torchvision's ``COCO_V1`` (downloaded by torchvision on first use); tests build it without weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.errors import EatkitError, one_line
from eatkit.io import load_npz, load_torch_weights

PERSON = "person"
#: the suffixes of a one-file region table (``torch.save`` of a dict; the authors' files end in ``.th``)
TABLE_SUFFIXES = (".th", ".pt", ".pth")
#: the regions kept per image of a region table: the authors' VisualBERT loader's ``image_feature_cap``
TABLE_FEATURE_CAP = 144


@dataclass(frozen=True)
class Regions:
    """The regions of one image (see the module docstring)."""

    features: np.ndarray
    boxes: np.ndarray
    labels: tuple[str, ...]
    image_size: tuple[int, int]  # (height, width)

    def persons(self) -> np.ndarray:
        """A boolean mask of the regions labelled person."""
        return np.array([label == PERSON for label in self.labels], dtype=bool)

    def normalized_boxes(self) -> np.ndarray:
        """Boxes divided by the image width and height (LXMERT's ``visual_pos``)."""
        h, w = self.image_size
        return self.boxes / np.array([w, h, w, h], dtype=np.float64)


def load_regions(path: str | Path) -> Regions:
    """Read and check one region file; every problem is a one-line error naming the file.

    >>> import tempfile, pathlib; f = pathlib.Path(tempfile.mkdtemp()) / "a.npz"
    >>> np.savez(f, features=np.ones((1, 4)), boxes=[[0, 0, 5, 5]], labels=["person"], image_size=[10, 10])
    >>> load_regions(f).persons()
    array([ True])
    """
    arrays = load_npz(path, "region file")  # the one reader: regular files only, bounded, never pickles
    for key in ("features", "boxes", "labels", "image_size"):
        if key not in arrays:
            raise EatkitError(f"region file {path} has no '{key}' array (it needs features, boxes, labels, image_size)")
    features, boxes, labels, size = (arrays[k] for k in ("features", "boxes", "labels", "image_size"))
    n = features.shape[0] if features.ndim == 2 else -1
    if n < 1 or not np.issubdtype(features.dtype, np.number):
        raise EatkitError(f"region file {path}: 'features' must be a non-empty (N, D) numeric array, "
                          f"got shape {features.shape}")
    if boxes.shape != (n, 4) or labels.shape != (n,) or size.shape != (2,):
        raise EatkitError(f"region file {path}: expected boxes ({n}, 4), labels ({n},) and image_size (2,), got "
                          f"{boxes.shape}, {labels.shape} and {size.shape}")
    if not labels.dtype.kind == "U":
        raise EatkitError(f"region file {path}: 'labels' must be strings (class names), got {labels.dtype}")
    return _checked(f"region file {path}", features, boxes, tuple(str(v) for v in labels),
                    tuple(int(v) for v in size))


def _checked(where: str, features: np.ndarray, boxes: np.ndarray, labels: tuple[str, ...],
             size: tuple[int, ...]) -> Regions:
    """:class:`Regions` of arrays whose shapes were checked, once their values are."""
    features, boxes = features.astype(np.float32), boxes.astype(np.float64)
    if not (np.isfinite(features).all() and np.isfinite(boxes).all()):
        raise EatkitError(f"{where} has non-finite features or boxes")
    height, width = size
    if height < 1 or width < 1 or (boxes[:, 2] <= boxes[:, 0]).any() or (boxes[:, 3] <= boxes[:, 1]).any():
        raise EatkitError(f"{where}: image_size must be positive and every box x1 < x2, y1 < y2")
    return Regions(features, boxes, labels, (height, width))


def table_key(name: str) -> str:
    """The image a region-table key or a suite's image name stands for: its file name without a trailing
    ``.npz`` and without its suffix (the stem, as a ``.npz`` region file is named).

    >>> table_key("COCO_val2014_000000000042.jpg.npz"), table_key("2783726446")
    ('COCO_val2014_000000000042', '2783726446')
    """
    name = Path(name).name
    return Path(name[:-4] if name.lower().endswith(".npz") else name).stem


def _numpy_globals() -> list[Any]:
    """What ``torch.load(weights_only=True)`` needs to rebuild numeric numpy arrays (object arrays stay
    refused), under numpy 2's and numpy 1's module names."""
    reconstruct, scalar = np.ones(1).__reduce__()[0], np.float32(1).__reduce__()[0]  # numpy's own rebuilders
    dtypes = [type(np.dtype(t)) for t in ("f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "?")]
    return [np.ndarray, np.dtype, *dtypes, reconstruct, scalar, (reconstruct, "numpy.core.multiarray._reconstruct"),
            (scalar, "numpy.core.multiarray.scalar")]


class RegionTable:
    """The authors' one-file region features (``--regions FILE.th``, module docstring): read safely,
    checked per image when it is used.

    >>> import tempfile, pathlib, torch; p = pathlib.Path(tempfile.mkdtemp()) / "r.th"
    >>> torch.save({"a.jpg": (torch.ones(2, 4), torch.tensor([[0, 0, 5, 5], [1, 1, 3, 3]]), torch.ones(2))}, p)
    >>> table = RegionTable(p); key = table.key("a.png"); key
    'a.jpg'
    >>> table.regions(key, (10, 10)).normalized_boxes()[0].tolist()
    [0.0, 0.0, 0.5, 0.5]
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        data = load_torch_weights(self.path, tuple(_numpy_globals()), what="region file")
        if not isinstance(data, dict) or not data or not all(isinstance(k, str) for k in data):
            raise EatkitError(f"region file {self.path} must hold a non-empty dict from image file name to "
                              f"(features, boxes, confidence), got {type(data).__name__}")
        self._data, self._keys = data, {}
        for key in data:
            first = self._keys.setdefault(table_key(key), key)
            if first != key:
                raise EatkitError(f"region file {self.path} holds the image {table_key(key)} twice "
                                  f"({first!r}, {key!r})")

    def key(self, image: str) -> str | None:
        """The key of the suite's image ``image`` (found by its name without suffix), or None."""
        return self._keys.get(table_key(image))

    def regions(self, key: str, image_size: tuple[int, int]) -> Regions:
        """The first :data:`TABLE_FEATURE_CAP` regions of ``key`` in an image of (height, width)
        ``image_size``; they have no class names (empty labels)."""
        where = f"region file {self.path}, image {key!r}"
        value = self._data[key]
        if not isinstance(value, (tuple, list)) or len(value) != 3:
            length = f" of {len(value)}" if isinstance(value, (tuple, list)) else ""
            raise EatkitError(f"{where}: expected a tuple (features, boxes, confidence), got "
                              f"{type(value).__name__}{length}")
        try:
            features, boxes, confidence = (np.asarray(v.numpy() if hasattr(v, "numpy") else v) for v in value)
        except Exception as exc:  # noqa: BLE001 -- a tensor or array of an unreadable type
            raise EatkitError(f"{where}: {one_line(exc)}") from None
        n = features.shape[0] if features.ndim == 2 else -1
        if n < 1 or any(not np.issubdtype(a.dtype, np.number) for a in (features, boxes, confidence)) \
                or boxes.shape != (n, 4) or confidence.shape != (n,):
            raise EatkitError(f"{where}: expected numeric features (N, D), boxes (N, 4) and confidence (N,) "
                              f"with N >= 1, got {features.shape}, {boxes.shape} and {confidence.shape}")
        if not np.isfinite(confidence.astype(np.float64)).all():
            raise EatkitError(f"{where} has non-finite confidence values")
        r = _checked(where, features, boxes, ("",) * n, image_size)
        cap = TABLE_FEATURE_CAP
        return Regions(r.features[:cap], r.boxes[:cap], r.labels[:cap], r.image_size)


class FasterRCNNRegions:
    """Regions from torchvision's Faster R-CNN ResNet-50 FPN (see the module docstring).

    ``weights``: ``"COCO_V1"`` (torchvision's published detector, downloaded on first use) or ``None``
    (random weights: for tests only); ``min_size``, ``max_size``: the detector's input resize (torchvision's
    defaults).
    """

    def __init__(self, *, weights: str | None = "COCO_V1", min_regions: int = 10, max_regions: int = 36,
                 score_threshold: float = 0.2, min_size: int = 800, max_size: int = 1333) -> None:
        self.weights, self.min_regions, self.max_regions = weights, min_regions, max_regions
        self.score_threshold, self.min_size, self.max_size = score_threshold, min_size, max_size
        self._model: Any = None

    def config(self) -> dict[str, Any]:
        return {"detector": "torchvision fasterrcnn_resnet50_fpn", "weights": self.weights,
                "features": "ResNet stage-5 (2048 channels), RoIAlign 7x7 (sampling ratio 2, aligned), mean",
                "min_regions": self.min_regions, "max_regions": self.max_regions,
                "score_threshold": self.score_threshold, "min_size": self.min_size, "max_size": self.max_size}

    def _load(self) -> None:
        from torchvision.models import detection

        categories = detection.FasterRCNN_ResNet50_FPN_Weights.COCO_V1.meta["categories"]
        try:
            weights = getattr(detection.FasterRCNN_ResNet50_FPN_Weights, self.weights) if self.weights else None
            model = detection.fasterrcnn_resnet50_fpn(weights=weights, weights_backbone=None,
                                                      box_score_thresh=0.0, box_detections_per_img=self.max_regions,
                                                      min_size=self.min_size, max_size=self.max_size)
        except Exception as exc:  # noqa: BLE001 -- download and checkpoint errors come in many types
            raise EatkitError(f"cannot load torchvision's Faster R-CNN ({self.weights} weights): "
                              f"{one_line(exc)}") from None
        self._model, self._categories = model.eval(), categories
        self._stage5: list[Any] = []
        model.backbone.body.register_forward_hook(lambda _m, _i, out: self._stage5.append(out["3"]))

    def __call__(self, image: Any) -> Regions:
        """Regions of one decoded RGB :class:`PIL.Image.Image`."""
        import torch
        from torchvision.ops import roi_align
        from torchvision.transforms.functional import pil_to_tensor

        if self._model is None:
            self._load()
        pixels = pil_to_tensor(image).float() / 255.0
        self._stage5.clear()
        with torch.inference_mode():
            images, _ = self._model.transform([pixels])
            detections = self._model([pixels])[0]
            keep = detections["scores"] >= self.score_threshold
            keep[: self.min_regions] = True  # detections come sorted by score
            boxes = detections["boxes"][keep]
            if len(boxes) == 0:
                raise EatkitError(f"Faster R-CNN found no region in an image of size {image.size}")
            (h0, w0), (h1, w1) = pixels.shape[1:], images.image_sizes[0]
            scale = torch.tensor([w1 / w0, h1 / h0, w1 / w0, h1 / h0])
            pooled = roi_align(self._stage5[-1], [boxes * scale], output_size=(7, 7), spatial_scale=1 / 32,
                               sampling_ratio=2, aligned=True)
        labels = tuple(self._categories[int(i)] for i in detections["labels"][keep])
        return Regions(pooled.mean(dim=(2, 3)).numpy().astype(np.float32), boxes.numpy().astype(np.float64),
                       labels, (int(h0), int(w0)))
