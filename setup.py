"""The compiled extension only (metadata: pyproject.toml): eatkit.stats._ccount, the exact subset-sum counter.

``optional=True``: where it cannot be built (no C compiler; it needs POSIX threads) eatkit still installs, and
counts with numpy.
"""

import sys

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "eatkit.stats._ccount",
            sources=["src/eatkit/stats/_ccount.c"],
            extra_compile_args=[] if sys.platform == "win32" else ["-O3"],
            optional=True,
        )
    ]
)
