"""``eatkit verify``: check a run folder's recorded checksums against the files on disk."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

#: exit status when some stimulus changed since the run (bad input stays 2)
EXIT_CHANGED = 1


def register(sub: Any) -> None:
    ver = sub.add_parser("verify", help="check that a run's stimuli and source files are unchanged",
                         description="Recompute the checksums in a run folder's manifest.json against the files "
                         "on disk; print each stimulus or file that changed since the run (exit status 1).")
    ver.add_argument("run_dir", type=Path, help="a run folder written by 'eatkit run'")
    ver.add_argument("--images", type=Path, help="image folder to check (default: the one the run read)")
    ver.set_defaults(func=_cmd_verify)


def _cmd_verify(args: argparse.Namespace) -> int:
    from eatkit.run.verify import verify_run

    result = verify_run(args.run_dir, images=args.images)
    for change in result.changes:
        print(f"changed: {change}")
    for note in result.notes:
        print(f"note: {note}")
    verdict = "unchanged" if result.ok else f"{len(result.changes)} changed"
    kinds = ", ".join(f"{n} {kind}" for kind, n in result.what.items())
    print(f"{result.run_dir}: {result.checked} checksums checked ({kinds}), {verdict}")
    return 0 if result.ok else EXIT_CHANGED
