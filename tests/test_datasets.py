"""The dataset downloader, against local mirrors (file:// and a 127.0.0.1 HTTP server) of iEAT images."""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import socket
import threading
from pathlib import Path

import pytest

from eatkit.errors import EatkitError
from eatkit.stimuli.datasets import (
    DOWNLOADED,
    checksum_manifest,
    default_data_dir,
    download_dataset,
    get_dataset,
    list_datasets,
    load_manifest,
)

SUBSET = ("age/old", "age/young", "weapon/tool")  # 19 small images
MISSING = "gender/career/professional2_google.jpg"


@pytest.fixture
def images(shared_data: Path) -> Path:
    """The verified copy of the iEAT images in ../shared/data."""
    return shared_data / "ieat" / "images"


@pytest.fixture
def mirror(images, tmp_path) -> Path:
    """A copy of a few categories laid out as the upstream repository (data/experiments/<test>/<category>)."""
    root = tmp_path / "mirror"
    for category in SUBSET:
        shutil.copytree(images / category, root / "data" / "experiments" / category)
    return root


@pytest.fixture
def manifest() -> dict:
    """The shipped manifest reduced to SUBSET, with one known-missing file of its own."""
    full = load_manifest("ieat")
    files = {rel: entry for rel, entry in full["files"].items() if rel.rpartition("/")[0] in SUBSET}
    return {**full, "files": files, "known_missing": {"age/old/extra.jpg": "absent from the verified copy"}}


@pytest.fixture
def http_url(mirror):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=mirror))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def _tree(root: Path) -> dict[str, bytes]:
    """The dataset files under ``root`` (eatkit's list of its downloads, DOWNLOADED, left out)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != DOWNLOADED}


def test_registry_and_shipped_manifest():
    assert [d.name for d in list_datasets()] == ["ieat", "seat", "glove-6b", "glove-840b", "word2vec-google-news",
                                                 "histwords-eng-all-sgns", "coco-2014-captions",
                                                 "coco-2014-val-images", "cfd", "crows-pairs", "llm-iat",
                                                 "stereoset", "bbq", "bad-seeds"]
    assert get_dataset("ieat").licence.startswith("CC BY-NC-SA 4.0")
    with pytest.raises(EatkitError) as err:
        get_dataset("imagenet")
    assert str(err.value).startswith("unknown dataset 'imagenet' (known datasets: ieat, seat, glove-6b, ")
    spec = load_manifest("ieat")
    assert re.fullmatch(r"[0-9a-f]{40}", spec["revision"])
    assert spec["base_url"] == f"https://raw.githubusercontent.com/ryansteed/ieat/{spec['revision']}"
    assert spec["prefix"] == "data/experiments"
    assert len(spec["files"]) == 869
    assert sum(f["size"] for f in spec["files"].values()) == 128_208_138
    assert all(re.fullmatch(r"[0-9a-f]{64}", f["sha256"]) for f in spec["files"].values())
    assert list(spec["known_missing"]) == [MISSING]
    assert MISSING not in spec["files"]
    assert len({rel.rpartition("/")[0] for rel in spec["files"]}) == 60  # <test>/<category> folders


@pytest.mark.shared_data
def test_shipped_manifest_matches_the_verified_copy(images):
    assert checksum_manifest(images)["files"] == load_manifest("ieat")["files"]


def test_checksum_manifest_of_a_missing_folder(tmp_path):
    with pytest.raises(EatkitError) as err:
        checksum_manifest(tmp_path / "nope")
    assert str(err.value) == f"cannot build a manifest of '{tmp_path / 'nope'}': not a directory"


def test_default_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("EATKIT_DATA_DIR", str(tmp_path / "eat"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_data_dir() == tmp_path / "eat"
    monkeypatch.delenv("EATKIT_DATA_DIR")
    assert default_data_dir() == tmp_path / "xdg" / "eatkit"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_data_dir() == tmp_path / "home" / ".local" / "share" / "eatkit"


@pytest.mark.shared_data
def test_download_from_file_mirror_then_resume_offline(mirror, manifest, tmp_path):
    dest = tmp_path / "ieat"
    assert download_dataset("ieat", dest, base_url=mirror.as_uri(), manifest=manifest, progress=False) == dest
    assert _tree(dest) == _tree(mirror / "data" / "experiments")
    assert len(_tree(dest)) == len(manifest["files"]) == 19
    # Everything is present and verified: a second run needs no source at all.
    download_dataset("ieat", dest, base_url=_closed_port_url(), manifest=manifest)
    # A damaged local file is fetched again.
    (dest / "age/old/of1.jpg").write_bytes(b"damaged")
    download_dataset("ieat", dest, base_url=mirror.as_uri(), manifest=manifest, progress=False)
    assert (dest / "age/old/of1.jpg").read_bytes() == (mirror / "data/experiments/age/old/of1.jpg").read_bytes()


@pytest.mark.shared_data
def test_download_over_http_keeps_a_known_missing_file_if_the_source_has_it(mirror, manifest, http_url, tmp_path):
    (mirror / "data/experiments/age/old/extra.jpg").write_bytes(b"not in the manifest's checksums")
    dest = download_dataset("ieat", tmp_path / "ieat", base_url=http_url + "/", manifest=manifest)
    assert _tree(dest) == _tree(mirror / "data" / "experiments")
    assert (dest / "age/old/extra.jpg").read_bytes() == b"not in the manifest's checksums"


@pytest.mark.shared_data
def test_download_default_destination(mirror, manifest, monkeypatch, tmp_path):
    monkeypatch.setenv("EATKIT_DATA_DIR", str(tmp_path / "data"))
    dest = download_dataset("ieat", base_url=mirror.as_uri(), manifest=manifest, progress=False)
    assert dest == tmp_path / "data" / "ieat"
    assert (dest / "weapon/tool").is_dir()


@pytest.mark.shared_data
def test_corrupted_file_on_the_mirror(mirror, manifest, http_url, tmp_path):
    bad = mirror / "data/experiments/age/young/yf1.jpg"
    assert bad.is_file()
    bad.write_bytes(b"corrupted")
    expected = manifest["files"]["age/young/yf1.jpg"]
    stale = tmp_path / "ieat/age/young/yf1.jpg"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"a damaged earlier copy")
    (tmp_path / "ieat" / DOWNLOADED).write_text('["age/young/yf1.jpg"]')  # (eatkit downloaded it earlier)
    with pytest.raises(EatkitError) as err:
        download_dataset("ieat", tmp_path / "ieat", base_url=http_url, manifest=manifest, progress=False)
    assert str(err.value) == (
        f"checksum mismatch for 'age/young/yf1.jpg' from {http_url}/data/experiments/age/young/yf1.jpg: "
        f"expected sha256 {expected['sha256']}, got "
        "3dbb3963d11aa418de8b61f846c3dbd5af43b40d252842adb823f90936fe6920; the file was not kept"
    )
    assert list(stale.parent.iterdir()) == []  # neither the damaged copy nor the bad or partial download
    assert len(list((tmp_path / "ieat/age/old").iterdir())) == 6  # files before it were kept


@pytest.mark.shared_data
def test_missing_file_on_the_mirror(mirror, manifest, http_url, tmp_path):
    (mirror / "data/experiments/age/old/of2.jpg").unlink()
    with pytest.raises(EatkitError) as err:
        download_dataset("ieat", tmp_path / "a", base_url=http_url, manifest=manifest, progress=False)
    assert str(err.value) == (
        f"cannot download 'age/old/of2.jpg' from {http_url}/data/experiments/age/old/of2.jpg: "
        "HTTP 404 File not found"
    )
    with pytest.raises(EatkitError) as err:
        download_dataset("ieat", tmp_path / "b", base_url=mirror.as_uri(), manifest=manifest, progress=False)
    url = f"{mirror.as_uri()}/data/experiments/age/old/of2.jpg"
    assert str(err.value).startswith(f"cannot download 'age/old/of2.jpg' from {url}: [Errno 2] No such file")


def test_network_failure_is_one_line(manifest, tmp_path):
    base = _closed_port_url()
    with pytest.raises(EatkitError) as err:
        download_dataset("ieat", tmp_path / "ieat", base_url=base, manifest=manifest, progress=False)
    message = str(err.value)
    assert message.startswith(f"cannot download 'age/old/of1.jpg' from {base}/data/experiments/age/old/of1.jpg: ")
    assert "Connection refused" in message and "\n" not in message
    assert message.endswith("download from a copy with --base-url file://MIRROR (a folder in the source's layout) "
                            "or an http(s) mirror")
    assert not list((tmp_path / "ieat").rglob("*.part"))


def test_base_url_must_be_a_url(manifest, tmp_path):
    with pytest.raises(EatkitError) as err:
        download_dataset("ieat", tmp_path, base_url="mirror/ieat", manifest=manifest)
    assert str(err.value) == "base URL 'mirror/ieat' of dataset 'ieat' must start with https://, http:// or file://"


# -- the registry through pooch: every public set the suites use ---------------------------------------


def test_every_registry_entry_has_a_licence_and_a_sha256_or_says_why_not():
    for dataset in list_datasets():
        assert dataset.licence and dataset.used_by, dataset.name
        if dataset.licensed:
            assert "{dest}" in dataset.how and dataset.manifest_file is None
            continue
        spec = load_manifest(dataset.name)
        assert spec["base_url"].startswith(("https://", "http://")) and spec["files"], dataset.name
        for entry in spec["files"].values():
            if entry["sha256"] is None:  # never invented: the entry says why it is unknown
                assert dataset.sha256_note.startswith("not known to eatkit"), dataset.name
            else:
                assert re.fullmatch(r"[0-9a-f]{64}", entry["sha256"])
                # a size unknown to eatkit (a pinned sha256 of a file no verified copy was at hand for) is said
                assert entry["size"] > 0 if entry["size"] is not None else "sizes are unknown" in dataset.sha256_note
    assert len(load_manifest("seat")["files"]) == 46


@pytest.fixture
def seat_mirror(shared_data, tmp_path) -> Path:
    """The SEAT test files laid out as github.com/W4ngatang/sent-bias (tests/<file>)."""
    root = tmp_path / "sent-bias"
    shutil.copytree(shared_data / "sent-bias", root / "tests", ignore=shutil.ignore_patterns(".gitignore"))
    return root


@pytest.mark.shared_data
def test_data_get_seat_from_a_file_mirror_verifies_every_file(seat_mirror, tmp_path, capsys):
    from eatkit.cli import main

    dest = tmp_path / "seat"
    assert main(["data", "get", "seat", "--base-url", seat_mirror.as_uri(), "--dest", str(dest)]) == 0
    assert capsys.readouterr().out == f"seat: 46 of 46 files verified in {dest}\n"
    assert _tree(dest) == _tree(seat_mirror / "tests")


@pytest.mark.shared_data
def test_data_get_refuses_a_corrupted_file_in_one_line_and_leaves_nothing_behind(seat_mirror, tmp_path, capsys):
    from eatkit.cli import main

    first = seat_mirror / "tests" / "angry_black_woman_stereotype.jsonl"  # the first file fetched
    first.write_bytes(first.read_bytes().replace(b"angry", b"happy"))
    dest = tmp_path / "new" / "seat"
    assert main(["data", "get", "seat", "--base-url", seat_mirror.as_uri(), "--dest", str(dest)]) == 2
    err = capsys.readouterr().err
    expected = load_manifest("seat")["files"][first.name]["sha256"]
    assert err.startswith(f"eatkit: error: checksum mismatch for '{first.name}' from {first.as_uri()}: expected "
                          f"sha256 {expected}, got ") and err.endswith("; the file was not kept\n")
    assert err.count("\n") == 1
    assert not dest.exists() and list((tmp_path / "new").iterdir()) == []  # no file, no temporary, no folder


@pytest.fixture
def glove_mirror(tmp_path) -> Path:
    """A stand-in for nlp.stanford.edu/data: a glove.6B.zip holding a two-word vectors file."""
    import zipfile

    root = tmp_path / "stanford"
    root.mkdir()
    with zipfile.ZipFile(root / "glove.6B.zip", "w") as archive:
        archive.writestr("glove.6B.50d.txt", "rose 0.1 0.2\nant -0.1 0.3\n")
    return root


def test_a_file_without_a_known_sha256_needs_allow_unverified_and_its_sha256_is_printed(glove_mirror, tmp_path,
                                                                                      capsys):
    from eatkit.cli import main
    from eatkit.io import file_sha256

    dest = tmp_path / "glove"
    argv = ["data", "get", "glove-6b", "--base-url", glove_mirror.as_uri(), "--dest", str(dest)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == ("eatkit: error: dataset 'glove-6b': eatkit knows no sha256 of glove.6B.zip (not known to eatkit: "
                   "the publisher gives no checksum and no verified copy was available offline when this registry "
                   "was written); download it anyway with --allow-unverified (allow_unverified=True)\n")
    assert not dest.exists()
    assert main([*argv, "--allow-unverified"]) == 0
    digest = file_sha256(glove_mirror / "glove.6B.zip")
    assert capsys.readouterr().out.splitlines() == [
        f"glove.6B.zip: sha256 {digest} (not verified: eatkit knows no checksum of this file)",
        f"glove-6b: 0 of 1 files verified in {dest}"]
    assert (dest / "glove.6B.50d.txt").read_text() == "rose 0.1 0.2\nant -0.1 0.3\n"  # unpacked


def test_a_licensed_dataset_says_how_to_obtain_it_and_where_to_put_it(tmp_path, capsys):
    from eatkit.cli import main

    assert main(["data", "get", "cfd", "--dest", str(tmp_path / "cfd")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("eatkit: error: dataset 'cfd' is licensed (licensed: free for non-commercial research")
    assert "https://www.chicagofaces.org/" in err and f"put the folder at {tmp_path / 'cfd'}" in err
    assert err.count("\n") == 1 and not (tmp_path / "cfd").exists()


def test_data_list_names_every_dataset_with_its_checksum_state(capsys):
    from eatkit.cli import main

    assert main(["data", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [d.name for d in list_datasets()]
    assert "[verified; licence: CC BY-NC 4.0" in lines[1] and "[sha256 unknown; licence: Public Domain" in lines[2]
    assert "[licensed: obtain it yourself" in next(line for line in lines if line.startswith("cfd "))


@pytest.mark.shared_data
def test_a_users_file_at_a_dataset_path_is_kept_and_downloads_are_0644(mirror, manifest, tmp_path):
    """issue 36: `data get --dest` over a user's file refuses (the file is kept); downloaded files are 0644."""
    dest = tmp_path / "ieat"
    mine = dest / "age/young/yf1.jpg"
    mine.parent.mkdir(parents=True)
    mine.write_bytes(b"my own picture")
    with pytest.raises(EatkitError, match="eatkit did not download it: eatkit does not write over it"):
        download_dataset("ieat", dest, base_url=mirror.as_uri(), manifest=manifest, progress=False)
    assert mine.read_bytes() == b"my own picture"
    mine.unlink()
    download_dataset("ieat", dest, base_url=mirror.as_uri(), manifest=manifest, progress=False)
    modes = {oct(p.stat().st_mode & 0o777) for p in dest.rglob("*.jpg")}
    assert modes == {"0o644"}
