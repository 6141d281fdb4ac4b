"""How an option is named to the person who gave it: the one flag-name rule of the command line
(:func:`option_flag`) and the Python keyword naming of the API (:func:`option_name`).

Layers below the command line name an option through a naming function their caller passes (``flag=``),
so that ``eatkit run`` reports ``--batch-size`` and a notebook ``'batch_size'`` from the same check.

>>> option_flag("batch_size"), option_name("batch_size")
('--batch-size', "'batch_size'")
"""

from __future__ import annotations


def option_flag(name: str) -> str:
    """The command-line flag of an option or parameter ``name``: ``--`` and dashes for underscores."""
    return "--" + name.replace("_", "-")


def option_name(name: str) -> str:
    """An option as a Python caller gave it: its keyword, quoted."""
    return repr(name)
