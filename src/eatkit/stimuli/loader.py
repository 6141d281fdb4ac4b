"""Loading suites: the bundled ones (``eatkit/stimuli/suites/<id>.json``) or a user's suite file."""

from __future__ import annotations

import dataclasses
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from eatkit.errors import EatkitError
from eatkit.io import read_text
from eatkit.stimuli.answer_items import with_items
from eatkit.stimuli.schema import parse_suite
from eatkit.stimuli.seed_catalogue import with_catalogue_variants
from eatkit.stimuli.types import Suite


def load_suite(name_or_path: str | Path) -> Suite:
    """Load a bundled suite by id (``"weat"``) or a suite file by path.

    A :class:`~pathlib.Path`, or a string that ends in ``.json`` or contains a path separator, is read
    as a file; any other string names a bundled suite.

    >>> suite = load_suite("weat")
    >>> suite.test("weat1").set("X").name, len(suite.test("weat1").set("X").items)
    ('Flowers', 25)
    """
    if not isinstance(name_or_path, (str, Path)):
        raise TypeError(f"load_suite expects a suite id or a path, got {type(name_or_path).__name__}")
    if isinstance(name_or_path, Path) or name_or_path.endswith(".json") or any(
        sep in name_or_path for sep in ("/", "\\")
    ):
        return _load_file(Path(name_or_path))
    bundled = _bundled_files()
    if name_or_path not in bundled:
        raise EatkitError(
            f"unknown suite '{name_or_path}' (bundled: {', '.join(sorted(bundled))}; "
            "or give the path of a .json suite file)"
        )
    return _load_bundled(name_or_path)


def list_suites() -> list[Suite]:
    """The bundled suites, sorted by id.

    >>> {"weat", "ieat", "seat"} <= {suite.id for suite in list_suites()}
    True
    """
    return [_load_bundled(suite_id) for suite_id in sorted(_bundled_files())]


def _bundled_files() -> dict[str, Traversable]:
    folder = resources.files("eatkit.stimuli") / "suites"
    return {f.name.removesuffix(".json"): f for f in folder.iterdir() if f.name.endswith(".json")}


@cache
def _load_bundled(suite_id: str) -> Suite:
    file = _bundled_files()[suite_id]
    return _with_catalogues(parse_suite(file.read_text(encoding="utf-8"), file.name, source=f"bundled:{file.name}"),
                            None)


def _load_file(path: Path) -> Suite:
    text = read_text(path, "suite file")  # the one reader: regular files only, bounded
    return _with_catalogues(parse_suite(text, str(path), source=str(path.resolve()), check_schema=True),
                            path.resolve().parent)


def _with_catalogues(suite: Suite, base: Path | None) -> Suite:
    """``suite`` with the seed-set variants its tests select from a catalogue added as their sets
    (:mod:`eatkit.stimuli.seed_catalogue`; a catalogue's relative path is from ``base``, the suite's folder)
    and its answer tests' ``items`` files found from ``base`` (:mod:`eatkit.stimuli.answer_items`)."""
    tests = tuple(with_items(with_catalogue_variants(t, base), base) for t in suite.tests)
    return suite if tests == suite.tests else dataclasses.replace(suite, tests=tests)
