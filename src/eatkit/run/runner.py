"""Run a suite of tests on an embedding source: the Python API behind ``eatkit run``.

>>> import eatkit                                                           # doctest: +SKIP
>>> run = eatkit.run_suite("weat", eatkit.build_model("glove-6b-50d", oov="drop"), seed=0)  # doctest: +SKIP
>>> run.table()[["test", "effect_size", "p_value", "pattern"]]             # doctest: +SKIP
>>> run.save("results/")                                                   # doctest: +SKIP

Data flows one way: suite -> source (embeddings) -> the analysis of each test's kind
(:mod:`eatkit.analyses`, which calls :mod:`eatkit.stats`) -> typed records -> files. Nothing here
computes a statistic itself but the run's Benjamini-Hochberg q-values.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import secrets
import shutil
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.analyses import get_analysis
from eatkit.analyses.base import Outcome, RunOptions
from eatkit.errors import EatkitError, one_line
from eatkit.io import checked_path, os_error, text_sha256
from eatkit.run.manifest import build_manifest
from eatkit.progress import progress
from eatkit.records import Record, plain_json
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stats import adjust_p_values
from eatkit.stats._random import resolve_rng
from eatkit.stimuli.types import AssociationTest, StimulusSet, Suite

__all__ = ["RunOptions", "RunResult", "run_suite", "select_tests", "prepare_output", "flatten_record", "build_source"]

#: the files a run writes into its output folder
RUN_FILES: tuple[str, ...] = ("results.json", "results.csv", "similarities.npz", "manifest.json")
#: files made from an earlier run's results (``--report``, :func:`eatkit.report.tables.write_tables`), which
#: a new run into the same folder removes, so that no file describes another run than the folder's
DERIVED_FILES: tuple[str, ...] = ("report.html", "table.md", "table.csv", "table.tex")


@dataclass
class RunResult:
    """The outcome of a run: one :class:`~eatkit.analyses.base.Outcome` (record, arrays, statistics
    result) per test, and the manifest."""

    suite: Suite
    outcomes: list[Outcome]
    manifest: dict[str, Any]

    @property
    def records(self) -> list[Record]:
        """The typed records, in suite order."""
        return [o.record for o in self.outcomes]

    @property
    def results(self) -> dict[str, Any]:
        """Test id -> the statistics result object (e.g. :class:`~eatkit.stats.MLEATResult`)."""
        return {o.record.test: o.result for o in self.outcomes}

    @property
    def similarities(self) -> dict[str, dict[str, np.ndarray]]:
        """Test id -> the arrays saved in ``similarities.npz`` (e.g. level-3 cosines ``xa``...)."""
        return {o.record.test: o.arrays for o in self.outcomes}

    def table(self) -> Any:
        """The records as a pandas DataFrame (one row per record; nested fields flattened)."""
        import pandas as pd

        return pd.DataFrame([flatten_record(r.to_json()) for r in self.records])

    def to_json(self) -> str:
        """``results.json``: the records as a JSON list."""
        return json.dumps([r.to_json() for r in self.records], indent=2, allow_nan=False)

    def save(self, out_dir: str | Path) -> Path:
        """Write ``results.json``, ``results.csv``, ``similarities.npz`` and ``manifest.json``.

        The files are written into a temporary folder beside ``out_dir`` first: a new folder is then
        renamed into place whole; into an existing folder each file is moved atomically, and the files
        made from an earlier run there (:data:`DERIVED_FILES`, e.g. its ``report.html``) are removed. A
        failure leaves no new folder and no partial file."""
        out = prepare_output(out_dir)
        rows = [flatten_record(r.to_json()) for r in self.records]
        columns = list(dict.fromkeys(key for row in rows for key in row))
        table = io.StringIO()
        writer = csv.DictWriter(table, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        arrays = {f"{o.record.test}/{k}": v for o in self.outcomes for k, v in o.arrays.items()}
        files: dict[str, Callable[[Any], Any]] = {
            "results.json": lambda fh: fh.write((self.to_json() + "\n").encode("utf-8")),
            "results.csv": lambda fh: fh.write(table.getvalue().encode("utf-8")),
            "similarities.npz": lambda fh: np.savez_compressed(fh, **arrays),
            "manifest.json": lambda fh: fh.write(
                (json.dumps(plain_json(self.manifest), indent=2, allow_nan=False) + "\n").encode("utf-8")),
        }
        staging: Path | None = None
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            staging = out.parent / f".{out.name[:32]}.{secrets.token_hex(4)}.partial"
            staging.mkdir()  # (not mkdtemp, whose private mode the renamed folder would keep)
            for name, write in files.items():
                with open(staging / name, "wb") as handle:
                    write(handle)
            if not out.exists():
                staging.rename(out)  # the whole folder appears at once
                return out
            for name in RUN_FILES:
                os.replace(staging / name, out / name)
            for name in DERIVED_FILES:
                (out / name).unlink(missing_ok=True)
        except OSError as err:
            raise EatkitError(f"cannot write results to {out}: {one_line(err.strerror or err)}") from None
        finally:
            if staging is not None and staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        return out


#: the parent of the new output folder of each run not given one (``eatkit run`` without ``-o``)
DEFAULT_OUTPUT = Path("eatkit-results")


def prepare_output(out_dir: str | Path | None) -> Path:
    """Check, before any work is done, that the results can be written to ``out_dir``: a new folder whose
    nearest existing parent is a writable folder, an empty one, or one that holds an earlier eatkit output
    (:func:`is_eatkit_output`), whose own files only are replaced; a folder holding other files is refused
    (eatkit never writes over, or deletes, a file it did not create). ``None``: a new folder under
    :data:`DEFAULT_OUTPUT` named by the date and time (:func:`new_output_folder`), so that no run replaces
    another. Nothing is created (:meth:`RunResult.save` creates the folder with the results in it).

    >>> import tempfile; root = Path(tempfile.mkdtemp()); _ = (root / "notes.txt").write_text("mine")
    >>> prepare_output(root)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: output folder ... holds files eatkit did not write (notes.txt): give a new or empty folder
    """
    out = new_output_folder() if out_dir is None else checked_path(out_dir, "output folder")
    if out.exists() and not out.is_dir():
        raise EatkitError(f"output folder {out} exists and is not a folder")
    for name in (*RUN_FILES, *DERIVED_FILES):
        if (out / name).is_dir():
            raise EatkitError(f"cannot write {out / name}: it is a folder")
    if out.is_dir() and not is_eatkit_output(out):
        try:
            names = sorted(p.name for p in out.iterdir())
        except OSError as err:
            raise os_error(err, "read the output folder") from None
        if names:
            shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            raise EatkitError(f"output folder {out} holds files eatkit did not write ({shown}): give a new or "
                              "empty folder")
    parent = next(p for p in (out, *out.absolute().parents) if p.exists())
    if not parent.is_dir():
        raise EatkitError(f"cannot create output folder {out}: {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        what = "output folder" if parent == out else f"folder {parent}, where the output folder {out} would go,"
        raise EatkitError(f"{what} is not writable")
    return out


def is_eatkit_output(folder: Path) -> bool:
    """Whether ``folder`` holds an earlier eatkit output: a run (a ``manifest.json`` with eatkit's version),
    a series (``series.json`` of an ``eatkit.series`` schema) or a sweep (a ``cells`` folder whose cells
    hold ``cell.json``). Only such a folder's own files are ever replaced.

    >>> import tempfile; is_eatkit_output(Path(tempfile.mkdtemp()))
    False
    """
    for name, key in (("manifest.json", "eatkit_version"), ("series.json", "schema")):
        try:
            data = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and key in data and (key != "schema" or str(data[key]).startswith("eatkit.")):
            return True
    cells = folder / "cells"
    try:
        return cells.is_dir() and any((c / "cell.json").exists() for c in cells.iterdir())
    except OSError:
        return False


def new_output_folder(parent: Path = DEFAULT_OUTPUT) -> Path:
    """A folder under ``parent`` that does not exist yet, named by the local date and time (``-2``, ``-3``...
    appended when that name is taken).

    >>> new_output_folder().parent.name
    'eatkit-results'
    """
    from datetime import datetime

    stamp = datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    folder, n = parent / stamp, 2
    while folder.exists():
        folder, n = parent / f"{stamp}-{n}", n + 1
    return folder


def run_suite(
    suite: Suite | str | Path,
    source: EmbeddingSource | str,
    *,
    tests: Sequence[str] | None = None,
    options: RunOptions | None = None,
    command: str | None = None,
    **option_values: Any,
) -> RunResult:
    """Run ``tests`` (default: all) of ``suite`` on ``source`` and collect records and a manifest.

    ``suite`` is a :class:`Suite` or a bundled suite id or suite file; ``source`` an embedding source or
    a registered model name (built with its defaults). Options are keywords (``seed=``,
    ``permutations=``, ``alternative=``, ``sd=``, ``ddof=``, ``p_method=``, ``n_bootstrap=``, ... the
    fields of :class:`RunOptions`) or one ``options`` object. Each test gets its own seed derived from
    the run seed and the test id, so a test's Monte Carlo p-value does not depend on which other tests
    ran. A set shared by several tests is embedded once.
    """
    suite, source = _resolve(suite, source)
    if options is not None and option_values:
        raise TypeError("run_suite takes either options= or option keywords, not both")
    if options is None:
        names = {f.name for f in dataclasses.fields(RunOptions)}
        unknown = sorted(set(option_values) - names)
        if unknown:
            raise TypeError(f"run_suite got an unknown option {unknown[0]!r} (options: {', '.join(sorted(names))})")
        options = RunOptions(**option_values)
    elif not isinstance(options, RunOptions):
        raise TypeError(f"options must be a RunOptions, got {type(options).__name__}")
    options = options.validated()
    _, run_seed = resolve_rng(options.seed)
    selected = select_tests(suite, tests)
    analyses = {test.id: get_analysis(test.kind) for test in selected}
    for test in selected:
        analyses[test.id].check(test, options)
    memo = _embed_all(source, [s for test in selected for s in analyses[test.id].stimulus_sets(test, options).values()])
    # embed everything first, so that a problem with any stimulus or an infeasible test is reported
    # before minutes of statistics
    embedded: dict[str, dict[str, Embedded]] = {}
    for test in progress(selected, desc="embedding"):
        embedded[test.id] = analyses[test.id].embed(test, lambda s, t=test: _embed(source, s, memo, t), options)
    for test in selected:
        analyses[test.id].precheck(test, embedded[test.id], options)
    outcomes: list[Outcome] = []
    for test in progress(selected, desc=suite.id):
        try:
            outcomes += analyses[test.id].compute(test, embedded[test.id], options, suite=suite.id,
                                                  seed=_test_seed(run_seed, test.id))
        except EatkitError as err:
            raise EatkitError(f"test '{test.id}': {err}") from None
    outcomes = _with_q_values(outcomes)
    warnings = options.warnings()
    outcomes = [dataclasses.replace(o, record=dataclasses.replace(o.record, warnings=[*o.record.warnings, *warnings]))
                for o in outcomes]
    stimuli = {test.id: _stimulus_checksums(test, embedded[test.id]) for test in selected}
    statistics = options.manifest() | {"seed": run_seed, "warnings": warnings}
    manifest = build_manifest(suite, source, statistics, stimuli, command)
    return RunResult(suite, outcomes, manifest)


def _resolve(suite: Any, source: Any) -> tuple[Suite, EmbeddingSource]:
    """The suite and source of :func:`run_suite`, loaded or built from names."""
    if isinstance(suite, (str, Path)):
        from eatkit.stimuli.loader import load_suite

        suite = load_suite(suite)
    elif not isinstance(suite, Suite):
        raise TypeError(f"suite must be a Suite, a bundled suite id or a suite file, got {type(suite).__name__}")
    if isinstance(source, str):
        from eatkit.registry import build_model

        source = build_model(source)
    elif not isinstance(source, EmbeddingSource):
        raise TypeError(f"source must be an EmbeddingSource or a registered model name, got {type(source).__name__}")
    return suite, source


#: the options of a model (given with ``name``), as ``eatkit run`` flags
MODEL_OPTIONS: tuple[str, ...] = ("images", "layer", "pooling", "prompt", "batch_size", "device", "precision",
                                  "workers", "cache", "oov", "regions", "missing", "checkpoint")


def _flag(key: str) -> str:
    return {"cache": "--no-cache", "checkpoint": "--weights"}.get(key, "--" + key.replace("_", "-"))


def build_source(
    given: Mapping[str, Any], suite: Suite, overrides: Mapping[str, Any] | None = None
) -> EmbeddingSource:
    """The embedding source that ``eatkit run`` flags or a sweep file's model entry name: exactly one of
    ``name`` (a registered model, with the options of :data:`MODEL_OPTIONS` it takes), ``vectors`` (a
    word-vector file, read for ``suite``'s words only; ``oov``, ``lowercase``) or ``embeddings`` (a folder
    or file of precomputed embeddings; ``embeddings_model``). ``None`` values are not given; ``overrides``
    are passed to the model's factory as they are (``None`` included).

    >>> build_source({"name": "glove-6b-50d", "layer": 3}, None)  # doctest: +SKIP
    Traceback (most recent call last):
    eatkit.errors.EatkitError: model 'glove-6b-50d' does not take the option --layer
    """
    options = {k: v for k, v in given.items() if v is not None}
    for key in ("vectors", "embeddings", "images", "checkpoint"):  # paths no file system can hold: one line
        if isinstance(options.get(key), (str, os.PathLike)):
            checked_path(options[key], _flag(key) if key != "vectors" else "--vectors")
    models = [k for k in ("name", "vectors", "embeddings") if k in options]
    if len(models) != 1:
        raise EatkitError(f"give exactly one of a model name, vectors or embeddings (got {', '.join(models) or 'none'})")
    model_options = {k: options[k] for k in MODEL_OPTIONS if k in options}
    if "vectors" in options:
        from eatkit.sources.vectors import load_word_vectors

        refuse_model_options(model_options, ("oov",), "--vectors")
        words = {w for t in suite.tests for s in t.sets().values() for w in s.items}
        return load_word_vectors(options["vectors"], cased=not options.get("lowercase", False),
                                 oov=options.get("oov", "error"), words=words)
    if options.get("lowercase"):
        raise EatkitError("--lowercase applies to --vectors only")
    if "embeddings" in options:
        from eatkit.sources.precomputed import IEATEmbeddings, PrecomputedEmbeddings

        refuse_model_options(model_options, (), "--embeddings")
        if options.get("embeddings_model"):
            return IEATEmbeddings(options["embeddings"], options["embeddings_model"])
        return PrecomputedEmbeddings(options["embeddings"])
    if options.get("embeddings_model"):
        raise EatkitError("--embeddings-model applies to --embeddings only")
    from eatkit.registry import get_model

    spec = get_model(options["name"])
    accepted = spec.option_names()
    for key in model_options:
        if accepted is not None and key not in accepted:
            raise EatkitError(f"model '{spec.name}' does not take the option {_flag(key)}")
    return spec.build(**model_options, **(overrides or {}))


def refuse_model_options(given: Mapping[str, Any], allowed: tuple[str, ...], source: str) -> None:
    """An error for a model option (a key of :data:`MODEL_OPTIONS`) given with a source that is not a model."""
    extra = [key for key in given if key not in allowed]
    if extra:
        raise EatkitError(f"{_flag(extra[0])} applies to --model, not to {source}")


def _with_q_values(outcomes: list[Outcome]) -> list[Outcome]:
    """Benjamini-Hochberg q-values across the run's tested p-values, set on the records that have one."""
    tested = [i for i, o in enumerate(outcomes) if o.record.tested_p_value() is not None]
    if not tested:
        return outcomes
    q_values = adjust_p_values([outcomes[i].record.tested_p_value() for i in tested], method="bh")
    out = list(outcomes)
    for i, q in zip(tested, q_values):
        out[i] = dataclasses.replace(out[i], record=dataclasses.replace(out[i].record, q_value=float(q)))
    return out


def select_tests(suite: Suite, tests: Sequence[str] | None) -> list[AssociationTest]:
    """The tests to run: all (``tests`` None) or the named ones, each once, in the order given."""
    if tests is None:
        return list(suite.tests)
    if isinstance(tests, str) or not all(isinstance(t, str) for t in tests):
        raise TypeError("tests must be a list of test ids")
    if not tests:
        raise EatkitError("the list of tests to run is empty")
    repeated = sorted({t for t in tests if list(tests).count(t) > 1})
    if repeated:
        raise EatkitError(f"tests listed more than once: {', '.join(repeated)}")
    return [suite.test(t) for t in tests]


def flatten_record(record: dict[str, Any]) -> dict[str, Any]:
    """A record's JSON with nested fields flattened for tables (``level3_xa_mean``, ``effect_size_ci_low``...).

    >>> flatten_record({"level3": {"xa": {"mean": 0.5}}, "effect_size_ci": None, "warnings": []})
    {'level3_xa_mean': 0.5, 'effect_size_ci_low': None, 'effect_size_ci_high': None, 'warnings': ''}
    """
    flat: dict[str, Any] = {}
    for key, value in record.items():
        if key == "level3":
            for pair, stats in value.items():
                for name, v in stats.items():
                    flat[f"level3_{pair}_{name}"] = v
        elif key == "effect_size_ci":
            flat["effect_size_ci_low"], flat["effect_size_ci_high"] = value or (None, None)
        elif key == "warnings":
            flat[key] = "; ".join(value)
        elif isinstance(value, (dict, list)):
            flat[key] = json.dumps(value)
        else:
            flat[key] = value
    return flat


def _stimulus_checksums(test: AssociationTest, embedded: dict[str, Embedded]) -> dict[str, Any]:
    """What the manifest records of each set of a test: every stimulus embedded (its id, and the SHA-256 of
    its file's bytes or of its exact string) and one SHA-256 over them, the set's fingerprint."""
    sets = test.sets()
    out: dict[str, Any] = {}
    for role, emb in embedded.items():
        hashes = emb.checksums or tuple(text_sha256(i) for i in emb.ids)
        items = [[i, h] for i, h in zip(emb.ids, hashes)]
        stimuli = sets.get(role)
        out[role] = {
            "name": stimuli.name if stimuli else role, "modality": stimuli.modality if stimuli else None,
            "n": len(emb.ids), "sha256": text_sha256("\n".join(f"{i}\t{h}" for i, h in items)),
            "items": items, "dropped": list(emb.dropped),
        }
        if stimuli is not None and stimuli.modality == "image" and stimuli.category and not stimuli.items:
            out[role]["category"] = stimuli.category  # the whole folder: eatkit verify also looks for new files
    return out


def _test_seed(run_seed: int, test_id: str) -> int:
    """A per-test seed from the run seed and the test id (independent of which tests run)."""
    state = np.random.SeedSequence([run_seed, zlib.crc32(test_id.encode("utf-8"))]).generate_state(2)
    return int(state[0]) << 32 | int(state[1])


def _embed_all(source: EmbeddingSource, sets: list[StimulusSet]) -> dict[str, Embedded]:
    """The tests' stimulus sets embedded in one stream (:meth:`EmbeddingSource.embed_many`: a model decodes
    the next set's images while it runs the current one), by content hash. A set an analysis derives
    later, or every set after a failure, is embedded by :func:`_embed`, which names the test of a set that
    fails."""
    try:
        unique: dict[str, StimulusSet] = {}
        for stimuli in map(_expanded, sets):
            if stimuli.modality in source.modalities:
                unique.setdefault(stimuli.content_hash(), stimuli)
        return dict(zip(unique, source.embed_many(list(unique.values()))))
    except EatkitError:
        return {}


def _expanded(stimuli: StimulusSet) -> StimulusSet:
    """A set with its templates expanded into sentences."""
    if stimuli.templates:
        from eatkit.stimuli.templates import expand_templates

        return expand_templates(stimuli)
    return stimuli


def _embed(source: EmbeddingSource, stimuli: StimulusSet, memo: dict[str, Embedded], test: AssociationTest) -> Embedded:
    """Embed a set once per run (templates expanded first), naming the test in any error."""
    stimuli = _expanded(stimuli)
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
