"""Image stimulus sets on disk: which files a category names, and their ids.

The files of a category are the image files (:data:`IMAGE_SUFFIXES`, any case, hidden files skipped)
directly inside ``<root>/<category>``, sorted by name; their ids are ``<category>/<file name>``. A broken
symbolic link to an image, or a subfolder holding images, is an error (never silently skipped); so is a
category that names a folder outside ``<root>`` (``..``, an absolute path). Symbolic links that the user
put in the image folder (a category linked to a dataset elsewhere) are followed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from eatkit.errors import EatkitError
from eatkit.io import checked_path, inside, os_error
from eatkit.stimuli.types import StimulusSet

IMAGE_SUFFIXES: tuple[str, ...] = (".jpg", ".jpeg", ".png", ".webp", ".gif", ".bmp", ".tif", ".tiff")


def resolve_image_set(stimuli: StimulusSet, root: str | Path) -> StimulusSet:
    """The image set with ``items`` set to the sorted image files of ``root/<category>``.

    >>> import tempfile, pathlib; root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "t" / "c").mkdir(parents=True); _ = (root / "t" / "c" / "b.png").write_bytes(b"")
    >>> s = resolve_image_set(StimulusSet("C", "image", category="t/c"), root)
    >>> [pathlib.Path(p).name for p in s.items], image_ids(s)
    (['b.png'], ('t/c/b.png',))
    """
    root = checked_path(root, "image folder")
    if stimuli.modality != "image" or not stimuli.category:
        raise EatkitError(f"set '{stimuli.name}' is not an image category")
    if not root.is_dir():
        raise EatkitError(f"image folder {root} is a file, not a folder" if root.exists() else
                          f"image folder {root} does not exist (the iEAT images: run 'eatkit data get ieat', then "
                          "leave out --images, or give --images FOLDER with the images)")
    folder = inside(root, stimuli.category, f"image category of set '{stimuli.name}'", links_out=True)
    if not folder.is_dir():
        raise EatkitError(f"image folder {folder} for set '{stimuli.name}' {_not_a_folder(folder)}")
    try:
        return dataclasses.replace(stimuli, items=tuple(str(p) for p in _image_files(folder, stimuli.name)))
    except OSError as err:  # an unreadable folder (permissions), a file system fault
        raise os_error(err, f"read the image folder of set '{stimuli.name}',") from None


def _not_a_folder(path: Path) -> str:
    """Why ``path`` is no folder: it is a file, or does not exist."""
    return "is a file, not a folder" if path.exists() else "does not exist"


def _image_files(folder: Path, name: str) -> list[Path]:
    """The image files of a category's folder (:func:`resolve_image_set`)."""
    files = []
    for p in sorted(q for q in folder.iterdir() if not q.name.startswith(".")):
        if p.is_dir() and p.suffix.lower() in IMAGE_SUFFIXES:
            raise EatkitError(f"image folder {folder} for set '{name}' holds a folder named like an image, {p.name}: "
                              "an image must be a file")
        if p.is_dir():
            if any(q.suffix.lower() in IMAGE_SUFFIXES for q in p.rglob("*")):
                raise EatkitError(f"image folder {folder} for set '{name}' has a subfolder with images, "
                                  f"{p}: put the images of a category directly in its folder")
        elif p.suffix.lower() in IMAGE_SUFFIXES:
            if not p.is_file():
                what = "a broken symbolic link" if p.is_symlink() else "not a regular file"
                raise EatkitError(f"image {p} for set '{name}' is {what}")
            files.append(p)
    if not files:
        raise EatkitError(f"image folder {folder} for set '{name}' contains no images "
                          f"({' '.join(IMAGE_SUFFIXES)})")
    return files


def image_ids(stimuli: StimulusSet) -> tuple[str, ...]:
    """The ids of a resolved image set's files: ``<category>/<file name>`` (relative to the image root)."""
    prefix = f"{stimuli.category}/" if stimuli.category else ""
    return tuple(prefix + Path(item).name for item in stimuli.items)
