"""``python -m eatkit``: the ``eatkit`` command."""

import sys

from eatkit.cli import main

if __name__ == "__main__":
    sys.exit(main())
