"""The ``eatkit`` command line: presentation only (argument parsing, printing, files).

One module per command (``eatkit.cli.<command>``), each with ``register(subparsers)``; adding a command
is one module and one entry of :data:`COMMANDS`. Bad input ends with ``eatkit: error: <one line>`` on
stderr and exit status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from eatkit.errors import EatkitError

EXIT_BAD_INPUT = 2
#: the command modules, in the order ``eatkit --help`` lists them
COMMANDS: tuple[str, ...] = ("run", "probe", "sweep", "listing", "report", "verify", "data", "cache", "analysis_set",
                             "finetune", "debias")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``eatkit`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    from eatkit import progress

    progress.set_enabled(not getattr(args, "quiet", False))
    try:
        return args.func(args) or 0
    except EatkitError as err:
        print(f"eatkit: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("eatkit: interrupted", file=sys.stderr)
        return 130


class Parser(argparse.ArgumentParser):
    """argparse with the one-line error format of the rest of the CLI."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, f"eatkit: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``eatkit`` parser with every command of :data:`COMMANDS`."""
    from eatkit._version import __version__

    parser = Parser(prog="eatkit", description="Embedding association tests (WEAT, iEAT, SEAT, ML-EAT).")
    parser.add_argument("--version", action="version", version=f"eatkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name in COMMANDS:
        importlib.import_module(f"eatkit.cli.{name}").register(sub)
    return parser


def non_negative(value: str) -> int:
    """argparse type for whole numbers >= 0 (--seed, --bootstrap)."""
    if not value.isdigit():
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got '{value}'")
    return int(value)
