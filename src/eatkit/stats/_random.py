"""The one rule for randomness in eatkit's statistics: ``rng`` arguments become a Generator and a seed."""

from __future__ import annotations

import numbers
import zlib
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


def derived_seed(seed: int, key: str) -> int:
    """The seed of one part of a run (a test, a comparison) from the run seed and the part's name: the one
    rule of per-test seeds, so that a part's draws do not depend on which other parts run. Below
    ``SEED_LIMIT`` (read exactly from a file by every tool).

    >>> derived_seed(0, "weat1") == derived_seed(0, "weat1") != derived_seed(0, "weat2")
    True
    """
    state = np.random.SeedSequence([seed, zlib.crc32(key.encode("utf-8"))]).generate_state(2)
    return (int(state[0]) << 32 | int(state[1])) % SEED_LIMIT
