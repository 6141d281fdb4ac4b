"""eatkit: embedding association tests for image, text and vision-language models."""

from eatkit._version import __version__

__all__ = ["__version__"]
