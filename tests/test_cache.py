"""The on-disk embedding cache and the cache logic of NeuralEncoder (hits, misses, corruption, no-cache)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from eatkit.encoders import base as base_module
from eatkit.encoders import cache as cache_module
from eatkit.encoders.base import NeuralEncoder
from eatkit.encoders.cache import (
    EmbeddingCache,
    cache_dir,
    cache_info,
    clear_cache,
    entry_key,
)
from eatkit.io import file_sha256
from eatkit.errors import EatkitError
from eatkit.stimuli.types import StimulusSet

WORDS = StimulusSet("flowers", "word", ("rose", "tulip", "daisy"))


class Letters(NeuralEncoder):
    """A toy encoder: a word's (length, number of vowels, scale); counts loads and encoded inputs."""

    id = "letters"
    modalities = frozenset({"word"})

    def __init__(self, scale: float = 1.0, **options):
        super().__init__(**options)
        self.scale = scale
        self.loads = 0
        self.encoded: list[str] = []

    def config(self):
        return {"model": "letters", "scale": self.scale}

    def _load(self):
        self.loads += 1

    def _encode(self, modality, inputs):
        self.encoded.extend(inputs)
        return np.array([[len(w), sum(c in "aeiou" for c in w), self.scale] for w in inputs], dtype=np.float32)


def test_entry_key_is_sha256_of_sorted_json():
    payload = '{"config": {"a": 1, "b": 2}, "content": "rose", "modality": "word"}'
    assert entry_key({"b": 2, "a": 1}, "word", "rose") == hashlib.sha256(payload.encode()).hexdigest()
    keys = {entry_key({"a": 1}, "word", "rose"), entry_key({"a": 2}, "word", "rose"),
            entry_key({"a": 1}, "sentence", "rose"), entry_key({"a": 1}, "word", "Rose")}
    assert len(keys) == 4


def test_file_sha256(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc" * 1_000_000)
    assert file_sha256(path) == hashlib.sha256(b"abc" * 1_000_000).hexdigest()


def test_cache_dir_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("EATKIT_CACHE_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("EATKIT_CACHE_DIR")
    assert cache_dir() == tmp_path / "xdg" / "eatkit"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "eatkit"


def test_put_get_round_trip_keeps_bits(tmp_path):
    cache = EmbeddingCache(tmp_path)
    vector = np.array([1 / 3, -0.0, 1e-30, 7.0], dtype=np.float32)
    key = entry_key({"m": 1}, "word", "rose")
    assert cache.get(key) is None
    cache.put(key, vector)
    got = cache.get(key)
    assert got.dtype == np.float32 and got.tobytes() == vector.tobytes()
    path = tmp_path / "embeddings-v1" / key[:2] / f"{key}.npe"
    assert path.is_file() and path.stat().st_size == len(path.read_bytes())
    assert cache.info() == {"path": str(tmp_path), "entries": 1, "bytes": path.stat().st_size}


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "swap"])
def test_corrupt_entry_is_a_miss_and_is_removed(tmp_path, damage):
    cache = EmbeddingCache(tmp_path)
    key, other = entry_key({}, "word", "rose"), entry_key({}, "word", "ant")
    cache.put(key, np.arange(4, dtype=np.float32))
    cache.put(other, np.arange(4, dtype=np.float32) + 1)
    path = cache._path(key)
    data = path.read_bytes()
    if damage == "flip":
        data = data[:100] + bytes([data[100] ^ 1]) + data[101:]
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "empty":
        data = b""
    else:  # another key's (valid) entry under this key's name: the checksum covers the key
        data = cache._path(other).read_bytes()
    path.write_bytes(data)
    assert cache.get(key) is None
    assert not path.exists()
    np.testing.assert_array_equal(cache.get(other), [1, 2, 3, 4])


def test_valid_checksum_over_garbage_is_a_miss(tmp_path):
    cache = EmbeddingCache(tmp_path)
    key = entry_key({}, "word", "rose")
    cache._path(key).parent.mkdir(parents=True)
    payload = b"not an npy file"
    cache._path(key).write_bytes(payload + hashlib.sha256(key.encode() + payload).digest())
    assert cache.get(key) is None


def test_failed_write_leaves_no_entry_and_no_temporary_file(tmp_path, monkeypatch, capsys):
    cache = EmbeddingCache(tmp_path)
    key = entry_key({}, "word", "rose")

    def crash(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_module.os, "replace", crash)
    cache.put(key, np.ones(3, dtype=np.float32))  # a full disk: a warning, and the run goes on uncached
    assert capsys.readouterr().err == (f"eatkit: warning: cannot write the embedding cache at {tmp_path}: "
                                       "No space left on device; running without writing to it\n")
    cache.put(key, np.ones(3, dtype=np.float32))
    assert capsys.readouterr().err == ""  # (once)
    assert cache.get(key) is None
    assert list(cache._path(key).parent.iterdir()) == []


def test_info_and_clear(tmp_path, monkeypatch):
    monkeypatch.setenv("EATKIT_CACHE_DIR", str(tmp_path / "c"))
    assert cache_info() == {"path": str(tmp_path / "c"), "entries": 0, "counts": 0, "bytes": 0}
    encoder = Letters()
    encoder.embed(WORDS)
    info = cache_info()
    assert info["entries"] == 3 and info["bytes"] == 3 * (128 + 12 + 32)  # npy header + 3 float32 + digest
    (tmp_path / "c" / "keep.txt").write_text("not ours")
    assert clear_cache() == {"entries": 3, "counts": 0}
    assert cache_info()["entries"] == 0
    assert (tmp_path / "c" / "keep.txt").read_text() == "not ours"


def test_second_embed_is_served_from_the_cache_without_loading():
    first = Letters()
    a = first.embed(WORDS)
    assert first.loads == 1 and first.encoded == ["rose", "tulip", "daisy"]
    second = Letters()
    b = second.embed(WORDS)
    assert second.loads == 0 and second.encoded == []
    assert b.ids == ("rose", "tulip", "daisy")
    np.testing.assert_array_equal(b.vectors, [[4, 2, 1], [5, 2, 1], [5, 2, 1]])
    assert b.vectors.dtype == np.float64 and a.vectors.tobytes() == b.vectors.tobytes()
    assert second.manifest()["cache"] == {"enabled": True, "path": os.environ["EATKIT_CACHE_DIR"],
                                          "hits": 3, "misses": 0, "batches": 0}


def test_partial_hits_recompute_whole_planned_batches_and_keep_cached_vectors():
    Letters().embed(StimulusSet("some", "word", ("tulip",)))
    encoder = Letters()
    out = encoder.embed(WORDS)
    assert encoder.encoded == ["rose", "tulip", "daisy"]  # the cold run's batch, whole
    assert encoder.stats == {"hits": 1, "misses": 2, "batches": 1}
    assert out.ids == ("rose", "tulip", "daisy")
    np.testing.assert_array_equal(out.vectors[:, 0], [4, 5, 5])
    one_by_one = Letters(batch_size=1)
    one_by_one.embed(StimulusSet("more", "word", ("rose", "tulip", "daisy", "lily")))
    assert one_by_one.encoded == ["lily"]  # batches of one: only the missing stimulus


def test_batches_are_planned_from_the_full_list():
    encoder = Letters(batch_size=2)
    words = StimulusSet("w", "word", tuple("abcde"))
    assert [list(b) for b in encoder.plan(5)] == [[0, 1], [2, 3], [4]]
    encoder.embed(words)
    cache = EmbeddingCache()
    cache._path(entry_key(encoder.cache_config(), "word", "c")).unlink()
    again = Letters(batch_size=2)
    again.embed(words)
    assert again.encoded == ["c", "d"]  # the cold run's second batch, not ["c"] alone
    assert again.manifest()["batch_plan"].startswith("batch_size consecutive stimuli over each set's full list")


class BatchDependent(Letters):
    """A toy whose vectors depend on the batch they were computed in (like float forward passes)."""

    def _encode(self, modality, inputs):
        self.encoded.extend(inputs)
        return np.array([[len(w), len(inputs)] for w in inputs], dtype=np.float32)


def test_cold_warm_and_partly_cached_runs_give_the_same_bits():
    words = StimulusSet("w", "word", ("rose", "tulip", "daisy", "lily", "iris"))
    cold = BatchDependent(batch_size=2).embed(words).vectors
    np.testing.assert_array_equal(cold[:, 1], [2, 2, 2, 2, 1])
    warm = BatchDependent(batch_size=2).embed(words).vectors
    cache = EmbeddingCache()
    for word in ("rose", "iris", "lily"):
        cache._path(entry_key(BatchDependent().cache_config(), "word", word)).unlink()
    partial = BatchDependent(batch_size=2).embed(words).vectors
    assert cold.tobytes() == warm.tobytes() == partial.tobytes()
    uncached = BatchDependent(batch_size=2, cache=False).embed(words).vectors
    assert uncached.tobytes() == cold.tobytes()


def test_a_repeated_content_is_dropped_and_cold_and_warm_runs_agree():
    words = StimulusSet("w", "word", ("rose", "lily", "iris", "rose"))
    cold = BatchDependent(batch_size=3).embed(words)
    warm = BatchDependent(batch_size=3).embed(words)
    assert cold.ids == ("rose", "lily", "iris") and len(cold.dropped) == 1  # docs/duplicates.md
    np.testing.assert_array_equal(cold.vectors[:, 1], [3, 3, 3])
    assert cold.vectors.tobytes() == warm.vectors.tobytes()


def test_corrupt_entry_is_recomputed_by_the_encoder():
    Letters().embed(WORDS)
    cache = EmbeddingCache()
    key = entry_key(Letters().cache_config(), "word", "tulip")
    cache._path(key).write_bytes(b"\x00" * 10)
    encoder = Letters(batch_size=1)
    out = encoder.embed(WORDS)
    assert encoder.encoded == ["tulip"]
    np.testing.assert_array_equal(out.vectors[1], [5, 2, 1])
    assert cache.get(key) is not None


def test_config_change_is_a_miss():
    Letters(scale=1.0).embed(WORDS)
    encoder = Letters(scale=2.0)
    out = encoder.embed(WORDS)
    assert encoder.encoded == ["rose", "tulip", "daisy"]
    np.testing.assert_array_equal(out.vectors[:, 2], [2, 2, 2])


def test_encoder_version_is_part_of_the_key():
    class Letters3(Letters):
        encoder_version = "3"

    assert Letters3().cache_config()["encoder_version"] == "3"
    assert Letters().cache_config() == {"encoder": f"{__name__}.Letters", "encoder_version": "3",
                                        "model": "letters", "scale": 1.0, "device": "cpu", "precision": "fp32",
                                        "libraries": {}}


def test_library_versions_are_part_of_the_key_and_the_manifest(monkeypatch):
    class NumpyLetters(Letters):
        libraries = ("numpy", "no-such-distribution")

    config = NumpyLetters().cache_config()
    assert config["libraries"] == {"numpy": np.__version__, "no-such-distribution": None}
    assert NumpyLetters().manifest()["libraries"] == config["libraries"]
    NumpyLetters().embed(WORDS)
    monkeypatch.setattr(np, "__version__", "0.0.1")  # importlib.metadata does not see this: still a hit
    assert NumpyLetters().cache_config() == config
    real = base_module.installed_version
    monkeypatch.setattr(base_module, "installed_version", lambda name: "0.0.1" if name == "numpy" else real(name))
    upgraded = NumpyLetters()
    upgraded.embed(WORDS)
    assert upgraded.encoded == ["rose", "tulip", "daisy"]  # another numpy: every stimulus is a miss


def test_no_cache_neither_reads_nor_writes(tmp_path):
    Letters().embed(WORDS)
    before = cache_info()
    encoder = Letters(cache=False)
    encoder.embed(WORDS)
    encoder.embed(WORDS)
    assert encoder.encoded == ["rose", "tulip", "daisy"] * 2 and encoder.loads == 1
    assert cache_info() == before
    assert encoder.manifest()["cache"] == {"enabled": False, "path": None, "hits": 0, "misses": 6, "batches": 2}


def test_explicit_cache_dir(tmp_path):
    Letters(cache_dir=tmp_path / "mine").embed(WORDS)
    assert EmbeddingCache(tmp_path / "mine").info()["entries"] == 3
    assert cache_info()["entries"] == 0


def test_batches_follow_batch_size():
    encoder = Letters(batch_size=2, cache=False)
    encoder.embed(StimulusSet("w", "word", tuple("abcde")))
    assert encoder.stats["batches"] == 3


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_bad_batch_size(bad):
    with pytest.raises(EatkitError, match=rf"^batch_size must be a positive integer, got {bad!r}$"):
        Letters(batch_size=bad)


def test_wrong_modality_and_templates_and_empty_sets():
    with pytest.raises(EatkitError, match=r"^model 'letters' cannot embed the image set 'X' \(it embeds: word\)$"):
        Letters().embed(StimulusSet("X", "image", category="t/x"))
    with pytest.raises(EatkitError, match=r"^set 'T' still has templates: expand them into sentences before"):
        Letters().embed(StimulusSet("T", "word", ("rose",), templates=("This is {x}.",)))
    with pytest.raises(EatkitError, match=r"^set 'E' is empty$"):
        Letters().embed(StimulusSet("E", "word", ()))


def test_cache_config_is_json():
    assert json.loads(json.dumps(Letters().cache_config()))["scale"] == 1.0
    assert Path(os.environ["EATKIT_CACHE_DIR"]) == cache_dir()


def test_file_hashes_are_remembered_until_the_file_changes(tmp_path):
    cache = EmbeddingCache(tmp_path / "c")
    image = tmp_path / "a.png"
    image.write_bytes(b"first")
    old = file_sha256(image)
    assert cache.file_hashes([str(image)]) == [old]
    memo = json.loads((tmp_path / "c" / "file-sha256-v1.json").read_text())
    assert memo[str(image)][1] == old
    stat = image.stat()
    image.write_bytes(b"other")  # same size; restore the modification time: the change time still moves
    os.utime(image, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert cache.file_hashes([str(image)]) == [hashlib.sha256(b"other").hexdigest()]
    (tmp_path / "c" / "file-sha256-v1.json").write_text("{not json")
    assert cache.file_hashes([str(image)]) == [hashlib.sha256(b"other").hexdigest()]
    assert cache.clear() == 0 and not (tmp_path / "c" / "file-sha256-v1.json").exists()


def test_remembered_hash_of_a_stale_stamp_is_not_used(tmp_path):
    cache = EmbeddingCache(tmp_path / "c")
    image = tmp_path / "a.png"
    image.write_bytes(b"bytes")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "file-sha256-v1.json").write_text(json.dumps({str(image): ["0:0:0:0", "f" * 64]}))
    assert cache.file_hashes([str(image)]) == [hashlib.sha256(b"bytes").hexdigest()]
    with pytest.raises(FileNotFoundError) as info:
        cache.file_hashes([str(tmp_path / "gone.png")])
    assert info.value.filename == str(tmp_path / "gone.png")


def test_unwritable_cache_is_a_one_line_warning_that_blames_the_cache(tmp_path, monkeypatch, capsys):
    not_a_folder = tmp_path / "cache-file"
    not_a_folder.write_text("a file, not a folder")
    monkeypatch.setenv("EATKIT_CACHE_DIR", str(not_a_folder))
    message = (f"eatkit: warning: cannot write the embedding cache at {not_a_folder}: it is not a folder; "
               "running without writing to it\n")
    uncached = Letters(cache=False).embed(WORDS)
    np.testing.assert_array_equal(Letters().embed(WORDS).vectors, uncached.vectors)  # the same, uncached
    assert capsys.readouterr().err == message

    class Size(NeuralEncoder):  # an image encoder: hashing the image works, remembering its hash cannot
        id, modalities = "size", frozenset({"image"})

        def config(self):
            return {}

        def _encode(self, modality, inputs):
            return np.ones((len(inputs), 1))

    (tmp_path / "t" / "c").mkdir(parents=True)
    image = tmp_path / "t" / "c" / "a.png"
    image.write_bytes(b"pixels")
    assert Size(images=tmp_path).file_hashes([str(image)]) == [hashlib.sha256(b"pixels").hexdigest()]
    assert capsys.readouterr().err == message


def _hammer(root: str, worker: int, rounds: int) -> int:
    """Write and read the same keys as the other processes; return how many reads found a wrong vector."""
    cache = EmbeddingCache(root)
    wrong = 0
    for r in range(rounds):
        key = entry_key({"model": "m"}, "word", f"w{r % 5}")
        cache.put(key, np.full(64, r % 5, dtype=np.float32))
        got = cache.get(entry_key({"model": "m"}, "word", f"w{(r + worker) % 5}"))
        wrong += got is not None and not np.array_equal(got, np.full(64, (r + worker) % 5, dtype=np.float32))
        cache.file_hashes([__file__])
    return wrong


def test_many_processes_read_and_write_the_same_keys(tmp_path):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(4, mp_context=multiprocessing.get_context("fork")) as pool:
        wrong = list(pool.map(_hammer, [str(tmp_path)] * 4, range(4), [150] * 4))
    assert wrong == [0, 0, 0, 0]
    cache = EmbeddingCache(tmp_path)
    assert cache.info()["entries"] == 5 and not list(tmp_path.rglob("*.tmp"))
    for i in range(5):
        np.testing.assert_array_equal(cache.get(entry_key({"model": "m"}, "word", f"w{i}")), np.full(64, i))
    memo = json.loads((tmp_path / "file-sha256-v1.json").read_text())
    assert memo[__file__][1] == file_sha256(__file__)


def test_cache_info_counts_what_clear_removes(tmp_path, monkeypatch, capsys):
    """Issue 46: 'entries: 0' beside 42 count files, which clear then deleted saying 'removed 0'."""
    from eatkit.cli import main

    monkeypatch.setenv("EATKIT_CACHE_DIR", str(tmp_path / "c"))
    Letters().embed(WORDS)
    for i in range(4):  # permutation counts a run kept (count_store's layout: <2 hex>/<sha256>.json)
        (tmp_path / "c" / "counts" / f"{i:02x}").mkdir(parents=True)
        (tmp_path / "c" / "counts" / f"{i:02x}" / f"{i:064x}.json").write_text("[1, 2]")
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "embeddings: 3\npermutation counts: 4\n" in out
    assert cache_info()["bytes"] == 3 * (128 + 12 + 32) + 4 * len("[1, 2]")
    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out == "removed 3 embeddings and 4 permutation counts\n"
    assert cache_info() == {"path": str(tmp_path / "c"), "entries": 0, "counts": 0, "bytes": 0}
