"""Decoding workers (eatkit.encoders.workers): batches in order, arrays through the shared-memory ring or
pickled, the same values either way, and no shared memory left behind."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from eatkit.encoders import workers
from eatkit.encoders.workers import Prefetcher, start_pool

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the ring is Linux-only (elsewhere: pickled)")


def pixels(item: str) -> np.ndarray:
    """A deterministic (3, 4, 5) uint8 array per item."""
    return np.arange(60, dtype=np.uint8).reshape(3, 4, 5) + np.uint8(int(item))


def varying(item: str) -> np.ndarray | tuple:
    """Arrays of several sizes, object arrays and a tuple: exercises the pickled fallback beside the ring."""
    k = int(item)
    if k % 5 == 4:
        return ("not an array", k)
    if k % 7 == 6:
        return np.array([f"object {k}"] * 8, dtype=object)  # 64 bytes of pointers: never through the ring
    return np.full((k % 3 + 1, 2), k, dtype=np.int64) if k % 2 else pixels(item)


@pytest.fixture(scope="module")
def pool():
    started = start_pool(2)
    yield started
    started.shutdown()


def batches_of(n: int, size: int) -> list[list[str]]:
    return [[str(i) for i in range(s, min(s + size, n))] for s in range(0, n, size)]


@pytest.mark.parametrize("transform", [pixels, varying])
def test_batches_come_back_in_order_with_the_values_of_the_transform(pool, transform):
    batches = batches_of(23, 4)  # the first batch comes back pickled, the others through the ring
    prefetcher = Prefetcher(pool, 2, transform)
    seen, in_ring, names = [], 0, set()
    for batch, got in zip(batches, prefetcher.run(batches)):
        if prefetcher.ring is not None:
            names.add(prefetcher.ring.name)
            in_ring += sum(isinstance(g, np.ndarray) and isinstance(g.base, np.ndarray) for g in got)
        seen.append([g.copy() if isinstance(g, np.ndarray) else g for g in got])  # views: copy to keep
    expected = [[transform(i) for i in batch] for batch in batches]
    assert len(seen) == len(expected)
    for got, want in zip(seen, expected):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            if isinstance(w, np.ndarray) and w.dtype.hasobject:
                assert g.dtype == w.dtype and g.tolist() == w.tolist()
            elif isinstance(w, np.ndarray):
                assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes()
            else:
                assert g == w
    assert in_ring > 0  # after the first batch, arrays of the first array's size came through the ring
    assert prefetcher.ring is None and len(names) == 1  # one ring, gone once the stream ends
    assert not _ours(os.getpid())


def test_a_stream_left_early_removes_its_ring(pool):
    prefetcher = Prefetcher(pool, 2, pixels)
    stream = prefetcher.run(batches_of(40, 4))
    for _ in range(4):
        next(stream)
    ring = prefetcher.ring
    assert ring.fd is not None and os.path.exists(ring.name.partition("#")[0])
    stream.close()
    assert ring.fd is None and prefetcher.ring is None


def test_no_ring_without_room_in_dev_shm(pool, monkeypatch):
    monkeypatch.setattr(workers, "_SHM_SHARE", 0.0)
    prefetcher = Prefetcher(pool, 2, pixels)
    out = [b[0].copy() for b in prefetcher.run(batches_of(60, 3))]
    assert prefetcher.ring is None and [o.tobytes() for o in out] == [pixels(str(i)).tobytes() for i in range(0, 60, 3)]


def _ours(pid: int) -> set[str]:
    """The entries of /dev/shm of eatkit process ``pid`` (other processes of the machine may have their own)."""
    return {p.name for p in Path("/dev/shm").iterdir() if p.name.startswith(f"eatkit-ring-{pid}")}


@pytest.mark.parametrize("group", [False, True], ids=["parent", "process-group"])
def test_a_run_killed_during_decoding_with_2_workers_leaves_nothing_in_dev_shm(tmp_path, group):
    """SIGKILL of the parent, or of the whole process group (the resource tracker included), during decoding
    with 2 workers: the ring is anonymous memory (memfd), never a name in /dev/shm, so nothing is left."""
    script = (
        "import os, signal, sys\n"
        "sys.path.insert(0, %r)\n"
        "from test_workers import pixels\n"
        "from eatkit.encoders.workers import Prefetcher, start_pool\n"
        "p = Prefetcher(start_pool(2), 2, pixels)\n"
        "stream = p.run([[str(i), str(i + 1)] for i in range(0, 40, 2)])\n"
        "for _ in range(4): next(stream)\n"
        "assert p.ring is not None\n"
        "print(os.getpid(), p.ring.name, flush=True)\n"
        "os.killpg(0, signal.SIGKILL) if %r else os.kill(os.getpid(), signal.SIGKILL)\n"
    ) % (str(Path(__file__).parent), group)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, start_new_session=True,
                         timeout=120)
    pid, name = run.stdout.split()
    assert run.returncode == -9 and name.startswith(f"/proc/{pid}/fd/"), run.stderr
    time.sleep(0.5)
    assert not _ours(int(pid)) and not _ours(int(pid) + 1)  # the parent's, or a worker's


def floats_and_objects(item: str) -> np.ndarray:
    """64-byte arrays: float64 for even items, object (pointers) for odd ones."""
    k = int(item)
    return np.full(8, float(k)) if k % 2 == 0 else np.array([f"o{k}"] * 8, dtype=object)


def test_object_arrays_never_go_through_the_ring(pool):
    # an object array's bytes are pointers, meaningless in another process: it comes back pickled even
    # when its size is the ring's slot size
    prefetcher = Prefetcher(pool, 2, floats_and_objects)
    batches = batches_of(64, 16)  # chunks of 2: an even (float) and an odd (object) item each
    for batch, got in zip(batches, prefetcher.run(batches)):
        assert prefetcher.ring is not None and prefetcher.ring.nbytes == 64
        for item, g in zip(batch, got):
            assert g.tolist() == floats_and_objects(item).tolist() and g.dtype == floats_and_objects(item).dtype


class CountingPool:
    """A pool that counts the tasks submitted to it (and runs them in the real pool)."""

    def __init__(self, pool):
        self.pool, self.submitted = pool, 0

    def submit(self, *args, **kwargs):
        self.submitted += 1
        return self.pool.submit(*args, **kwargs)


def test_every_batch_is_in_flight_once_the_first_is_back_with_the_same_values(pool):
    batches = batches_of(12, 3)  # 4 batches of 3 items: one chunk per item with 2 workers
    counting = CountingPool(pool)
    prefetcher = Prefetcher(counting, 2, pixels)
    stream = prefetcher.run(batches)
    seen, submitted = [], []
    for batch in batches:
        got = next(stream)
        submitted.append(counting.submitted)
        seen.append([g.copy() for g in got])
    assert next(stream, None) is None
    assert [[g.tobytes() for g in b] for b in seen] == [[pixels(i).tobytes() for i in b] for b in batches]
    assert submitted == [12, 12, 12, 12]  # 2 workers x 24 items in flight cover all 4 batches


def test_a_pool_stopped_while_a_worker_writes_its_result_lets_the_interpreter_exit(tmp_path):
    # a worker terminated in the middle of sending a large result leaves half a message in the result pipe:
    # the pool's manager thread must not wait for the rest (the interpreter's exit joins that thread)
    script = tmp_path / "cut.py"
    script.write_text(
        "import time\n"
        "from eatkit.encoders.workers import start_pool, stop_pool\n"
        "def big(_):\n"
        "    return b'x' * 400_000_000\n"
        "if __name__ == '__main__':\n"
        "    pool = start_pool(1)\n"
        "    thread = pool._executor_manager_thread\n"
        "    future = pool.submit(big, 0)\n"
        "    time.sleep(0.6)\n"  # the worker is sending its 400 MB
        "    stop_pool(pool)\n"
        "    thread.join(timeout=10)\n"
        "    print('manager thread alive:', thread.is_alive())\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "manager thread alive: False" in out.stdout, out.stderr[-2000:]


def test_a_pool_stopped_with_cancelled_futures_prints_no_traceback(tmp_path):
    # an interrupted Prefetcher (or Executor.map) cancels its queued futures, then Ctrl-C stops the pool: the
    # manager thread must drop them before the workers die, or it sets BrokenProcessPool on a cancelled future
    # (InvalidStateError, 'Exception in thread ...' on stderr; 2 runs in 4 before stop_pool waited for it)
    script = tmp_path / "cancelled.py"
    script.write_text(
        "import time\n"
        "from eatkit.encoders.workers import start_pool, stop_pool\n"
        "def big(_):\n"
        "    return b'x' * 100_000_000\n"
        "if __name__ == '__main__':\n"
        "    for attempt in range(3):\n"
        "        pool = start_pool(1)\n"
        "        thread = pool._executor_manager_thread\n"
        "        futures = [pool.submit(big, 0)] + [pool.submit(abs, -i) for i in range(20)]\n"
        "        time.sleep(0.3)\n"  # the manager thread is reading the worker's 100 MB
        "        for future in futures:\n"
        "            future.cancel()\n"
        "        stop_pool(pool)\n"
        "        thread.join(timeout=10)\n"
        "        print('manager thread alive:', thread.is_alive())\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.count("manager thread alive: False") == 3, out.stderr[-2000:]
    assert out.stderr == "", out.stderr[-2000:]
