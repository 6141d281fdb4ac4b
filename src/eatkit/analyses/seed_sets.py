"""Seed-set sensitivity as a kind (``"seed-sets"``, "Bad Seeds", Antoniak & Mimno 2021): an EAT test re-run
with alternative attribute (seed) sets. Its roles are X, Y, A, B as for an EAT, plus a pair
``A_<variant>``, ``B_<variant>`` for each alternative (e.g. ``A_wordnet``, ``B_wordnet``); the record holds
the d and p of the suite's own A, B (as ``"suite"``) and of every variant, and the spread of d and of the
verdict (:func:`eatkit.stats.seed_sets.seed_set_sensitivity`). The variants are stimulus sets of the suite,
so the manifest checksums them like every set. A test may take its variants from a catalogue of published
seed sets (params ``catalogue``, ``catalogue_a``, ``catalogue_b``: :mod:`eatkit.stimuli.seed_catalogue`,
which adds them as sets when the suite loads); the record names the catalogue and its SHA-256.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eatkit.analyses.base import Analysis, Outcome, RunOptions
from eatkit.errors import EatkitError
from eatkit.records import Record
from eatkit.sources.base import Embedded
from eatkit.stats.seed_sets import seed_set_sensitivity
from eatkit.stimuli.seed_catalogue import changed_catalogue_param
from eatkit.stimuli.types import AssociationTest


def variant_roles(roles: list[str]) -> dict[str, tuple[str, str]]:
    """The attribute-set variants of a seed-sets test: name -> (its A role, its B role), in suite order.

    >>> variant_roles(["X", "Y", "A", "B", "A_short", "B_short"])
    {'short': ('A_short', 'B_short')}
    """
    names = [r[2:] for r in roles if r.startswith("A_")]
    return {n: (f"A_{n}", f"B_{n}") for n in names}


@dataclass(frozen=True, kw_only=True)
class SeedSetsRecord(Record):
    """d and p of one test with each attribute-set variant, and their spread."""

    kind = "seed-sets"

    set_names: dict[str, str]  # role -> set name
    effect_sizes: dict[str, float]  # "suite", then each variant
    p_values: dict[str, float]
    significant: dict[str, bool]
    d_min: float
    d_max: float
    d_sd: float
    share_significant: float
    share_same_sign: float
    verdicts_agree: bool
    alpha: float
    alternative: str
    catalogue: str = ""  # the catalogue the variants came from (params ``catalogue``), if any
    catalogue_sha256: str = ""  # its file's SHA-256 (the variants' sets are named by their Seeds IDs)


class SeedSetsAnalysis(Analysis):
    """``seed-sets``: the EAT of X, Y with the suite's A, B and with each variant pair."""

    kind = "seed-sets"
    record_type = SeedSetsRecord

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        changed = changed_catalogue_param(test, options.params)
        if changed:  # the variants were added when the suite loaded: a run-wide value would change nothing
            raise EatkitError(f"test '{test.id}' (seed-sets): '{changed}' is read from the test's params in the suite "
                              "file, when the suite loads; a run cannot set it")
        roles = list(test.sets())
        variants = variant_roles(roles)
        expected = {"X", "Y", "A", "B"} | {r for pair in variants.values() for r in pair}
        if not {"X", "Y", "A", "B"} <= set(roles) or not variants or set(roles) != expected:
            raise EatkitError(f"test '{test.id}' (seed-sets) needs roles X, Y, A, B and at least one pair A_<variant>, "
                              f"B_<variant> (e.g. A_short, B_short); it has {', '.join(roles)}")

    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        variants = {"suite": ("A", "B"), **variant_roles(list(test.sets()))}
        catalogue = {k: options.params[k] for k in ("catalogue", "catalogue_sha256")}
        pairs: dict[str, Any] = {n: (embedded[a].vectors, embedded[b].vectors) for n, (a, b) in variants.items()}
        result = seed_set_sensitivity(embedded["X"].vectors, embedded["Y"].vectors, pairs, alpha=options.alpha,
                                      alternative=options.alternative or "greater",
                                      permutations=options.permutations, rng=seed, sd=options.sd, ddof=options.ddof)
        summary = {k: v for k, v in result.to_dict().items() if k not in ("permutations", "seed")}
        record = SeedSetsRecord(
            suite=suite, test=test.id, title=test.title, seed=seed, set_names={r: s.name for r, s in test.sets().items()},
            dropped={r: list(e.dropped) for r, e in embedded.items() if e.dropped}, **catalogue, **summary)
        return [Outcome(record, {}, result)]
