"""The one cost estimate of every resampling or simulation parameter: the time (and memory) a request
would take, estimated before any work and refused beyond a limit, with the estimate in the message.

=============================================  ======================================================
parameter                                      units of work (``STEP_SECONDS`` each)
=============================================  ======================================================
permutations (``stats.permutation``)           its own calibrated estimate, ``check_monte_carlo_feasible``
specificity splits (``false_positives``)       splits x permutations per split x targets
power simulations (``power``)                  simulations x partitions x stimuli (x 20 for two-sided)
required set size (``power``)                  the simulations at the t-test's approximate size
bootstrap resamples (``bootstrap``, metrics)   resamples x the computation of one value
=============================================  ======================================================
"""

from __future__ import annotations

from eatkit.errors import EatkitError

#: the longest computation eatkit starts without being asked for less (as permutations: one hour)
MAX_SECONDS = 3600.0
#: the most memory one array of a resampling may take
MAX_BYTES = 4e9
#: seconds of one unit of vectorised numpy work (a multiply-add over one value; the permutation
#: module's calibration of its numpy path)
STEP_SECONDS = 15e-9


def duration(seconds: float) -> str:
    """A duration in words.

    >>> duration(7200.0), duration(3.0)
    ('2 hours', '3 s')
    """
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"


def check_cost(what: str, steps: float, advice: str, *, nbytes: float = 0.0) -> float:
    """The estimated seconds of ``steps`` units of work for ``what``; a one-line :class:`EatkitError` with
    the estimate and ``advice`` when it exceeds :data:`MAX_SECONDS` (or ``nbytes`` of memory exceed
    :data:`MAX_BYTES`).

    >>> check_cost("1e+09 power simulations", 1e15, "use 1000 to 10000")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: 1e+09 power simulations would take about 174 days (limit 60 minutes): use 1000 to 10000
    """
    seconds = float(steps) * STEP_SECONDS
    if seconds > MAX_SECONDS:
        raise EatkitError(f"{what} would take about {duration(seconds)} (limit {duration(MAX_SECONDS)}): {advice}")
    if nbytes > MAX_BYTES:
        raise EatkitError(f"{what} would need about {nbytes / 1e9:.3g} GB of memory (limit {MAX_BYTES / 1e9:g} GB): "
                          f"{advice}")
    return seconds
