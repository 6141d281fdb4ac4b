"""eatkit: embedding association tests for image, text and vision-language models.

The statistics live in :mod:`eatkit.stats` (numpy/scipy only) and are re-exported here.
"""

from eatkit._version import __version__
from eatkit.runner import RunOptions, RunResult, run_suite
from eatkit.stimuli.loader import list_suites, load_suite
from eatkit.stats import (
    adjust_p_values,
    bootstrap_effect_size,
    compare_classes,
    eat,
    group_permutation_test,
    inter_class_distance,
    intra_class_variation,
    ml_eat,
    sc_eat,
    spearman_by_group,
    specificity,
)

__all__ = [
    "RunOptions",
    "RunResult",
    "__version__",
    "list_suites",
    "load_suite",
    "run_suite",
    "adjust_p_values",
    "bootstrap_effect_size",
    "compare_classes",
    "eat",
    "group_permutation_test",
    "inter_class_distance",
    "intra_class_variation",
    "ml_eat",
    "sc_eat",
    "spearman_by_group",
    "specificity",
]
