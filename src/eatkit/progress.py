"""A dependency-free progress indicator for anything that may take more than a second.

Off with ``--quiet`` (:func:`set_enabled`, or ``run_suite(progress=False)``: :func:`enabled`). In a terminal
a background thread redraws ``desc [done/total] elapsed`` with a spinner every 0.2 s, so a long single step
(an exact p-value over 10^14 partitions, a model load) still shows that work goes on; when stderr is not a
terminal (a log file, a notebook, CI) it writes a line ``eatkit: desc [done/total] elapsed`` every
``LOG_EVERY`` seconds (``$EATKIT_PROGRESS_EVERY``) instead (none for a step that ends sooner), and one when a step that wrote lines ends.
Nested indicators (a run's embedding, an encoder's batches inside it) show the innermost only.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

_ENABLED = True  # switched off by the CLI's --quiet through set_enabled()
_SPINNER = "|/-\\"


def _log_every() -> float:
    try:
        return float(os.environ.get("EATKIT_PROGRESS_EVERY", "5"))
    except ValueError:
        return 5.0


#: seconds between progress lines when stderr is not a terminal (``$EATKIT_PROGRESS_EVERY``, default 5)
LOG_EVERY = _log_every()
_ACTIVE: list["_Indicator"] = []  # the indicators now shown, innermost last


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


@contextmanager
def enabled(on: bool | None) -> Iterator[None]:
    """Within the block, progress is shown (True), silenced (False), or as set for the process (None).

    >>> with enabled(False):
    ...     list(progress(range(2), desc="silent"))
    [0, 1]
    """
    global _ENABLED
    previous = _ENABLED
    _ENABLED = previous if on is None else on
    try:
        yield
    finally:
        _ENABLED = previous


class _Indicator:
    """The spinner (terminal) or the periodic log lines (otherwise) of one step; see the module docstring."""

    def __init__(self, desc: str, total: int | None) -> None:
        self.desc, self.total, self.done = desc, total, 0
        self.stream = sys.stderr
        self.tty = self.stream.isatty()
        self.start = time.monotonic()
        self.logged = False
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "_Indicator":
        _ACTIVE.append(self)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        _ACTIVE.remove(self)
        if self.tty:
            self.stream.write("\r" + " " * (len(self.desc) + 32) + "\r")
        elif self.logged:
            self.stream.write(f"eatkit: {self.desc} {self._count()}done in {time.monotonic() - self.start:.0f}s\n")
        self.stream.flush()

    def _count(self) -> str:
        if not self.total and not self.done:
            return ""
        return f"[{self.done}{f'/{self.total}' if self.total else ''}] "

    def _run(self) -> None:
        tick, last = 0, self.start
        while not self.stop.wait(min(0.2, LOG_EVERY)):
            if _ACTIVE and _ACTIVE[-1] is not self:
                continue  # a nested step shows its own progress
            elapsed = time.monotonic() - self.start
            if self.tty:
                self.stream.write(f"\r{_SPINNER[tick % 4]} {self.desc} {self._count()}{elapsed:5.1f}s")
            elif time.monotonic() - last >= LOG_EVERY:
                self.stream.write(f"eatkit: {self.desc} {self._count()}{elapsed:.0f}s\n")
                self.logged, last = True, time.monotonic()
            else:
                continue
            self.stream.flush()
            tick += 1


def progress(items: Iterable[T], *, total: int | None = None, desc: str = "") -> Iterator[T]:
    """Yield ``items`` while showing ``desc [done/total] elapsed`` on stderr (see the module docstring).

    >>> list(progress(range(3), desc="demo"))
    [0, 1, 2]
    """
    if not _ENABLED:
        yield from items
        return
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with _Indicator(desc, total) as indicator:
        for item in items:
            yield item
            indicator.done += 1


@contextmanager
def activity(desc: str) -> Iterator[None]:
    """Show ``desc elapsed`` on stderr while the block runs (one long step: an exact count, a bootstrap).

    >>> with activity("demo"):
    ...     pass
    """
    if not _ENABLED:
        yield
        return
    with _Indicator(desc, None):
        yield
