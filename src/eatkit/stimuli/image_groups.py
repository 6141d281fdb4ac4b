"""Labelled image sets: a folder per group (``DIR/<group>/*``), and the Chicago Face Database layout.

The probes and the ``american-white`` suite read images from a folder per group. The Chicago Face
Database (CFD; Ma, Correll & Wittenbrink 2015) is licensed, so users obtain it themselves;
:func:`cfd_layout` links its images into a folder per group, reading each target's self-identified race
and gender from the file-name code ``CFD-<race><gender>-<target>-<shot>-<expression>.<ext>`` (race A
Asian, B Black, L Latina/o, W White; gender F, M; expression N neutral, HC/HO happy closed/open
mouth, A angry, F fearful). The "American == White" study used the neutral expressions of 597 targets:
White 183, Black 197, Asian 109, Latina/o 108 (:data:`SEED_COUNTS`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from eatkit.errors import EatkitError, one_line
from eatkit.stimuli.images import IMAGE_SUFFIXES
from eatkit.stimuli.types import StimulusSet

#: CFD race codes -> the group folder names eatkit uses (the bundled suite's categories)
CFD_RACES: dict[str, str] = {"A": "asian", "B": "black", "L": "latino", "W": "white"}
CFD_GENDERS: dict[str, str] = {"F": "female", "M": "male"}
#: the neutral-expression group sizes of the "American == White" study (section 3)
SEED_COUNTS: dict[str, int] = {"asian": 109, "black": 197, "latino": 108, "white": 183}
_CFD_NAME = re.compile(r"^CFD-([A-Z]+)([FM])-(\d+)-(\d+)-([A-Z]+)$", re.IGNORECASE)


def group_sets(root: str | Path, groups: list[str] | None = None) -> list[StimulusSet]:
    """One image :class:`StimulusSet` per group folder of ``root`` (sorted), or of the named ``groups``.

    >>> import tempfile, pathlib; root = pathlib.Path(tempfile.mkdtemp())
    >>> for g in ("b", "a"): (root / g).mkdir(); _ = (root / g / "1.png").write_bytes(b"")
    >>> [s.category for s in group_sets(root)]
    ['a', 'b']
    """
    root = Path(root).expanduser()
    if not root.is_dir():
        raise EatkitError(f"image folder {root} does not exist")
    found = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")
                   and any(q.suffix.lower() in IMAGE_SUFFIXES for q in p.iterdir()))
    if groups is None:
        groups = found
    unknown = [g for g in groups if g not in found]
    if unknown:
        raise EatkitError(f"image folder {root} has no group folder with images named {', '.join(unknown)} "
                          f"(groups there: {', '.join(found) or 'none'})")
    if len(groups) < 2:
        raise EatkitError(f"image folder {root} needs at least 2 group folders of images (DIR/<group>/*), "
                          f"found {len(groups)}")
    return [StimulusSet(name=g, modality="image", category=g) for g in groups]


@dataclass(frozen=True)
class CFDLayout:
    """What :func:`cfd_layout` linked: images per group, files it did not use, and how the group sizes
    differ from the study's (empty when they match)."""

    root: Path
    counts: dict[str, int]
    skipped: dict[str, int]  # reason -> number of files
    differences: str

    def message(self) -> str:
        skipped = ", ".join(f"{n} {why}" for why, n in self.skipped.items())
        return (f"linked {sum(self.counts.values())} CFD images into {self.root} "
                f"({', '.join(f'{g} {n}' for g, n in self.counts.items())})"
                + (f"; not used: {skipped}" if skipped else "")
                + (f"; {self.differences}" if self.differences else ""))


#: why a file under the CFD folder is not used (:func:`_cfd_group`)
_CFD_SKIPPED = ("files without a CFD name code", "of other race codes", "of other expressions")


def _cfd_group(stem: str, wanted: set[str], by_gender: bool) -> str:
    """The group of a CFD image by its file name (race, or race and gender), or why it is not used (one of
    :data:`_CFD_SKIPPED`)."""
    code = _CFD_NAME.match(stem)
    if code is None:
        return _CFD_SKIPPED[0]
    if code.group(1).upper() not in CFD_RACES:
        return _CFD_SKIPPED[1]
    if code.group(5).upper() not in wanted:
        return _CFD_SKIPPED[2]
    group = CFD_RACES[code.group(1).upper()]
    return group + "-" + CFD_GENDERS[code.group(2).upper()] if by_gender else group


def _link(chosen: dict[str, list[Path]], dest: Path) -> None:
    """Each group's images linked into ``dest/<group>/``."""
    try:
        for group, files in chosen.items():
            (dest / group).mkdir(parents=True, exist_ok=True)
            for f in files:
                os.symlink(f.resolve(), dest / group / f.name)
    except OSError as exc:
        raise EatkitError(f"cannot link the CFD images into {dest}: {one_line(exc)}") from None


def cfd_layout(cfd_root: str | Path, dest: str | Path, *, expressions: tuple[str, ...] = ("N",),
               by_gender: bool = False) -> CFDLayout:
    """Link the CFD images under ``cfd_root`` (searched recursively) into ``dest/<group>/`` folders.

    Groups are the self-identified races (``asian``, ``black``, ``latino``, ``white``), or race and
    gender (``white-female``...) with ``by_gender``; only the given expressions are used (neutral by
    default). Codes other than A, B, L, W (e.g. the CFD-MR and CFD-INDIA extensions) are counted as
    not used. ``dest`` must be empty or absent.
    """
    cfd_root, dest = Path(cfd_root).expanduser(), Path(dest).expanduser()
    if not cfd_root.is_dir():
        raise EatkitError(f"Chicago Face Database folder {cfd_root} does not exist")
    if dest.exists() and any(dest.iterdir()):
        raise EatkitError(f"{dest} is not empty: give an empty or new folder for the CFD groups")
    wanted = {e.upper() for e in expressions}
    chosen: dict[str, list[Path]] = {}
    skipped: dict[str, int] = {}
    for path in sorted(cfd_root.rglob("*")):
        if path.suffix.lower() not in IMAGE_SUFFIXES or not path.is_file() or path.is_symlink() \
                or path.is_relative_to(dest):
            continue
        group = _cfd_group(path.stem, wanted, by_gender)
        if group in _CFD_SKIPPED:
            skipped[group] = skipped.get(group, 0) + 1
        else:
            chosen.setdefault(group, []).append(path)
    if not chosen:
        raise EatkitError(f"no Chicago Face Database images (CFD-<race><gender>-...-{'/'.join(sorted(wanted))}.jpg) "
                          f"under {cfd_root}")
    _link(chosen, dest)
    counts = {g: len(chosen[g]) for g in sorted(chosen)}
    differences = ""
    if not by_gender and wanted == {"N"} and counts != SEED_COUNTS:
        differences = ("group sizes differ from the 'American == White' study's (" +
                       ", ".join(f"{g} {n}" for g, n in SEED_COUNTS.items()) + "): results are not comparable")
    return CFDLayout(root=dest, counts=counts, skipped=skipped, differences=differences)
