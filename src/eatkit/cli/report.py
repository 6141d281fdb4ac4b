"""``eatkit report``: one self-contained HTML report of one or more run folders, or a sweep's audit page."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    rep = sub.add_parser("report", help="write an HTML report of run folders, or a sweep's audit.html",
                         description="Write one HTML report of run folders (--html FILE), or, given a sweep's "
                         "output folder, its audit.html again from its tables (--html: elsewhere).")
    rep.add_argument("run_dirs", nargs="+", help="run folders written by 'eatkit run', or one sweep output folder")
    rep.add_argument("--html", help="the HTML file to write (a sweep folder: default SWEEP/audit.html)")
    rep.add_argument("--quiet", "-q", action="store_true")
    rep.set_defaults(func=_cmd_report)


def _cmd_report(args: argparse.Namespace) -> int:
    from eatkit.errors import EatkitError

    folders = [Path(d) for d in args.run_dirs]
    if len(folders) == 1 and (folders[0] / "sweep.json").exists():  # (its readers name a FIFO or a folder)
        from eatkit.report.audit import write_audit_report

        out = write_audit_report(folders[0], Path(args.html) if args.html else None)
    elif args.html is None:
        raise EatkitError("--html FILE is needed for run folders (a sweep's output folder needs none)")
    else:
        from eatkit.report import write_html_report

        out = write_html_report(folders, Path(args.html))
    if not args.quiet:
        print(f"wrote {out}")
    return 0
