"""``eatkit sweep``: run models x suites x settings from a sweep file (resumable; local processes, Ray or SLURM)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from eatkit.cli import non_negative


def register(sub: Any) -> None:
    sweep = sub.add_parser("sweep", help="run models x suites x settings from a sweep file (resumable)",
                           description="Run every cell of a sweep file (TOML, or YAML with PyYAML) not finished "
                           "before; write each cell's run folder, a combined results.csv and report.html "
                           "(see docs/scale.md). Exit status 1 when a cell failed.")
    sweep.add_argument("config", type=Path, help="the sweep file")
    sweep.add_argument("--output", "-o", type=Path, help="output folder (default: 'output' in the sweep file)")
    sweep.add_argument("--executor", default="local", choices=("local", "ray", "slurm"),
                       help="local processes (default), a Ray cluster, or SLURM job arrays through submitit")
    sweep.add_argument("--address", help="Ray cluster: auto or HOST:PORT (default: start a local Ray)")
    sweep.add_argument("--cluster", default="slurm", choices=("slurm", "local", "debug"),
                       help="with --executor slurm: submit to SLURM (default), or run the same jobs on this "
                       "machine (local: processes; debug: in this process) to try a sweep file")
    sweep.add_argument("--jobs", type=non_negative, default=1,
                       help="local worker processes (default 1; 0: in this process)")
    sweep.add_argument("--no-report", action="store_true", help="do not write report.html")
    sweep.add_argument("--quiet", "-q", action="store_true", help="no summary, no progress output")
    sweep.set_defaults(func=_cmd_sweep)


def _cmd_sweep(args: argparse.Namespace) -> int:
    from eatkit.run.sweep import run_sweep

    result = run_sweep(args.config, args.output, executor=args.executor, jobs=args.jobs, address=args.address,
                       cluster=args.cluster)
    if not args.no_report and result.finished:
        from eatkit.report import write_html_report

        write_html_report(result.finished, result.out / "report.html", {c: result.errors[c] for c in result.failed})
        _write_audit(args.config, result)
    for cell in result.failed:
        print(f"eatkit: cell {cell} failed: {result.errors[cell]}", file=sys.stderr)
    if not args.quiet:
        _summary(result)
    return 1 if result.failed else 0


def _summary(result: Any) -> None:
    """The cells computed, finished before and failed, the files written and the rankings."""
    counts = {s: list(result.statuses.values()).count(s) for s in ("done", "finished before", "failed")}
    rankings = result.out / "rankings.csv"
    written = "results.csv, cells.csv" + (", rankings.csv" if rankings.exists() else "") + (
        ", report.html, audit.html" if (result.out / "report.html").exists() else "")
    print(f"{len(result.statuses)} cells: {counts['done']} computed, {counts['finished before']} finished before, "
          f"{counts['failed']} failed; wrote {written} in {result.out}")
    if rankings.exists():
        print(rankings.read_text(encoding="utf-8").rstrip())


def _write_audit(config: Path, result: Any) -> None:
    """audit.html: the finished cells as a sortable, filterable models x tests table with the model entries'
    metadata (eatkit.report.audit)."""
    from eatkit.report.audit import write_audit_report
    from eatkit.run.sweep import METADATA_KEYS, load_sweep

    metadata = {c.model["label"]: {k: c.model[k] for k in METADATA_KEYS if k in c.model} for c in load_sweep(config).cells}
    write_audit_report(result.finished, result.out / "audit.html", metadata, rankings=result.out / "rankings.csv")
