"""The ``eatkit`` command line: presentation only (argument parsing, printing, files).

One module per command (``eatkit.cli.<command>``), each with ``register(subparsers)``; adding a command
is one module and one entry of :data:`COMMANDS`. Bad input ends with ``eatkit: error: <one line>`` on
stderr and exit status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from eatkit.errors import EatkitError
from eatkit.io import os_error

EXIT_BAD_INPUT = 2
#: the command modules, in the order ``eatkit --help`` lists them
COMMANDS: tuple[str, ...] = ("run", "probe", "sweep", "listing", "report", "verify", "data", "cache", "analysis_set",
                             "finetune", "debias", "compare", "meta")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``eatkit`` command (Ctrl-C at any point, the start-up included: exit 130)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        _stop_workers()
    print("eatkit: interrupted", file=sys.stderr)
    if argv is None:
        # the process's own command line: leave now, not after the threads still finishing a batch and
        # the interpreter's clean-up (seconds with torch loaded); every output and cache entry is written
        # whole by a rename, or not at all
        if "multiprocessing.util" in sys.modules:  # its exit clean-up (semaphores of the stopped pools)
            sys.modules["multiprocessing.util"]._exit_function()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    return 130


def _main(argv: Sequence[str] | None) -> int:
    """Parse ``argv`` and run its command; bad input: one line on stderr and exit status 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    from eatkit import progress

    progress.set_enabled(not getattr(args, "quiet", False))
    # multiprocessing's resource tracker (a helper process, started with these options) removes what a
    # worker stopped on Ctrl-C left; it need not say so on the terminal after 'eatkit: interrupted'
    if "ignore:resource_tracker:UserWarning" not in sys.warnoptions:
        sys.warnoptions.append("ignore:resource_tracker:UserWarning")
    try:
        code = args.func(args) or 0
        sys.stdout.flush()  # here, not at exit: a reader that left is seen below
        return code
    except BrokenPipeError:  # the reader of the output left (eatkit list models | head): stop quietly
        try:  # what is still buffered goes nowhere, so the exit's flush raises nothing
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # not a real file (a notebook, a test's capture)
            pass
        return 0
    except (EatkitError, OSError, MemoryError, ValueError) as err:
        print(f"eatkit: error: {_message(err)}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _stop_workers() -> None:
    """After Ctrl-C: terminate the worker processes still running (decoding, sweep cells), so that the
    exit does not wait for their tasks, and ignore a second Ctrl-C while doing so."""
    import signal
    import threading

    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main_thread else None
    try:
        if "eatkit.encoders.workers" in sys.modules:
            sys.modules["eatkit.encoders.workers"].stop_all_pools()
    finally:
        if main_thread:
            signal.signal(signal.SIGINT, previous)


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


def _message(err: Exception) -> str:
    """The one line of an error of bad input; a ``ValueError`` that is not one (a bug) is raised again."""
    if isinstance(err, EatkitError):
        return str(err)
    if isinstance(err, OSError):  # what only the file system can say (permissions, a full disk, a name too long)
        return os_error(err, "use")
    if isinstance(err, MemoryError):
        return "out of memory (ask for fewer permutations, resamples or stimuli, or a smaller --batch-size)"
    if "null byte" not in str(err):  # a path with a NUL byte (os functions raise ValueError); else a bug
        raise err
    return "a path contains a NUL byte, which no file name can hold"


def declared(name: str, command: str | None = None) -> Any:
    """argparse type of the run option ``name`` (or of ``command``'s option ``name``): its one declaration
    (:data:`eatkit.stats.options.OPTIONS`, :data:`eatkit.command_options.COMMAND_OPTIONS`) converts and
    checks the text.

    >>> declared("momentum", "finetune")("1.5")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: momentum must be a number in [0, 1), got 1.5
    """

    def convert(value: str) -> Any:
        if command is None:
            from eatkit.stats.options import OPTIONS as declarations
        else:
            from eatkit.command_options import COMMAND_OPTIONS

            declarations = COMMAND_OPTIONS[command]
        try:
            return declarations[name].convert(value)
        except EatkitError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = name
    return convert


def add_declared(parser: Any, command: str, name: str) -> None:
    """Add ``command``'s declared option ``name`` (:data:`eatkit.command_options.COMMAND_OPTIONS`) to
    ``parser`` (or an argument group): its flag, help, default and check all come from the declaration."""
    from eatkit.command_options import COMMAND_OPTIONS

    param = COMMAND_OPTIONS[command][name]
    add_flag(parser, param, dest=param.name, type=declared(name, command), default=param.default,
             metavar=param.metavar, help=param.describe())


def add_flag(parser: Any, param: Any, **kwargs: Any) -> None:
    """Add the flag of the declared ``param`` (:class:`eatkit.params.Param`) with the ``add_argument``
    ``kwargs`` to ``parser``, and each of its :attr:`~eatkit.params.Param.old_flags` hidden from ``--help``:
    an old flag sets the same option, printing one line that names the new flag.

    >>> from eatkit.params import Param
    >>> parser = argparse.ArgumentParser()
    >>> add_flag(parser, Param("n_bootstrap", int, old_flags=("--bootstrap",)), dest="n_bootstrap", type=int)
    >>> parser.parse_args(["--bootstrap", "3"]).n_bootstrap      # doctest: +NORMALIZE_WHITESPACE
    3
    """
    parser.add_argument(param.option, **kwargs)
    for old in param.old_flags:
        parser.add_argument(old, **{**kwargs, "action": OldFlag, "new": param.option, "help": argparse.SUPPRESS,
                                    "default": argparse.SUPPRESS})


class OldFlag(argparse.Action):
    """An old name of a flag (:attr:`eatkit.params.Param.old_flags`): sets the option as the new flag does and
    says on stderr, once each time it is given, that the name is deprecated."""

    def __init__(self, option_strings: Sequence[str], dest: str, new: str = "", **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.new = new

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"eatkit: {option_string} is deprecated; use {self.new}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def declared_warnings(command: str, args: argparse.Namespace) -> list[str]:
    """The warnings of ``command``'s declared options in ``args`` outside their useful range, for the
    command to record where it records its settings and to :func:`print_warnings` once it has succeeded."""
    from eatkit.command_options import option_warnings

    return option_warnings(command, vars(args))


def print_warnings(warnings: Sequence[str]) -> None:
    """Each warning once on stderr (even with ``--quiet``), after the command's work: an error comes alone."""
    for warning in warnings:
        print(f"eatkit: warning: {warning}", file=sys.stderr)
