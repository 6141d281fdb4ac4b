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
:func:`stimulus_influence`             leave-one-out d and p of every stimulus (jackknife), the most influential
:func:`stimulus_stability`             bootstrap over all four sets, subsampling, split-half and Cronbach's alpha
:func:`minimum_detectable_effect`      power: the smallest d the permutation test detects; :func:`required_set_size`
:func:`vector_set_diagnostics`         near-duplicate vectors and concentrated sets
:class:`TestOptions`                   the one options model (alternative, permutations, sd, ddof, p_method)
:func:`resolve_rng`                    the one rule for ``rng`` arguments: a Generator and the seed to record
:func:`derived_seed`                   the one rule of per-test seeds: the run seed and the test's name
:func:`check_sets`                     the one check of named sets (sizes, dimension, degeneracy rules)
:func:`cluster_profiles`               hierarchical clustering of models' bias profiles (models x tests)
:func:`random_effects`                 random-effects meta-analysis (DL, Paule-Mandel, REML) of many effect sizes
:func:`same`, :func:`generalized_weat`  SAME (multi-class) and the generalised WEAT with permutation p, bootstrap CI
:func:`icc`, :func:`spearman_ci`       agreement between measures: intraclass correlation, CI of a Spearman rho
=====================================  ==========================================================================
"""
from eatkit._lazy import attach

#: public name -> the module that defines it (loaded on first access)
_NAMES: dict[str, str] = {
    "AnisotropyResult": "eatkit.stats.isotropy",
    "CosineDiagnostic": "eatkit.stats.isotropy",
    "anisotropy": "eatkit.stats.isotropy",
    "cosine_diagnostic": "eatkit.stats.isotropy",
    "BootstrapResult": "eatkit.stats.bootstrap",
    "bootstrap_effect_size": "eatkit.stats.bootstrap",
    "ProfileClustering": "eatkit.stats.clustering",
    "cluster_profiles": "eatkit.stats.clustering",
    "check_sets": "eatkit.stats._validation",
    "profile_distances": "eatkit.stats.clustering",
    "EATResult": "eatkit.stats.differential",
    "eat": "eatkit.stats.differential",
    "sc_eat": "eatkit.stats.differential",
    "sc_eats": "eatkit.stats.differential",
    "cohens_d": "eatkit.stats.effect_size",
    "SpecificityResult": "eatkit.stats.false_positives",
    "specificity": "eatkit.stats.false_positives",
    "ClassComparison": "eatkit.stats.geometry",
    "GeometryScore": "eatkit.stats.geometry",
    "GeometryScores": "eatkit.stats.geometry",
    "SpearmanResult": "eatkit.stats.geometry",
    "compare_classes": "eatkit.stats.geometry",
    "geometry_scores": "eatkit.stats.geometry",
    "inter_class_distance": "eatkit.stats.geometry",
    "intra_class_variation": "eatkit.stats.geometry",
    "spearman_by_group": "eatkit.stats.geometry",
    "GroundedResult": "eatkit.stats.grounded",
    "grounded_eat": "eatkit.stats.grounded",
    "Level3": "eatkit.stats.multilevel",
    "MLEATResult": "eatkit.stats.multilevel",
    "PATTERNS": "eatkit.stats.multilevel",
    "eat_pattern": "eatkit.stats.multilevel",
    "ml_eat": "eatkit.stats.multilevel",
    "adjust_p_values": "eatkit.stats.multitest",
    "TestOptions": "eatkit.stats.options",
    "PermutationOutcome": "eatkit.stats.permutation",
    "resolve_rng": "eatkit.stats._random",
    "derived_seed": "eatkit.stats._random",
    "group_permutation_test": "eatkit.stats.permutation",
    "StimulusInfluence": "eatkit.stats.influence",
    "stimulus_influence": "eatkit.stats.influence",
    "MinimumDetectableEffect": "eatkit.stats.power",
    "minimum_detectable_effect": "eatkit.stats.power",
    "required_set_size": "eatkit.stats.power",
    "VectorSetDiagnostics": "eatkit.stats.set_diagnostics",
    "vector_set_diagnostics": "eatkit.stats.set_diagnostics",
    "Stability": "eatkit.stats.stability",
    "RandomEffectsResult": "eatkit.stats.meta_analysis",
    "random_effects": "eatkit.stats.meta_analysis",
    "smd_variance": "eatkit.stats.meta_analysis",
    "MultiGroupResult": "eatkit.stats.multigroup",
    "ICCResult": "eatkit.stats.agreement",
    "icc": "eatkit.stats.agreement",
    "spearman_ci": "eatkit.stats.agreement",
    "generalized_weat": "eatkit.stats.multigroup",
    "same": "eatkit.stats.multigroup",
    "stimulus_stability": "eatkit.stats.stability",
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = attach(__name__, _NAMES)
