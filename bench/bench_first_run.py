"""First-run benchmark (issue 34; run by hand, not a test).

    python bench/bench_first_run.py               # 1 repeat of each case
    python bench/bench_first_run.py --repeats 3   # medians of 3
    python bench/bench_first_run.py --fallback    # also without the C counter (numpy counts: about 30 s)

Prints, in one run, the README's main job (``eatkit run weat --model glove-6b-50d --oov drop``) against
``python -c pass``, each a fresh process of the active environment:

* as installed by ``pip install ".[glove]"``: the C counter (``eatkit.stats._ccount``) built, numba absent
  (emulated by a process in which ``import numba`` fails);
* with numba (the ``fast`` extra) installed too, when it is: its kernels must not be compiled for the
  README's 25 + 25 counts (the C counter makes them);
* with ``--fallback``: neither (``import eatkit.stats._ccount`` fails too): the numpy reference counts;
* cold: a new, empty eatkit cache folder (embeddings and stored counts, ``EATKIT_CACHE_DIR``) and a new,
  empty compiled-kernel cache (``NUMBA_CACHE_DIR``), as right after an install;
* warm: the same command again with those folders as the cold run left them.

Goals (issue 34): cold at most 3 s, warm at most 1.5 s. Wall times on a shared machine are noisy, so the
CPU time of each process (user + system, ``resource.getrusage(RUSAGE_CHILDREN)``) is printed beside them;
the numba variant also says whether its cache folder holds compiled kernels afterwards.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_COLD, GOAL_WARM = 3.0, 1.5
JOB = ["run", "weat", "--model", "glove-6b-50d", "--oov", "drop"]
#: the CLI in a process where ``import numba`` fails (a None entry in sys.modules makes the import raise)
NO_NUMBA = "import sys; sys.modules['numba'] = None; from eatkit.cli import main; sys.exit(main())"
WITH_NUMBA = "import sys; from eatkit.cli import main; sys.exit(main())"
NEITHER = ("import sys; sys.modules['numba'] = sys.modules['eatkit.stats._ccount'] = None; "
           "from eatkit.cli import main; sys.exit(main())")


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def job(code: str, root: Path, env: dict[str, str], name: str) -> list[str]:
    out = root / name
    shutil.rmtree(out, ignore_errors=True)
    return [sys.executable, "-c", code, *JOB, "-o", str(out)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--fallback", action="store_true", help="also without the C counter (numpy counts)")
    args = parser.parse_args()
    from eatkit.stats.exact_counts import _c_counter

    built = _c_counter()
    print(f"C counter: {built.__file__ if built else 'NOT built (the numpy reference counts)'}")
    variants = [("C counter, no numba", NO_NUMBA)]
    try:
        import numba  # noqa: F401

        variants.append(("C counter + numba", WITH_NUMBA))
    except ImportError:
        pass
    if args.fallback:
        variants.append(("numpy only", NEITHER))
    compiled: dict[str, int] = {}
    rows: dict[str, list[tuple[float, float]]] = {}
    for _ in range(args.repeats):
        rows.setdefault("python -c pass", []).append(timed([sys.executable, "-c", "pass"], dict(os.environ)))
        for label, code in variants:
            with tempfile.TemporaryDirectory(prefix="eatkit-first-run-") as folder:
                root = Path(folder)
                env = dict(os.environ, EATKIT_CACHE_DIR=str(root / "cache"), NUMBA_CACHE_DIR=str(root / "numba"),
                           HF_HUB_OFFLINE="1")
                rows.setdefault(f"README job, {label}, cold", []).append(timed(job(code, root, env, "cold"), env))
                rows.setdefault(f"README job, {label}, warm", []).append(timed(job(code, root, env, "warm"), env))
                if code == WITH_NUMBA:
                    compiled[label] = sum(1 for p in (root / "numba").rglob("*") if p.suffix in (".nbi", ".nbc"))
    print(f"{'case':<48} {'wall s':>8} {'CPU s':>8}  goal")
    for name, values in rows.items():
        wall = statistics.median(v[0] for v in values)
        cpu = statistics.median(v[1] for v in values)
        goal = GOAL_COLD if name.endswith("cold") else GOAL_WARM if name.endswith("warm") else None
        verdict = "" if goal is None else f"<= {goal:g} s: {'met' if wall <= goal else 'NOT met'} (wall)"
        print(f"{name:<48} {wall:>8.2f} {cpu:>8.2f}  {verdict}")
    for label, files in compiled.items():
        verdict = "kernels compiled" if files else "none compiled"
        print(f"{label}: {files} files in the numba cache after the runs ({verdict})")
    print(f"(median of {args.repeats}; machine load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
