"""``eatkit data``: list or download datasets (e.g. the iEAT images), verifying checksums."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from eatkit.errors import EatkitError


def register(sub: Any) -> None:
    data = sub.add_parser("data", help="download datasets (e.g. the iEAT images) with checksums")
    data.add_argument("action", choices=("get", "list"))
    data.add_argument("name", nargs="?", help="dataset name, e.g. ieat")
    data.add_argument("--dest", type=Path, help="destination folder (default: the eatkit data folder)")
    data.add_argument("--base-url", help="download from this mirror instead of the upstream repository")
    data.add_argument("--quiet", "-q", action="store_true")
    data.set_defaults(func=_cmd_data)


def _cmd_data(args: argparse.Namespace) -> int:
    from eatkit.stimuli.datasets import download_dataset, list_datasets

    if args.action == "list":
        for d in list_datasets():
            print(f"{d.name:12s} {d.description}")
        return 0
    if not args.name:
        raise EatkitError("'eatkit data get' needs a dataset name, e.g. eatkit data get ieat")
    dest = download_dataset(args.name, args.dest, base_url=args.base_url)
    if not args.quiet:
        print(f"{args.name}: verified in {dest}")
    return 0
