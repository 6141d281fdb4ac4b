"""``python -m eatkit.cli``."""

import sys

from eatkit.cli import main

if __name__ == "__main__":
    sys.exit(main())
