"""eatkit: embedding association tests for image, text and vision-language models.

The statistics live in :mod:`eatkit.stats` (numpy/scipy only) and are re-exported here.
"""

from eatkit._version import __version__
from eatkit.runner import RunOptions, RunResult, run_suite
from eatkit.stimuli.loader import list_suites, load_suite
from eatkit.stats import (
    adjust_p_values,
    bootstrap_effect_size,
    eat,
    group_permutation_test,
    ml_eat,
    sc_eat,
    specificity,
)
from eatkit.stats.ranking import compare_shares, rank_shares

__all__ = [
    "RunOptions",
    "RunResult",
    "__version__",
    "list_suites",
    "load_suite",
    "run_suite",
    "adjust_p_values",
    "bootstrap_effect_size",
    "compare_shares",
    "eat",
    "group_permutation_test",
    "ml_eat",
    "rank_shares",
    "sc_eat",
    "specificity",
]
