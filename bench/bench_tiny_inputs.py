"""Tiny inputs that were slow (issue 45; run by hand, not a test).

    python bench/bench_tiny_inputs.py               # 1 repeat of each case
    python bench/bench_tiny_inputs.py --repeats 3   # medians of 3
    python bench/bench_tiny_inputs.py --folders 5   # a report over 5 run folders instead of 20

Two cases of the issue ("a report over 20 run folders and a 4+4+4+4-image iEAT with ``--metrics all
--validity`` take 59-160 s"), each a fresh process of the active environment, beside ``python -c "import
eatkit.cli"`` (the start-up every command pays) measured in the same run:

* ``eatkit report <20 folders> --html r.html``: the folders are made first (not timed) by ``eatkit run weat
  --model glove-6b-50d --oov drop --permutations 200 --seed i`` (the ``glove`` extra);
* ``eatkit run ieat --model efficientnet_lite0 --images <tiny> --tests asian --metrics all --validity``: 4
  images of 32 x 32 pixels a set, made with PIL (the ``image`` extra and the efficientnet_lite0 weights
  package), embeddings cached by a first run (not timed).

The machine is shared, so each case is measured in CPU seconds (user + system of the process,
``resource.getrusage(RUSAGE_CHILDREN)``) and as a ratio to the start-up process; wall seconds and the load
average are printed beside them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench_first_run import timed  # (user + system CPU of one process, beside its wall time)

SETS = ("european-american", "asian-american", "american", "foreign")


def eatkit(*args: str) -> list[str]:
    return [sys.executable, "-m", "eatkit", *args]


def make_images(root: Path) -> Path:
    """4 PNG images of 32 x 32 pixels in each set of iEAT's test "asian" (noise, a channel shifted per set)."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    for i, name in enumerate(SETS):
        folder = root / "images" / "asian" / name
        folder.mkdir(parents=True)
        for j in range(4):
            pixels = (rng.random((32, 32, 3)) * 255).astype("uint8")
            pixels[..., i % 3] = 30 * j + 50 * i
            Image.fromarray(pixels).save(folder / f"{name[:3]}{j}.png")
    return root / "images"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--folders", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="eatkit-tiny-") as folder:
        root = Path(folder)
        env = dict(os.environ, EATKIT_CACHE_DIR=str(root / "cache"), HF_HUB_OFFLINE="1")
        runs = [str(root / f"run{i:02d}") for i in range(1, args.folders + 1)]
        for i, out in enumerate(runs, 1):
            timed(eatkit("run", "weat", "--model", "glove-6b-50d", "--oov", "drop", "--permutations", "200",
                         "--seed", str(i), "-o", out), env)
        images = make_images(root)
        ieat = ["run", "ieat", "--model", "efficientnet_lite0", "--images", str(images), "--tests", "asian",
                "--metrics", "all", "--validity", "--seed", "0"]
        timed(eatkit(*ieat, "-o", str(root / "ieat-warm-up")), env)  # embeddings cached: not timed
        cases = {
            'python -c "import eatkit.cli"': lambda: [sys.executable, "-c", "import eatkit.cli"],
            f"report over {args.folders} run folders": lambda: eatkit("report", *runs, "--html",
                                                                      str(root / "r.html")),
            "iEAT 4+4+4+4 --metrics all --validity": lambda: eatkit(*ieat, "-o", tempfile.mkdtemp(dir=root)),
        }
        rows: dict[str, list[tuple[float, float]]] = {}
        loads = []
        for _ in range(args.repeats):
            for name, command in cases.items():
                rows.setdefault(name, []).append(timed(command(), env))
                loads.append(os.getloadavg()[0])
    base = statistics.median(v[1] for v in rows['python -c "import eatkit.cli"'])
    print(f"{'case':<44} {'wall s':>8} {'CPU s':>8} {'CPU / start-up':>15}")
    for name, values in rows.items():
        wall = statistics.median(v[0] for v in values)
        cpu = statistics.median(v[1] for v in values)
        print(f"{name:<44} {wall:>8.2f} {cpu:>8.2f} {cpu / base:>15.1f}")
    print(f"(median of {args.repeats}; machine load average {min(loads):.1f} to {max(loads):.1f})")


if __name__ == "__main__":
    main()
