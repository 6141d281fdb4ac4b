"""The one rule for randomness in eatkit's statistics: ``rng`` arguments become a Generator and a seed."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from eatkit.errors import EatkitError


def resolve_rng(rng: Any) -> tuple[np.random.Generator, int | None]:
    """A Generator and the seed to record: an int seeds a new Generator; None draws a fresh seed
    (recorded, so the run can be repeated); a Generator is used as is (its seed is unknown).

    >>> generator, seed = resolve_rng(7); seed
    7
    """
    if isinstance(rng, np.random.Generator):
        return rng, None
    if rng is None:
        seed = int(np.random.SeedSequence().entropy % (2**63))
        return np.random.default_rng(seed), seed
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng)), int(rng)
    raise EatkitError(f"rng must be None, a non-negative integer seed or a numpy Generator, got {rng!r}")
