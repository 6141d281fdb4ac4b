"""Vision-language encoders: CLIP (open_clip and transformers) and BLIP retrieval embeddings.

One encoder embeds images, words and sentences into the model's joint (contrastive) space, so that a
test may take its targets from one modality and its attributes from another (images vs words, as in
ML-EAT's CLIP analysis and the "American == White" study).

Embedding definitions (every embedding is L2-normalised, as the models' contrastive losses use them):

- **CLIP** (Radford et al. 2021; ``hf-clip:``, ``open_clip:``): images: the vision tower's pooled output
  (class token after the final layer norm, or the attention pool of ResNets) times the visual
  projection (transformers ``image_embeds``, open_clip ``encode_image``); texts: the text tower's
  end-of-text token after the final layer norm, times the text projection (``text_embeds``,
  ``encode_text``). ML-EAT (seed 002) collects CLIP embeddings "after projection to the model's
  multimodal text-and-image latent space".
- **BLIP** (Li et al. 2022; ``hf-blip:``): the image-text contrastive (ITC) features of
  ``BlipForImageTextRetrieval``: ``vision_proj`` of the image [CLS] state and ``text_proj`` of the
  unimodal text encoder's [CLS] state (its ``use_itm_head=False`` path).

Word stimuli go through the ``prompt`` template (``"a photo of {x}"``; ML-EAT uses ``"a picture that
brings to mind {x}"``; default: the bare word), sentences are embedded as they are, texts are
truncated at the model's context length. Images are decoded in full by
:func:`eatkit.encoders.images.load_image` (no reduced-scale JPEG decoding) and preprocessed as the
model's own evaluation transform does (open_clip's preprocess config, or the Hugging Face
``preprocessor_config.json``; the same pixels as open_clip's transform and transformers' Pillow image
processors, apart from transparency, which eatkit composites onto white unless ``alpha="drop"``), recorded
in the configuration; ``preprocess=`` (a study preset), ``crop=``, ``interpolation=`` and ``alpha=`` change it
(:meth:`eatkit.encoders.images.Preprocessing.override`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.encoders.base import NeuralEncoder
from eatkit.encoders.hf import (
    fetch_error,
    hf_file,
    hf_json,
    hf_weights_identity,
    hub_offline,
    load_pretrained,
    pinned_revision,
)
from eatkit.encoders.images import INTERPOLATIONS, Preprocessing
from eatkit.encoders.text import apply_prompt, check_prompt, model_device
from eatkit.errors import EatkitError
from eatkit.io import ensure_installed, require

# Pillow's resampling filter numbers, as Hugging Face preprocessor configs store them
_PIL_RESAMPLE: dict[int, str] = {0: "nearest", 1: "lanczos", 2: "bilinear", 3: "bicubic", 4: "box", 5: "hamming"}
_HF_HUB = "hf-hub:"  # open_clip's prefix of a model on the Hugging Face hub
_OPEN_CLIP_CONFIG = "open_clip_config.json"
# open_clip's inference resize modes
_OPEN_CLIP_RESIZE: dict[str, str] = {"shortest": "resize-shorter+center-crop", "squash": "stretch"}


# -- the model-side computation (each returns unit-norm (n, d) torch tensors) ------------------------


def unit_rows(features: Any) -> Any:
    """Each row of a torch tensor divided by its L2 norm (the contrastive spaces' normalisation)."""
    import torch

    return torch.nn.functional.normalize(features, p=2, dim=-1)


def clip_image_features(model: Any, pixel_values: Any) -> Any:
    """transformers ``CLIPModel``: ``visual_projection(vision_model(x).pooler_output)``, normalised
    (= ``CLIPModel(...).image_embeds``)."""
    return unit_rows(model.visual_projection(model.vision_model(pixel_values=pixel_values).pooler_output))


def clip_text_features(model: Any, tokenizer: Any, texts: list[str]) -> Any:
    """transformers ``CLIPModel``: ``text_projection`` of the end-of-text state, normalised
    (= ``CLIPModel(...).text_embeds``)."""
    tokens = tokenizer(texts, padding=True, truncation=True, return_tensors="pt").to(model_device(model))
    out = model.text_model(input_ids=tokens["input_ids"], attention_mask=tokens["attention_mask"])
    return unit_rows(model.text_projection(out.pooler_output))


def blip_image_features(model: Any, pixel_values: Any) -> Any:
    """transformers ``BlipForImageTextRetrieval`` ITC image feature: ``vision_proj`` of the [CLS] state."""
    hidden = model.vision_model(pixel_values=pixel_values).last_hidden_state
    return unit_rows(model.vision_proj(hidden[:, 0, :]))


def blip_text_features(model: Any, tokenizer: Any, texts: list[str]) -> Any:
    """transformers ``BlipForImageTextRetrieval`` ITC text feature: ``text_proj`` of the unimodal text
    encoder's [CLS] state (no cross-attention to an image)."""
    tokens = tokenizer(texts, padding=True, truncation=True, return_tensors="pt").to(model_device(model))
    hidden = model.text_encoder(input_ids=tokens["input_ids"], attention_mask=tokens["attention_mask"])
    return unit_rows(model.text_proj(hidden.last_hidden_state[:, 0, :]))


def open_clip_image_features(model: Any, pixel_values: Any) -> Any:
    """open_clip: ``model.encode_image(x, normalize=True)``."""
    return model.encode_image(pixel_values, normalize=True)


def open_clip_text_features(model: Any, tokenizer: Any, texts: list[str]) -> Any:
    """open_clip: ``model.encode_text(tokenizer(texts), normalize=True)``."""
    return model.encode_text(tokenizer(texts).to(model_device(model)), normalize=True)


# -- the encoders ------------------------------------------------------------------------------------


class JointEncoder(NeuralEncoder):
    """Images, words and sentences into one vision-language space (subclasses set ``self.weights``, load
    the model and say how each tower embeds a batch)."""

    modalities = frozenset({"word", "sentence", "image"})
    #: the embedding definition recorded in :meth:`config`
    definition: str = ""
    #: ``(model, pixel_values) -> (n, d)`` and ``(model, tokenizer, texts) -> (n, d)`` unit-norm tensors
    image_features: Callable[[Any, Any], Any]
    text_features: Callable[[Any, Any, list[str]], Any]
    weights: str
    _net: Any
    _tokenizer: Any

    def __init__(self, *, id: str, model: str, preprocessing: Preprocessing, prompt: str | None = None,
                 preprocess: str | None = None, crop: str | None = None, interpolation: str | None = None,
                 alpha: str | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.id, self.model = id, model
        # the model's own transform, under a study preset and single-field overrides (Preprocessing.override)
        self.preprocessing = preprocessing.override(preprocess=preprocess, crop=crop, interpolation=interpolation,
                                                    alpha=alpha)
        self.prompt = check_prompt(prompt)

    #: whether the embeddings are L2-normalised (the joint spaces; image towers are not)
    normalize: bool = True

    def config(self) -> dict[str, Any]:
        return {"model": self.model, "weights": self.weights,
                "embedding": self.definition, "prompt": self.prompt, "normalize": self.normalize,
                "preprocessing": self.preprocessing.to_dict(), "dtype": "float32"}

    def towers(self) -> tuple[Any, Any]:
        """The loaded network and its tokenizer, for probes that drive the towers themselves (generation)."""
        self.ensure_loaded()
        return self._net, self._tokenizer

    def _prepare(self, modality: str, item: str) -> Any:
        if modality == "word":
            return apply_prompt(self.prompt, item)[0]
        return super()._prepare(modality, item)

    def _encode(self, modality: str, inputs: list[Any]) -> np.ndarray:
        with self._inference():
            if modality == "image":
                out = self.image_features(self._net, self._image_tensor(inputs))
            else:
                out = self.text_features(self._net, self._tokenizer, list(inputs))
        return out.float().cpu().numpy()


def hf_image_preprocessing(model_id: str, revision: str | None = None) -> Preprocessing:
    """The Hugging Face image processor's evaluation transform (``preprocessor_config.json``) as an
    eatkit :class:`Preprocessing`: a shortest-edge resize then centre crop (CLIP), or a resize to a
    fixed square (BLIP)."""
    cfg = hf_json(model_id, "preprocessor_config.json", revision)
    if cfg is None:
        raise EatkitError(f"model '{model_id}' has no preprocessor_config.json (not an image-text model?)")
    if not cfg.get("do_resize", True) or cfg.get("do_rescale", True) is False or \
            abs(cfg.get("rescale_factor", 1 / 255) - 1 / 255) > 1e-12 or cfg.get("do_normalize", True) is False:
        raise EatkitError(f"the image preprocessing of model '{model_id}' (no resize, rescale or normalisation) "
                          "is not supported")
    size, crop = cfg.get("size"), cfg.get("crop_size")
    size = {"shortest_edge": size} if isinstance(size, int) else size or {}
    crop = {"height": crop, "width": crop} if isinstance(crop, int) else crop or {}
    common = {"interpolation": _PIL_RESAMPLE.get(cfg.get("resample", 3), "bicubic"),
              "mean": cfg.get("image_mean", (0.48145466, 0.4578275, 0.40821073)),
              "std": cfg.get("image_std", (0.26862954, 0.26130258, 0.27577711))}
    if cfg.get("do_center_crop") and "shortest_edge" in size and crop.get("height") == crop.get("width"):
        return Preprocessing(size=crop["height"], crop="resize-shorter+center-crop", resize=size["shortest_edge"],
                             **common)
    if not cfg.get("do_center_crop") and "height" in size and size["height"] == size.get("width"):
        return Preprocessing(size=size["height"], crop="stretch", **common)
    raise EatkitError(f"the image preprocessing of model '{model_id}' (size {size}, crop {crop}) is not supported")


class _HFJointEncoder(JointEncoder):
    """A transformers vision-language model: ``name`` is a hub id or a local folder."""

    family: str = ""
    model_class: str = ""
    model_type: str = ""  # of config.json
    libraries = ("torch", "transformers", "pillow")

    def __init__(self, name: str, *, prompt: str | None = None, revision: str | None = None,
                 **options: Any) -> None:
        ensure_installed("transformers", f"the model '{self.family}:{name}'", "vl")
        super().__init__(id=f"{self.family}:{name}", model=name, preprocessing=hf_image_preprocessing(name, revision),
                         prompt=prompt, **options)
        self.revision = revision
        self.weights = hf_weights_identity(name, revision, self.file_hashes)

    def _load(self) -> None:
        net, self._tokenizer = load_pretrained(self.model_class, self.model,
                                               pinned_revision(self.weights, self.revision),
                                               f"the model '{self.id}'", "vl", model_type=self.model_type)
        self._net = self._place(net)


class HFCLIPEncoder(_HFJointEncoder):
    """CLIP through transformers ``CLIPModel`` (``hf-clip:<model id>``), e.g. ``openai/clip-vit-base-patch32``.

    Example::

        enc = HFCLIPEncoder("openai/clip-vit-base-patch32", prompt="a photo of {x}", images="ieat/images")
        enc.embed(StimulusSet("flowers", "word", ("rose",))).vectors.shape  # (1, 512)
    """

    family, model_class, model_type = "hf-clip", "CLIPModel", "clip"
    definition = ("CLIP joint space: image = visual_projection(pooled class token), text = "
                  "text_projection(end-of-text token), L2-normalised")
    image_features, text_features = staticmethod(clip_image_features), staticmethod(clip_text_features)


class HFBlipEncoder(_HFJointEncoder):
    """BLIP image-text contrastive embeddings through transformers ``BlipForImageTextRetrieval``
    (``hf-blip:<model id>``), e.g. ``Salesforce/blip-itm-base-coco`` (the "American == White" study's model).

    Example::

        enc = HFBlipEncoder("Salesforce/blip-itm-base-coco", prompt="a photo of {x}")
    """

    family, model_class, model_type = "hf-blip", "BlipForImageTextRetrieval", "blip"
    definition = ("BLIP ITC space: image = vision_proj(image [CLS] state), text = text_proj(unimodal text "
                  "[CLS] state), L2-normalised")
    image_features, text_features = staticmethod(blip_image_features), staticmethod(blip_text_features)


class OpenCLIPEncoder(JointEncoder):
    """CLIP through open_clip (``open_clip:<architecture>/<pretrained>``): ``pretrained`` is one of
    open_clip's tags for the architecture (``open_clip.list_pretrained_tags_by_model``) or a weights file.

    Example::

        enc = OpenCLIPEncoder("ViT-B-32/openai", prompt="a picture that brings to mind {x}")
    """

    family = "open_clip"
    definition = ("CLIP joint space: image = encode_image (projected pooled features), text = encode_text "
                  "(projected end-of-text token), L2-normalised; QuickGELU when the weights were trained with it")
    image_features = staticmethod(open_clip_image_features)
    text_features = staticmethod(open_clip_text_features)
    libraries = ("torch", "open_clip_torch", "pillow")

    def __init__(self, name: str, *, prompt: str | None = None, revision: str | None = None,
                 quick_gelu: bool | None = None, **options: Any) -> None:
        open_clip = require("open_clip", f"the model '{self.family}:{name}'", "vl")
        self.revision = revision
        if name.startswith(_HF_HUB):
            self._init_hub(open_clip, name, prompt, options)
            return
        if revision is not None:
            raise EatkitError(f"--revision applies to hub models (open_clip:hf-hub:<repo>, hf:, hf-clip:, "
                              f"hf-blip:), not to {self.family}:{name}")
        arch, _, pretrained = name.partition("/")
        model_cfg = open_clip.get_model_config(arch)
        if model_cfg is None:
            raise EatkitError(f"unknown open_clip architecture '{arch}' (see open_clip.list_models())")
        tag_cfg = open_clip.get_pretrained_cfg(arch, pretrained) if pretrained else {}
        weights_file = Path(pretrained).expanduser()
        if not tag_cfg and not (pretrained and weights_file.is_file()):
            tags = ", ".join(open_clip.list_pretrained_tags_by_model(arch)) or "none"
            raise EatkitError(f"open_clip model '{self.family}:{name}' needs <architecture>/<pretrained tag or "
                              f"weights file> (tags of {arch}: {tags})")
        super().__init__(id=f"{self.family}:{name}", model=arch,
                         preprocessing=open_clip_preprocessing(open_clip, arch, model_cfg, tag_cfg),
                         prompt=prompt, **options)
        self.arch, self.pretrained = arch, pretrained
        digest = None if tag_cfg else self.file_hashes([str(weights_file)])[0]
        self.weights = (f"{arch}/{pretrained} {tag_cfg.get('hf_hub') or tag_cfg.get('url')}" if tag_cfg
                        else f"{weights_file.name}:{digest}")
        # weights trained with QuickGELU (OpenAI's CLIP) need it in the model: open_clip only warns otherwise.
        # A weights file is OpenAI's when its SHA-256 is the one in OpenAI's download address (open_clip's
        # "openai" tag); quick_gelu= says it for other files (e.g. OpenAI's weights converted)
        openai = (open_clip.get_pretrained_cfg(arch, "openai") or {}).get("url") or ""
        self.quick_gelu = bool(model_cfg.get("quick_gelu") or tag_cfg.get("quick_gelu")
                               or (digest is not None and f"/{digest}/" in openai))
        if quick_gelu is not None:
            self.quick_gelu = bool(quick_gelu)

    def _init_hub(self, open_clip: Any, name: str, prompt: str | None, options: dict[str, Any]) -> None:
        """An open_clip model published on the Hugging Face hub (``open_clip:hf-hub:<org>/<name>``): its
        ``open_clip_config.json`` and weights at ``revision``, pinned to the commit it resolves to."""
        repo = name[len(_HF_HUB):]
        hub_config = hf_json(repo, _OPEN_CLIP_CONFIG, self.revision) or {}
        model_cfg = hub_config.get("model_cfg")
        if not isinstance(model_cfg, dict) or "vision_cfg" not in model_cfg:
            raise EatkitError(f"open_clip model '{self.family}:{name}': its {_OPEN_CLIP_CONFIG} has no model_cfg")
        super().__init__(id=f"{self.family}:{name}", model=name,
                         preprocessing=open_clip_preprocessing(open_clip, name, model_cfg,
                                                               hub_config.get("preprocess_cfg") or {}),
                         prompt=prompt, **options)
        self.arch, self.pretrained = name, None
        self.weights = hf_weights_identity(repo, self.revision, filename=_OPEN_CLIP_CONFIG)
        self.quick_gelu = bool(model_cfg.get("quick_gelu"))

    def config(self) -> dict[str, Any]:
        return {**super().config(), "quick_gelu": self.quick_gelu}

    def _hub_folder(self) -> str:
        """``local-dir:<snapshot>`` for open_clip: the config and weights of the pinned commit."""
        repo, commit = self.arch[len(_HF_HUB):], self.weights.rpartition("@")[2]
        for weights in ("open_clip_model.safetensors", "open_clip_pytorch_model.bin"):
            found = hf_file(repo, weights, commit)
            if found is not None:
                return f"local-dir:{found.parent}"
        raise EatkitError(f"cannot load the model '{self.id}': its repository has no open_clip weights at {commit}")

    def _load(self) -> None:
        import open_clip

        if self.pretrained is None or not Path(self.pretrained).expanduser().is_file():
            hub_offline()
        name = self._hub_folder() if self.pretrained is None else self.arch
        try:
            net = open_clip.create_model(name, pretrained=self.pretrained, force_quick_gelu=self.quick_gelu,
                                         weights_only=True)
        except Exception as exc:  # noqa: BLE001 -- download and checkpoint errors come in many types
            raise fetch_error(f"the model '{self.id}'", exc) from None
        self._net = self._place(net)
        self._tokenizer = open_clip.get_tokenizer(name)
        own = self._net.visual.preprocess_cfg  # what open_clip resolved, against what eatkit recorded
        if open_clip_preprocessing(open_clip, self.arch, {"vision_cfg": {"image_size": own["size"]}},
                                   own) != self.preprocessing:
            raise EatkitError(f"open_clip resolved the preprocessing of '{self.id}' as {own}, unlike eatkit's "
                              f"{self.preprocessing.to_dict()}: please report this")


def open_clip_preprocessing(open_clip: Any, arch: str, model_cfg: dict[str, Any],
                            tag_cfg: dict[str, Any]) -> Preprocessing:
    """open_clip's inference transform for ``arch`` with pretrained config ``tag_cfg``: its
    ``PreprocessCfg`` defaults overlaid with the tag's mean, std, interpolation and resize mode, at the
    architecture's image size (as ``open_clip.create_model`` resolves it)."""
    cfg = open_clip.transform.merge_preprocess_dict(open_clip.transform.PreprocessCfg(), tag_cfg)
    size = model_cfg["vision_cfg"].get("image_size", cfg["size"])
    size = size if isinstance(size, int) else size[0] if size[0] == size[1] else None
    crop = _OPEN_CLIP_RESIZE.get(cfg["resize_mode"])
    if size is None or crop is None or cfg["interpolation"] not in INTERPOLATIONS:
        raise EatkitError(f"the image preprocessing of open_clip '{arch}' ({cfg['resize_mode']} resize, "
                          f"{cfg['interpolation']} interpolation, size {model_cfg['vision_cfg'].get('image_size')}) "
                          "is not supported")
    return Preprocessing(size=size, crop=crop, resize=size if crop != "stretch" else None,
                         interpolation=cfg["interpolation"], mean=cfg["mean"], std=cfg["std"])


# -- CLIP's image tower as an image encoder (seed 004) ------------------------------------------------


def image_tower(model: Any) -> Any:
    """CLIP's image tower as one module from pixels to the projected, unnormalised image features, with
    its width as ``output_dim``: open_clip's ``model.visual`` (projection included), or transformers
    ``CLIPModel``'s ``visual_projection(vision_model(x).pooler_output)``."""
    import torch

    if not hasattr(model, "visual_projection"):
        return model.visual

    class Tower(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.vision_model, self.visual_projection = model.vision_model, model.visual_projection
            self.output_dim = model.visual_projection.out_features

        def forward(self, pixel_values: Any) -> Any:
            return self.visual_projection(self.vision_model(pixel_values=pixel_values).pooler_output)

    return Tower()


def tower_classifier(tower: Any, num_classes: int) -> Any:
    """The image tower with a linear classifier on its features (what ``eatkit finetune`` trains; its state
    dict keys are ``0.*`` for the tower and ``1.weight``, ``1.bias``)."""
    import torch

    return torch.nn.Sequential(tower, torch.nn.Linear(tower.output_dim, num_classes))


class _ImageTower:
    """Mixin of the CLIP image-tower encoders: image embeddings only, not normalised (the features a
    fine-tuning classifier reads: seed 004's penultimate layer), from the released weights or from an
    ``eatkit finetune`` checkpoint (``checkpoint``, ``--weights``)."""

    modalities = frozenset({"image"})
    normalize = False
    definition = ("CLIP image tower: the projected pooled image features (open_clip encode_image, transformers "
                  "visual_projection(pooler_output)), not normalised: the input of a fine-tuned classifier")
    id: str
    family: str
    weights: str
    _net: Any

    def __init__(self, name: str, *, checkpoint: str | Path | None = None, **options: Any) -> None:
        from eatkit.encoders.checkpoints import checkpoint_identity, finetuned_checkpoint

        super().__init__(name, **options)
        architecture = f"{self.family}:{getattr(self, 'arch', name)}"   # open_clip: without the pretrained tag
        self._checkpoint, self._num_classes = finetuned_checkpoint(checkpoint, architecture)
        if checkpoint is not None:
            self.weights = checkpoint_identity(checkpoint)

    def tower(self, pretrained: bool = True) -> Any:
        """The image tower (:func:`image_tower`) with the released weights, or with none (random)."""
        if not pretrained:
            return image_tower(self._random_model())
        super()._load()   # the joint encoder's loading of the released weights
        return image_tower(self._net)

    def _random_model(self) -> Any:
        """The whole model of the architecture, randomly initialised."""
        raise NotImplementedError

    def _load(self) -> None:
        from eatkit.encoders.checkpoints import load_checkpoint_into

        if self._checkpoint is None:
            tower = self.tower()
        else:
            net = tower_classifier(self.tower(pretrained=False), self._num_classes or 1)
            load_checkpoint_into(net, self._checkpoint, self.id)
            tower = net[0]
        self._net = self._place(tower)

    def _encode(self, modality: str, inputs: list[Any]) -> np.ndarray:
        with self._inference():
            return self._net(self._image_tensor(inputs)).float().cpu().numpy()


class OpenCLIPImageTower(_ImageTower, OpenCLIPEncoder):
    """CLIP's image tower through open_clip (``open_clip-image:<architecture>/<pretrained>``), e.g. seed
    004's ``open_clip-image:ViT-B-32/openai``; ``checkpoint`` loads a fine-tuned tower (``eatkit finetune``)."""

    family = "open_clip-image"

    def _random_model(self) -> Any:
        import open_clip

        return open_clip.create_model(self.arch, pretrained=None, force_quick_gelu=self.quick_gelu)


class HFCLIPImageTower(_ImageTower, HFCLIPEncoder):
    """CLIP's image tower through transformers ``CLIPModel`` (``hf-clip-image:<model id or folder>``);
    ``checkpoint`` loads a fine-tuned tower (``eatkit finetune``)."""

    family = "hf-clip-image"

    def _random_model(self) -> Any:
        transformers = require("transformers", f"the model '{self.id}'", "vl")
        return transformers.CLIPModel(transformers.AutoConfig.from_pretrained(self.model, revision=self.revision))
