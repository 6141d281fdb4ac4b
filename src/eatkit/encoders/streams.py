"""Image batches through a model on the CPU: each batch on one thread, several batches at once.

**Why one thread per batch.** With torch's intra-op threads an operation is split over the threads, and
how it is split changes the last bits of a vector: EfficientNet-Lite0's embeddings of the same batch
differed by up to 4.5e-6 between 1 and 2 threads. An embedding computed on the CPU thus depended on the
machine's number of cores. Computed on one thread it does not: the same batch, CPU model and library
versions give the same bits on any machine, however many batches run at once.

**Why several at once.** The operations of a small batch do not split evenly over threads, and each
parallel step waits for its slowest thread. On the 2-core development machine EfficientNet-Lite0 took, for
32 iEAT images in 4 batches, 2.05 s on 1 thread and 1.30 s on 2 threads, but 1.10 s as two batches at once
on one thread each; decoding workers then share the cores without stalling a parallel step. The cost is
memory: one batch's activations per thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from eatkit.encoders.workers import track


class BatchStreams:
    """``size`` threads, each running torch on a single thread (``torch.set_num_threads(1)`` in that thread).

    The setting is per thread, but torch also keeps it as the default of threads it first meets later; the
    caller's setting is restored as soon as the threads are set up, so nothing else in the process changes.

    >>> import torch
    >>> before = torch.get_num_threads()
    >>> streams = BatchStreams(torch, 2)
    >>> streams.submit(torch.get_num_threads).result(), torch.get_num_threads() == before
    (1, True)
    >>> streams.close()
    """

    def __init__(self, torch: Any, size: int) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self.size = size
        self._pool = track(ThreadPoolExecutor(size, thread_name_prefix="eatkit-batch"))  # stopped on Ctrl-C
        everyone = threading.Barrier(size)  # each set-up task waits for the others: one task per thread

        def single_threaded() -> None:
            torch.get_num_threads()  # torch's first use in a thread sets its default: do that first
            torch.set_num_threads(1)
            everyone.wait()

        previous = torch.get_num_threads()
        for future in [self._pool.submit(single_threaded) for _ in range(size)]:
            future.result()
        torch.set_num_threads(previous)

    def submit(self, function: Callable[..., Any], *args: Any) -> Future:
        """Run ``function(*args)`` on one of the threads."""
        return self._pool.submit(function, *args)

    def close(self, wait: bool = True) -> None:
        """Stop the threads (``wait``: after the batch each runs; a finalizer, which may run on one of
        them, must not wait)."""
        self._pool.shutdown(wait=wait, cancel_futures=True)


def done(value: Any) -> Future:
    """A future that already holds ``value`` (a batch computed where it was asked for).

    >>> done(3).result()
    3
    """
    future: Future = Future()
    future.set_result(value)
    return future
