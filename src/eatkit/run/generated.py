"""Generated images compared between two models: the depiction tests (who gets generated) of two run
folders, per test, prompt group and attribute, by a permutation test (:mod:`eatkit.stats.depiction`).

>>> compare_depiction_runs("run-model-a", "run-model-b", seed=0)  # doctest: +SKIP
[{'test': 'occupations', 'group': 'Doctor', 'attribute': 'gender', 'difference': 0.25, 'p_value': 0.03, ...}]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eatkit.errors import EatkitError


def compare_depiction_runs(first: str | Path, second: str | Path, *, measure: str = "mad", permutations: int = 10_000,
                 seed: int | None = None) -> list[dict[str, Any]]:
    """Two models' runs (run folders) of the same depiction tests compared, per test, group and attribute:
    measure(first) - measure(second) and its two-sided permutation p (:func:`eatkit.stats.depiction.compare_depictions`)."""
    from eatkit.run.folder import read_run
    from eatkit.stats.depiction import compare_depictions

    runs = [read_run(first)[0], read_run(second)[0]]
    records = [{r.key(): r for r in run if r.kind == "depiction"} for run in runs]
    common = [k for k in records[0] if k in records[1]]
    if not common:
        raise EatkitError(f"{first} and {second} have no depiction record in common")
    out = []
    for i, key in enumerate(common):
        a, b = records[0][key], records[1][key]
        if a.classes != b.classes:
            raise EatkitError(f"{a.test}/{a.group}/{a.attribute}: the two runs' classes differ")
        index = {c: j for j, c in enumerate(a.classes)}
        reference = [a.reference[c] for c in a.classes]
        r = compare_depictions([index[c] for c in a.labels], [index[c] for c in b.labels], len(a.classes),
                               measure=measure, reference=reference, permutations=permutations,
                               rng=None if seed is None else seed + i)
        out.append({"test": a.test, "group": a.group, "attribute": a.attribute, "measure": measure,
                    "first": a.mad if measure == "mad" else a.kl, "second": b.mad if measure == "mad" else b.kl,
                    "difference": r.difference, "p_value": r.p_value, "n_permutations": r.n_permutations,
                    "seed": r.seed})
    return out
