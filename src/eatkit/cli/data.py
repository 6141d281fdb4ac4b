"""``eatkit data``: list or download datasets (stimuli and word vectors, through pooch), verifying checksums."""

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
    data.add_argument("--allow-unverified", action="store_true",
                      help="also download files whose sha256 eatkit does not know (the sha256 received is printed)")
    data.add_argument("--quiet", "-q", action="store_true")
    data.set_defaults(func=_cmd_data)


def _cmd_data(args: argparse.Namespace) -> int:
    from eatkit.stimuli.datasets import download_dataset, list_datasets, load_manifest

    if args.action == "list":
        for d in list_datasets():
            state = "licensed: obtain it yourself" if d.licensed else "sha256 unknown" if d.sha256_note else "verified"
            print(f"{d.name:24s} {d.description} [{state}; licence: {d.licence}]")
        return 0
    if not args.name:
        raise EatkitError("'eatkit data get' needs a dataset name, e.g. eatkit data get ieat")
    dest = download_dataset(args.name, args.dest, base_url=args.base_url, allow_unverified=args.allow_unverified)
    if not args.quiet:
        _verified(args.name, load_manifest(args.name)["files"], dest)
    return 0


def _verified(name: str, files: dict[str, Any], dest: Any) -> None:
    """The checksum of each file eatkit could not verify, and how many it verified."""
    from eatkit.io import file_sha256

    for rel in sorted(rel for rel, entry in files.items() if not entry.get("sha256")):
        print(f"{rel}: sha256 {file_sha256(dest / rel)} (not verified: eatkit knows no checksum of this file)")
    verified = sum(1 for entry in files.values() if entry.get("sha256"))
    print(f"{name}: {verified} of {len(files)} files verified in {dest}")
