"""``eatkit cache``: show or clear the embedding cache."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    cache = sub.add_parser("cache", help="show or clear the embedding cache")
    cache.add_argument("action", choices=("info", "clear"))
    cache.set_defaults(func=_cmd_cache)


def _cmd_cache(args: argparse.Namespace) -> int:
    from eatkit.encoders.cache import cache_info, clear_cache

    if args.action == "info":
        for key, value in cache_info().items():
            print(f"{key}: {value}")
    else:
        print(f"removed {clear_cache()} cache entries")
    return 0
