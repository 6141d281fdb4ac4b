"""``eatkit report``: one self-contained HTML report of one or more run folders."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    rep = sub.add_parser("report", help="write an HTML report of one or more run folders")
    rep.add_argument("run_dirs", nargs="+", help="run folders written by 'eatkit run'")
    rep.add_argument("--html", required=True, help="the HTML file to write")
    rep.add_argument("--quiet", "-q", action="store_true")
    rep.set_defaults(func=_cmd_report)


def _cmd_report(args: argparse.Namespace) -> int:
    from eatkit.report import write_html_report

    out = write_html_report([Path(d) for d in args.run_dirs], Path(args.html))
    if not args.quiet:
        print(f"wrote {out}")
    return 0
