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
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_registry_and_shipped_manifest():
    assert [d.name for d in list_datasets()] == ["ieat"]
    assert get_dataset("ieat").licence.startswith("CC BY-NC-SA 4.0")
    with pytest.raises(EatkitError) as err:
        get_dataset("imagenet")
    assert str(err.value) == "unknown dataset 'imagenet' (known datasets: ieat)"
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
    with pytest.raises(EatkitError) as err:
        download_dataset("ieat", tmp_path / "ieat", base_url=http_url, manifest=manifest, progress=False)
    assert str(err.value) == (
        f"checksum mismatch for 'age/young/yf1.jpg' from {http_url}/data/experiments/age/young/yf1.jpg: "
        f"expected sha256 {expected['sha256']} ({expected['size']} bytes), got "
        "3dbb3963d11aa418de8b61f846c3dbd5af43b40d252842adb823f90936fe6920 (9 bytes); the file was not kept"
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
    assert not list((tmp_path / "ieat").rglob("*.part"))


def test_base_url_must_be_a_url(manifest, tmp_path):
    with pytest.raises(EatkitError) as err:
        download_dataset("ieat", tmp_path, base_url="mirror/ieat", manifest=manifest)
    assert str(err.value) == "base URL 'mirror/ieat' of dataset 'ieat' must start with https://, http:// or file://"
