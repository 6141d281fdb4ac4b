"""``eatkit debias``: debias static word vectors, write them with a manifest, and compare tests before/after.

The math is :mod:`eatkit.stats.debias` (Hard Debias, Double-Hard Debias, Half-Sibling Regression,
Repulsion-Attraction-Neutralisation with WEFE's defaults, its neighbours capped at the vocabulary). Here:
the word lists (a JSON file in the ``eatkit.debias-words/1`` format; bundled: ``gender``, Bolukbasi et al.
2016), the words they name looked up in the vectors (a pair or word the vectors lack is dropped and
*recorded* in the manifest and the result, never silently), the debiased table written as word2vec text
(17 significant digits: read back bit for bit), a manifest (inputs' SHA-256, method, options, the word
lists used and dropped), and a before/after table: every selected test of a suite run on both tables
(EAT d and, with ``metrics``, the metric kinds of :mod:`eatkit.analyses.metrics`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from eatkit._version import __version__
from eatkit.errors import EatkitError
from eatkit.io import atomic_write, file_sha256, read_json
from eatkit.kinds import get_kind
from eatkit.records import plain_json
from eatkit.sources.vectors import WordVectors
from eatkit.stats import debias as sd

BUNDLED = Path(__file__).resolve().parents[1] / "stimuli" / "debias"
SCHEMA = "eatkit.debias-words/1"


@dataclass(frozen=True)
class WordLists:
    """The word lists of a debiasing: definitional pairs (the bias direction), equality pairs, further
    gender-specific words (kept as they are, like the pairs' words), and the two bias words (Double-Hard)."""

    definitional: tuple[tuple[str, str], ...]
    equalize: tuple[tuple[str, str], ...] = ()
    specific: tuple[str, ...] = ()
    bias_words: tuple[str, str] | None = None
    file: str = ""
    sha256: str = ""

    def gender_words(self) -> set[str]:
        """Every word of the lists (none of them is neutralised)."""
        return {w for pairs in (self.definitional, self.equalize) for p in pairs for w in p} | set(self.specific)


def load_word_lists(name_or_path: str | Path = "gender") -> WordLists:
    """A bundled word-list file by name or a JSON file (``definitional`` pairs required)."""
    path = BUNDLED / f"{name_or_path}.json" if (BUNDLED / f"{name_or_path}.json").is_file() else Path(name_or_path)
    if not path.exists():  # (a folder, FIFO or device is refused by name by the one reader)
        raise EatkitError(f"word lists {name_or_path}: no such bundled list ({', '.join(p.stem for p in BUNDLED.glob('*.json'))}) or file")
    data = read_json(path, "word lists")  # the one reader: regular files only, bounded
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise EatkitError(f"word lists {path}: expected a JSON object with \"schema\": \"{SCHEMA}\"")
    specific, bias = _words(data, path)
    return WordLists(_word_pairs(data, "definitional", True, path), _word_pairs(data, "equalize", False, path),
                     specific, bias, str(path), file_sha256(path))


def _words(data: dict[str, Any], path: Path) -> tuple[tuple[str, ...], tuple[str, str] | None]:
    """The gender-specific words and the two bias words (or None) of a word-list file."""
    specific = data.get("specific", [])
    bias = data.get("bias_words")
    if not isinstance(specific, list) or not all(isinstance(w, str) and w for w in specific):
        raise EatkitError(f"word lists {path}: 'specific' must be a list of words")
    if bias is not None and not _two_words(bias):
        raise EatkitError(f"word lists {path}: 'bias_words' must be two words")
    return tuple(specific), tuple(bias) if bias else None


def _word_pair(value: Any) -> bool:
    """Whether ``value`` is a list of two words (non-empty strings)."""
    return isinstance(value, list) and len(value) == 2 and all(isinstance(w, str) and w for w in value)


def _two_words(value: Any) -> bool:
    """Whether ``value`` is a list of two strings."""
    return isinstance(value, list) and len(value) == 2 and all(isinstance(w, str) for w in value)


def _word_pairs(data: dict[str, Any], key: str, required: bool, path: Path) -> tuple[tuple[str, str], ...]:
    """The word pairs of a list (``required``: present and not empty)."""
    value = data.get(key, [] if not required else None)
    if not isinstance(value, list) or (required and not value) or not all(map(_word_pair, value)):
        raise EatkitError(f"word lists {path}: '{key}' must be a {'non-empty ' if required else ''}list of word pairs")
    return tuple((a, b) for a, b in value)


@dataclass(frozen=True)
class DebiasResult:
    """Debiased vectors, what was done (:class:`eatkit.stats.debias.DebiasInfo`), the words of the lists
    the vectors lack (by list), and the number of neutral words."""

    vectors: WordVectors
    info: sd.DebiasInfo
    dropped: dict[str, list[str]] = field(default_factory=dict)
    neutral: int = 0


def debias(source: WordVectors, method: str, lists: WordLists, *, n_words: int = 1000, n_components: int = 4,
           alpha: float = 60.0, seed: int | None = None, checked: Callable[[], None] | None = None) -> DebiasResult:
    """Debias every word of ``source`` with ``method`` (one of :data:`eatkit.stats.debias.METHODS`): the
    words of ``lists`` are gender-specific, every other word is neutral. ``checked`` is called once the word
    lists are checked against the vectors, before the (long) debiasing: ``eatkit debias`` measures its suite
    there, so that any of these errors comes at once."""
    if method not in sd.METHODS:
        raise EatkitError(f"unknown debiasing method {method!r} (known: {', '.join(sd.METHODS)})")
    index = {w: i for i, w in reversed(list(enumerate(source.words)))}
    dropped: dict[str, list[str]] = {}
    definitional = _pair_rows(index, "definitional", lists.definitional, dropped)
    equalize = _pair_rows(index, "equalize", lists.equalize, dropped)
    if len(definitional) == 0:
        raise EatkitError("the vectors have no definitional pair of the word lists (both words of at least one needed)")
    neutral = _neutral_rows(source.words, index, lists, dropped)
    if method == "double-hard" and (lists.bias_words is None or any(w not in index for w in lists.bias_words)):
        raise EatkitError(f"double-hard debias needs the two bias words of the word lists in the vectors "
                          f"(got {lists.bias_words})")
    if checked is not None:
        checked()
    rows = {"definitional": definitional, "equalize": equalize, "neutral": neutral}
    out, info = _debiased(np.asarray(source.vectors, dtype=np.float64), method, rows, index, lists,
                          n_words=n_words, n_components=n_components, alpha=alpha, seed=seed)
    debiased = WordVectors(list(source.words), out, cased=source.cased, oov=source.oov, id=f"{source.id}+{method}",
                           origin={"kind": "debiased", "method": method, "from": source.id})
    return DebiasResult(debiased, info, dropped, int(neutral.size))


def _neutral_rows(words: Sequence[str], index: dict[str, int], lists: WordLists,
                  dropped: dict[str, list[str]]) -> np.ndarray:
    """The rows of the neutral words (each word's first row, no word of the lists); the specific words the
    vectors lack recorded in ``dropped``."""
    lost = [w for w in lists.specific if w not in index]
    if lost:
        dropped["specific"] = lost
    specific = lists.gender_words()
    neutral = np.array([i for i, w in enumerate(words) if w not in specific and index[w] == i], dtype=np.int64)
    if neutral.size == 0:
        raise EatkitError("every word of the vectors is in the word lists: no neutral word is left to debias")
    return neutral


def _pair_rows(index: dict[str, int], name: str, pairs: tuple[tuple[str, str], ...],
               dropped: dict[str, list[str]]) -> np.ndarray:
    """The rows of the pairs both of whose words the vectors have; the others recorded in ``dropped``."""
    kept = [(index[a], index[b]) for a, b in pairs if a in index and b in index]
    lost = [f"{a}/{b}" for a, b in pairs if a not in index or b not in index]
    if lost:
        dropped[name] = lost
    return np.array(kept, dtype=np.int64).reshape(-1, 2)


def _debiased(table: np.ndarray, method: str, rows: dict[str, np.ndarray], index: dict[str, int], lists: WordLists,
              *, n_words: int, n_components: int, alpha: float, seed: int | None) -> tuple[np.ndarray, Any]:
    """The vectors debiased by ``method`` (:mod:`eatkit.stats.debias`) and what was done."""
    definitional, equalize, neutral = rows["definitional"], rows["equalize"], rows["neutral"]
    if method == "hard":
        return sd.hard_debias(table, definitional, neutral, equalize)
    if method == "double-hard":
        return sd.double_hard_debias(table, definitional, neutral, equalize,
                                     bias_words=tuple(index[w] for w in lists.bias_words),
                                     n_words=min(n_words, len(neutral) // 2), n_components=n_components, rng=seed)
    if method == "ran":
        return sd.repulsion_attraction_neutralisation(table, definitional, neutral,
                                                      n_neighbours=min(100, len(table) - 1))
    gender = np.array(sorted(index[w] for w in lists.gender_words() if w in index), dtype=np.int64)
    return sd.half_sibling_regression(table, gender, neutral, alpha=alpha)


def write_vectors(path: Path, vectors: WordVectors) -> str:
    """Write word2vec text (a header line, then a word and its values per line, 17 significant digits) and
    return the file's SHA-256."""
    def write(handle: Any) -> None:
        handle.write(f"{len(vectors.words)} {vectors.dimension}\n".encode("utf-8"))
        for word, row in zip(vectors.words, vectors.vectors):
            handle.write((word + " " + " ".join(f"{v:.17g}" for v in row) + "\n").encode("utf-8"))

    atomic_write(path, write)
    return file_sha256(path)


def measure(suite: Any, tests: list[str] | None, metrics: tuple[str, ...], source: WordVectors,
            seed: int | None) -> Any:
    """The selected tests of ``suite`` and each metric, run on ``source`` (no bootstrap): one side of
    :func:`before_after`. ``eatkit debias`` measures the vectors before debiasing them, so that a suite the
    vectors cannot embed (a word out of vocabulary) is an error before minutes of debiasing (:func:`debias`'s
    ``checked``)."""
    from eatkit.run.request import expand_metrics
    from eatkit.run.runner import run_suite

    suite, tests = expand_metrics(suite, metrics, tests)
    return run_suite(suite, source, tests=tests, seed=seed, n_bootstrap=0)


def before_after(before: Any, after: Any) -> list[dict[str, Any]]:
    """One row per selected test and measure of two runs of :func:`measure` (the same seed): the EAT's d
    (``"d"``) and each metric's value, before and after."""
    rows = []
    for first, second in zip(before.records, after.records):
        headline = get_kind(first.kind).presentation.headline  # EAT: effect_size; a metric: value
        rows.append({"test": first.test.split(":")[0], "measure": getattr(first, "metric", "d"),
                     "before": getattr(first, headline), "after": getattr(second, headline),
                     "p_before": first.p_value, "p_after": second.p_value})
    return rows


def manifest(*, command: str | None, method: str, options: dict[str, Any], source: WordVectors, lists: WordLists,
             result: DebiasResult, output: dict[str, str], comparison: list[dict[str, Any]],
             warnings: Sequence[str] = ()) -> dict[str, Any]:
    """The debiasing manifest: inputs with checksums, method and options (``warnings``: those outside
    their useful range), word lists used and dropped, outputs with checksums, and the before/after rows."""
    details = {k: v for k, v in result.info.details.items()}
    return plain_json({
        "eatkit_version": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "method": method,
        "options": options,
        "warnings": list(warnings),
        "input": source.manifest(),
        "word_lists": {"file": lists.file, "sha256": lists.sha256, "definitional": [list(p) for p in lists.definitional],
                       "equalize": [list(p) for p in lists.equalize], "specific": list(lists.specific),
                       "bias_words": list(lists.bias_words or []), "dropped": result.dropped},
        "neutral_words": result.neutral,
        "details": details,
        "direction": None if result.info.direction is None else result.info.direction.tolist(),
        "output": output,
        "before_after": comparison,
    })
