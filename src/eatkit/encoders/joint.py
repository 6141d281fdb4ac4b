"""Joint (grounded) encoders: an (image, caption) pair -> a language-side hidden state (seed 001, §4, Fig. 2).

The model reads the caption and the image together; the embedding is the last layer's hidden state of
one *language* token: [CLS] (the seed's word and sentence embeddings, ``embedding="cls"``) or the first
sub-token of the first contextual word in the caption (``"contextual"``, Tan & Celis 2019). Families:

==================  ============================  =====================================================
``hf-vilt:``        transformers ``ViltModel``    single stream on raw pixels (the model's
                                                  ``ViltImageProcessor``); text positions of
                                                  ``last_hidden_state``
``hf-blip-itm:``    ``BlipForImageTextRetrieval``  BLIP's image-grounded text encoder (text tokens
                                                  cross-attend to the image, the ITM path), its
                                                  ``last_hidden_state``; pixels as ``hf-blip:``
``hf-visualbert:``  ``VisualBertModel``           single stream on region features; text positions
``hf-lxmert:``      ``LxmertModel``               two streams on region features; ``language_output``
==================  ============================  =====================================================

Region features (VisualBERT, LXMERT; person boxes for ViLT's vision masking) come from a folder of
``.npz`` files, the Grounded-WEAT authors' one ``.th`` file (no person labels: not for vision masking)
or torchvision's Faster R-CNN: :mod:`eatkit.encoders.regions`.

Masking (seed 001 §4.3, the second variant of experiment 3): ``"language"`` replaces every sub-token of
every contextual word in the caption by the mask token; ``"vision"`` masks the regions labelled person:
LXMERT zeroes their features (its masked-object pretraining does the same), ViLT removes the patches that
overlap a person box from attention (as it does with the padding patches it was pretrained with). A
masking the model was never pretrained with is refused: VisualBERT (vision; it was pretrained with masked
language only) and BLIP's ITM encoder (both; pretrained with image-text matching only).

Images are found by file name anywhere under the image folder (``--images DIR``; a name without an
image suffix, such as a Conceptual Captions id, also matches ``<name>.jpg`` etc.); a missing image (or,
for region-feature models, a missing region file) is an error naming how many and the first few, unless
``missing="drop"`` (recorded as dropped stimuli). ViLT's patch order is drawn at random by transformers;
eatkit draws it from a fixed seed, so that the sums in attention, and the embeddings, repeat to the digit.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from eatkit.encoders.base import NeuralEncoder
from eatkit.encoders.hf import hf_json, hf_weights_identity, load_pretrained, pinned_revision
from eatkit.encoders.images import load_image
from eatkit.encoders.regions import (TABLE_FEATURE_CAP, TABLE_SUFFIXES, FasterRCNNRegions, Regions, RegionTable,
                                    load_regions)
from eatkit.encoders.text import first_token_of_span
from eatkit.errors import EatkitError, one_line
from eatkit.io import ensure_installed, text_sha256
from eatkit.sources.base import Embedded
from eatkit.stimuli.captioned import MODALITY, CaptionedImages, word_spans
from eatkit.stimuli.images import IMAGE_SUFFIXES
from eatkit.stimuli.types import StimulusSet

MISSING = ("error", "drop")


def file_index(root: Path, suffixes: tuple[str, ...]) -> dict[str, list[Path]]:
    """Files under ``root`` (any depth, hidden ones skipped) with one of ``suffixes`` (any case), by name
    and, prefixed ``"stem:"``, by name without the suffix (Conceptual Captions images are named by id)."""
    index: dict[str, list[Path]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith(".") and Path(name).suffix.lower() in suffixes:
                index.setdefault(name, []).append(Path(folder) / name)
                index.setdefault("stem:" + Path(name).stem, []).append(Path(folder) / name)
    return index


def _one(index: dict[str, list[Path]], name: str, root: Path) -> Path | None:
    """The one file called ``name`` under ``root``; a name without an image suffix (an id) also matches
    ``<name>.<any image suffix>``."""
    paths = index.get(name) or (index.get("stem:" + name, []) if Path(name).suffix.lower() not in IMAGE_SUFFIXES
                                else [])
    if len(paths) > 1:
        raise EatkitError(f"the file name {name} is found {len(paths)} times under {root} "
                          f"({', '.join(str(p.relative_to(root)) for p in paths[:3])}): names must be unique")
    return paths[0] if paths else None


@dataclass(frozen=True)
class Pair:
    """One (image, caption) stimulus, located: its files, the token to read and the words to mask."""

    caption: str
    image: Path | None  # None when the model reads only region files
    regions: Path | None  # a region file (None: Faster R-CNN, or no regions needed)
    focus: tuple[int, int] | None  # character span of the contextual word (None: [CLS])
    masked: tuple[tuple[int, int], ...]  # character spans of the words masked (language masking)
    region_key: str | None = None  # the image's key in a region table (``regions`` is then the .th file)


@dataclass
class Prepared:
    """A pair decoded for the model: its text and spans, and its pixels and/or regions."""

    pair: Pair
    pixels: Any = None
    regions: Regions | None = None


class GroundedEncoder(NeuralEncoder):
    """Base class of the joint encoders (module docstring). A subclass sets the class attributes and
    :meth:`_language_states`."""

    modalities = frozenset({MODALITY})
    family: ClassVar[str]
    model_class: ClassVar[str]
    model_type: ClassVar[str]
    #: the model's definition of the hidden state read, recorded in the configuration
    definition: ClassVar[str]
    #: mask -> None (the model was pretrained with it) or why it is refused
    mask_refusals: ClassVar[dict[str, str | None]]
    #: reads region features for every pair (VisualBERT, LXMERT); otherwise regions only for vision masking
    region_features: ClassVar[bool] = False
    #: reads the image's pixels (ViLT, BLIP)
    pixels: ClassVar[bool] = False
    libraries = ("torch", "transformers", "torchvision", "pillow")

    def __init__(self, name: str, *, revision: str | None = None, regions: str | os.PathLike[str] | None = None,
                 missing: str = "error", **options: Any) -> None:
        ensure_installed("transformers", f"the model '{self.family}:{name}'", "vl")
        super().__init__(**options)
        self.id, self.model, self.revision = f"{self.family}:{name}", name, revision
        if missing not in MISSING:
            raise EatkitError(f"missing must be 'error' or 'drop', got {missing!r}")
        self.missing = missing
        self.detector = FasterRCNNRegions() if regions == "fasterrcnn" else None
        given = Path(regions) if regions is not None and regions != "fasterrcnn" else None
        self.region_file = given if given is not None and given.suffix.lower() in TABLE_SUFFIXES else None
        self.region_dir = given if self.region_file is None else None
        if self.region_file is not None and not self.region_file.is_file():
            raise EatkitError(f"region file {self.region_file} does not exist")
        if self.region_dir is not None and not self.region_dir.is_dir():
            raise EatkitError(f"region folder {self.region_dir} does not exist (--regions takes a folder of .npz "
                              f"files, a {'/'.join(TABLE_SUFFIXES)} file or 'fasterrcnn')")
        if self.region_features and regions is None:
            raise EatkitError(f"model '{self.id}' reads region features: pass --regions DIR (a folder of .npz "
                              "files), --regions FILE.th or --regions fasterrcnn")
        self.weights = self._weights_identity(name, revision)
        self._indexes: dict[str, dict[str, list[Path]]] = {}
        self._dropped: tuple[str, ...] = ()
        self._mask: str | None = None
        self._contents_seen: list[str] = []
        self._pair_files: dict[str, list[Any]] = {}  # a pair's checksum -> its files and contents (eatkit verify)
        self._table: RegionTable | None = None

    # -- configuration ---------------------------------------------------------------------------

    def _weights_identity(self, name: str, revision: str | None) -> str:
        """What pins the weights (the hub commit or the local files' hashes; subclasses for other files)."""
        return hf_weights_identity(name, revision, self.file_hashes)

    def region_source(self) -> dict[str, Any] | None:
        if self.detector is not None:
            return self.detector.config()
        if self.region_file is not None:
            return {"source": "one region file (torch.save dict: image -> (features, boxes, confidence)), "
                              "hashed with each stimulus", "regions_per_image": f"the first {TABLE_FEATURE_CAP}",
                    "image_size": "of the image file"}
        return {"source": "region files (.npz), hashed per stimulus"} if self.region_dir is not None else None

    def config(self) -> dict[str, Any]:
        return {"model": self.model, "weights": self.weights, "embedding": self.definition,
                "regions": self.region_source(), "dtype": "float32"}

    def manifest(self) -> dict[str, Any]:
        table = str(self.region_file) if self.region_file else None
        return {**super().manifest(), "region_folder": str(self.region_dir) if self.region_dir else None,
                "region_file": table, "region_file_sha256": self.file_hashes([table])[0] if table else None,
                "image_folder": str(self.images) if self.images else None, "missing": self.missing,
                "pairs": dict(self._pair_files)}

    # -- stimuli ---------------------------------------------------------------------------------

    def embed_many(self, sets: Sequence[StimulusSet]) -> list[Embedded]:
        return [self.embed(stimuli) for stimuli in sets]  # one at a time: each set records its own pairs

    def embed(self, stimuli: StimulusSet) -> Embedded:
        out = super().embed(stimuli)
        # each pair's checksum: SHA-256 of its caption, image and region file hashes, token and mask
        return replace(out, dropped=self._dropped, checksums=tuple(text_sha256(c) for c in self._contents_seen))

    def _index(self, root: Path, suffixes: tuple[str, ...]) -> dict[str, list[Path]]:
        key = f"{root}|{suffixes}"
        if key not in self._indexes:
            if not root.is_dir():
                raise EatkitError(f"image folder {root} does not exist")
            self._indexes[key] = file_index(root, suffixes)
        return self._indexes[key]

    def _stimuli(self, stimuli: StimulusSet) -> tuple[list[Pair], tuple[str, ...]]:
        if not isinstance(stimuli, CaptionedImages):
            raise EatkitError(f"model '{self.id}' embeds (image, caption) pairs of grounded suites; set "
                              f"'{stimuli.name}' is a {stimuli.modality} set")
        mask = stimuli.mask
        self._check_mask(mask)
        where = self._files(stimuli, mask)
        pairs, ids = [], []
        missing: dict[tuple[str, str], list[str]] = {}  # (what, where) -> images
        for image, caption, pair_id in zip(stimuli.images, stimuli.items, stimuli.pair_ids()):
            found, lost = self._pair_files_of(image, where)
            if lost is not None:
                missing.setdefault(lost, []).append(image)
                continue
            pairs.append(self._pair(stimuli, caption, mask, found))
            ids.append(pair_id)
        self._check_missing(stimuli, missing)
        kept = set(ids)
        self._dropped = tuple(pid for pid in stimuli.pair_ids() if pid not in kept)
        self._mask = mask
        if not pairs:
            raise EatkitError(f"set '{stimuli.name}' has no (image, caption) pair left")
        return pairs, tuple(ids)

    def _check_mask(self, mask: str | None) -> None:
        """An error for a ``--mask`` the model or its region features cannot take."""
        if mask is not None and self.mask_refusals[mask] is not None:
            raise EatkitError(f"model '{self.id}' cannot take --mask {mask}: {self.mask_refusals[mask]}")
        if mask == "vision" and self.region_file is not None:
            raise EatkitError(f"--mask vision needs person labels, which region file {self.region_file} does not "
                              "hold: pass --regions DIR (.npz files with labels) or --regions fasterrcnn")
        if mask == "vision" and self.detector is None and self.region_dir is None:
            raise EatkitError(f"--mask vision with model '{self.id}' needs person boxes: pass --regions DIR "
                              "or --regions fasterrcnn")

    def _files(self, stimuli: CaptionedImages, mask: str | None) -> dict[str, Any]:
        """Where a set's pairs are read from: the image index (when the model needs images), the region
        files' index and the region table."""
        table = self._region_table() if self.region_file is not None and self.region_features else None
        needs_image = self.pixels or self.detector is not None or table is not None  # a table has no image size
        region_files = self.region_dir is not None and (self.region_features or mask == "vision")
        self._check_images(stimuli, needs_image)
        return {"table": table, "images": self._index(self.images, IMAGE_SUFFIXES) if needs_image else None,
                "npz": self._index(self.region_dir, (".npz",)) if region_files else None}

    def _check_images(self, stimuli: CaptionedImages, needs_image: bool) -> None:
        """An error when the model reads the images of the pairs and no image folder was given."""
        if needs_image and self.images is None:
            raise EatkitError(f"set '{stimuli.name}' holds (image, caption) pairs: pass --images DIR "
                              "(images are found by file name anywhere under it)")

    def _pair_files_of(self, image: str, where: dict[str, Any]) -> tuple[list[Any], tuple[str, str] | None]:
        """(image path, region path, table key) of an image, and the (what, where) that is missing (or None)."""
        table, images, npz = where["table"], where["images"], where["npz"]
        image_path = _one(images, image, self.images) if images is not None else None
        region_path = _one(npz, Path(image).stem + ".npz", self.region_dir) if npz is not None else None
        key = table.key(image) if table is not None else None
        lost = [reason for reason, gone in (
            (("images", f"missing under {self.images}"), images is not None and image_path is None),
            (("region files of images", f"missing under {self.region_dir}"), npz is not None and region_path is None),
            (("images", f"missing from region file {self.region_file}"), table is not None and key is None))
            if gone]
        return [image_path, region_path, key], lost[0] if lost else None

    def _pair(self, stimuli: CaptionedImages, caption: str, mask: str | None, found: list[Any]) -> Pair:
        """The pair of a caption and its files (``found``: image path, region path, table key)."""
        image_path, region_path, key = found
        spans = word_spans(caption, stimuli.contextual_words)
        if (stimuli.embedding == "contextual" or mask == "language") and not spans:
            raise EatkitError(f"caption {caption!r} of set '{stimuli.name}' contains none of the test's "
                              "contextual words")
        return Pair(caption, image_path, self.region_file if key is not None else region_path,
                    spans[0] if stimuli.embedding == "contextual" else None,
                    tuple(spans) if mask == "language" else (), key)

    def _check_missing(self, stimuli: CaptionedImages, missing: dict[tuple[str, str], list[str]]) -> None:
        if not missing or self.missing == "drop":
            return
        (what, where), images = next(iter(missing.items()))
        distinct = list(dict.fromkeys(images))
        raise EatkitError(f"{len(distinct)} of {len(set(stimuli.images))} {what} of set '{stimuli.name}' are "
                          f"{where} (first: {', '.join(distinct[:3])}); pass --missing drop to leave their "
                          "pairs out")

    def _region_table(self) -> RegionTable:
        """The ``--regions FILE.th`` table, read once."""
        if self._table is None:
            self._table = RegionTable(self.region_file)
        return self._table

    def _contents(self, modality: str, items: list[Pair]) -> list[str]:
        images = [str(p.image) for p in items if p.image is not None]
        regions = sorted({str(p.regions) for p in items if p.regions is not None})  # a .th file: hashed once
        image_hashes = iter(self.file_hashes(images)) if images else iter(())
        region_hash = dict(zip(regions, self.file_hashes(regions))) if regions else {}

        def region(p: Pair) -> str | None:  # a table's hash names the image's key in it too
            if p.regions is None:
                return None
            return region_hash[str(p.regions)] + (f"|{p.region_key}" if p.region_key is not None else "")

        self._contents_seen = [json.dumps([p.caption, next(image_hashes) if p.image else None, region(p), p.focus,
                                           list(p.masked), self._mask]) for p in items]
        for p, contents in zip(items, self._contents_seen):  # what eatkit verify re-hashes
            self._pair_files[text_sha256(contents)] = [str(p.image) if p.image is not None else None,
                                                       str(p.regions) if p.regions is not None else None, contents]
        return self._contents_seen

    def _prepare(self, modality: str, item: Pair) -> Prepared:
        prepared = Prepared(item)
        image = load_image(item.image) if item.image is not None else None
        prepared.regions = self._regions(item, image)
        if self._mask == "vision" and not prepared.regions.persons().any():
            where = f"region file {item.regions}" if item.regions else f"image {item.image} (Faster R-CNN)"
            raise EatkitError(f"{where} has no person box: --mask vision masks the people in every image")
        if self.pixels:
            prepared.pixels = self._pixels(image)
        return prepared

    def _regions(self, item: Pair, image: Any) -> Regions | None:
        """A pair's regions: from the region table, its region file or the detector (None: no regions)."""
        if item.region_key is not None:
            return self._region_table().regions(item.region_key, (image.height, image.width))
        if item.regions is not None:
            return load_regions(item.regions)
        if self.detector is not None and (self.region_features or self._mask == "vision"):
            return self.detector(image)
        return None

    def _pixels(self, image: Any) -> Any:
        """The model input of a decoded image (pixel models)."""
        raise NotImplementedError

    # -- the model -------------------------------------------------------------------------------

    def _load(self) -> None:
        self._net, self._tokenizer = load_pretrained(self.model_class, self.model,
                                                     pinned_revision(self.weights, self.revision),
                                                     f"the model '{self.id}'", "vl", model_type=self.model_type)
        if not getattr(self._tokenizer, "is_fast", False):
            raise EatkitError(f"model '{self.id}' has no fast tokenizer (offset mappings locate the contextual "
                              "words)")

    def _encode(self, modality: str, inputs: list[Prepared]) -> np.ndarray:
        import torch

        tokens = self._tokenizer([p.pair.caption for p in inputs], padding=True, truncation=True,
                                 return_tensors="pt", return_offsets_mapping=True)
        offsets = tokens.pop("offset_mapping").tolist()
        rows = []
        for i, p in enumerate(inputs):
            for j, (a, b) in enumerate(offsets[i]):
                if b > a and any(a < end and b > start for start, end in p.pair.masked):
                    tokens["input_ids"][i, j] = self._tokenizer.mask_token_id
            index = 0 if p.pair.focus is None else first_token_of_span(offsets[i], p.pair.focus)
            if index is None:
                raise EatkitError(f"the contextual word of {p.pair.caption!r} was cut off by the model's "
                                  "maximum text length")
            rows.append(index)
        with torch.inference_mode():
            states = self._language_states(tokens, inputs)
        return states[torch.arange(len(inputs)), torch.tensor(rows)].float().cpu().numpy()

    def _language_states(self, tokens: Any, inputs: list[Prepared]) -> Any:
        """(batch, text length, hidden) language-side hidden states of the last layer."""
        raise NotImplementedError

    def _region_batch(self, inputs: list[Prepared], dim: int, zero_persons: bool) -> tuple[Any, Any, Any]:
        """Padded region features (B, N, dim), normalised boxes (B, N, 4) and the region mask (B, N)."""
        import torch

        n = max(len(p.regions.labels) for p in inputs)
        feats, boxes, mask = np.zeros((len(inputs), n, dim), np.float32), np.zeros((len(inputs), n, 4)), \
            np.zeros((len(inputs), n), np.int64)
        for i, p in enumerate(inputs):
            r = p.regions
            if r.features.shape[1] != dim:
                raise EatkitError(f"the region features of {p.pair.image or p.pair.regions} are "
                                  f"{r.features.shape[1]}-d, but model '{self.id}' reads {dim}-d features")
            k = len(r.labels)
            feats[i, :k] = r.features
            if zero_persons:
                feats[i, :k][r.persons()] = 0.0
            boxes[i, :k], mask[i, :k] = r.normalized_boxes(), 1
        return torch.from_numpy(feats), torch.from_numpy(boxes.astype(np.float32)), torch.from_numpy(mask)


class HFViltEncoder(GroundedEncoder):
    """ViLT (``hf-vilt:<model id>``), e.g. ``dandelin/vilt-b32-mlm``."""

    family, model_class, model_type = "hf-vilt", "ViltModel", "vilt"
    definition = "ViltModel last_hidden_state at the text token ([CLS] or the contextual word's first sub-token)"
    mask_refusals = {"language": None, "vision": None}
    pixels = True

    def _load(self) -> None:
        import transformers

        super()._load()
        try:
            self._processor = transformers.ViltImageProcessor.from_pretrained(self.model, revision=self.revision)
        except Exception as exc:  # noqa: BLE001 -- file and configuration errors come in many types
            raise EatkitError(f"cannot load the image processor of '{self.id}': {one_line(exc)}") from None

    def config(self) -> dict[str, Any]:
        return {**super().config(), "preprocessing": hf_json(self.model, "preprocessor_config.json", self.revision)}

    def _pixels(self, image: Any) -> Any:
        return image

    def _language_states(self, tokens: Any, inputs: list[Prepared]) -> Any:
        import torch

        images = self._processor([p.pixels for p in inputs], return_tensors="pt")
        pixel_values, pixel_mask = images["pixel_values"], images["pixel_mask"]
        embeddings = self._net.embeddings
        original = embeddings.visual_embed
        persons = self._person_patches(inputs, pixel_mask) if self._mask == "vision" else None

        def visual_embed(*args: Any, **kwargs: Any) -> Any:
            x, x_mask, (patch_index, size) = original(*args, **kwargs)
            if persons is not None:  # drop the patches over people from attention (x_mask 0, as padding)
                rows = torch.arange(x_mask.shape[0])[:, None]
                hit = persons[rows, patch_index[..., 0], patch_index[..., 1]]
                x_mask = torch.cat([x_mask[:, :1], x_mask[:, 1:] * (~hit).to(x_mask)], dim=1)
            return x, x_mask, (patch_index, size)

        embeddings.visual_embed = visual_embed
        try:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(0)  # transformers shuffles the patches with torch.multinomial
                out = self._net(**tokens, pixel_values=pixel_values, pixel_mask=pixel_mask)
        finally:
            del embeddings.visual_embed
        return out.last_hidden_state[:, : tokens["input_ids"].shape[1]]

    def _person_patches(self, inputs: list[Prepared], pixel_mask: Any) -> Any:
        """(B, rows, cols) True for the patches that overlap a person box, in the processed image."""
        import torch

        p = self._net.config.patch_size
        rows, cols = pixel_mask.shape[1] // p, pixel_mask.shape[2] // p
        out = torch.zeros((len(inputs), rows, cols), dtype=torch.bool)
        for i, item in enumerate(inputs):
            height = int(pixel_mask[i].any(dim=1).sum())
            width = int(pixel_mask[i].any(dim=0).sum())
            h0, w0 = item.regions.image_size
            for x1, y1, x2, y2 in item.regions.boxes[item.regions.persons()]:
                x1, x2 = x1 * width / w0, x2 * width / w0
                y1, y2 = y1 * height / h0, y2 * height / h0
                c = np.arange(cols)
                r = np.arange(rows)
                hit_c = (c * p < x2) & ((c + 1) * p > x1)
                hit_r = (r * p < y2) & ((r + 1) * p > y1)
                out[i] |= torch.from_numpy(hit_r[:, None] & hit_c[None, :])
        return out


class HFBlipITMEncoder(GroundedEncoder):
    """BLIP's image-grounded text encoder (``hf-blip-itm:<model id>``), e.g. ``Salesforce/blip-itm-base-coco``."""

    family, model_class, model_type = "hf-blip-itm", "BlipForImageTextRetrieval", "blip"
    definition = ("BlipForImageTextRetrieval text_encoder last_hidden_state (text tokens cross-attending to "
                  "vision_model's last_hidden_state, the ITM path) at [CLS] or the contextual word")
    mask_refusals = {
        "language": "BLIP's image-grounded text encoder was pretrained with image-text matching only, never "
                    "with masked tokens",
        "vision": "BLIP was never pretrained with masked image patches or regions",
    }
    pixels = True

    def __init__(self, name: str, **options: Any) -> None:
        from eatkit.encoders.vision_language import hf_image_preprocessing

        super().__init__(name, **options)
        self.preprocessing = hf_image_preprocessing(name, self.revision)

    def config(self) -> dict[str, Any]:
        return {**super().config(), "preprocessing": self.preprocessing.to_dict()}

    def _pixels(self, image: Any) -> Any:
        return self.preprocessing(image)

    def _language_states(self, tokens: Any, inputs: list[Prepared]) -> Any:
        import torch

        pixel_values = torch.from_numpy(np.stack([p.pixels for p in inputs]))
        image = self._net.vision_model(pixel_values=pixel_values).last_hidden_state
        image_mask = torch.ones(image.shape[:2], dtype=torch.long)
        return self._net.text_encoder(input_ids=tokens["input_ids"], attention_mask=tokens["attention_mask"],
                                      encoder_hidden_states=image, encoder_attention_mask=image_mask
                                      ).last_hidden_state


class HFVisualBertEncoder(GroundedEncoder):
    """VisualBERT on region features (``hf-visualbert:<model id>``), e.g. ``uclanlp/visualbert-vqa-coco-pre``."""

    family, model_class, model_type = "hf-visualbert", "VisualBertModel", "visual_bert"
    definition = "VisualBertModel last_hidden_state at the text token ([CLS] or the contextual word)"
    mask_refusals = {
        "language": None,
        "vision": "VisualBERT was pretrained with masked language modelling only, never with masked image "
                  "regions (seed 001, section 4.3)",
    }
    region_features = True

    def _language_states(self, tokens: Any, inputs: list[Prepared]) -> Any:
        import torch

        feats, _boxes, mask = self._region_batch(inputs, self._net.config.visual_embedding_dim, False)
        out = self._net(**tokens, visual_embeds=feats, visual_attention_mask=mask,
                        visual_token_type_ids=torch.ones_like(mask))
        return out.last_hidden_state[:, : tokens["input_ids"].shape[1]]


class HFLxmertEncoder(GroundedEncoder):
    """LXMERT on region features (``hf-lxmert:<model id>``), e.g. ``unc-nlp/lxmert-base-uncased``."""

    family, model_class, model_type = "hf-lxmert", "LxmertModel", "lxmert"
    definition = "LxmertModel language_output at the text token ([CLS] or the contextual word)"
    mask_refusals = {"language": None, "vision": None}
    region_features = True

    def _language_states(self, tokens: Any, inputs: list[Prepared]) -> Any:
        feats, boxes, mask = self._region_batch(inputs, self._net.config.visual_feat_dim, self._mask == "vision")
        out = self._net(**tokens, visual_feats=feats, visual_pos=boxes, visual_attention_mask=mask)
        return out.language_output
