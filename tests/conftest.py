"""Shared fixtures: the location of ../shared/data and a skip when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# no periodic progress lines in captured stderr (also of subprocesses) unless a test asks for them
os.environ.setdefault("EATKIT_PROGRESS_EVERY", "inf")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
#: scripts that made committed test data (e.g. the WEFE reference numbers, in WEFE's own environment)
#: are not test modules: --doctest-modules would import them
collect_ignore_glob = ["data/*"]


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
