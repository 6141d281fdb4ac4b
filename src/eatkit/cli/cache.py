"""``eatkit cache``: describe (``info``) or clear the embedding cache."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    cache = sub.add_parser("cache", help="info about, or clear, the embedding cache")
    cache.add_argument("action", choices=("info", "clear"))
    cache.set_defaults(func=_cmd_cache)


def _cmd_cache(args: argparse.Namespace) -> int:
    from eatkit.encoders.cache import cache_info, clear_cache

    if args.action == "info":
        info = cache_info()
        print(f"path: {info['path']}\nembeddings: {info['entries']}\npermutation counts: {info['counts']}\n"
              f"size: {human_size(info['bytes'])}")
    else:
        removed = clear_cache()
        print(f"removed {removed['entries']} embeddings and {removed['counts']} permutation counts")
    return 0


def human_size(nbytes: int) -> str:
    """A size in bytes as people read it.

    >>> human_size(0), human_size(1536), human_size(3 * 10**9)
    ('0 bytes', '1.5 KiB', '2.8 GiB')
    """
    size, unit = float(nbytes), "bytes"
    for bigger in ("KiB", "MiB", "GiB"):
        if size < 1024:
            break
        size, unit = size / 1024, bigger
    return f"{size:.0f} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
