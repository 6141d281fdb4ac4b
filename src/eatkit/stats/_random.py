"""The one rule for randomness in eatkit's statistics: ``rng`` arguments become a Generator and a seed."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from eatkit.errors import EatkitError

#: seeds eatkit draws are below this (integers a 64-bit float holds exactly)
SEED_LIMIT = 2**53


def resolve_rng(rng: Any) -> tuple[np.random.Generator, int | None]:
    """A Generator and the seed to record: an int seeds a new Generator; None or ``"random"`` draws a fresh
    seed (recorded, so the run can be repeated); a Generator is used as is (its seed is unknown).

    A drawn seed is below ``2**53`` (``SEED_LIMIT``), so that every tool reading it from a file as a number
    (JSON in JavaScript, R, Excel: 64-bit floats) reads it exactly.

    >>> generator, seed = resolve_rng(7); seed
    7
    >>> 0 <= resolve_rng("random")[1] < SEED_LIMIT
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng, None
    if rng is None or (isinstance(rng, str) and rng == "random"):
        seed = int(np.random.SeedSequence().entropy % SEED_LIMIT)
        return np.random.default_rng(seed), seed
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng)), int(rng)
    raise EatkitError(f"rng must be None, 'random', a non-negative integer seed or a numpy Generator, got {rng!r}")
