"""Small inline images for the HTML report (e.g. the most influential images of an image test): the file
scaled to fit a square and embedded as a JPEG data URI, so the report stays one self-contained file."""

from __future__ import annotations

import base64
import io
from html import escape
from pathlib import Path

#: the side of the square a thumbnail fits in, in pixels
SIDE = 64


def thumbnail_html(path: str | Path, side: int = SIDE) -> str:
    """An ``<img>`` of the image file ``path`` fitted into ``side`` x ``side`` pixels, or "" when the file
    cannot be read as an image (moved, or Pillow not installed): the report then shows the name alone.

    >>> thumbnail_html("no/such/file.png")
    ''
    """
    try:
        from PIL import Image

        with Image.open(path) as image:
            image.thumbnail((side, side))
            buffer = io.BytesIO()
            image.convert("RGB").save(buffer, format="JPEG", quality=80)
    except (ImportError, OSError, ValueError):
        return ""
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img class="thumb" alt="{escape(Path(path).name)}" src="data:image/jpeg;base64,{data}">'
