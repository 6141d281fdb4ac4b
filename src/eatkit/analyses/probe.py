"""The base of the probes: what a vision-language model does with labelled images, per group.

A probe is a test whose roles are the groups of a labelled image set (``DIR/<group>/*``) and whose
``params`` hold the probe's options. Unlike an association test, its first phase is not embedding: the
model answers, describes or generates (:meth:`ProbeAnalysis.observe`), and :meth:`compute` turns what
it observed into statistics. :func:`eatkit.run.probes.run_probe` (``eatkit probe <kind>``) runs one.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from eatkit.analyses.base import Analysis, RunOptions
from eatkit.errors import EatkitError
from eatkit.stimuli.images import image_ids
from eatkit.stimuli.types import AssociationTest


class ProbeAnalysis(Analysis):
    """A probe: :attr:`defaults` lists its parameters (and their defaults); :meth:`validate` checks them."""

    #: parameter -> default value (``options.params`` may override any of them, and nothing else)
    defaults: ClassVar[Mapping[str, Any]] = {}

    def params(self, options: RunOptions) -> dict[str, Any]:
        """The probe's parameters: its defaults overlaid with ``options.params``."""
        return {**self.defaults, **dict(options.params)}

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        unknown = sorted(set(options.params) - set(self.defaults))
        if unknown:
            raise EatkitError(f"the {self.kind} probe does not take the option(s) {', '.join(unknown)} "
                              f"(its options: {', '.join(sorted(self.defaults))})")
        if len(test.sets()) < 2:
            raise EatkitError(f"the {self.kind} probe needs at least 2 groups of images, got {len(test.sets())}")
        self.validate(self.params(options))

    def validate(self, params: dict[str, Any]) -> None:
        """Refuse a parameter value that cannot apply (one line naming it)."""

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


def check_number(name: str, value: Any, *, low: float, high: float | None = None, integer: bool = False) -> None:
    """``value`` is a number (an integer when ``integer``) in [low, high], else a one-line error."""
    kinds = (int,) if integer else (int, float)
    if not isinstance(value, kinds) or isinstance(value, bool) or value < low or (high is not None and value > high):
        span = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise EatkitError(f"{name} must be {'an integer' if integer else 'a number'} {span}, got {value!r}")
