"""The one exception type eatkit raises for bad input.

Every message is a single line that names the problem (the set, file, word, option or model at fault),
so that the CLI can print it as ``eatkit: error: <message>`` and exit non-zero without a traceback.
"""

from __future__ import annotations

import re


class EatkitError(ValueError):
    """Bad input or an unmet precondition, with a one-line message naming the problem."""

    def __init__(self, message: str) -> None:
        if "\n" in message:
            raise AssertionError("EatkitError messages must be one line")
        super().__init__(message)


def one_line(reason: object, limit: int = 200) -> str:
    """An exception (or any text) as the reason part of an :class:`EatkitError` message: terminal colour
    codes removed, whitespace runs collapsed to one space, at most ``limit`` characters, the type name when
    there is no text.

    >>> one_line(OSError("bad\\n  header")), one_line(EOFError()), one_line("\\x1b[1mbold\\x1b[0m")
    ('bad header', 'EOFError', 'bold')
    """
    return " ".join(_ANSI.sub("", str(reason)).split())[:limit] or type(reason).__name__


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # terminal escape sequences (colours, bold)


class MissingExtraError(EatkitError):
    """An optional dependency is not installed; the message names the extra to install."""

    def __init__(self, what: str, extra: str, module: str) -> None:
        super().__init__(
            f"{what} needs the optional dependency '{module}': install it with "
            f"pip install 'eatkit[{extra}]'"
        )
