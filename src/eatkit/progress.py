"""A dependency-free progress indicator for anything that may take more than a second.

It writes to stderr only when enabled and stderr is a terminal (so logs and ``--quiet`` stay clean).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

_ENABLED = True  # switched off by the CLI's --quiet through set_enabled(); never read elsewhere


def set_enabled(enabled: bool) -> None:
    """Turn progress output on or off for this process (the CLI's ``--quiet``)."""
    global _ENABLED
    _ENABLED = enabled


def progress(items: Iterable[T], *, total: int | None = None, desc: str = "") -> Iterator[T]:
    """Yield ``items`` while drawing ``desc [i/total] elapsed`` on stderr (throttled to 10 Hz).

    >>> list(progress(range(3), desc="demo"))
    [0, 1, 2]
    """
    stream = sys.stderr
    show = _ENABLED and stream.isatty()
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    start = last = time.monotonic()
    count = 0
    for item in items:
        yield item
        count += 1
        now = time.monotonic()
        if show and now - last >= 0.1:
            last = now
            of = f"/{total}" if total else ""
            stream.write(f"\r{desc} [{count}{of}] {now - start:5.1f}s")
            stream.flush()
    if show and time.monotonic() - start >= 0.1:
        stream.write("\r" + " " * (len(desc) + 40) + "\r")
        stream.flush()
