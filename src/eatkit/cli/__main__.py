"""``python -m eatkit.cli``."""

import sys

from eatkit.cli import main

sys.exit(main())
