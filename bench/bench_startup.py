"""Start-up benchmark (issue 24; run by hand, not a test).

    python bench/bench_startup.py              # 15 interleaved repeats of each command
    python bench/bench_startup.py --repeats 31

Prints, in one run, the wall time of ``eatkit --help`` and ``eatkit list suites`` (each a fresh process,
the console script of the active environment) against ``python -c pass`` (goal: at most 0.25 s above it),
and, in a fresh process, the first exact 20 + 20 permutation count against the second (goal: within
0.1 s). Times are medians of interleaved repeats (pass, help, list, pass, ...), so that the load of a
shared machine hits every command alike.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time

GOAL_ABOVE_PASS = 0.25
GOAL_FIRST_COUNT = 0.1
FIRST_COUNT = """
import time
import numpy as np
from eatkit.stats import group_permutation_test
g = np.random.default_rng(0)
times = []
for _ in range(2):
    x, y = g.normal(size=20), g.normal(size=20)
    start = time.perf_counter()
    group_permutation_test(x, y, permutations="exact")
    times.append(time.perf_counter() - start)
print(*times)
"""


def wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    eatkit = shutil.which("eatkit") or sys.exit("bench_startup: the eatkit command is not on PATH")
    commands = {"python -c pass": [sys.executable, "-c", "pass"], "eatkit --help": [eatkit, "--help"],
                "eatkit list suites": [eatkit, "list", "suites"]}
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeats):
        for name, command in commands.items():
            times[name].append(wall(command))
    base = statistics.median(times["python -c pass"])
    print(f"start-up, medians of {args.repeats} interleaved runs")
    print(f"  {'python -c pass':22s} {base:.3f} s")
    for name in ("eatkit --help", "eatkit list suites"):
        above = statistics.median(t - p for t, p in zip(times[name], times["python -c pass"]))
        verdict = "PASS" if above <= GOAL_ABOVE_PASS else "FAIL"
        print(f"  {name:22s} {statistics.median(times[name]):.3f} s  ({above:+.3f} s above pass; goal "
              f"<= {GOAL_ABOVE_PASS} s: {verdict})")
    firsts, seconds = [], []
    for _ in range(max(3, args.repeats // 3)):
        out = subprocess.run([sys.executable, "-c", FIRST_COUNT], check=True, capture_output=True, text=True)
        first, second = map(float, out.stdout.split())
        firsts.append(first)
        seconds.append(second)
    gap = statistics.median(f - s for f, s in zip(firsts, seconds))
    verdict = "PASS" if gap <= GOAL_FIRST_COUNT else "FAIL"
    print(f"exact 20 + 20 count in a fresh process, medians of {len(firsts)} processes: first "
          f"{statistics.median(firsts):.3f} s, second {statistics.median(seconds):.3f} s ({gap:+.3f} s; goal "
          f"<= {GOAL_FIRST_COUNT} s: {verdict})")


if __name__ == "__main__":
    main()
