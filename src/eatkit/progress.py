"""A dependency-free progress indicator for anything that may take more than a second.

It writes to stderr only when enabled and stderr is a terminal (so logs, pipes and ``--quiet`` stay
clean). A background thread redraws ``desc [done/total] elapsed`` with a spinner every 0.2 s, so a long
single step (an exact p-value over 10^14 partitions, a model load) still shows that work goes on.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

_ENABLED = True  # switched off by the CLI's --quiet through set_enabled()
_SPINNER = "|/-\\"


def warn(message: str) -> None:
    """Print ``eatkit: warning: <message>`` on stderr: something the user should know that does not stop
    the run (printed also with ``--quiet``, which silences progress, not warnings).

    >>> warn("demo")   # doctest: +SKIP
    """
    print(f"eatkit: warning: {message}", file=sys.stderr)


def set_enabled(enabled: bool) -> None:
    """Turn progress output on or off for this process (the CLI's ``--quiet``)."""
    global _ENABLED
    _ENABLED = enabled


def progress(items: Iterable[T], *, total: int | None = None, desc: str = "") -> Iterator[T]:
    """Yield ``items`` while a spinner shows ``desc [done/total] elapsed`` on stderr.

    >>> list(progress(range(3), desc="demo"))
    [0, 1, 2]
    """
    stream = sys.stderr
    if not (_ENABLED and stream.isatty()):
        yield from items
        return
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    state = {"done": 0}
    stop = threading.Event()
    start = time.monotonic()

    def draw() -> None:
        tick = 0
        while not stop.wait(0.2):
            of = f"/{total}" if total else ""
            stream.write(f"\r{_SPINNER[tick % 4]} {desc} [{state['done']}{of}] {time.monotonic() - start:5.1f}s")
            stream.flush()
            tick += 1

    ticker = threading.Thread(target=draw, daemon=True)
    ticker.start()
    try:
        for item in items:
            yield item
            state["done"] += 1
    finally:
        stop.set()
        ticker.join()
        stream.write("\r" + " " * (len(desc) + 32) + "\r")
        stream.flush()
