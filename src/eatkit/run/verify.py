"""Check a run folder against the files on disk: which stimuli changed since the run (``eatkit verify``).

A run's ``manifest.json`` records, per test and set, every stimulus embedded with its SHA-256 (of an
image file's bytes, or of a word's or sentence's exact string) and one SHA-256 over the set, plus the
SHA-256 of the source's files (a vectors file, precomputed embeddings), and for a hub model the commit its
revision resolved to. :func:`verify_run` recomputes them: image files under the run's image folder (or
``images``), the set fingerprints from the recorded items, the source files, and the commit the recorded
revision resolves to now (the one a re-run would load), and lists every difference. A run on published
embeddings (``--embeddings``) read no image: its images are the names its embedding files recorded, checked
as recorded strings, and the embedding files by their SHA-256 (a changed name changes its file). File names from the manifest are resolved
with :func:`eatkit.io.inside`, so a manifest cannot make eatkit read outside the folders it names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eatkit.errors import EatkitError
from eatkit.io import file_sha256, inside, text_sha256
from eatkit.run.folder import read_manifest, read_records, set_fingerprint


@dataclass(frozen=True)
class Verification:
    """What :func:`verify_run` found: how many checksums it checked, and one line per difference."""

    run_dir: Path
    checked: int
    changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what could not be checked, and why
    #: how many checksums of each kind were checked, e.g. {"image files": 120, "set fingerprints": 8}
    what: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether every recorded checksum matched."""
        return not self.changes


def verify_run(run_dir: str | Path, images: str | Path | None = None) -> Verification:
    """Recompute the checksums of a run's manifest against the files on disk.

    ``images`` is the image folder to check image stimuli against (default: the folder the run read,
    as its manifest records it).

    >>> verify_run("results/ieat-effnet").changes  # doctest: +SKIP
    ["test 'valence' set B (Unpleasant): valence/unpleasant/coffin1_google.jpg changed (sha256 ...)"]
    """
    run_dir = Path(run_dir)
    manifest = _mapping(read_manifest(run_dir), "manifest.json")
    if (run_dir / "results.json").exists():
        read_records(run_dir)  # the records are checked against their schema and ranges before the checksums
    source = manifest.get("source") if isinstance(manifest.get("source"), dict) else {}
    check = _Check(source, _image_root(images, source), run_dir)
    for test_id, sets in _mapping(manifest.get("stimuli"), "stimuli").items():
        for role, entry in _mapping(sets, f"stimuli.{test_id}").items():
            _check_set(check, test_id, role, entry)
    records = _records_json(run_dir)
    for input_ in CHECKSUMMED:
        for name, path, recorded in input_.inputs(manifest, records, run_dir):
            check.count(input_.what)
            check.changes += input_.changed(name, path, recorded)
    check.changes += [f"{field}: a SHA-256 of an input that verify does not check (verify cannot tell whether it "
                      "changed)" for field in unchecked_fields(manifest, records)]
    notes: list[str] = []
    if isinstance(source.get("hub"), dict):
        check.count("model revision")
        _check_revision(source, check.changes, notes)
    return Verification(run_dir, check.checked, check.changes, notes, check.what)


@dataclass
class _Check:
    """What :func:`verify_run` checks against (the run's source, its image folder) and what it found so far."""

    source: dict[str, Any]
    root: Path | None
    run_dir: Path
    checked: int = 0
    changes: list[str] = field(default_factory=list)
    what: dict[str, int] = field(default_factory=dict)

    @property
    def named(self) -> bool:
        """Published embeddings: an image is the name the embedding files recorded, not a file to read."""
        return self.source.get("source") == "precomputed"

    @property
    def generated(self) -> Path | None:
        """A text-to-image run's images."""
        return self.run_dir / "generated" if "generator" in self.source else None

    def count(self, kind: str) -> None:
        self.checked += 1
        self.what[kind] = self.what.get(kind, 0) + 1


def _image_root(images: str | Path | None, source: dict[str, Any]) -> Path | None:
    if images is not None:
        return Path(images)
    return Path(source["images"]) if source.get("images") else None


def _check_set(check: _Check, test_id: str, role: str, entry: Any) -> None:
    """A stimulus set's fingerprint over its recorded items, then each item, then files added to its folder."""
    where = f"test '{test_id}' set {role} ({entry.get('name', role)})"
    items = _recorded_items(check.run_dir, test_id, role, entry)
    fingerprint = set_fingerprint(items)
    check.count("set fingerprints")
    if fingerprint != entry.get("sha256"):
        check.changes.append(f"{where}: the recorded items do not match the set's sha256 (manifest edited)")
    modality = "name" if check.named and entry.get("modality") == "image" else entry.get("modality")
    generated = check.generated
    kind = {"image": "image files", "name": "image names recorded from the embedding files"}.get(
        modality, "generated images" if generated is not None else "stimulus strings")
    for item_id, recorded in items:
        check.count(kind)
        check.changes += _check_item(where, modality, str(item_id), recorded, check.root, check.source, generated)
    if isinstance(entry.get("category"), str) and check.root is not None and not check.named:
        check.changes += _added(where, entry, items, check.root)


def _recorded_items(run_dir: Path, test_id: str, role: str, entry: Any) -> list[list[Any]]:
    items = entry.get("items")
    if not isinstance(items, list) or not all(isinstance(i, list) and len(i) == 2 for i in items):
        raise EatkitError(f"{run_dir / 'manifest.json'}: stimuli.{test_id}.{role} has no list of "
                          "[id, sha256] items (a manifest of eatkit before 0.2 cannot be verified)")
    return items


def _check_revision(source: dict[str, Any], changes: list[str], notes: list[str]) -> None:
    """Whether the hub revision a run loaded is the commit a re-run would load now."""
    from eatkit.encoders.hf import hub_commit

    hub = source["hub"]
    repo, revision, commit = (str(hub.get(k)) for k in ("repo", "revision", "commit"))
    filename = "open_clip_config.json" if str(source.get("id", "")).startswith("open_clip:") else "config.json"
    try:
        now = hub_commit(repo, revision, filename)
    except EatkitError as err:
        notes.append(f"model revision: cannot tell which commit of {repo} a re-run would load: {err}")
        return
    if now != commit:
        changes.append(f"model revision: the run loaded commit {commit} of {repo} (revision '{revision}'); a re-run "
                       f"would load {now} (pin it with --revision {commit})")


def _check_item(where: str, modality: Any, item_id: str, recorded: str, root: Path | None,
                source: dict[str, Any], generated: Path | None = None) -> list[str]:
    """An item's difference: a string's or image name's (``modality`` "name") sha256, an image file's bytes
    (also of an image generated from a prompt, under ``generated``), an (image, caption) pair's files."""
    pairs = source.get("pairs") if isinstance(source.get("pairs"), dict) else {}
    if modality == "image-caption" or recorded in pairs:  # (a grounded test's roles are "<embedding>/<role>")
        return _check_pair(where, item_id, recorded, pairs)
    if modality != "image":
        if text_sha256(item_id) == recorded:
            return []
        if generated is None:
            return [f"{where}: '{item_id}' does not match its sha256"]
        return _check_generated(where, item_id, recorded, generated)
    if root is None:
        raise EatkitError("the run's manifest names no image folder: pass --images DIR (images=DIR)")
    path = inside(root, item_id, "image", links_out=True)
    if not path.is_file():
        return [f"{where}: {item_id} is missing from {root}"]
    now = file_sha256(path)
    return [] if now == recorded else [f"{where}: {item_id} changed (sha256 {recorded[:12]}... recorded, "
                                       f"{now[:12]}... now)"]


def _check_generated(where: str, item_id: str, recorded: str, generated: Path) -> list[str]:
    """The image generated from a prompt (docs/generation.md), named by its recorded sha256."""
    path = generated / f"{recorded}.png"
    if not path.is_file():
        return [f"{where}: the image generated for '{item_id}' ({path.name}) is missing from {generated}"]
    now = file_sha256(path)
    return [] if now == recorded else [f"{where}: the image generated for '{item_id}' changed (sha256 "
                                       f"{recorded[:12]}... recorded, {now[:12]}... now)"]


def _check_pair(where: str, item_id: str, recorded: str, pairs: dict[str, Any]) -> list[str]:
    """An (image, caption) pair: its checksum covers the caption, the image's and region file's SHA-256
    and how it was read; the source's manifest keeps (``pairs``), per checksum, the files and that content,
    so the files are hashed again and compared."""
    entry = pairs.get(recorded)
    if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[2], str)):
        return [f"{where}: '{item_id}' cannot be checked (the manifest does not record the pair's files)"]
    image, regions, contents = entry
    if text_sha256(contents) != recorded:
        return [f"{where}: '{item_id}' does not match its sha256 (manifest edited)"]
    try:
        _caption, image_hash, region_hash = json.loads(contents)[:3]
    except (ValueError, TypeError):
        return [f"{where}: '{item_id}' has an unreadable record in the manifest"]
    return [change for name, path, expected in (("image", image, image_hash), ("region file", regions, region_hash))
            if path is not None and expected is not None
            for change in _check_pair_file(f"{where}: the {name} {path} of '{item_id}'", path, expected)]


def _check_pair_file(what: str, path: Any, expected: Any) -> list[str]:
    expected = str(expected).split("|")[0]  # (a region table's hash names the image's key after "|")
    if not Path(path).is_file():
        return [f"{what} is missing"]
    if file_sha256(path) != expected:
        return [f"{what} changed (sha256 {expected[:12]}... recorded)"]
    return []


def _added(where: str, entry: dict[str, Any], items: list[list[str]], root: Path) -> list[str]:
    """The images now in a whole-folder category that the run did not embed (a re-run would): neither
    among its items nor a byte-identical copy of one (a copy is dropped again)."""
    from eatkit.stimuli.images import image_ids, resolve_image_set
    from eatkit.stimuli.types import StimulusSet

    try:
        found = resolve_image_set(StimulusSet(str(entry.get("name", "?")), "image", category=entry["category"]), root)
    except EatkitError:
        return []  # a missing folder: its recorded images are reported missing one by one
    recorded, hashes = {str(i) for i, _ in items}, {h for _, h in items}
    return [f"{where}: {item_id} was added to {root} (a re-run would embed it)"
            for path, item_id in zip(found.items, image_ids(found))
            if item_id not in recorded and file_sha256(path) not in hashes]


@dataclass(frozen=True)
class Checksummed:
    """An input file whose SHA-256 a run records, checked by :func:`verify_run`: ``what`` it is (plural, as
    counted), ``label`` (singular, as a change names it), ``fields``: where the run records its checksum
    (dotted paths in ``manifest.json``, ``records.<i>.<field>`` in ``results.json``; ``*``: any key or index),
    ``inputs(manifest, records, run_dir)``: each such input's ``(name, path, recorded sha256)``, and ``digest``
    how its checksum is made (a file's bytes; a folder's files)."""

    what: str
    label: str
    fields: tuple[str, ...]
    inputs: Callable[[dict[str, Any], list[Any], Path], list[tuple[str, Path, str]]]
    digest: Callable[[Path], str] = file_sha256

    def changed(self, name: str, path: Path, recorded: str) -> list[str]:
        """The one line of a missing or changed input, or nothing."""
        exists = path.is_dir() if self.digest is not file_sha256 else path.is_file()
        if not exists:
            return [f"{self.label} {name}: {path} is missing"]
        if self.digest(path) != recorded:
            return [f"{self.label} {name}: {path} changed (sha256 {recorded[:12]}... recorded)"]
        return []


def _source(manifest: dict[str, Any]) -> dict[str, Any]:
    return manifest.get("source") if isinstance(manifest.get("source"), dict) else {}


def _source_file(manifest: dict[str, Any], records: list[Any], run_dir: Path) -> list[tuple[str, Path, str]]:
    """A vectors file (``source.path``, ``source.sha256``)."""
    source = _source(manifest)
    path, digest = source.get("path"), source.get("sha256")
    return [(Path(path).name, Path(path), digest)] if isinstance(path, str) and isinstance(digest, str) else []


def _embedding_files(manifest: dict[str, Any], records: list[Any], run_dir: Path) -> list[tuple[str, Path, str]]:
    """Precomputed embeddings' files (``source.root``, ``source.files``: name -> sha256)."""
    source = _source(manifest)
    files, root = source.get("files"), source.get("root")
    if not (isinstance(root, str) and isinstance(files, dict)):
        return []
    return [(name, inside(root, name, "source file"), digest) for name, digest in files.items() if isinstance(digest, str)]


def _vocabulary(manifest: dict[str, Any], records: list[Any], run_dir: Path) -> list[tuple[str, Path, str]]:
    """A HistWords decade's vocabulary file (``source.vocabulary``, ``source.vocabulary_sha256``)."""
    source = _source(manifest)
    path, digest = source.get("vocabulary"), source.get("vocabulary_sha256")
    return [(Path(path).name, Path(path), digest)] if isinstance(path, str) and isinstance(digest, str) else []


def _answer_files(manifest: dict[str, Any], records: list[Any], run_dir: Path) -> list[tuple[str, Path, str]]:
    """The answer files a source of recorded answers read (:class:`eatkit.sources.answers.RecordedAnswers`)."""
    files = _source(manifest).get("answer_files")
    return [(Path(f["path"]).name, Path(f["path"]), f["sha256"]) for f in files if isinstance(f, dict)
            and isinstance(f.get("path"), str) and isinstance(f.get("sha256"), str)] if isinstance(files, list) else []


def _generator_folders(manifest: dict[str, Any], records: list[Any], run_dir: Path) -> list[tuple[str, Path, str]]:
    """A text-to-image pipeline's local folder (``source.generator.folder``, ``folder_sha256``)."""
    generator = _source(manifest).get("generator")
    if not isinstance(generator, dict):
        return []
    path, digest = generator.get("folder"), generator.get("folder_sha256")
    return [(Path(path).name, Path(path), digest)] if isinstance(path, str) and isinstance(digest, str) else []


def _catalogues(manifest: dict[str, Any], records: list[Any], run_dir: Path) -> list[tuple[str, Path, str]]:
    """Each seed-sets test's catalogue (``test_params.<test>.catalogue``, ``catalogue_sha256``), found as the
    run found it: a registered one in the data folder, a file relative to the suite file's folder."""
    params = manifest.get("test_params") if isinstance(manifest.get("test_params"), dict) else {}
    suite = (manifest.get("suite") or {}).get("file")
    base = Path(suite).parent if isinstance(suite, str) else None
    given = [(g.get("catalogue"), g.get("catalogue_sha256")) for g in params.values() if isinstance(g, dict)]
    return [_catalogue(name, digest, base) for name, digest in given
            if isinstance(name, str) and name and isinstance(digest, str)]


def _catalogue(name: str, digest: str, base: Path | None) -> tuple[str, Path, str]:
    """A catalogue's (name, file, recorded sha256); a registered one no longer in the data folder: its name."""
    from eatkit.stimuli.seed_catalogue import catalogue_path

    try:
        return name, catalogue_path(name, base), digest
    except EatkitError:
        return name, Path(name), digest


def _annotation_files(manifest: dict[str, Any], records: list[Any], run_dir: Path) -> list[tuple[str, Path, str]]:
    """The annotation files an analysis set was made from (``eatkit analysis-set``: COCO's instances and
    captions, Open Images' boxes and classes), as the suite records them in a test's ``params.source``:
    ``<name>`` a path, ``<name>_sha256`` its SHA-256."""
    params = manifest.get("test_params") if isinstance(manifest.get("test_params"), dict) else {}
    out = []
    for given in params.values():
        source = (given or {}).get("source") if isinstance(given, dict) else None
        if isinstance(source, dict):
            out += [(Path(source[k[:-7]]).name, Path(source[k[:-7]]), v) for k, v in source.items()
                    if k.endswith("_sha256") and isinstance(v, str) and isinstance(source.get(k[:-7]), str)]
    return out


def _items_files(manifest: dict[str, Any], records: list[Any], run_dir: Path) -> list[tuple[str, Path, str]]:
    """Each answers test's items file (``test_params.<test>.items``, ``items_sha256``;
    :mod:`eatkit.stimuli.answer_items`), named with its test."""
    params = manifest.get("test_params") if isinstance(manifest.get("test_params"), dict) else {}
    return [(f"{Path(p['items']).name} (test '{test}')", Path(p["items"]), p["items_sha256"])
            for test, p in params.items() if isinstance(p, dict) and isinstance(p.get("items"), str) and p["items"]
            and isinstance(p.get("items_sha256"), str)]


def _corpora(manifest: dict[str, Any], records: list[Any], run_dir: Path) -> list[tuple[str, Path, str]]:
    """A CEAT run's ``--corpus`` (its path in the run's parameters, its SHA-256 in each CEAT record)."""
    params = (manifest.get("statistics") or {}).get("params") or {}
    corpus = params.get("corpus") if isinstance(params, dict) else None
    digests = {r.get("corpus_sha256") for r in records if isinstance(r, dict) and r.get("corpus_sha256")}
    return [(Path(corpus).name, Path(corpus), d) for d in sorted(digests) if isinstance(corpus, str) and corpus]


def _folder_sha256(path: Path) -> str:
    from eatkit.encoders.diffusion import folder_sha256

    return folder_sha256(path)


#: every input whose SHA-256 a run records, and how verify checks it (one row per kind of input: a new input
#: recorded without a row here is reported by :func:`unchecked_fields`, so it cannot bypass verify)
CHECKSUMMED: tuple[Checksummed, ...] = (
    Checksummed("source files", "source file", ("source.sha256",), _source_file),
    Checksummed("embedding files", "source file", ("source.files.*",), _embedding_files),
    Checksummed("vocabulary files", "vocabulary file", ("source.vocabulary_sha256",), _vocabulary),
    Checksummed("answer files", "answer file", ("source.answer_files.*.sha256",), _answer_files),
    Checksummed("generator folders", "generator folder", ("source.generator.folder_sha256",), _generator_folders,
                _folder_sha256),
    Checksummed("seed catalogues", "seed catalogue", ("test_params.*.catalogue_sha256", "records.*.catalogue_sha256"),
                _catalogues),
    Checksummed("annotation files", "annotation file", ("test_params.*.source.*",), _annotation_files),
    Checksummed("CEAT corpora", "CEAT corpus", ("records.*.corpus_sha256",), _corpora),
    Checksummed("items files", "items file", ("test_params.*.items_sha256",), _items_files),
)

#: fields holding a SHA-256 that verify checks otherwise, or that is not an input's: why
CHECKED_OTHERWISE: dict[str, str] = {
    "stimuli.*.*.sha256": "a set's fingerprint over its items (each set, _check_set)",
    "stimuli.*.*.items.*.*": "each stimulus' SHA-256 (_check_item)",
    "suite.content_sha256": "the suite's content: its stimuli are checked one by one",
    "source.postprocess.reference_sha256": "the post-processing's reference vectors, embedded from the stimuli",
}

_SHA256 = re.compile(r"[0-9a-f]{64}")


def _walk(value: Any, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """The paths of every string of ``value`` that is a SHA-256 (64 hex digits; JSON objects and lists)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if _SHA256.fullmatch(str(key)):  # keyed by checksum (an image-caption pair's record)
                continue
            yield from _walk(item, (*path, str(key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, (*path, str(i)))
    elif isinstance(value, str) and _SHA256.fullmatch(value):
        yield path


def _covered(path: tuple[str, ...], pattern: str) -> bool:
    parts = pattern.split(".")
    return len(parts) == len(path) and all(p == "*" or p == k for p, k in zip(parts, path))


def unchecked_fields(manifest: dict[str, Any], records: list[Any]) -> list[str]:
    """The fields of a run's manifest (and records, ``records.<i>.<field>``) holding a SHA-256 that neither
    :data:`CHECKSUMMED` nor :data:`CHECKED_OTHERWISE` names: an input verify would not check.

    >>> unchecked_fields({"source": {"sha256": "0" * 64, "table_sha256": "1" * 64}}, [])
    ['source.table_sha256']
    """
    patterns = [f for c in CHECKSUMMED for f in c.fields] + list(CHECKED_OTHERWISE)
    found = [*_walk(manifest, ()), *_walk(list(records), ("records",))]
    return [".".join(p) for p in found if not any(_covered(p, pattern) for pattern in patterns)]


def _records_json(run_dir: Path) -> list[Any]:
    """The run's records as JSON objects (read, and checked, by :func:`read_records` already), or none."""
    path = run_dir / "results.json"
    if not path.exists():
        return []
    from eatkit.io import read_json

    data = read_json(path, "results file")
    return data if isinstance(data, list) else []


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise EatkitError(f"manifest.json: {where} is not a JSON object")
    return value
