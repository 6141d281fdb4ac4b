"""Analysis sets for feature-space geometry (seed 004, §4.2): classes of images as an eatkit suite.

An analysis set holds, per object of interest, the classes ``man``, ``woman``, ``<object>``,
``<object>+man``, ``<object>+woman`` and ``random`` (and a ``stop-sign`` control). It is built

* from COCO-format annotations (:func:`coco_analysis_set`: an ``instances_*.json`` file and a
  ``captions_*.json`` file, read as plain JSON), or
* from folders (:func:`folder_analysis_set`: ``DIR/<class>/*``, one folder per class).

COCO has no gender labels; as in the thesis, gender comes from the captions. The rules (each image in at
most one class, so classes never overlap):

* an image is *male* when it has a ``person`` annotation and its captions use a word of the lexicon's
  ``man`` list and none of its ``woman`` list (and vice versa); captions are lower-cased and split into
  letter runs (``"woman's"`` -> ``woman``, ``s``). The lexicon (:data:`DEFAULT_LEXICON`) is editable:
  pass your own ``{"man": [...], "woman": [...]}``.
* ``<object>``: the object, no person, none of the other objects of interest;
* ``<object>+man`` / ``<object>+woman``: the object, a male / female image ("car+man" has a man, a car and
  no woman), none of the other objects of interest;
* ``man`` / ``woman``: male / female, none of the objects of interest (nor a stop sign);
* ``stop-sign`` (``control=True``): a stop sign, no person, none of the objects of interest;
* ``random``: a uniform sample of the images in no other class;
* ``exclusive=True`` adds the thesis's "ideally no other objects": an object or gender class then only
  takes images annotated with nothing but ``person`` and its object.

Sampling: ``per_class`` keeps at most that many images of each class, drawn without replacement by a
seeded generator (the ``random`` class has ``per_class`` images, or by default as many as the largest other
class). Both the available and the kept counts are reported. A class with fewer than 2 images is an error.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.command_options import command_option, option_warnings
from eatkit.errors import EatkitError
from eatkit.io import atomic_write_bytes, check_output_file, inside, parse_csv, read_json, read_text
from eatkit.stimuli.images import IMAGE_SUFFIXES

#: Caption words that mark an image's person as a man or a woman (edit or replace as needed).
DEFAULT_LEXICON: dict[str, tuple[str, ...]] = {
    "man": ("man", "men", "male", "males", "boy", "boys", "guy", "guys", "gentleman", "gentlemen",
            "he", "him", "his", "himself", "husband", "father", "dad", "son", "brother", "grandfather",
            "businessman", "sportsman", "policeman", "fisherman", "mr"),
    "woman": ("woman", "women", "female", "females", "girl", "girls", "lady", "ladies", "she", "her",
              "hers", "herself", "wife", "mother", "mom", "daughter", "sister", "grandmother",
              "businesswoman", "sportswoman", "policewoman", "mrs", "ms"),
}
GENDERS: tuple[str, str] = ("man", "woman")
REFERENCE = "random"
CONTROL = "stop sign"


def class_folder(name: str) -> str:
    """A class name as a folder name: spaces become hyphens (``"stop sign"`` -> ``"stop-sign"``)."""
    return name.replace(" ", "-")


@dataclass(frozen=True)
class AnalysisSet:
    """Classes of images (name -> image files), the design of the comparisons, and how it was built.

    ``pairs`` are the inter-class comparisons; ``groups`` name the score keys (a class for an intra-class
    score, ``"a vs b"`` for an inter-class one) whose ranks are compared across models; ``available`` is
    each class's size before sampling; ``source`` records the inputs and options.
    """

    classes: dict[str, tuple[str, ...]]
    pairs: tuple[tuple[str, str], ...]
    groups: dict[str, tuple[str, ...]]
    available: dict[str, int] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.classes) == 1:  # (none: each source names its own problem)
            raise EatkitError(f"an analysis set needs at least 2 classes (a geometry test compares classes); "
                              f"got only {next(iter(self.classes))!r}")

    def sizes(self) -> dict[str, int]:
        """Images per class."""
        return {name: len(files) for name, files in self.classes.items()}

    def suite(self, suite_id: str = "analysis-set", title: str = "Feature-space geometry analysis set") -> dict:
        """The suite JSON (``eatkit.suite/1``) with one ``geometry`` test whose roles are the classes, each
        the image category of its folder (run it with ``--images`` = the folder of the class folders)."""
        roles = {role: {"name": name, "modality": "image", "category": name}
                 for role, name in zip(role_names(list(self.classes)), self.classes)}
        params = {"pairs": [list(p) for p in self.pairs], "groups": {g: list(k) for g, k in self.groups.items()},
                  "reference": REFERENCE if REFERENCE in self.classes else None,
                  "sizes": self.sizes(), "available": dict(self.available), "source": self.source}
        return {"schema": "eatkit.suite/1", "id": suite_id, "title": title,
                "citation": "Ranjit (2021), Gender bias in the feature space of visual recognition models, "
                            "MSc thesis (seed 004)",
                "tests": [{"id": "geometry", "title": title, "kind": "geometry", "params": params, **roles}]}

    def write(self, out: str | Path, *, link: bool = True) -> Path:
        """Write ``out/images/<class>/`` (symbolic links to the images, or copies with ``link=False``) and
        ``out/suite.json``; returns the suite file. Run it with ``--images out/images``."""
        import shutil

        out = Path(out)
        images = out / "images"
        for name, files in self.classes.items():
            seen: dict[str, str] = {}
            for f in files:  # links are named by the file's name: two files of one name would collide
                if seen.setdefault(Path(f).name, str(f)) != str(f):
                    raise EatkitError(f"class '{name}': {seen[Path(f).name]} and {f} have the same file name "
                                      f"{Path(f).name}; their links would collide")
            folder = images / name
            if folder.exists():
                raise EatkitError(f"{folder} already exists: write the analysis set to a new folder")
            folder.mkdir(parents=True)
            for f in files:
                src = Path(f).resolve()
                if link:
                    (folder / src.name).symlink_to(src)
                else:
                    shutil.copy2(src, folder / src.name)
        suite = out / "suite.json"
        atomic_write_bytes(check_output_file(suite, "suite file"), (json.dumps(self.suite(), indent=1) + "\n").encode())
        return suite


def role_names(names: Sequence[str]) -> list[str]:
    """Suite role keys for class names (a role starts with a capital, then letters, digits or ``_``; the
    class name itself is the set's ``name``).

    >>> role_names(["car+man", "stop-sign", "car man"])
    ['Car_man', 'Stop_sign', 'Car_man_2']
    """
    roles: list[str] = []
    for name in names:
        base = re.sub(r"[^A-Za-z0-9_]", "_", name) or "C"
        base = base[0].upper() + base[1:] if base[0].isalpha() else f"C{base}"
        role, k = base, 2
        while role in roles:
            role, k = f"{base}_{k}", k + 1
        roles.append(role)
    return roles


def design(names: Sequence[str], genders: Sequence[str] = GENDERS) -> tuple[tuple[tuple[str, str], ...],
                                                                            dict[str, tuple[str, ...]]]:
    """The comparisons of an analysis set and its groups for Spearman's rho (thesis §5, Figure 6).

    With ``<object>+<gender>`` classes: pairs (object+gender, object) and (class, random); groups
    ``individual`` (classes without ``+``), ``paired`` (with ``+``), ``gender+object vs object`` and
    ``vs random``. Otherwise all pairs, in groups ``classes`` and ``pairs``.

    >>> pairs, groups = design(["man", "woman", "car", "car+man", "car+woman", "random"])
    >>> pairs[:2], groups["paired"]
    ((('car+man', 'car'), ('car+woman', 'car')), ('car+man', 'car+woman'))
    """
    names = list(names)
    objects = [n for n in names if "+" not in n and any(f"{n}+{g}" in names for g in genders)]
    if not objects:
        pairs = tuple(itertools.combinations(names, 2))
        return pairs, {"classes": tuple(names), "pairs": tuple(pair_key(p) for p in pairs)}
    return _paired_design(names, objects, genders)


def _paired_design(names: list[str], objects: list[str], genders: Sequence[str]) -> tuple[
        tuple[tuple[str, str], ...], dict[str, tuple[str, ...]]]:
    """:func:`design` of an analysis set with ``<object>+<gender>`` classes."""
    paired = [(f"{o}+{g}", o) for o in objects for g in genders if f"{o}+{g}" in names]
    vs_random = [(n, REFERENCE) for n in names if "+" not in n and n != REFERENCE] if REFERENCE in names else []
    groups = {"individual": tuple(n for n in names if "+" not in n),
              "paired": tuple(n for n in names if "+" in n),
              "gender+object vs object": tuple(pair_key(p) for p in paired)}
    if vs_random:
        groups["vs random"] = tuple(pair_key(p) for p in vs_random)
    return tuple(paired + vs_random), groups


def pair_key(pair: Sequence[str]) -> str:
    """The score key of an inter-class comparison: ``"a vs b"``."""
    return f"{pair[0]} vs {pair[1]}"


# --- from folders ----------------------------------------------------------------------------------


def folder_analysis_set(root: str | Path, classes: Sequence[str] | None = None) -> AnalysisSet:
    """An analysis set from ``root/<class>/*`` (every subfolder with images, or the named ones).

    >>> import tempfile; root = Path(tempfile.mkdtemp())
    >>> for c in ("a", "b"):
    ...     (root / c).mkdir(); _ = [(root / c / f"{i}.png").write_bytes(b"") for i in range(2)]
    >>> folder_analysis_set(root).sizes()
    {'a': 2, 'b': 2}
    """
    root = Path(root)
    if not root.is_dir():
        raise EatkitError(f"analysis-set folder {root} does not exist")
    names = list(classes) if classes else sorted(p.name for p in root.iterdir()
                                                  if p.is_dir() and not p.name.startswith("."))
    found: dict[str, tuple[str, ...]] = {}
    for name in names:
        folder = root / name
        if not folder.is_dir():
            raise EatkitError(f"class folder {folder} does not exist")
        files = tuple(str(p) for p in sorted(folder.iterdir())
                      if p.suffix.lower() in IMAGE_SUFFIXES and not p.name.startswith("."))
        found[name] = _enough(name, files, str(folder))
    if len(found) < 1:
        raise EatkitError(f"analysis-set folder {root} has no class folders")
    pairs, groups = design(list(found))
    return AnalysisSet(found, pairs, groups, {k: len(v) for k, v in found.items()},
                       {"from": "folders", "root": str(root.resolve())})


def _enough(name: str, files: tuple[str, ...], where: str) -> tuple[str, ...]:
    if len(files) < 2:
        raise EatkitError(f"class '{name}' has {len(files)} image(s) in {where}; a class needs at least 2")
    return files


# --- from COCO annotations -------------------------------------------------------------------------


def read_coco(path: str | Path, kind: str) -> dict[str, Any]:
    """A COCO annotation file (``kind`` "instances" or "captions"), checked for the keys used here."""
    path = Path(path)
    data = read_json(path, f"COCO {kind} file")  # the one reader: regular files only, bounded
    need = {"images": ("id", "file_name"), "annotations": ("image_id",) + (("category_id",) if kind == "instances"
                                                                           else ("caption",))}
    if kind == "instances":
        need["categories"] = ("id", "name")
    if not isinstance(data, dict):
        raise EatkitError(f"{path} is not a COCO {kind} file: the top level is not an object")
    for key, fields in need.items():
        _check_entries(data.get(key), key, fields, f"{path} is not a COCO {kind} file")
    return data


def _check_entries(items: Any, key: str, fields: tuple[str, ...], where: str) -> None:
    """An error unless ``items`` is a list of objects that have every one of ``fields``."""
    if not isinstance(items, list):
        raise EatkitError(f"{where}: no '{key}' list")
    for item in items:
        if not isinstance(item, dict) or any(f not in item for f in fields):
            raise EatkitError(f"{where}: an entry of '{key}' lacks {' or '.join(repr(f) for f in fields)}")


def coco_analysis_set(
    instances: str | Path,
    captions: str | Path,
    images: str | Path,
    objects: Sequence[str],
    *,
    per_class: int | None = None,
    seed: int = 0,
    lexicon: Mapping[str, Iterable[str]] | None = None,
    control: bool = True,
    exclusive: bool = False,
) -> AnalysisSet:
    """An analysis set for ``objects`` (COCO category names) from COCO-format annotation files; image
    files are ``images/<file_name>`` (rules and sampling in the module docstring).

    >>> import tempfile; d = Path(tempfile.mkdtemp())
    >>> imgs = [{"id": i, "file_name": f"{i}.jpg"} for i in range(12)]
    >>> cats = [{"id": 1, "name": "person"}, {"id": 3, "name": "car"}]
    >>> objs = {0: [3], 1: [3], 2: [1, 3], 3: [1, 3], 4: [1, 3], 5: [1, 3], 6: [1], 7: [1], 8: [1], 9: [1]}
    >>> text = {2: "a man", 3: "a boy", 4: "a woman", 5: "her car", 6: "a man", 7: "he", 8: "she", 9: "girls"}
    >>> _ = (d / "i.json").write_text(json.dumps({"images": imgs, "categories": cats, "annotations":
    ...     [{"image_id": i, "category_id": c} for i, cs in objs.items() for c in cs]}))
    >>> _ = (d / "c.json").write_text(json.dumps({"images": imgs, "annotations":
    ...     [{"image_id": i, "caption": t} for i, t in text.items()]}))
    >>> s = coco_analysis_set(d / "i.json", d / "c.json", d, ["car"], control=False)
    >>> s.sizes()     # images 10 and 11 have no annotations: the random class
    {'man': 2, 'woman': 2, 'random': 2, 'car': 2, 'car+man': 2, 'car+woman': 2}
    """
    command_option("analysis-set", "per_class", per_class)
    inst = read_coco(instances, "instances")
    caps = read_coco(captions, "captions")
    lexicon = _checked_lexicon(lexicon or DEFAULT_LEXICON)
    names = {c["id"]: c["name"] for c in inst["categories"]}
    objects = _checked_objects(objects, set(names.values()), control, instances)
    # a file name read from the annotations never leaves the image folder (the suite paths' rule)
    files = {im["id"]: str(inside(images, im["file_name"], "COCO file_name", links_out=True)) for im in inst["images"]}
    present, words = _coco_contents(inst, caps, names, files)

    def gender(image: Any) -> str | None:
        return _said_gender(words.get(image, set()), lexicon)

    from eatkit.io import file_sha256  # noqa: PLC0415

    source = {"from": "coco", "instances": os.fspath(instances), "instances_sha256": file_sha256(instances),
              "captions": os.fspath(captions), "captions_sha256": file_sha256(captions), "objects": objects,
              "per_class": per_class, "seed": seed, "control": control, "exclusive": exclusive,
              "lexicon": {g: sorted(w) for g, w in lexicon.items()}}
    return _assign(files, present, gender, objects, per_class=per_class, seed=seed, control=control,
                   exclusive=exclusive, where=str(instances), source=source)


def _checked_objects(objects: Sequence[str], known: set[str], control: bool, instances: Any) -> list[str]:
    """The object categories, each once, checked against the annotations' categories ``known``."""
    objects = list(dict.fromkeys(objects))
    if not objects:
        raise EatkitError("name at least one object category")
    for name in [*objects, "person"] + ([CONTROL] if control else []):
        if name not in known:
            raise EatkitError(f"category '{name}' is not in {instances} (it has {len(known)} categories, "
                              f"e.g. {', '.join(sorted(known)[:5])})")
    if "person" in objects:
        raise EatkitError("'person' cannot be an object of interest: it is the gender classes' category")
    return objects


def _checked_lexicon(lexicon: Mapping[str, Iterable[str]]) -> dict[str, frozenset[str]]:
    """The gender lexicon, lower-cased: the words that say ``man`` and those that say ``woman``."""
    out = {g: frozenset(w.lower() for w in words) for g, words in lexicon.items()}
    if set(out) != set(GENDERS):
        raise EatkitError(f"the gender lexicon must have exactly the keys 'man' and 'woman', got {sorted(out)}")
    return out


def _said_gender(words: set[str], lexicon: dict[str, frozenset[str]]) -> str | None:
    """The one gender the words of an image's captions say, or None (neither, or both)."""
    said = {g for g in GENDERS if words & lexicon[g]}
    return said.pop() if len(said) == 1 else None


def _coco_contents(inst: dict[str, Any], caps: dict[str, Any], names: dict[Any, str],
                   files: Mapping[Any, str]) -> tuple[dict[Any, set[str]], dict[Any, set[str]]]:
    """Each image's categories (by name) and the lower-case words of its captions."""
    present: dict[Any, set[str]] = {i: set() for i in files}
    for ann in inst["annotations"]:
        if ann["image_id"] in present and ann["category_id"] in names:
            present[ann["image_id"]].add(names[ann["category_id"]])
    words: dict[Any, set[str]] = {}
    for ann in caps["annotations"]:
        words.setdefault(ann["image_id"], set()).update(re.findall(r"[a-z]+", str(ann["caption"]).lower()))
    return present, words


def _assign(files: Mapping[Any, str], present: Mapping[Any, set[str]], gender: Any, objects: list[str], *,
            per_class: int | None, seed: int, control: bool, exclusive: bool, where: str,
            source: dict[str, Any]) -> AnalysisSet:
    """The classes of the module docstring from each image's file, categories (``"person"`` among them
    for a person) and ``gender(image)`` (``"man"``, ``"woman"`` or ``None``; asked only of person images),
    sampled; ``where`` names the annotations in errors."""
    members = _members(files, present, gender, objects, control, exclusive)
    used = set(itertools.chain.from_iterable(members.values()))
    rest = [i for i in sorted(files, key=str) if i not in used]
    available = {n: len(v) for n, v in members.items()}
    available[REFERENCE] = len(rest)
    chosen = _sampled(files, members, rest, per_class, seed, where)
    order = [*GENDERS, REFERENCE] + ([class_folder(CONTROL)] if control else []) + _object_classes(objects)
    chosen = {class_folder(n): chosen[class_folder(n)] for n in order}
    pairs, groups = design(list(chosen))
    warnings = option_warnings("analysis-set", {"per_class": per_class})  # a legal size of little use
    return AnalysisSet(chosen, pairs, groups, {class_folder(k): v for k, v in available.items()},
                       {**source, "warnings": warnings})


def _members(files: Mapping[Any, str], present: Mapping[Any, set[str]], gender: Any, objects: list[str],
             control: bool, exclusive: bool) -> dict[str, list[Any]]:
    """Every image of each class (:func:`_image_class`), in file order."""
    focus = set(objects) | ({CONTROL} if control else set())
    members: dict[str, list[Any]] = {n: [] for n in [*GENDERS, *_object_classes(objects)]}
    if control:
        members[CONTROL] = []
    for image in sorted(files, key=str):
        name = _image_class(present[image], focus, exclusive, lambda i=image: gender(i))
        if name is not None:
            members[name].append(image)
    return members


def _object_classes(objects: list[str]) -> list[str]:
    """Each object's classes: alone, with a man, with a woman."""
    return [f"{o}{s}" for o in objects for s in ("", "+man", "+woman")]


def _image_class(cats: set[str], focus: set[str], exclusive: bool, gender: Any) -> str | None:
    """The class of an image with categories ``cats`` (module docstring), or None; ``gender()`` is asked of
    person images only."""
    hits = cats & focus
    if len(hits) > 1 or (exclusive and cats - hits - {"person"}):
        return None
    if "person" not in cats:
        return next(iter(hits), None)
    g = gender()
    if g is None or CONTROL in hits:
        return None
    return f"{next(iter(hits))}+{g}" if hits else g


def _sampled(files: Mapping[Any, str], members: dict[str, list[Any]], rest: list[Any], per_class: int | None,
             seed: int, where: str) -> dict[str, tuple[str, ...]]:
    """Each class's files sampled (``per_class``; the random class as large as the largest class by
    default), in one stream seeded by ``seed``."""
    rng = np.random.default_rng(seed)
    chosen: dict[str, tuple[str, ...]] = {}
    for name, ids in members.items():
        picked = _sample(ids, per_class, rng)
        chosen[class_folder(name)] = _enough(name, tuple(files[i] for i in picked), where)
    random_size = per_class or max(len(v) for v in chosen.values())
    picked = _sample(rest, random_size, rng)
    chosen[REFERENCE] = _enough(REFERENCE, tuple(files[i] for i in picked), where)
    return chosen


#: Open Images labels (display names, lower case) of people, and the gender each one says
OPEN_IMAGES_PEOPLE: dict[str, str | None] = {"person": None, "man": "man", "boy": "man", "woman": "woman",
                                             "girl": "woman"}


def open_images_analysis_set(
    boxes: str | Path,
    classes: str | Path,
    images: str | Path,
    objects: Sequence[str],
    *,
    per_class: int | None = None,
    seed: int = 0,
    control: bool = True,
    exclusive: bool = False,
) -> AnalysisSet:
    r"""An analysis set for ``objects`` (Open Images display names, any case, e.g. ``car``) from the Open
    Images V4-V7 box annotations (``*-annotations-bbox.csv``: a header row with ``ImageID`` and
    ``LabelName``) and class descriptions (``class-descriptions-boxable.csv``: ``LabelName,DisplayName``
    rows, with or without that header); image files are ``images/<ImageID>.jpg``. Open Images labels
    people as Person, Man, Woman, Boy, Girl: any of them makes an image a person image and the last four
    give its gender (:data:`OPEN_IMAGES_PEOPLE`; both genders: none), as captions do for COCO. The rules
    and sampling are COCO's (module docstring); the control class is "Stop sign".

    >>> import tempfile; d = Path(tempfile.mkdtemp())
    >>> _ = (d / "c.csv").write_text("/m/0k4j,Car\n/m/04yx4,Man\n/m/03bt1vf,Woman\n/m/01g317,Person\n")
    >>> rows = [(i, "/m/0k4j") for i in "ab"] + [(i, lab) for i in "cd" for lab in ("/m/0k4j", "/m/04yx4")]
    >>> rows += [(i, "/m/03bt1vf") for i in "efgh"] + [(i, "/m/0k4j") for i in "gh"] + [(i, "/m/04yx4") for i in "jk"]
    >>> rows += [(i, "/m/01g317") for i in "il"]  # a person of no gender: the random class
    >>> _ = (d / "b.csv").write_text("ImageID,Source,LabelName,Confidence\n" + "".join(f"{i},x,{l},1\n" for i, l in rows))
    >>> s = open_images_analysis_set(d / "b.csv", d / "c.csv", d, ["Car"], control=False)
    >>> s.sizes(), s.classes["car+man"][0].endswith("c.jpg")
    ({'man': 2, 'woman': 2, 'random': 2, 'car': 2, 'car+man': 2, 'car+woman': 2}, True)
    """
    command_option("analysis-set", "per_class", per_class)
    names = {label: name.lower() for label, name in _csv_rows(classes, 2, "class descriptions")
             if (label, name) != ("LabelName", "DisplayName")}
    header, *rows = _csv_rows(boxes, None, "box annotations")
    if "ImageID" not in header or "LabelName" not in header:
        raise EatkitError(f"box annotations {boxes} need the columns ImageID and LabelName (Open Images "
                          f"*-annotations-bbox.csv), got {', '.join(header)}")
    at_id, at_label = header.index("ImageID"), header.index("LabelName")
    objects = list(dict.fromkeys(o.strip().lower() for o in objects))
    if not objects:
        raise EatkitError("name at least one object category")
    known = set(names.values())
    for name in [*objects] + ([CONTROL] if control else []):
        if name not in known:
            raise EatkitError(f"class '{name}' is not in {classes} (it has {len(known)} classes)")
    if set(objects) & set(OPEN_IMAGES_PEOPLE):
        raise EatkitError(f"people ({', '.join(OPEN_IMAGES_PEOPLE)}) cannot be objects of interest: they make the "
                          "gender classes")
    present: dict[str, set[str]] = {}
    genders: dict[str, set[str]] = {}
    for row in rows:
        image, name = row[at_id], names.get(row[at_label])
        cats = present.setdefault(image, set())
        if name in OPEN_IMAGES_PEOPLE:
            cats.add("person")
            if OPEN_IMAGES_PEOPLE[name]:
                genders.setdefault(image, set()).add(OPEN_IMAGES_PEOPLE[name])
        elif name is not None:
            cats.add(name)
    files = {image: str(Path(images) / f"{image}.jpg") for image in present}

    def gender(image: str) -> str | None:
        said = genders.get(image, set())
        return next(iter(said)) if len(said) == 1 else None

    from eatkit.io import file_sha256  # noqa: PLC0415

    source = {"from": "open-images", "boxes": os.fspath(boxes), "boxes_sha256": file_sha256(boxes),
              "classes": os.fspath(classes), "classes_sha256": file_sha256(classes), "objects": objects,
              "per_class": per_class, "seed": seed, "control": control, "exclusive": exclusive}
    return _assign(files, present, gender, objects, per_class=per_class, seed=seed, control=control,
                   exclusive=exclusive, where=str(boxes), source=source)


def _csv_rows(path: str | Path, width: int | None, what: str) -> list[list[str]]:
    """The rows of a CSV file (``width``: the number of columns every row must have)."""
    text = read_text(path, f"the {what}")  # the one reader: regular files only, bounded
    rows = [row for _, row in parse_csv(text, f"the {what} {path}")]
    if not rows or (width is not None and any(len(row) != width for row in rows)):
        raise EatkitError(f"the {what} {path} must be a CSV file of {width or 'some'} columns per row, and not empty")
    return rows


def _sample(ids: list[Any], size: int | None, rng: np.random.Generator) -> list[Any]:
    """At most ``size`` of ``ids`` without replacement (in their original order), or all of them."""
    if size is None or len(ids) <= size:
        return list(ids)
    keep = np.sort(rng.choice(len(ids), size=size, replace=False))
    return [ids[i] for i in keep]
