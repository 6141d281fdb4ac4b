"""Catalogues of published seed sets as the variants of a ``seed-sets`` test (Antoniak & Mimno, ACL 2021,
"Bad Seeds"; their ``gathered_seeds.json``, registered as the dataset ``bad-seeds``).

A catalogue is a JSON list of entries with the keys ``"Category"``, ``"Seeds"`` (a Python-literal list of
strings *in a string*, e.g. ``"['caress', 'freedom']"``: read with :func:`ast.literal_eval` on that string
only, and refused unless it is a list of non-blank strings; the published file has empty lists, refused
only when a test selects one; a word listed twice is kept, and embedding drops and records the copy, the
rule of :mod:`eatkit.stimuli.duplicates`), ``"Source / Justification"``,
``"Source Categories"``, ``"Used in Paper"``, ``"Link"`` and ``"Seeds ID"`` (unique); the source, its
categories and the link may be null.

A ``seed-sets`` test selects its variants with the parameters ``catalogue`` (``"bad-seeds"``: the file
``eatkit data get bad-seeds`` fetched into the data folder, checked against the registry's SHA-256; or the
path of a file in the same format, relative to the suite file's folder), ``catalogue_a`` and
``catalogue_b`` (each entry a Category or a Seeds ID). Pairing rule: an A set and a B set form a variant when
they were *used in the same paper*; within a paper the selected A sets and B sets pair in catalogue order,
and a paper with more of one than of the other is an error (nothing is dropped silently). Each variant adds
the roles ``A_<v>`` and ``B_<v>``, ``<v>`` the A set's Seeds ID with ``_`` for each character a role name
cannot hold (:func:`variant_name`; the sets are named by their Seeds IDs) to the test, so they
are embedded, checksummed in the manifest and subject to ``--oov`` like every set; the test's params record
the catalogue's SHA-256 (``catalogue_sha256``: when the suite gives one, the file must match it).
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eatkit.errors import EatkitError
from eatkit.io import parse_json, read_input
from eatkit.kinds import get_kind
from eatkit.stimuli.types import AssociationTest, StimulusSet

#: the catalogues registered as datasets: name -> its file in the dataset's folder (``eatkit data get``)
CATALOGUES = {"bad-seeds": "gathered_seeds.json"}

_KEYS = ("Category", "Seeds", "Used in Paper", "Seeds ID")  # required strings
_OPTIONAL = ("Source / Justification", "Source Categories", "Link")  # a string or null (the published file has nulls)


@dataclass(frozen=True)
class SeedSet:
    """One published seed set of a catalogue."""

    id: str
    category: str
    words: tuple[str, ...]
    source: str
    source_categories: str
    used_in_paper: str
    link: str


@dataclass(frozen=True)
class SeedCatalogue:
    """A catalogue file's seed sets, in file order, with the SHA-256 of its bytes."""

    path: str
    sha256: str
    sets: tuple[SeedSet, ...]

    def select(self, entries: Sequence[str], role: str) -> list[SeedSet]:
        """The sets whose Category or Seeds ID is one of ``entries``, in catalogue order; an entry that
        matches none is an error."""
        for entry in entries:
            if not any(entry in (s.category, s.id) for s in self.sets):
                categories = sorted({s.category for s in self.sets})
                shown = ", ".join(categories[:12]) + (", ..." if len(categories) > 12 else "")
                raise EatkitError(f"seed catalogue {self.path}: catalogue_{role.lower()} entry '{entry}' is no "
                                  f"Category or Seeds ID of it ({len(categories)} categories: {shown})")
        return [s for s in self.sets if s.category in entries or s.id in entries]

    def pairs(self, a: Sequence[str], b: Sequence[str]) -> list[tuple[SeedSet, SeedSet]]:
        """The (A, B) variants selected by ``a`` and ``b`` (Categories or Seeds IDs), paired by the paper
        that used them, in catalogue order (see the module docstring).

        >>> c = SeedCatalogue("c.json", "", tuple(SeedSet(i, cat, ("w",), "", "", paper, "") for i, cat, paper in
        ...     [("p1", "pleasant", "P"), ("u1", "unpleasant", "P"), ("p2", "pleasant", "Q"), ("u2", "unpleasant", "Q")]))
        >>> [(x.id, y.id) for x, y in c.pairs(["pleasant"], ["unpleasant"])]
        [('p1', 'u1'), ('p2', 'u2')]
        """
        chosen_a, chosen_b = self.select(a, "A"), self.select(b, "B")
        both = {s.id for s in chosen_a} & {s.id for s in chosen_b}
        if both:
            raise EatkitError(f"seed catalogue {self.path}: set '{sorted(both)[0]}' is selected both as A "
                              "(catalogue_a) and as B (catalogue_b)")
        papers = dict.fromkeys(s.used_in_paper for s in [*chosen_a, *chosen_b])
        return [pair for paper in papers for pair in self._paper_pairs(paper, chosen_a, chosen_b)]

    def _paper_pairs(self, paper: str, chosen_a: list[SeedSet], chosen_b: list[SeedSet]) -> list[tuple[SeedSet, SeedSet]]:
        """The A and B sets one paper used, paired in catalogue order (as many of each, or an error)."""
        in_a = [s for s in chosen_a if s.used_in_paper == paper]
        in_b = [s for s in chosen_b if s.used_in_paper == paper]
        if len(in_a) != len(in_b):
            raise EatkitError(
                f"seed catalogue {self.path}: the paper '{paper}' has {len(in_a)} selected A set(s) "
                f"({', '.join(s.id for s in in_a) or 'none'}) and {len(in_b)} B set(s) "
                f"({', '.join(s.id for s in in_b) or 'none'}); A and B sets pair within a paper: "
                "select by Seeds ID to leave some out")
        return list(zip(in_a, in_b))


def read_seed_catalogue(path: str | Path) -> SeedCatalogue:
    """Read a seed-set catalogue in the format of "Bad Seeds"' ``gathered_seeds.json``.

    >>> import json, pathlib, tempfile; p = pathlib.Path(tempfile.mkdtemp()) / "seeds.json"
    >>> entry = {"Category": "pleasant", "Seeds": "['love', 'peace']", "Source / Justification": "IAT",
    ...          "Source Categories": "borrowed", "Used in Paper": "P", "Link": "", "Seeds ID": "pleasant-P"}
    >>> _ = p.write_text(json.dumps([entry])); read_seed_catalogue(p).sets[0].words
    ('love', 'peace')
    >>> _ = p.write_text(json.dumps([{**entry, "Seeds": "__import__('os')"}])); read_seed_catalogue(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    eatkit.errors.EatkitError: seed catalogue ...seeds.json: entry #1 ('pleasant-P'): its Seeds is not a Python list of strings ("__import__('os')")
    """
    data = read_input(path, "seed catalogue")
    where = f"seed catalogue {path}"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise EatkitError(f"{where} is not UTF-8 text ({err.reason} at byte {err.start})") from None
    entries = parse_json(text, where)
    if not isinstance(entries, list) or not entries:
        raise EatkitError(f"{where}: expected a non-empty JSON list of seed sets, got {type(entries).__name__}")
    sets: list[SeedSet] = []
    seen: dict[str, int] = {}
    for number, entry in enumerate(entries, 1):
        sets.append(_seed_set(entry, f"{where}: entry #{number}"))
        if sets[-1].id in seen:
            raise EatkitError(f"{where}: entries #{seen[sets[-1].id]} and #{number} have the same Seeds ID "
                              f"'{sets[-1].id}'")
        seen[sets[-1].id] = number
    return SeedCatalogue(str(path), hashlib.sha256(data).hexdigest(), tuple(sets))


def _seed_set(entry: Any, where: str) -> SeedSet:
    _check_keys(entry, where)
    where = f"{where} ({entry['Seeds ID']!r})"
    if not entry["Seeds ID"].strip() or not entry["Category"].strip():
        raise EatkitError(f"{where}: an empty Seeds ID or Category")
    words = _seed_words(entry["Seeds"], where)
    return SeedSet(id=entry["Seeds ID"], category=entry["Category"], words=tuple(words),
                   source=entry.get("Source / Justification") or "",
                   source_categories=entry.get("Source Categories") or "", used_in_paper=entry["Used in Paper"],
                   link=entry.get("Link") or "")


def _check_keys(entry: Any, where: str) -> None:
    """An object with every required key a string, and every optional key a string or null."""
    if not isinstance(entry, dict):
        raise EatkitError(f"{where}: expected an object, got {type(entry).__name__}")
    missing = [k for k in _KEYS if not isinstance(entry.get(k), str)]
    missing += [k for k in _OPTIONAL if k in entry and not isinstance(entry[k], (str, type(None)))]
    if missing:
        what = "not a string or null" if missing[0] in _OPTIONAL else "missing or not a string"
        raise EatkitError(f"{where}: '{missing[0]}' is {what}")


def _seed_words(seeds: str, where: str) -> list[str]:
    """The words of a Seeds field: a Python list literal of non-empty strings (a literal only: never code)."""
    try:
        words = ast.literal_eval(seeds)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        words = None
    if not isinstance(words, list) or not all(isinstance(w, str) and w.strip() for w in words):
        shown = seeds if len(seeds) <= 60 else seeds[:57] + "..."
        raise EatkitError(f"{where}: its Seeds is not a Python list of strings (\"{shown}\")")
    return words


def catalogue_path(name: str, base: Path | None = None) -> Path:
    """The file of catalogue ``name``: a registered one (``"bad-seeds"``) in the data folder, or a path
    (relative to ``base``, the suite file's folder, when given).

    >>> catalogue_path("seeds.json", Path("/suites"))
    PosixPath('/suites/seeds.json')
    """
    if name in CATALOGUES:
        from eatkit.stimuli.datasets import default_data_dir

        path = default_data_dir() / name / CATALOGUES[name]
        if not path.is_file():
            raise EatkitError(f"seed catalogue '{name}' is not in the data folder ({path}): fetch it with "
                              f"`eatkit data get {name}`")
        return path
    path = Path(name).expanduser()
    return path if path.is_absolute() or base is None else base / path


def with_catalogue_variants(test: AssociationTest, base: Path | None = None) -> AssociationTest:
    """``test`` (kind ``seed-sets``) with the variants its params ``catalogue``, ``catalogue_a``,
    ``catalogue_b`` select added as roles ``A_<v>``, ``B_<v>`` (:func:`variant_name`), and
    ``catalogue_sha256`` set; a test of another kind or without ``catalogue`` is returned as it is.

    >>> import json, pathlib, tempfile; folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "c.json").write_text(json.dumps([{"Category": c, "Seeds": repr(w), "Used in Paper": "P",
    ...     "Seeds ID": f"{c}-P"} for c, w in (("pleasant", ["joy"]), ("unpleasant", ["pain"]))]))
    >>> t = AssociationTest("t", "T", "seed-sets", (), params=(("catalogue", "c.json"),
    ...     ("catalogue_a", ["pleasant"]), ("catalogue_b", ["unpleasant"])))
    >>> {r: s.items for r, s in with_catalogue_variants(t, folder).sets().items()}
    {'A_pleasant_P': ('joy',), 'B_pleasant_P': ('pain',)}
    """
    if test.kind != "seed-sets":
        return test
    params = dict(test.params)
    name, a, b = params.get("catalogue", ""), params.get("catalogue_a", []), params.get("catalogue_b", [])
    where = f"test '{test.id}'"
    if not name:
        if a or b:
            raise EatkitError(f"{where}: catalogue_a and catalogue_b select sets of a catalogue: give "
                              "'catalogue' too (\"bad-seeds\" or a file)")
        return test
    if not a or not b:
        raise EatkitError(f"{where}: a catalogue needs catalogue_a and catalogue_b (Categories or Seeds IDs of "
                          "its sets), e.g. [\"pleasant\"] and [\"unpleasant\"]")
    catalogue = read_seed_catalogue(catalogue_path(name, base))
    expected = params.get("catalogue_sha256") or _registered_sha256(name)
    if expected and expected.lower() != catalogue.sha256:
        raise EatkitError(f"{where}: seed catalogue {catalogue.path} has SHA-256 {catalogue.sha256}, not the "
                          f"expected {expected}")
    roles = _with_variant_roles(dict(test.roles), catalogue.pairs(a, b), where)
    params["catalogue_sha256"] = catalogue.sha256
    return dataclasses.replace(test, roles=tuple(roles.items()), params=tuple(sorted(params.items())))


def _with_variant_roles(roles: dict[str, Any], pairs: list[tuple[SeedSet, SeedSet]], where: str) -> dict[str, Any]:
    """``roles`` with each catalogue pair's sets added as roles ``A_<variant>`` and ``B_<variant>``."""
    for seeds_a, seeds_b in pairs:
        variant = variant_name(seeds_a.id)
        for role, seeds in ((f"A_{variant}", seeds_a), (f"B_{variant}", seeds_b)):
            if not seeds.words:
                raise EatkitError(f"{where}: the catalogue's set '{seeds.id}' has no words")
            if role in roles:
                raise EatkitError(f"{where}: the catalogue's variant role {role} (of set '{seeds.id}') is already a "
                                  "set of the test")
            roles[role] = StimulusSet(seeds.id, "word", seeds.words)
    return roles


#: the parameters by which a ``seed-sets`` test takes its variants from a catalogue
CATALOGUE_PARAMS = ("catalogue", "catalogue_a", "catalogue_b", "catalogue_sha256")


def changed_catalogue_param(test: AssociationTest, params: Mapping[str, Any]) -> str | None:
    """The first catalogue parameter whose value in a run's validated ``params`` differs from what the suite
    loaded ``test`` with (a run-wide value, which cannot change the variants added at load), or None.

    >>> t = AssociationTest("t", "T", "seed-sets", (), params=(("catalogue", "c.json"),))
    >>> changed_catalogue_param(t, {"catalogue": "c.json", "catalogue_a": [], "catalogue_b": [],
    ...                             "catalogue_sha256": "0" * 64})
    'catalogue_sha256'
    """
    loaded, spec = dict(test.params), get_kind("seed-sets")
    return next((k for k in CATALOGUE_PARAMS if params[k] != loaded.get(k, spec.param(k).default)), None)


def variant_name(seeds_id: str) -> str:
    """The variant (role suffix) of a catalogue pair: its A set's Seeds ID with every character a role name
    cannot hold (:data:`eatkit.kinds.ROLE_NAME`) as ``_``, so the same variant can be written in a suite file.

    >>> variant_name("sentiment_lexicon-Sweeney_&_Najafian_2019")
    'sentiment_lexicon_Sweeney___Najafian_2019'
    """
    return re.sub(r"[^A-Za-z0-9_]", "_", seeds_id)


def _registered_sha256(name: str) -> str | None:
    """The registry's SHA-256 of a registered catalogue's file (None for a user's file)."""
    if name not in CATALOGUES:
        return None
    from eatkit.stimuli.datasets import load_manifest

    return load_manifest(name)["files"][CATALOGUES[name]]["sha256"]
