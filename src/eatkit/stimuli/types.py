"""Test specifications as immutable values: a stimulus set, an association test, a suite.

These are what a suite file (see ``docs/suite-schema.md``) loads into; encoders and embedding sources
consume :class:`StimulusSet` and return an :class:`eatkit.sources.base.Embedded`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Literal

Modality = Literal["word", "sentence", "image"]
MODALITIES: tuple[str, ...] = ("word", "sentence", "image")
ROLES: tuple[str, ...] = ("X", "Y", "A", "B")


@dataclass(frozen=True)
class StimulusSet:
    """One of the four sets of an association test.

    ``modality`` is ``"word"`` (words or short phrases, ``items``), ``"sentence"`` (full sentences,
    ``items``) or ``"image"`` (an image category: the folder ``category`` of an image layout such as
    the iEAT one, ``<test>/<category>``; ``items`` is empty until files are resolved).
    ``templates`` optionally lists sentence templates (``"This is {x}."``) to apply to word items.
    """

    name: str
    modality: Modality
    items: tuple[str, ...] = ()
    category: str | None = None
    templates: tuple[str, ...] = ()

    def content_hash(self) -> str:
        """SHA-256 of the set's content (modality, items, category, templates), for manifests and caches."""
        payload = json.dumps(
            [self.modality, list(self.items), self.category, list(self.templates)],
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class AssociationTest:
    """An EAT specification: targets X and Y, attributes A and B, and where the test comes from."""

    id: str
    title: str
    X: StimulusSet
    Y: StimulusSet
    A: StimulusSet
    B: StimulusSet
    citation: str = ""
    notes: str = ""

    def sets(self) -> dict[str, StimulusSet]:
        """The four sets by role, in the order X, Y, A, B."""
        return {"X": self.X, "Y": self.Y, "A": self.A, "B": self.B}


@dataclass(frozen=True)
class Suite:
    """A named battery of association tests, loaded from a suite file."""

    id: str
    title: str
    tests: tuple[AssociationTest, ...]
    citation: str = ""
    description: str = ""
    source: str = field(default="", compare=False)

    def test(self, test_id: str) -> AssociationTest:
        from eatkit.errors import EatkitError

        for t in self.tests:
            if t.id == test_id:
                return t
        known = ", ".join(t.id for t in self.tests)
        raise EatkitError(f"unknown test '{test_id}' in suite '{self.id}' (known: {known})")
