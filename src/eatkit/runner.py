"""Run a suite of association tests on an embedding source: the Python API behind ``eatkit run``.

>>> from eatkit import load_suite, run_suite                               # doctest: +SKIP
>>> from eatkit.encoders.registry import build_model                      # doctest: +SKIP
>>> run = run_suite(load_suite("weat"), build_model("glove-6b-50d", oov="drop"), seed=0)  # doctest: +SKIP
>>> run.table()[["test", "effect_size", "p_value", "pattern"]]            # doctest: +SKIP
>>> run.save("results/")                                                  # doctest: +SKIP

Data flows one way: suite -> source (embeddings) -> :func:`eatkit.stats.ml_eat` (+ bootstrap CI) ->
records -> table / JSON / manifest. Nothing here computes a statistic itself.
"""

from __future__ import annotations

import csv
import json
import math
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from eatkit.errors import EatkitError
from eatkit.manifest import build_manifest
from eatkit.progress import progress
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stats import adjust_p_values, bootstrap_effect_size, ml_eat
from eatkit.stats._validation import check_alternative, check_ddof
from eatkit.stats.differential import P_METHODS
from eatkit.stats.effect_size import check_sd
from eatkit.stats.permutation import check_exact_feasible, check_permutations, resolve_rng
from eatkit.stimuli.types import AssociationTest, StimulusSet, Suite

#: columns of the printed and CSV table, in order
TABLE_COLUMNS = (
    "test", "n_x", "n_y", "n_a", "n_b", "effect_size", "p_value", "p_value_exact", "q_value",
    "level2_x_effect_size", "level2_x_p_value", "level2_y_effect_size", "level2_y_p_value", "pattern",
)


@dataclass(frozen=True)
class RunOptions:
    """Statistical options of a run (recorded in the manifest)."""

    permutations: str | int = "auto"
    alternative: str = "greater"
    seed: int | None = None
    ddof: int = 1
    sd: str = "caliskan"
    p_method: str = "permutation"
    n_bootstrap: int = 2000
    confidence_level: float = 0.95
    effect_threshold: float = 0.2
    alpha: float = 0.05

    def validate(self) -> "RunOptions":
        """Check every option before any model is loaded; one precise error per problem."""
        check_permutations(self.permutations)
        check_alternative(self.alternative)
        resolve_rng(self.seed)
        check_ddof(self.ddof)
        check_sd(self.sd, 2, 2, 0)
        if self.sd == "pooled" and self.ddof != 1:
            raise EatkitError("ddof applies to the Caliskan SD; the pooled SD always uses ddof=1")
        if self.p_method not in P_METHODS:
            raise EatkitError(f"p_method must be one of {', '.join(P_METHODS)}, got '{self.p_method}'")
        if not isinstance(self.n_bootstrap, int) or self.n_bootstrap < 0:
            raise EatkitError(f"the number of bootstrap resamples must be 0 (none) or more, got {self.n_bootstrap}")
        for name, value in (("confidence_level", self.confidence_level), ("alpha", self.alpha)):
            if not 0 < value < 1:
                raise EatkitError(f"{name} must lie strictly between 0 and 1, got {value}")
        if self.effect_threshold < 0:
            raise EatkitError(f"effect_threshold must be non-negative, got {self.effect_threshold}")
        return self


@dataclass
class RunResult:
    """The outcome of a run: one record per test, the level-3 similarities, and the manifest."""

    suite: Suite
    records: list[dict[str, Any]]
    similarities: dict[str, dict[str, np.ndarray]]
    manifest: dict[str, Any]
    results: dict[str, Any] = field(default_factory=dict, repr=False)  # test id -> MLEATResult

    def table(self) -> "Any":
        """The results as a pandas DataFrame (one row per test; level 3 flattened)."""
        import pandas as pd

        return pd.DataFrame([flatten_record(r) for r in self.records])

    def to_json(self) -> str:
        """``results.json``: the records as a JSON list (non-finite numbers written as null)."""
        return json.dumps(_finite(self.records), indent=2, allow_nan=False)

    def save(self, out_dir: str | Path) -> Path:
        """Write ``results.json``, ``results.csv``, ``similarities.npz`` and ``manifest.json``."""
        out = prepare_output(out_dir)
        try:
            (out / "results.json").write_text(self.to_json() + "\n", encoding="utf-8")
            rows = [flatten_record(r) for r in _finite(self.records)]
            with open(out / "results.csv", "w", newline="", encoding="utf-8") as fh:
                writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
            arrays = {f"{t}/{k}": v for t, sims in self.similarities.items() for k, v in sims.items()}
            np.savez_compressed(out / "similarities.npz", **arrays)
            manifest = json.dumps(_finite(self.manifest), indent=2, allow_nan=False)
            (out / "manifest.json").write_text(manifest + "\n", encoding="utf-8")
        except OSError as err:
            raise EatkitError(f"cannot write results to {out}: {err.strerror or err}") from None
        return out


def prepare_output(out_dir: str | Path) -> Path:
    """Create the output folder (or check it is a writable folder) before any work is done."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise EatkitError(f"output folder {out} exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise EatkitError(f"cannot create output folder {out}: {err.strerror or err}") from None
    for name in ("results.json", "results.csv", "similarities.npz", "manifest.json"):
        if (out / name).is_dir():
            raise EatkitError(f"cannot write {out / name}: it is a folder")
    if not os.access(out, os.W_OK):
        raise EatkitError(f"output folder {out} is not writable")
    return out


def _finite(value: Any) -> Any:
    """``value`` with non-finite floats replaced by None (JSON has no NaN or infinity)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def run_suite(
    suite: Suite,
    source: EmbeddingSource,
    *,
    tests: Sequence[str] | None = None,
    options: RunOptions | None = None,
    command: str | None = None,
) -> RunResult:
    """Run ``tests`` (default: all) of ``suite`` on ``source`` and collect records and a manifest.

    Each test gets its own seed derived from the run seed and the test id, so a test's Monte Carlo
    p-value does not depend on which other tests ran. A set shared by several tests is embedded once.
    """
    options = (options or RunOptions()).validate()
    _, run_seed = resolve_rng(options.seed)
    selected = select_tests(suite, tests)
    embedded: dict[str, Embedded] = {}
    records, similarities, results, stimuli = [], {}, {}, {}
    # embed everything first, so that a problem with any stimulus or an infeasible exact test is reported
    # before minutes of statistics
    all_sets = {}
    for test in progress(selected, desc="embedding"):
        all_sets[test.id] = {role: _embed(source, s, embedded, test) for role, s in test.sets().items()}
        if options.permutations == "exact" and options.p_method == "permutation":
            _check_exact_feasible(test.id, all_sets[test.id])
    for test in progress(selected, desc=f"{suite.id}"):
        sets = all_sets[test.id]
        seed = _test_seed(run_seed, test.id)
        vectors = [sets[r].vectors for r in "XYAB"]
        common = dict(rng=seed, ddof=options.ddof, sd=options.sd)
        try:
            result = ml_eat(
                *vectors,
                alternative=options.alternative,
                permutations=options.permutations,
                p_method=options.p_method,
                effect_threshold=options.effect_threshold,
                alpha=options.alpha,
                **common,
            )
            ci = None
            if options.n_bootstrap > 0:
                ci = bootstrap_effect_size(
                    *vectors, n_resamples=options.n_bootstrap, confidence_level=options.confidence_level, **common
                )
        except EatkitError as err:
            raise EatkitError(f"test '{test.id}': {err}") from None
        results[test.id] = result
        records.append(_record(suite, test, sets, result, ci, seed))
        similarities[test.id] = {k: v.similarities for k, v in result.level3.items()}
        stimuli[test.id] = {
            role: {"content_sha256": test.sets()[role].content_hash(), "n": len(sets[role].ids),
                   "dropped": list(sets[role].dropped)}
            for role in "XYAB"
        }
    q_values = adjust_p_values([r["p_value"] for r in records], method="bh")
    for record, q in zip(records, q_values):
        record["q_value"] = float(q)
    manifest = build_manifest(suite, source, options, run_seed, stimuli, command)
    return RunResult(suite, records, similarities, manifest, results)


def select_tests(suite: Suite, tests: Sequence[str] | None) -> list[AssociationTest]:
    """The tests to run: all (``tests`` None) or the named ones, each once, in the order given."""
    if tests is None:
        return list(suite.tests)
    if not tests:
        raise EatkitError("the list of tests to run is empty")
    repeated = sorted({t for t in tests if list(tests).count(t) > 1})
    if repeated:
        raise EatkitError(f"tests listed more than once: {', '.join(repeated)}")
    return [suite.test(t) for t in tests]


def flatten_record(record: dict[str, Any]) -> dict[str, Any]:
    """A record with nested fields flattened for tables (``level3_xa_mean``, ``effect_size_ci_low``...)."""
    flat: dict[str, Any] = {}
    for key, value in record.items():
        if key == "level3":
            for pair, stats in value.items():
                for name, v in stats.items():
                    flat[f"level3_{pair}_{name}"] = v
        elif key == "effect_size_ci":
            flat["effect_size_ci_low"], flat["effect_size_ci_high"] = value or (None, None)
        elif isinstance(value, dict):
            flat[key] = json.dumps(value)
        else:
            flat[key] = value
    return flat


def _check_exact_feasible(test_id: str, sets: dict[str, Embedded]) -> None:
    """Refuse ``permutations="exact"`` up front for a test whose exact count is out of reach."""
    for first, second in (("X", "Y"), ("A", "B")):
        try:
            check_exact_feasible(len(sets[first].ids), len(sets[second].ids))
        except EatkitError as err:
            raise EatkitError(f"test '{test_id}' ({first} and {second}): {err}") from None


def _test_seed(run_seed: int, test_id: str) -> int:
    """A per-test seed from the run seed and the test id (independent of which tests run)."""
    state = np.random.SeedSequence([run_seed, zlib.crc32(test_id.encode("utf-8"))]).generate_state(2)
    return int(state[0]) << 32 | int(state[1])


def _embed(source: EmbeddingSource, stimuli: StimulusSet, memo: dict[str, Embedded], test: AssociationTest) -> Embedded:
    """Embed a set once per run (templates expanded first), naming the test in any error."""
    if stimuli.templates:
        from eatkit.stimuli.templates import expand_templates

        stimuli = expand_templates(stimuli)
    if stimuli.modality not in source.modalities:
        raise EatkitError(
            f"test '{test.id}': set '{stimuli.name}' is {stimuli.modality} stimuli, which "
            f"{source.id} cannot embed (it embeds {', '.join(sorted(source.modalities))})"
        )
    key = stimuli.content_hash()
    if key not in memo:
        try:
            memo[key] = source.embed(stimuli)
        except EatkitError as err:
            raise EatkitError(f"test '{test.id}': {err}") from None
    return memo[key]


def _record(
    suite: Suite, test: AssociationTest, sets: dict[str, Embedded], result: Any, ci: Any, seed: int
) -> dict[str, Any]:
    l1, l2x, l2y = result.level1, result.level2_x, result.level2_y
    return {
        "suite": suite.id,
        "test": test.id,
        "title": test.title,
        "x_name": test.X.name,
        "y_name": test.Y.name,
        "a_name": test.A.name,
        "b_name": test.B.name,
        "n_x": len(sets["X"].ids),
        "n_y": len(sets["Y"].ids),
        "n_a": len(sets["A"].ids),
        "n_b": len(sets["B"].ids),
        "dropped": {r: list(sets[r].dropped) for r in "XYAB" if sets[r].dropped},
        "effect_size": l1.effect_size,
        "effect_size_ci": [ci.low, ci.high] if ci is not None else None,
        "statistic": l1.statistic,
        "p_value": l1.p_value,
        "p_value_exact": l1.exact,
        "p_value_mc_se": l1.mc_standard_error,
        "p_method": l1.p_method,
        "n_permutations": l1.n_permutations,
        "n_partitions": l1.n_partitions,
        "alternative": l1.alternative,
        "q_value": None,
        "level2_x_effect_size": l2x.effect_size,
        "level2_x_p_value": l2x.p_value,
        "level2_x_p_exact": l2x.exact,
        "level2_x_n_permutations": l2x.n_permutations,
        "level2_x_alternative": l2x.alternative,
        "level2_y_effect_size": l2y.effect_size,
        "level2_y_p_value": l2y.p_value,
        "level2_y_p_exact": l2y.exact,
        "level2_y_n_permutations": l2y.n_permutations,
        "level2_y_alternative": l2y.alternative,
        "level2_x_association": result.association_x,
        "level2_y_association": result.association_y,
        "level3": {k: v.to_dict() for k, v in result.level3.items()},
        "pattern": result.pattern,
        "pattern_thresholds": {"effect_size": result.effect_threshold, "alpha": result.alpha},
        "seed": seed,
    }
