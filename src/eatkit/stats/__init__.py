"""EAT statistics on arrays: numpy and scipy only (no deep-learning imports).

=====================================  ==========================================================================
:func:`eat`                            WEAT/iEAT/SEAT effect size and permutation (or Welch) p-value
:func:`sc_eat`, :func:`sc_eats`         single-category EAT of a word or target set (ML-EAT level 2)
:func:`ml_eat`                         the three ML-EAT levels and the EAT pattern
:func:`grounded_eat`                   Grounded-WEAT/SEAT experiments 1-3 on joint embeddings (seed 001)
:func:`group_permutation_test`         exact / Monte Carlo permutation p-values for two groups
:func:`bootstrap_effect_size`          percentile bootstrap CI of d, resampling within each set
:func:`specificity`                    false-positive rate on random re-partitions (iEAT §6)
:func:`adjust_p_values`                Holm and Benjamini-Hochberg corrections
:func:`intra_class_variation`,         feature-space geometry of image classes over random folds (seed 004),
:func:`inter_class_distance`           :func:`compare_classes` and :func:`spearman_by_group` to compare them
:func:`anisotropy`                     random-pair cosine baseline, first-PC share (anisotropy)
:func:`cosine_diagnostic`              level-3 cells vs that baseline; the anisotropy warning rule
:class:`TestOptions`                   the one options model (alternative, permutations, sd, ddof, p_method)
:func:`cluster_profiles`               hierarchical clustering of models' bias profiles (models x tests)
=====================================  ==========================================================================
"""

from eatkit.stats.anisotropy import AnisotropyResult, CosineDiagnostic, anisotropy, cosine_diagnostic
from eatkit.stats.bootstrap import BootstrapResult, bootstrap_effect_size
from eatkit.stats.clustering import ProfileClustering, cluster_profiles, profile_distances
from eatkit.stats.differential import EATResult, eat, sc_eat, sc_eats
from eatkit.stats.effect_size import cohens_d
from eatkit.stats.multilevel import PATTERNS, Level3, MLEATResult, eat_pattern, ml_eat
from eatkit.stats.multitest import adjust_p_values
from eatkit.stats.options import TestOptions
from eatkit.stats.permutation import PermutationOutcome, group_permutation_test
from eatkit.stats.grounded import GroundedResult, grounded_eat
from eatkit.stats.false_positives import SpecificityResult, specificity
from eatkit.stats.geometry import (
    ClassComparison,
    GeometryScore,
    GeometryScores,
    SpearmanResult,
    compare_classes,
    geometry_scores,
    inter_class_distance,
    intra_class_variation,
    spearman_by_group,
)

__all__ = [
    "AnisotropyResult",
    "CosineDiagnostic",
    "BootstrapResult",
    "ClassComparison",
    "ProfileClustering",
    "cluster_profiles",
    "profile_distances",
    "EATResult",
    "GeometryScore",
    "GeometryScores",
    "GroundedResult",
    "Level3",
    "MLEATResult",
    "PATTERNS",
    "PermutationOutcome",
    "SpearmanResult",
    "SpecificityResult",
    "TestOptions",
    "adjust_p_values",
    "anisotropy",
    "bootstrap_effect_size",
    "cohens_d",
    "compare_classes",
    "cosine_diagnostic",
    "eat",
    "eat_pattern",
    "geometry_scores",
    "grounded_eat",
    "group_permutation_test",
    "inter_class_distance",
    "intra_class_variation",
    "ml_eat",
    "sc_eat",
    "sc_eats",
    "spearman_by_group",
    "specificity",
]
