"""Preparing model inputs (decoding images) in worker processes, ahead of the forward pass.

:class:`Prefetcher` runs a stream of batches through a process pool and yields each batch's prepared
inputs in order, keeping the next two batches in flight while the caller encodes the current one.

**How many in flight.** ``IN_FLIGHT_PER_WORKER`` items per worker are submitted ahead (whole batches, at
least two): decoding times vary widely, and with two batches of iEAT images in flight 15 workers
decoded 354 images/s, with 24 items per worker 615 (on a 16-core GPU machine, where one task per image
gave 593 and ``ProcessPoolExecutor.map`` over all images at once 545).

**How the arrays come back.** Pickling each decoded array through the pool's pipe costs the parent
process, the serial part of the pipeline, about 1 ms per 600 KB array (copies into fresh memory, page
faults, pipe round trips; measured on a 2-core machine); one task per image adds the pool's own
bookkeeping. So the items of a batch go out in chunks (``CHUNKS_PER_WORKER`` per worker), and each worker
writes its arrays into slots of one *ring* of shared memory that the parent created once (three batches
of slots, mapped once by every process), sending back only each array's shape and type. The caller gets
views of the ring, valid until it asks for the next batch (an encoder copies them at once into its
input tensor). An output that is not an array of the ring's slot size (another shape, a tuple of
inputs) comes back pickled, as does the first batch (the ring is sized from its first array back),
everything off Linux, or when ``/dev/shm`` is short; the values are the same either way.
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import multiprocessing.util
import os
import shutil
import signal
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.errors import EatkitError

#: items kept in flight per worker beyond the batch being consumed (at least two batches): decoding times
#: vary (the 10th and 90th percentiles of the iEAT images differ 16-fold), and a worker must not wait for a
#: batch's slowest image
IN_FLIGHT_PER_WORKER = 24
#: a batch goes out in about this many chunks per worker (fewer tasks: less of the pool's bookkeeping)
CHUNKS_PER_WORKER = 4
#: use at most this fraction of the free space of the shared-memory file system for a ring
_SHM_SHARE = 0.5
_SHM = Path("/dev/shm")


def start_pool(workers: int, method: str | None = None) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes: forked where the platform allows it (Linux; the workers run only
    Pillow and numpy, never torch), else spawned (then a script that embeds images needs the usual
    ``if __name__ == "__main__":`` guard, or ``workers=0``); ``method`` chooses. Each worker ignores
    Ctrl-C (the parent stops the pool: :func:`stop_pool`) and exits when its parent is gone."""
    if method is None:
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() and sys.platform == "linux" else "spawn"
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method),
                               initializer=_worker_start, initargs=(os.getpid(),))
    if method == "fork":  # all the workers are forked at the first submission: make it one that holds Ctrl-C
        submit(pool, int)
    return track(pool)


#: the pools started by :func:`start_pool` or given to :func:`track`, not yet collected (:func:`stop_all_pools`)
_POOLS: "weakref.WeakSet[Executor]" = weakref.WeakSet()
_RINGS: "weakref.WeakSet[_Ring]" = weakref.WeakSet()


def stop_all_pools() -> None:
    """Stop every worker pool of this process and remove its shared-memory rings (the command line does
    this on Ctrl-C, so that the interpreter's exit does not wait for the workers' tasks).

    >>> stop_all_pools()
    """
    for pool in list(_POOLS):
        stop_pool(pool)
    for ring in list(_RINGS):
        ring.close()


def track(pool: Executor) -> Executor:
    """Register ``pool`` (processes or threads) with :func:`stop_all_pools`; returns it."""
    if not _POOLS:
        # a process that is itself a pool's worker (a sweep cell) joins its children when it exits,
        # before the interpreter's own clean-up: stop the pools first, or it waits for idle workers forever
        multiprocessing.util.Finalize(None, stop_all_pools, exitpriority=100)
    _POOLS.add(pool)
    return pool


def stop_pool(pool: Executor) -> None:
    """Stop ``pool`` now: queued tasks cancelled, worker processes terminated (a thread finishes the task it
    runs), nothing waited for (so it is safe after Ctrl-C, from a finalizer, and from any thread: no
    'cannot join current thread').

    >>> pool = start_pool(1); pool.submit(abs, -1).result()
    1
    >>> stop_pool(pool)
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    result_queue = getattr(pool, "_result_queue", None)  # shutdown() forgets it
    manager = getattr(pool, "_executor_manager_thread", None)  # and this
    pool.shutdown(wait=False, cancel_futures=True)
    _await_cancellation(pool, manager)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=1.0)
    # A worker killed while it wrote a result leaves half a message in the result pipe, and the pool's
    # manager thread would wait for the rest forever (and the interpreter's exit with it). With every
    # worker gone, closing this process's own write end makes that read end at once (end of file).
    if processes and result_queue is not None and not any(p.is_alive() for p in processes):
        result_queue._writer.close()


def _await_cancellation(pool: Executor, manager: threading.Thread | None, timeout: float = 0.5) -> None:
    """Until ``pool``'s manager thread has taken in the shutdown (at most ``timeout`` seconds): it drops the
    queued work, cancelled ones included, before the workers are terminated.

    A future cancelled by its caller (an interrupted :class:`Prefetcher`, ``Executor.map``) stays among the
    pool's pending work until the manager thread sees the shutdown; a pool broken before that (its workers
    terminated) has the thread set a ``BrokenProcessPool`` on the cancelled future, and Python 3.11's raises
    ``InvalidStateError`` and prints its traceback ('Exception in thread ...') after Ctrl-C."""
    if manager is None or manager is threading.current_thread():
        return
    end = time.monotonic() + timeout
    while getattr(pool, "_cancel_pending_futures", False) and manager.is_alive() and time.monotonic() < end:
        time.sleep(0.002)


@dataclass(frozen=True)
class _InRing:
    """A worker's answer for an array it wrote into the ring: where, and as what."""

    slot: int
    shape: tuple[int, ...]
    dtype: str


#: the name of eatkit's rings (anonymous memory: shown as ``memfd:eatkit-ring-<pid>`` in /proc/<pid>/maps)
RING_PREFIX = "eatkit-ring-"


class _Ring:
    """Slots of ``nbytes`` each in one block of anonymous shared memory created by the parent
    (``os.memfd_create``: no name in ``/dev/shm`` or anywhere else), which the workers map through the
    parent's descriptor (``/proc/<parent>/fd/<fd>``). The memory goes with the last process that holds or
    maps it, however the processes end (SIGKILL of the whole process group included): nothing can be left
    behind to reclaim. Both sides map it as a :class:`numpy.memmap`, so a view outlives :meth:`close` safely."""

    def __init__(self, nbytes: int, slots: int) -> None:
        self.nbytes, self.slots = nbytes, slots
        self.fd: int | None = os.memfd_create(f"{RING_PREFIX}{os.getpid()}", os.MFD_CLOEXEC)
        os.ftruncate(self.fd, nbytes * slots)
        path = f"/proc/{os.getpid()}/fd/{self.fd}"  # what a worker opens to map it
        self.name = f"{path}#{os.urandom(6).hex()}"  # a descriptor's number is reused by a later ring: not its name
        self.array: np.ndarray | None = np.memmap(path, np.uint8, "r+", shape=(nbytes * slots,))
        _RINGS.add(self)  # (closed by stop_all_pools on Ctrl-C, should its stream not be closed first)

    @staticmethod
    def fits(nbytes: int, slots: int) -> bool:
        """Whether a ring can be made: on Linux, with room in shared memory (``/dev/shm``'s free space, the
        same tmpfs budget: writing past it kills the process that writes)."""
        try:
            return sys.platform == "linux" and nbytes * slots <= _SHM_SHARE * shutil.disk_usage(_SHM).free
        except OSError:
            return False

    def view(self, answer: _InRing) -> np.ndarray:
        start = answer.slot * self.nbytes
        return self.array[start : start + self.nbytes].view(answer.dtype).reshape(answer.shape)

    def close(self) -> None:
        """Close the descriptor (the memory goes when the last mapping, worker's or view's, does)."""
        if self.fd is not None:
            self.array = None
            os.close(self.fd)
            self.fd = None


class Prefetcher:
    """Prepare batches of items with ``transform`` in ``pool``, yielding each batch's inputs in order.

    Example (``str.upper`` as the transform, two workers)::

        pool = start_pool(2)
        list(Prefetcher(pool, 2, str.upper).run([["a", "b"], ["c"]]))  # [["A", "B"], ["C"]]
    """

    def __init__(self, pool: ProcessPoolExecutor, workers: int, transform: Callable[[str], Any]) -> None:
        self.pool, self.workers, self.transform = pool, workers, transform
        self.ring: _Ring | None = None
        self.depth = 2  # batches in flight beyond the one consumed (set by run; a ring holds depth + 1)

    def run(self, batches: list[list[str]]) -> Iterator[list[Any]]:
        """The prepared batches, in order (arrays in the ring are views, valid until the next batch)."""
        capacity = max((len(b) for b in batches), default=0)
        mean = sum(len(b) for b in batches) / max(len(batches), 1)
        self.depth = max(2, math.ceil(IN_FLIGHT_PER_WORKER * self.workers / max(mean, 1)))
        upcoming = enumerate(batches)
        pending: deque[list[Future]] = deque()
        try:
            for index, items in itertools.islice(upcoming, 1):  # the ring is sized from the first array back
                pending.append(self._submit(index, items, capacity))
                self._make_ring(_result(next(as_completed(pending[0]))), capacity)
            pending.extend(self._submit(i, b, capacity) for i, b in itertools.islice(upcoming, self.depth - 1))
            while pending:
                futures = pending.popleft()
                answers = [a for f in futures for a in _result(f)]
                nxt = next(upcoming, None)
                if nxt is not None:
                    pending.append(self._submit(*nxt, capacity))
                yield [self.ring.view(a) if isinstance(a, _InRing) else a for a in answers]
        finally:
            for future in itertools.chain.from_iterable(pending):
                future.cancel()
            if self.ring is not None:
                self.ring.close()
                self.ring = None

    def _make_ring(self, answers: list[Any], capacity: int) -> None:
        """A ring sized for the first array among the first answers (no ring if none, or no room)."""
        first = next((a for a in answers if _plain(a)), None)
        slots = (self.depth + 1) * capacity
        if first is not None and first.nbytes > 0 and _Ring.fits(first.nbytes, slots):
            self.ring = _Ring(first.nbytes, slots)

    def _submit(self, index: int, items: list[str], capacity: int) -> list[Future]:
        """A batch's items in chunks (``CHUNKS_PER_WORKER`` per worker); with a ring, their slots."""
        size = max(1, math.ceil(len(items) / (CHUNKS_PER_WORKER * self.workers)))
        futures = []
        for start in range(0, len(items), size):
            where = None
            if self.ring is not None:
                first_slot = (index % (self.depth + 1)) * capacity + start
                where = (self.ring.name, self.ring.nbytes, first_slot)
            futures.append(submit(self.pool, _prepare_chunk, self.transform, items[start : start + size], where))
        return futures


#: in a worker: the ring it last wrote to (the parent's descriptor path: mapping)
_ATTACHED: dict[str, np.ndarray] = {}


def _prepare_chunk(transform: Callable[[str], Any], items: list[str],
                   where: tuple[str, int, int] | None) -> list[Any]:
    """In a worker: ``transform`` each item; with ``where`` = (ring name, slot size, first slot), write the
    arrays of the slot size into consecutive slots and answer :class:`_InRing` for them."""
    answers = []
    for k, item in enumerate(items):
        value = transform(item)
        if where is not None and _plain(value) and value.nbytes == where[1]:
            slot, start = where[2] + k, (where[2] + k) * where[1]
            _attach(where[0])[start : start + where[1]].view(value.dtype).reshape(value.shape)[...] = value
            value = _InRing(slot, value.shape, value.dtype.str)
        answers.append(value)
    return answers


def _plain(value: Any) -> bool:
    """Whether ``value`` is an array of plain numbers (its bytes are its values: fit for the ring)."""
    return isinstance(value, np.ndarray) and not value.dtype.hasobject


def _attach(name: str) -> np.ndarray:
    """The mapping of the ring ``name`` in this worker (an older ring's mapping is dropped)."""
    memory = _ATTACHED.get(name)
    if memory is None:
        _ATTACHED.clear()
        memory = _ATTACHED[name] = np.memmap(name.partition("#")[0], np.uint8, "r+")
    return memory


def submit(pool: Executor, function: Callable[..., Any], *args: Any) -> Future:
    """``pool.submit(function, *args)`` with Ctrl-C held back meanwhile (it is raised right after): a
    submission may start the pool's worker processes, and a Ctrl-C while one is being forked would leave
    the pool half made (and the new worker printing a traceback before it learns to ignore Ctrl-C).

    >>> pool = start_pool(1); submit(pool, abs, -2).result()
    2
    >>> stop_pool(pool)
    """
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        return pool.submit(function, *args)
    # blocked in this thread: a process it starts inherits the mask (until _worker_start); and recorded,
    # not raised, should another thread of the process receive it
    held: list[int] = []
    handler = signal.signal(signal.SIGINT, lambda number, frame: held.append(number))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return pool.submit(function, *args)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        signal.signal(signal.SIGINT, handler)
        if held and callable(handler):
            handler(signal.SIGINT, None)  # (the default handler raises KeyboardInterrupt)


def _worker_start(parent: int) -> None:
    """In a worker: ignore Ctrl-C (the terminal sends it to the whole process group; the parent stops the
    pool, and a worker would only print a traceback) and exit with the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # held back by submit() in the parent
    _exit_with_parent(parent)


def _exit_with_parent(parent: int) -> None:
    """In a worker: exit when the process that started it is gone (e.g. killed), not linger."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def _result(future: Future) -> Any:
    """A worker's result; a worker process that died (killed, out of memory) is a one-line error."""
    try:
        return future.result()
    except BrokenProcessPool:
        raise EatkitError("an image-decoding worker process died (out of memory?): retry with fewer "
                          "workers (workers=0 decodes in the main process)") from None
