"""Where eatkit keeps files for the user: one rule for the embedding cache and the data folder."""

from __future__ import annotations

import os
from pathlib import Path


def user_dir(override: str, xdg: str, fallback: str) -> Path:
    """``$<override>``, else ``$<xdg>/eatkit``, else ``~/<fallback>/eatkit`` (the folder need not exist).

    >>> user_dir("EATKIT_CACHE_DIR", "XDG_CACHE_HOME", ".cache").name
    'eatkit'
    """
    explicit = os.environ.get(override)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get(xdg)
    return (Path(base).expanduser() if base else Path.home() / fallback) / "eatkit"
