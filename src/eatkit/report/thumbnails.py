"""Small inline images for the HTML report (e.g. the most influential images of an image test): the file
scaled to fit a square and embedded as a JPEG data URI, so the report stays one self-contained file."""

from __future__ import annotations

import base64
import io
from html import escape
from pathlib import Path

from eatkit.errors import EatkitError
from eatkit.io import read_image

#: the side of the square a thumbnail fits in, in pixels
SIDE = 64


def thumbnail_html(path: str | Path, side: int = SIDE) -> str:
    """An ``<img>`` of the image file ``path`` fitted into ``side`` x ``side`` pixels, or "" when the file
    cannot be read as an image (moved, no regular file, or Pillow not installed: :func:`eatkit.io.read_image`):
    the report then shows the name alone.

    >>> thumbnail_html("no/such/file.png")
    ''
    """
    try:
        image = read_image(path, draft=(side, side))  # (a JPEG decoded at a reduced scale: faster)
        image.thumbnail((side, side))
        buffer = io.BytesIO()
        image.convert("RGB").save(buffer, format="JPEG", quality=80)
    except (EatkitError, OSError, ValueError):  # (a MissingExtraError without Pillow is an EatkitError)
        return ""
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img class="thumb" alt="{escape(Path(path).name)}" src="data:image/jpeg;base64,{data}">'
