"""Lazy attributes of a package (PEP 562 module ``__getattr__``, after the scientific-Python lazy-loading
convention, SPEC 1): ``import eatkit`` loads no numpy, scipy, pandas or numba; each public name loads its
module on first access.

>>> getattr_, dir_ = attach("json", {"dumps": "json"})
>>> getattr_("dumps")([1])
'[1]'
>>> "dumps" in dir_()
True
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def attach(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``names`` maps each public name to the module that
    defines it (the name is looked up there on first access; the module caches it)."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(names[name]), name)

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__
