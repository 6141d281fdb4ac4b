"""HistWords layout: the loader, the restricted unpickler, zero-norm words and a synthetic five-decade series."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import eatkit
from eatkit.errors import EatkitError
from eatkit.sources.histwords import histwords_series, load_histwords_decade, read_vocabulary
from eatkit.stimuli.loader import load_suite

YEARS = (1810, 1820, 1830, 1840, 1850)
STRENGTH = (0.1, 0.5, 0.9, 0.5, 0.1)  # planted bias: rises, then falls
FILLER = [f"filler{i}" for i in range(20)]


def _roles():
    test = load_suite("mleat-histwords").test("math-arts")
    return {r: list(test.sets()[r].items) for r in "XYAB"}


def write_series(folder, *, d: int = 30, seed: int = 0):
    """Five decades in the HistWords layout: X and A share direction e1, Y and B direction e2, with a
    per-decade strength; words shuffled per decade. Returns year -> (words, matrix)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    roles = _roles()
    base = [w for r in "XYAB" for w in roles[r]] + ["symphony", "math", "calculus"] + FILLER
    e1, e2 = np.eye(d)[0], np.eye(d)[1]
    direction = {**{w: e1 for w in roles["X"] + roles["A"]}, **{w: e2 for w in roles["Y"] + roles["B"]}}
    decades = {}
    for year, strength in zip(YEARS, STRENGTH):
        words = [str(w) for w in rng.permutation(base)]
        matrix = rng.normal(size=(len(words), d))
        for i, w in enumerate(words):
            matrix[i] += 3 * strength * direction.get(w, 0)
            if w in ("symphony", "math", "calculus"):
                matrix[i] = 0.0  # HistWords' zero rows: too few co-occurrences
        np.save(folder / f"{year}-w.npy", matrix.astype(np.float32))
        (folder / f"{year}-vocab.pkl").write_bytes(pickle.dumps(words, protocol=2))
        decades[year] = (words, matrix.astype(np.float32))
    return decades


def test_series_recovers_a_bias_that_rises_then_falls(tmp_path):
    decades = write_series(tmp_path)
    series = histwords_series(tmp_path)
    assert [y for y, _, _ in series] == list(YEARS)
    test = load_suite("mleat-histwords").test("math-arts")
    roles = _roles()
    effects = []
    for year, matrix, vocab in series:
        source = load_histwords_decade(matrix, vocab, year=year)
        loaded = eatkit.eat(*(source.embed(test.sets()[r]).vectors for r in "XYAB"), permutations=1, rng=0)
        words, m = decades[year]
        direct = eatkit.eat(*(m[[words.index(w) for w in roles[r]]] for r in "XYAB"), permutations=1, rng=0)
        assert loaded.effect_size == pytest.approx(direct.effect_size, abs=0.01)
        effects.append(direct.effect_size)
        manifest = source.manifest()
        assert manifest["id"] == f"histwords-{year}" and len(manifest["vocabulary_sha256"]) == 64
    peak = int(np.argmax(effects))
    assert peak == 2 and effects[0] < effects[1] < effects[2] > effects[3] > effects[4]
    assert effects[2] > 1.5 and effects[0] < 1.0


def test_zero_norm_words_are_an_error_or_an_explicit_drop(tmp_path):
    write_series(tmp_path)
    arts = load_suite("weat").test("weat7").sets()["Y"]  # contains symphony (a zero row here)
    decade = load_histwords_decade(tmp_path / "1810-w.npy", tmp_path / "1810-vocab.pkl", year=1810)
    with pytest.raises(EatkitError, match=r"zero-norm vectors in set 'Arts' \(histwords-1810\): symphony .*"
                                          "mleat-histwords"):
        decade.embed(arts)
    dropped = load_histwords_decade(tmp_path / "1810-w.npy", tmp_path / "1810-vocab.pkl", oov="drop").embed(arts)
    assert dropped.dropped == ("symphony",) and len(dropped.ids) == 7
    assert np.linalg.norm(dropped.vectors, axis=1).min() > 0


def test_a_malicious_vocabulary_pickle_is_refused_without_running_code(tmp_path):
    marker = tmp_path / "pwned"

    class Exploit:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    (tmp_path / "1810-vocab.pkl").write_bytes(pickle.dumps(["the", Exploit()], protocol=2))
    with pytest.raises(EatkitError, match=r"not a plain pickled word list: it references io.open"):
        read_vocabulary(tmp_path / "1810-vocab.pkl")
    assert not marker.exists()


def test_python2_byte_strings_and_sets_are_read(tmp_path):
    path = tmp_path / "v.pkl"
    # protocol-2 pickle of a Python 2 list of byte strings: ['caf\xc3\xa9', 'art']
    path.write_bytes(b"\x80\x02]q\x00(U\x05caf\xc3\xa9q\x01U\x03artq\x02e.")
    assert read_vocabulary(path) == ["café", "art"]
    path.write_bytes(pickle.dumps({"not": "a list"}))
    with pytest.raises(EatkitError, match="holds a dict, expected a list of words"):
        read_vocabulary(path)
    path.write_bytes(pickle.dumps(["a", 3]))
    with pytest.raises(EatkitError, match="entry 1 is a int, not a word"):
        read_vocabulary(path)


def test_bad_series_folders_are_one_line_errors(tmp_path):
    write_series(tmp_path)
    (tmp_path / "1830-vocab.pkl").unlink()
    with pytest.raises(EatkitError, match="decade 1830 has 1830-w.npy but no vocabulary file 1830-vocab.pkl"):
        histwords_series(tmp_path)
    other = tmp_path / "dims"
    other.mkdir()
    for year, d in ((1900, 4), (1910, 5)):
        np.save(other / f"{year}-w.npy", np.ones((2, d)))
        (other / f"{year}-vocab.pkl").write_bytes(pickle.dumps(["a", "b"]))
    with pytest.raises(EatkitError, match=r"decades have different dimensions \(1900: 4, 1910: 5\)"):
        histwords_series(other)
    (tmp_path / "empty").mkdir()
    with pytest.raises(EatkitError, match="has no HistWords decades"):
        histwords_series(tmp_path / "empty")
    with pytest.raises(EatkitError, match="has 2 rows but 1900-vocab.pkl lists 3 words"):
        (other / "1900-vocab.pkl").write_bytes(pickle.dumps(["a", "b", "c"]))
        load_histwords_decade(other / "1900-w.npy", other / "1900-vocab.pkl")
