"""eatkit: embedding association tests for image, text and vision-language models.

The statistics live in :mod:`eatkit.stats` (numpy/scipy only) and are re-exported here, with the
notebook API: :func:`load_suite`, :func:`build_model` and :func:`run_suite`.

>>> import eatkit
>>> eatkit.load_suite("weat").test("weat1").set("A").name
'Pleasant'
"""

from eatkit._version import __version__
from eatkit.analyses.base import RunOptions
from eatkit.registry import build_model, models
from eatkit.run.runner import RunResult, run_suite
from eatkit.stimuli.loader import list_suites, load_suite
from eatkit.stats import (
    TestOptions,
    adjust_p_values,
    bootstrap_effect_size,
    compare_classes,
    eat,
    grounded_eat,
    group_permutation_test,
    inter_class_distance,
    intra_class_variation,
    minimum_detectable_effect,
    ml_eat,
    required_set_size,
    sc_eat,
    spearman_by_group,
    specificity,
    stimulus_influence,
    stimulus_stability,
)
from eatkit.stats.ranking import compare_shares, rank_shares

__all__ = [
    "RunOptions",
    "RunResult",
    "TestOptions",
    "__version__",
    "build_model",
    "list_suites",
    "load_suite",
    "models",
    "run_suite",
    "adjust_p_values",
    "bootstrap_effect_size",
    "compare_shares",
    "compare_classes",
    "eat",
    "grounded_eat",
    "group_permutation_test",
    "inter_class_distance",
    "intra_class_variation",
    "minimum_detectable_effect",
    "ml_eat",
    "rank_shares",
    "required_set_size",
    "sc_eat",
    "spearman_by_group",
    "specificity",
    "stimulus_influence",
    "stimulus_stability",
]
