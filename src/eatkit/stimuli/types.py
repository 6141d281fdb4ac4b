"""Test specifications as immutable values: a stimulus set, an association test, a suite.

These are what a suite file (see ``docs/suite-schema.md``) loads into; encoders and embedding sources
consume :class:`StimulusSet` and return an :class:`eatkit.sources.base.Embedded`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

Modality = Literal["word", "sentence", "image", "image-caption", "prompt"]
MODALITIES: tuple[str, ...] = ("word", "sentence", "image", "image-caption", "prompt")


@dataclass(frozen=True)
class StimulusSet:
    """One stimulus set of a test (a target or attribute set).

    ``modality`` is ``"word"`` (words or short phrases, ``items``), ``"sentence"`` (full sentences,
    ``items``) or ``"image"`` (an image category: the folder ``category`` of an image layout such as
    the iEAT one, ``<test>/<category>``; ``items`` is empty until files are resolved) or
    ``"image-caption"`` ((image, caption) pairs: :class:`eatkit.stimuli.captioned.CaptionedImages`) or
    ``"prompt"`` (generation prompts, ``items``: a text-to-image source embeds each as the images it
    generates from it, :mod:`eatkit.encoders.diffusion`).
    ``templates`` optionally lists sentence templates (``"This is {x}."``) to apply to word items.
    """

    name: str
    modality: Modality
    items: tuple[str, ...] = ()
    category: str | None = None
    templates: tuple[str, ...] = ()

    def content_hash(self) -> str:
        """SHA-256 of the set's specification (modality, items, category, templates), for memoising and
        manifests; what was actually embedded (each file's bytes) is hashed by the source."""
        payload = json.dumps(
            [self.modality, list(self.items), self.category, list(self.templates)],
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class AssociationTest:
    """A test specification: its kind (``"eat"``, ``"sc-eat"``, ...), its stimulus sets by role (for an
    EAT: targets X and Y, attributes A and B), kind-specific ``params``, and where the test comes from.

    >>> t = AssociationTest("t", "T", "sc-eat", (("T", StimulusSet("t", "word", ("a",))),))
    >>> list(t.sets()), t.set("T").items
    (['T'], ('a',))
    """

    id: str
    title: str
    kind: str
    roles: tuple[tuple[str, StimulusSet], ...]
    citation: str = ""
    notes: str = ""
    params: tuple[tuple[str, Any], ...] = ()

    def sets(self) -> dict[str, StimulusSet]:
        """The stimulus sets by role, in the suite's order (X, Y, A, B for an EAT)."""
        return dict(self.roles)

    def set(self, role: str) -> StimulusSet:
        """The stimulus set of ``role``."""
        for name, stimuli in self.roles:
            if name == role:
                return stimuli
        from eatkit.errors import EatkitError

        raise EatkitError(f"test '{self.id}' has no set '{role}' (it has {', '.join(r for r, _ in self.roles)})")

    def param(self, name: str, default: Any = None) -> Any:
        """A kind-specific parameter of the test as its suite file gives it (``params``); an analysis reads
        its parameters validated, defaults filled in, from ``options.params`` instead."""
        return dict(self.params).get(name, default)


@dataclass(frozen=True)
class Suite:
    """A named battery of tests, loaded from a suite file."""

    id: str
    title: str
    tests: tuple[AssociationTest, ...]
    citation: str = ""
    description: str = ""
    source: str = field(default="", compare=False)
    #: the alternative hypothesis of its tests when a run names none (``--alternative`` replaces it)
    alternative: str | None = None

    def test(self, test_id: str) -> AssociationTest:
        from eatkit.errors import EatkitError

        for t in self.tests:
            if t.id == test_id:
                return t
        known = ", ".join(t.id for t in self.tests)
        raise EatkitError(f"unknown test '{test_id}' in suite '{self.id}' (known: {known})")
