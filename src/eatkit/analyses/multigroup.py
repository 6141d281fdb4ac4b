"""Multi-group kinds: ``"same"`` (SAME, Schröder et al. 2021; multi-class with three or more attribute
sets) and ``"generalized-weat"`` (Swinger et al. 2019), statistics in :mod:`eatkit.stats.multigroup`.

Their tests have n target sets T1..Tn and m attribute sets A1..Am (role groups declared by their specs;
:func:`role_groups`): SAME scores the words of all target sets together against the m >= 2 attribute sets;
the generalised WEAT pairs target set Ti with attribute set Ai. Options: the run's ``permutations`` (a number of
draws; ``auto``: every distinct assignment when there are at most 10,000, else 10,000 draws; ``exact``: every
distinct assignment, or refused with the time it would take, never sampled),
``alternative`` (``greater`` or ``two-sided``), ``n_bootstrap`` and ``confidence_level``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eatkit.analyses.base import Analysis, Outcome, RunOptions
from eatkit.errors import EatkitError
from eatkit.kinds import RoleGroup, get_kind
from eatkit.records import Record
from eatkit.sources.base import Embedded
from eatkit.stats.multigroup import ALTERNATIVES, generalized_weat, same
from eatkit.stimuli.types import AssociationTest

#: the draws of "auto" (every assignment is counted when there are at most this many)
DEFAULT_PERMUTATIONS = 10_000


def role_groups(kind: str, roles: list[str]) -> tuple[list[str], list[str]]:
    """Target roles and attribute roles of a multi-group test, by its kind's declared role groups
    (:class:`eatkit.kinds.RoleGroup`: T1..Tn and A1..Am).

    >>> role_groups("generalized-weat", ["T1", "T2", "A1", "A2"])
    (['T1', 'T2'], ['A1', 'A2'])
    """
    targets, attributes = (list(group.match(roles)) for group in get_kind(kind).roles if isinstance(group, RoleGroup))
    return targets, attributes


@dataclass(frozen=True, kw_only=True)
class MultiGroupRecord(Record):
    """A multi-group score of one test: its value, permutation p and bootstrap CI, and the sets it read."""

    renamed = {"n_resamples": "n_bootstrap"}

    statistic: str
    target_roles: list[str]
    attribute_roles: list[str]
    set_names: dict[str, str]  # role -> set name
    set_sizes: dict[str, int]  # role -> stimuli embedded
    value: float
    skew: float | None = None  # SAME with two attribute sets: mean signed cos(t, d_1)
    stereotype: float | None = None  # and its SD
    alternative: str = "greater"
    p_value_exact: bool = False
    n_permutations: int = 0
    ci: list[float] | None = None
    confidence_level: float = 0.95
    n_bootstrap: int = 0


class SAMERecord(MultiGroupRecord): kind = "same"  # noqa: E701
class GeneralizedWEATRecord(MultiGroupRecord): kind = "generalized-weat"  # noqa: E701


class MultiGroupAnalysis(Analysis):
    """SAME or the generalised WEAT on a test's target and attribute roles (see the module docstring)."""

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        targets, attributes = role_groups(self.kind, list(test.sets()))
        if self.kind == "generalized-weat" and len(targets) != len(attributes):
            raise EatkitError(f"test '{test.id}': the generalised WEAT pairs target and attribute sets, got "
                              f"{len(targets)} target roles and {len(attributes)} attribute roles")
        if options.alternative not in (None, *ALTERNATIVES):
            raise EatkitError(f"test '{test.id}' of kind '{self.kind}' tests {' or '.join(ALTERNATIVES)}, "
                              f"not alternative {options.alternative!r}")

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        targets, attributes = role_groups(self.kind, list(test.sets()))
        draws = DEFAULT_PERMUTATIONS if options.permutations == "auto" else options.permutations
        common: dict[str, Any] = dict(alternative=options.alternative or "greater", permutations=draws,
                                      n_bootstrap=options.n_bootstrap, confidence_level=options.confidence_level,
                                      rng=seed)
        attribute_sets = [embedded[r].vectors for r in attributes]
        if self.kind == "same":
            result = same(np.concatenate([embedded[r].vectors for r in targets]), attribute_sets, **common)
        else:
            result = generalized_weat([embedded[r].vectors for r in targets], attribute_sets, **common)
        two = result.skew == result.skew  # not NaN
        sets = test.sets()
        record = self.record_type(
            suite=suite, test=test.id, title=test.title, seed=seed, statistic=result.statistic,
            target_roles=targets, attribute_roles=attributes, set_names={r: s.name for r, s in sets.items()},
            set_sizes={r: len(embedded[r].ids) for r in sets},
            dropped={r: list(embedded[r].dropped) for r in sets if embedded[r].dropped},
            value=result.value, skew=result.skew if two else None, stereotype=result.stereotype if two else None,
            alternative=result.alternative, p_value=result.p_value, p_value_exact=result.p_value_exact,
            n_permutations=result.permutations, ci=list(result.ci) if options.n_bootstrap else None,
            confidence_level=result.confidence_level, n_bootstrap=options.n_bootstrap)
        return [Outcome(record, {"per_target": np.asarray(result.per_target)}, result)]


class SAMEAnalysis(MultiGroupAnalysis):
    kind = "same"
    record_type = SAMERecord


class GeneralizedWEATAnalysis(MultiGroupAnalysis):
    kind = "generalized-weat"
    record_type = GeneralizedWEATRecord
