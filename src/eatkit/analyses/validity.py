"""The "how far to trust this" panel of an EAT (``RunOptions.validity``, ``eatkit run --validity``).

Statistics: :func:`eatkit.stats.stimulus_influence`, :func:`eatkit.stats.stimulus_stability`,
:func:`eatkit.stats.minimum_detectable_effect` and :func:`eatkit.stats.vector_set_diagnostics`, and for
image sets read from files :mod:`eatkit.stimuli.image_diagnostics`; this
module only turns their results into the plain JSON of the record's ``validity`` field (documented in
``docs/validity.md``) and the arrays saved beside it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eatkit.sources.base import Embedded
from eatkit.stats import (
    EATResult,
    minimum_detectable_effect,
    stimulus_influence,
    stimulus_stability,
    vector_set_diagnostics,
)
from eatkit.stats.influence import ROLES, Influential
from eatkit.stimuli.image_diagnostics import (
    IMBALANCE_D,
    NEAR_DUPLICATE_BITS,
    image_set_diagnostics,
    property_imbalance,
    unbalanced,
)

#: most influential stimuli kept in the record
TOP = 5
#: resamples of the panel (fewer than the functions' defaults, to keep it to about a second a test)
N_RESAMPLES = 2000
N_SUBSAMPLES = 500
N_SPLITS = 200
N_SIMULATIONS = 2000


def validity_panel(embedded: dict[str, Embedded], full: EATResult, *, alpha: float, confidence_level: float,
                   seed: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The record's ``validity`` field and its arrays (``validity_loo_<role>``: d without each stimulus)
    for the EAT ``full`` of the embedded sets X, Y, A, B (computed with the run's options and ``seed``)."""
    vectors = [embedded[r].vectors for r in ROLES]
    options = dict(alternative=full.alternative, ddof=full.ddof, sd=full.sd, p_method=full.p_method, reference=full,
                   rng=seed)
    influence = stimulus_influence(*vectors, alpha=alpha, **options)
    stability = stimulus_stability(*vectors, alpha=alpha, confidence_level=confidence_level, n_bootstrap=N_RESAMPLES,
                                   n_subsamples=N_SUBSAMPLES, n_splits=N_SPLITS, **options)
    n_x, n_y = len(vectors[0]), len(vectors[1])
    power = minimum_detectable_effect(n_x, n_y, alpha=alpha, alternative=full.alternative,
                                      n_simulations=N_SIMULATIONS, rng=seed)
    sets = vector_set_diagnostics(**dict(zip(ROLES, vectors)))

    def stimulus(row: Influential) -> dict[str, Any]:
        files = embedded[row.role].files  # an image's file: the report shows it as a thumbnail
        return {"role": row.role, "stimulus": embedded[row.role].ids[row.index], "effect_size": row.effect_size,
                "change": row.change, "p_value": row.p_value, **({"file": files[row.index]} if files else {})}

    panel = {
        "influence": {
            "most_influential": [stimulus(r) for r in influence.ranked()[:TOP]],
            "flips": [stimulus(r) for r in influence.flips()],
            "alpha": alpha, "loo_permutations": influence.loo_permutations,
            "loo_p_value_exact": influence.loo_p_value_exact,
        },
        "stability": {
            "significant": stability.significant,
            "bootstrap_interval": list(stability.bootstrap_interval),
            "bootstrap_same_sign": stability.bootstrap_same_sign, "n_bootstrap": stability.n_bootstrap,
            "confidence_level": confidence_level, "fraction": stability.fraction,
            "n_subsamples": stability.n_subsamples, "subsample_permutations": stability.permutations,
            "subsample_interval": list(stability.subsample_interval), "verdict_kept": stability.verdict_kept,
            "split_half": stability.split_half, "n_splits": stability.n_splits,
            "cronbach_alpha": stability.cronbach_alpha,
        },
        "power": {
            "power": power.power, "alpha": alpha, "cohens_d": power.cohens_d, "effect_size": power.effect_size,
            "t_test_cohens_d": power.t_test_cohens_d, "permutations": power.permutations,
            "p_value_exact": power.p_value_exact,
            "n_simulations": power.n_simulations,
        },
        "sets": {
            role: {"near_duplicates": [[embedded[role].ids[i], embedded[role].ids[j], c]
                                       for i, j, c in d.near_duplicates],
                   "mean_similarity": d.mean_similarity, "effective_size": d.effective_size,
                   "concentrated": d.concentrated}
            for role, d in sets.items()
        },
    }
    if all(embedded[r].files for r in ROLES):
        panel["images"] = image_panel(embedded)
    arrays = {f"validity_loo_{role}": influence.leave_one_out[role] for role in ROLES}
    return panel, arrays


def image_panel(embedded: dict[str, Embedded]) -> dict[str, Any]:
    """Near-duplicate images and image properties of each set, and the properties' imbalance between X
    and Y and between A and B (:mod:`eatkit.stimuli.image_diagnostics`)."""
    sets = {r: image_set_diagnostics(embedded[r].files, embedded[r].ids) for r in ROLES}
    imbalance = {f"{a}-{b}": property_imbalance(sets[a], sets[b]) for a, b in (("X", "Y"), ("A", "B"))}
    return {
        "sets": {r: {"near_duplicates": [list(pair) for pair in d.near_duplicates], "properties": d.summary()}
                 for r, d in sets.items()},
        "imbalance": imbalance,
        "unbalanced": {pair: unbalanced(values) for pair, values in imbalance.items()},
        "max_distance": NEAR_DUPLICATE_BITS, "imbalance_d": IMBALANCE_D,
    }
