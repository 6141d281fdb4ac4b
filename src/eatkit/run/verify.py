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
    _check_source_files(check)
    for entry in _answer_files(source):
        check.count("answer files")
        check.changes += _check_answer_file(entry)
    for test_id, path, recorded in _items_files(manifest):
        check.count("items files")
        check.changes += _check_items_file(test_id, path, recorded)
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


def _check_source_files(check: _Check) -> None:
    for name, path, recorded in _source_files(check.source):
        check.count("embedding files" if check.named else "source files")
        if not path.is_file():
            check.changes.append(f"source file {name}: {path} is missing")
        elif file_sha256(path) != recorded:
            check.changes.append(f"source file {name}: {path} changed (sha256 {recorded[:12]}... recorded)")


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


def _source_files(source: dict[str, Any]) -> list[tuple[str, Path, str]]:
    """(name, path, recorded sha256) of the source's files: a vectors file, precomputed embeddings."""
    out = []
    if isinstance(source.get("path"), str) and isinstance(source.get("sha256"), str):
        out.append((Path(source["path"]).name, Path(source["path"]), source["sha256"]))
    files = source.get("files")
    if isinstance(source.get("root"), str) and isinstance(files, dict):
        out += [(name, inside(source["root"], name, "source file"), digest) for name, digest in files.items()
                if isinstance(digest, str)]
    return out


def _answer_files(source: dict[str, Any]) -> list[dict[str, Any]]:
    """The answer files a source of recorded answers read (:class:`eatkit.sources.answers.RecordedAnswers`:
    path, sha256, format, tool, model, task)."""
    files = source.get("answer_files")
    return [f for f in files if isinstance(f, dict) and isinstance(f.get("path"), str)
            and isinstance(f.get("sha256"), str)] if isinstance(files, list) else []


def _check_answer_file(entry: dict[str, Any]) -> list[str]:
    """The change of one answer file: missing, or its bytes changed (the message names its tool, model, task)."""
    path = Path(entry["path"])
    made = ", ".join(f"{k} {entry[k]}" for k in ("tool", "model", "task") if entry.get(k))
    if not path.is_file():
        return [f"answer file {path.name}: {path} is missing ({made})"]
    if file_sha256(path) != entry["sha256"]:
        return [f"answer file {path.name}: {path} changed (sha256 {entry['sha256'][:12]}... recorded; {made})"]
    return []


def _items_files(manifest: dict[str, Any]) -> list[tuple[str, Path, str]]:
    """(test, path, SHA-256) of each answers test's items file (the manifest's ``test_params``: ``items``,
    ``items_sha256``; :mod:`eatkit.stimuli.answer_items`)."""
    params = manifest.get("test_params")
    return [(test, Path(p["items"]), p["items_sha256"]) for test, p in params.items()
            if isinstance(p, dict) and isinstance(p.get("items"), str) and isinstance(p.get("items_sha256"), str)
            and p["items"]] if isinstance(params, dict) else []


def _check_items_file(test_id: str, path: Path, recorded: str) -> list[str]:
    """The change of a test's items file: missing, or its bytes changed."""
    if not path.is_file():
        return [f"test '{test_id}' items file {path.name}: {path} is missing"]
    if file_sha256(path) != recorded:
        return [f"test '{test_id}' items file {path.name}: {path} changed (sha256 {recorded[:12]}... recorded)"]
    return []


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise EatkitError(f"manifest.json: {where} is not a JSON object")
    return value
