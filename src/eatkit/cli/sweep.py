"""``eatkit sweep``: run models x suites x settings from a sweep file (resumable; local processes, Ray or SLURM)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from eatkit.cli import add_declared, declared_warnings, print_warnings
from eatkit.errors import EatkitError
from eatkit.io import read_text


def register(sub: Any) -> None:
    sweep = sub.add_parser("sweep", help="run models x suites x settings from a sweep file (resumable)",
                           description="Run every cell of a sweep file (TOML, or YAML with PyYAML) not finished "
                           "before (only the tests each model can embed); write each cell's run folder, the combined "
                           "tables (results.csv, cells.csv, tests.csv, rankings.csv) and audit.html (see "
                           "docs/scale.md). Exit status 1 when a cell failed (a test that fails alone is a "
                           "warning; inapplicable cells are not failures).")
    sweep.add_argument("config", type=Path, help="the sweep file")
    sweep.add_argument("--output", "-o", type=Path, help="output folder (default: 'output' in the sweep file)")
    sweep.add_argument("--executor", default="local", choices=("local", "ray", "slurm"),
                       help="local processes (default), a Ray cluster, or SLURM job arrays through submitit")
    sweep.add_argument("--address", help="Ray cluster: auto or HOST:PORT (default: start a local Ray)")
    sweep.add_argument("--cluster", choices=("slurm", "local", "debug"),
                       help="with --executor slurm: submit to SLURM (default), or run the same jobs on this "
                       "machine (local: processes; debug: in this process) to try a sweep file")
    add_declared(sweep, "sweep", "jobs")
    sweep.add_argument("--no-report", action="store_true", help="do not write audit.html (eatkit report OUTPUT writes it later)")
    sweep.add_argument("--quiet", "-q", action="store_true", help="no summary, no progress output")
    sweep.set_defaults(func=_cmd_sweep)


def _refuse_inapplicable(args: argparse.Namespace) -> None:
    """A flag that cannot apply to the chosen executor is an error, not silently ignored."""
    for flag, value, executor in (("--cluster", args.cluster, "slurm"), ("--address", args.address, "ray")):
        if value is not None and args.executor != executor:
            raise EatkitError(f"{flag} applies to --executor {executor} only (the executor here is {args.executor})")


def _cmd_sweep(args: argparse.Namespace) -> int:
    from eatkit.run.sweep import run_sweep

    _refuse_inapplicable(args)
    result = run_sweep(args.config, args.output, executor=args.executor, jobs=args.jobs, address=args.address,
                       cluster=args.cluster or "slurm")
    print_warnings(declared_warnings("sweep", args))  # recorded in sweep.json by the sweep
    if not args.no_report:
        from eatkit.report.audit import write_audit_report

        write_audit_report(result.out)
    _report_failures(result)
    if not args.quiet:
        _summary(result, args.no_report)
    return 1 if result.failed else 0


def _report_failures(result: Any) -> None:
    """The failed cells (errors) and the tests that failed alone (warnings: the cells' other tests stand)."""
    for cell in result.failed:
        print(f"eatkit: cell {cell} failed: {result.errors[cell]}", file=sys.stderr)
    for cell, tests in result.failed_tests.items():
        for error in tests.values():
            print(f"eatkit: warning: cell {cell}: {error} (the cell's other tests stand; tests.csv)", file=sys.stderr)


def _summary(result: Any, no_report: bool) -> None:
    """The cells computed, finished before, failed and inapplicable, the files written and the rankings."""
    counts = {s: list(result.statuses.values()).count(s) for s in ("done", "finished before", "failed",
                                                                   "inapplicable")}
    rankings = result.out / "rankings.csv"
    written = "results.csv, cells.csv, tests.csv" + (", rankings.csv" if rankings.exists() else "") + (
        ", audit.html" if not no_report else f" (audit.html: eatkit report {result.out})")
    print(f"{len(result.statuses)} cells: {counts['done']} computed, {counts['finished before']} finished before, "
          f"{counts['failed']} failed, {counts['inapplicable']} inapplicable (no test applies to the model); "
          f"wrote {written} in {result.out}")
    if rankings.exists():
        print(read_text(rankings, "rankings table").rstrip())
