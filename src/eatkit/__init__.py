"""eatkit: embedding association tests for image, text and vision-language models.

The statistics live in :mod:`eatkit.stats` (numpy/scipy only) and are re-exported here, with the
notebook API: :func:`load_suite`, :func:`build_model` and :func:`run_suite`. Every name loads its module
on first access (:mod:`eatkit._lazy`), so ``import eatkit`` and ``eatkit --help`` stay light.

>>> import eatkit
>>> eatkit.load_suite("weat").test("weat1").set("A").name
'Pleasant'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eatkit._lazy import attach
from eatkit._version import __version__

if TYPE_CHECKING:
    from eatkit.report.run import Run

#: public name -> the module that defines it (loaded on first access)
_NAMES: dict[str, str] = {
    "RunOptions": "eatkit.analyses.base",
    "build_model": "eatkit.registry",
    "models": "eatkit.registry",
    "RunResult": "eatkit.run.runner",
    "run_suite": "eatkit.run.runner",
    "list_suites": "eatkit.stimuli.loader",
    "load_suite": "eatkit.stimuli.loader",
    "TestOptions": "eatkit.stats",
    "adjust_p_values": "eatkit.stats",
    "bootstrap_effect_size": "eatkit.stats",
    "compare_classes": "eatkit.stats",
    "eat": "eatkit.stats",
    "grounded_eat": "eatkit.stats",
    "group_permutation_test": "eatkit.stats",
    "inter_class_distance": "eatkit.stats",
    "intra_class_variation": "eatkit.stats",
    "ml_eat": "eatkit.stats",
    "sc_eat": "eatkit.stats",
    "spearman_by_group": "eatkit.stats",
    "specificity": "eatkit.stats",
    "minimum_detectable_effect": "eatkit.stats",
    "required_set_size": "eatkit.stats",
    "stimulus_influence": "eatkit.stats",
    "stimulus_stability": "eatkit.stats",
    "compare_shares": "eatkit.stats.ranking",
    "rank_shares": "eatkit.stats.ranking",
    "random_effects": "eatkit.stats",
}
__all__ = ["__version__", "read_run", *sorted(_NAMES)]
__getattr__, _names = attach(__name__, _NAMES)


def __dir__() -> list[str]:
    return sorted([*_names(), "read_run"])


def read_run(folder: str) -> "Run":
    """A saved run folder (``eatkit run ... -o FOLDER``): its ``records`` (typed), ``manifest``,
    ``similarities`` and ``to_frame()`` (the rows of ``results.csv`` as a pandas DataFrame).

    >>> run = read_run("results/weat")                 # doctest: +SKIP
    >>> run.to_frame()[["test", "estimate", "p_value", "q_value"]]  # doctest: +SKIP
    """
    from eatkit.report.run import load_run

    return load_run(folder)

