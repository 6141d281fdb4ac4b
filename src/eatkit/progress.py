"""A dependency-free progress indicator for anything that may take more than a second.

Off with ``--quiet`` (:func:`set_enabled`, or ``run_suite(progress=False)``: :func:`enabled`). A loop counts
its items in a unit (``images``, ``sentences``, ``pairs``, ``contexts``, ``cells``) and, once one is done, the
time left at the pace so far: ``generating 1,200/3,200 images, ETA 4m10s``. In a terminal a background thread
redraws ``desc done/total unit, ETA t elapsed`` with a spinner every 0.2 s, so a long single step (an exact
p-value over 10^14 partitions, a model load) still shows that work goes on; when stderr is not a terminal (a
log file, a notebook, CI) it writes a line ``eatkit: desc done/total unit, ETA t elapsed`` every
``LOG_EVERY`` seconds (``$EATKIT_PROGRESS_EVERY``) instead (none for a step that ends sooner), and one when a
step that wrote lines ends. Nested indicators (a run's embedding, an encoder's batches inside it) show the
innermost only. :func:`progress` wraps an iterable; :func:`tracker` is for a loop that counts itself (a
batch of 32 sentences done: ``tick.advance(32)``).
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


#: the shortest wait between two looks of the progress thread (LOG_EVERY = 0 wrote lines in a busy loop: a
#: test's captured stderr grew by gigabytes while a slow run went on)
MIN_WAIT = 0.01
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


def duration(seconds: float) -> str:
    """Seconds as a short duration: ``42s``, ``4m10s``, ``2h05m``.

    >>> duration(42.4), duration(250), duration(7500)
    ('42s', '4m10s', '2h05m')
    """
    whole = int(round(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def counted(done: int, total: int | None, unit: str, elapsed: float, since: int = 0) -> str:
    """``done/total unit, ETA t`` (thousands separated): the time left at the pace of the ``done - since``
    items of the last ``elapsed`` seconds (no ETA before that pace is known or after the last item).

    >>> counted(1200, 3200, "images", 150.0)
    '1,200/3,200 images, ETA 4m10s'
    >>> counted(3, None, "cells", 1.0), counted(0, 10, "", 1.0), counted(1, 10, "", 40.0, since=1)
    ('3 cells', '0/10', '1/10')
    """
    text = f"{done:,}/{total:,}" if total else f"{done:,}"
    text += f" {unit}" if unit else ""
    if total and since < done < total:
        text += f", ETA {duration(elapsed / (done - since) * (total - done))}"
    return text


#: what a progress line counts, by the modality of the stimuli
UNITS = {"image": "images", "word": "words", "sentence": "sentences", "prompt": "prompts",
         "image-caption": "image-caption pairs"}


def item_unit(sets: Iterable[object]) -> str:
    """The unit of a progress line over stimulus sets (anything with a ``modality``): their modality's
    plural when they share one, else ``items``.

    >>> from types import SimpleNamespace as S
    >>> item_unit([S(modality="image"), S(modality="image")]), item_unit([S(modality="word"), S(modality="image")])
    ('images', 'items')
    """
    found = {getattr(s, "modality", None) for s in sets}
    return UNITS.get(found.pop(), "items") if len(found) == 1 else "items"


class _Indicator:
    """The spinner (terminal) or the periodic log lines (otherwise) of one step; see the module docstring."""

    def __init__(self, desc: str, total: int | None, unit: str = "") -> None:
        self.desc, self.total, self.done, self.unit = desc, total, 0, unit
        self.paced: tuple[float, int] | None = None  # (time, items done) when the first item was done
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
            self.stream.write("\r" + " " * (len(self.desc) + 64) + "\r")
        elif self.logged:
            self.stream.write(f"eatkit: {self.desc} {self._count()}done in {time.monotonic() - self.start:.0f}s\n")
        self.stream.flush()

    def advance(self, n: int = 1) -> None:
        """``n`` more items done."""
        if self.paced is None:  # the pace counts from the first item done: not the set-up (a model's load)
            self.paced = (time.monotonic(), self.done + n)
        self.done += n

    def _count(self) -> str:
        if not self.total and not self.done:
            return ""
        since, first = (self.paced[1], self.paced[0]) if self.paced else (self.done, self.start)
        return counted(self.done, self.total, self.unit, time.monotonic() - first, since) + " "

    def _run(self) -> None:
        tick, last = 0, self.start
        while not self.stop.wait(min(0.2, max(LOG_EVERY, MIN_WAIT))):  # never a busy loop, whatever LOG_EVERY
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


def progress(items: Iterable[T], *, total: int | None = None, desc: str = "", unit: str = "") -> Iterator[T]:
    """Yield ``items`` while showing ``desc done/total unit, ETA t elapsed`` on stderr (see the module
    docstring).

    >>> list(progress(range(3), desc="demo", unit="cells"))
    [0, 1, 2]
    """
    if not _ENABLED:
        yield from items
        return
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with _Indicator(desc, total, unit) as indicator:
        for item in items:
            yield item
            indicator.advance()


class _Silent:
    """The tracker of a block with progress off: counts, shows nothing."""

    def __init__(self, total: int | None) -> None:
        self.total, self.done = total, 0

    def advance(self, n: int = 1) -> None:
        self.done += n


@contextmanager
def tracker(desc: str, total: int | None, unit: str = "") -> Iterator[_Indicator | _Silent]:
    """Show ``desc done/total unit, ETA t`` while the block runs; the block says what it did with
    ``advance(n)`` (a loop over batches: the items of each batch), and may raise ``total`` when it learns more.

    >>> with tracker("scoring", 3016, "sentences") as tick:
    ...     for batch in range(0, 3016, 32):
    ...         tick.advance(min(32, 3016 - batch))
    >>> tick.done
    3016
    """
    if not _ENABLED:
        yield _Silent(total)
        return
    with _Indicator(desc, total, unit) as indicator:
        yield indicator


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
