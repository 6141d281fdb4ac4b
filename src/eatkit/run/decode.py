"""Decode once for a sweep: the images of all its image models decoded once, ahead of the cells.

Before the local executor runs the cells of a sweep, :func:`predecode_sweep` builds each image model of
the cells (cheap: weights load on first use), asks it which image files the cells' tests embed and with
which preprocessing (:meth:`eatkit.encoders.base.NeuralEncoder.shared_images`), and decodes every file once
for all those preprocessings into the pixel cache (:func:`eatkit.encoders.pixels.predecode`); the models
then read their pixels from there (the same bits as decoding them: ``tests/test_decode_once.py``). What it
did is written to ``<output>/decoding.json``: files, decodes, preprocessings, models, seconds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eatkit.errors import EatkitError


def predecode_sweep(cells: Sequence[Any], out: Path, name: str = "decoding.json") -> dict[str, Any] | None:
    """Decode the image files of ``cells`` (sweep cells) once for all their models; write the record to
    ``out / name`` (a SLURM task: one per model task) and return it (``None`` when no cell embeds images
    through the pixel cache)."""
    from eatkit.encoders.pixels import prune_pixels

    start = time.perf_counter()
    wanted: dict[str, dict[str, Any]] = {}  # cache root -> sha256 -> (file, {preprocessing})
    models, workers = [], 0
    for model, suites in _by_model(cells).items():
        found = _shared_images(model, suites)
        if found is None:
            continue
        source, (cache_root, preprocessing, files, hashes) = found
        root = wanted.setdefault(str(cache_root), {})
        for path, digest in zip(files, hashes):
            root.setdefault(digest, (path, set()))[1].add(preprocessing)
        models.append(json.loads(model)["label"])
        workers = max(workers, source.workers)
    if not wanted:
        return None
    decodes = _decode(wanted, workers)
    for root in wanted:
        prune_pixels(root)
    record = {"files": sum(len(jobs) for jobs in wanted.values()), "decodes": decodes,
              "preprocessings": len({p for jobs in wanted.values() for _, ps in jobs.values() for p in ps}),
              "models": models, "seconds": round(time.perf_counter() - start, 3), "cache": sorted(wanted)}
    (out / name).parent.mkdir(parents=True, exist_ok=True)
    (out / name).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


def _shared_images(model: str, suites: list[tuple[str, list[str] | None]]) -> tuple[Any, Any] | None:
    """The source of a model's cells and the images they share through the pixel cache (``None`` when it
    embeds no image through it, or cannot be built: the cell reports that when it runs)."""
    from eatkit.encoders.base import NeuralEncoder
    from eatkit.run.runner import build_source
    from eatkit.stimuli.loader import load_suite

    try:
        source = build_source(json.loads(model), load_suite(suites[0][0]))
        if not isinstance(source, NeuralEncoder):
            return None
        sets = [s for name, tests in suites for t in _tests(load_suite(name), tests) for s in t.sets().values()]
        shared = source.shared_images(sets)
    except EatkitError:
        return None
    return None if shared is None else (source, shared)


def _decode(wanted: dict[str, dict[str, Any]], workers: int) -> int:
    """Decode every wanted file once per cache root (in a pool of ``workers`` processes, if any)."""
    from eatkit.encoders.pixels import predecode
    from eatkit.encoders.workers import start_pool

    pool = start_pool(workers) if workers else None
    try:
        return sum(predecode([(path, digest, sorted(ps, key=repr)) for digest, (path, ps) in jobs.items()],
                             root, pool) for root, jobs in wanted.items())
    finally:
        if pool is not None:
            pool.shutdown()


def _by_model(cells: Sequence[Any]) -> dict[str, list[tuple[str, list[str] | None]]]:
    """The suites (and selected tests) of each distinct model entry of ``cells``."""
    out: dict[str, list[tuple[str, list[str] | None]]] = {}
    for cell in cells:
        out.setdefault(json.dumps(cell.model, sort_keys=True), []).append((cell.suite["suite"], cell.suite.get("tests")))
    return out


def _tests(suite: Any, selected: list[str] | None) -> list[Any]:
    return [t for t in suite.tests if selected is None or t.id in selected]
