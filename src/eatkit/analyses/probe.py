"""The base of the probes: what a vision-language model does with labelled images, per group.

A probe is a test whose roles are the groups of a labelled image set (``DIR/<group>/*``) and whose
``params`` hold the probe's options. Unlike an association test, its first phase is not embedding: the
model answers, describes or generates (:meth:`ProbeAnalysis.observe`), and :meth:`compute` turns what
it observed into statistics. :func:`eatkit.run.probes.run_probe` (``eatkit probe <kind>``) runs one.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import Any

from eatkit.analyses.base import Analysis, RunOptions
from eatkit.errors import EatkitError
from eatkit.stimuli.images import image_ids
from eatkit.stimuli.types import AssociationTest


class ProbeAnalysis(Analysis):
    """A probe: its parameters are those of its kind's spec (:mod:`eatkit.specs`), validated before it runs."""

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        if len(test.sets()) < 2:
            raise EatkitError(f"the {self.kind} probe needs at least 2 groups of images, got {len(test.sets())}")

    def stimulus_sets(self, test: AssociationTest, options: RunOptions) -> dict[str, Any]:
        raise EatkitError(f"test '{test.id}' is a {self.kind} probe: run it with 'eatkit probe {self.kind}'")

    @abstractmethod
    def observe(self, test: AssociationTest, model: Any, options: RunOptions) -> dict[str, Any]:
        """Phase 1: run the model on every group's images (answers, captions, embeddings, frames)."""


def group_files(test: AssociationTest) -> dict[str, tuple[list[str], tuple[str, ...]]]:
    """Each group's image files and ids (``<group>/<file>``), as :func:`eatkit.run.probes.probe_suite` resolved them."""
    out = {}
    for group, stimuli in test.sets().items():
        if stimuli.modality != "image" or not stimuli.items:
            raise EatkitError(f"group '{group}' of the {test.kind} probe is not a resolved image set")
        out[group] = (list(stimuli.items), image_ids(stimuli))
    return out


def require_capability(model: Any, method: str, kind: str, families: str) -> Callable[..., Any]:
    """The model's ``method`` (e.g. ``answer``), or a one-line error saying which models a probe needs."""
    found = getattr(model, method, None)
    if not callable(found):
        raise EatkitError(f"model '{getattr(model, 'id', model)}' cannot run the {kind} probe: it needs {families}")
    return found

