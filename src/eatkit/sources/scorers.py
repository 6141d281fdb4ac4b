"""Scorers of open-ended answers: a text answer -> a number, for the ``answers`` kind's ``scorer`` param in its
``module:factory:argument`` form (e.g. ``"scorer": "eatkit.sources.scorers:vader:compound"``); the kind then
gives each group's mean with its interval and each group against the others (:mod:`eatkit.stats.outcomes`).

- :func:`vader`: VADER's sentiment of the answer (Hutto & Gilbert 2014) from the ``vaderSentiment`` package
  (``eatkit[sentiment]``; its lexicon ships in the package): ``compound`` (default, in -1..1), ``pos``,
  ``neg`` or ``neu``; ``label``: ``positive`` (compound >= 0.05), ``negative`` (<= -0.05) or ``neutral``,
  the thresholds its README gives, for a rate per group (``"values": ["negative"]``).
- :func:`polarity`: the balance of two word lists in the answer, (n_first - n_second) / (n_first + n_second)
  (0 when it holds neither), over whole lower-cased words (hyphenated words whole). The word lists are suite
  data, ``eatkit.wordlists/1`` files of named dimensions of two poles each (:data:`BUNDLED`:
  ``gender-polarity`` (male vs female words), ``stereotype-content/warmth`` and
  ``stereotype-content/competence`` (high vs low pole); ``src/eatkit/stimuli/lexicons/``), or a path to such a
  file, with ``/<dimension>`` when it has several. :func:`leaning` names the pole with more words in the
  answer (``male``, ``female``; ``high``, ``low``), or ``neither``: for a rate per group.

>>> from eatkit.sources.answers import Answer
>>> polarity("gender-polarity")(Answer(item="1", text="She said her brother would come."))
-0.3333333333333333
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eatkit.errors import EatkitError
from eatkit.io import parse_json, read_text, shipped_json
from eatkit.sources.answers import Answer

#: the word-list files bundled with eatkit (``src/eatkit/stimuli/lexicons/<name>.json``)
BUNDLED = ("gender-polarity", "stereotype-content")
VADER_FIELDS = ("compound", "pos", "neg", "neu", "label")
#: VADER's README: compound >= 0.05 positive, <= -0.05 negative, else neutral
VADER_THRESHOLD = 0.05
_WORD = re.compile(r"[a-z]+(?:[-'][a-z]+)*")


def vader(argument: str = "") -> Callable[[Answer], float]:
    """The scorer of VADER's ``argument`` (``compound`` by default) of an answer's text.

    >>> round(vader()(Answer(item="1", text="A kind and wonderful nurse.")), 4)  # doctest: +SKIP
    0.7964
    """
    field = argument or "compound"
    if field not in VADER_FIELDS:
        raise EatkitError(f"the vader scorer gives one of {', '.join(VADER_FIELDS)}, not {field!r}")
    from eatkit.io import ensure_installed

    ensure_installed("vaderSentiment", "the vader scorer", "sentiment")
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    analyzer = SentimentIntensityAnalyzer()
    if field != "label":
        return lambda answer: float(analyzer.polarity_scores(answer.text or "")[field])

    def label(answer: Answer) -> str:
        compound = analyzer.polarity_scores(answer.text or "")["compound"]
        return "positive" if compound >= VADER_THRESHOLD else "negative" if compound <= -VADER_THRESHOLD else "neutral"

    return label


def _word_lists(name: str) -> tuple[str, dict[str, Any]]:
    """The file of a bundled word list or a path, read and checked (``eatkit.wordlists/1``)."""
    if name in BUNDLED:
        data = shipped_json("eatkit.stimuli", f"lexicons/{name}.json")
    else:
        data = parse_json(read_text(Path(name).expanduser(), "word-list file"), f"word-list file {name}")
    dimensions = data.get("dimensions") if isinstance(data, dict) else None
    if not (isinstance(data, dict) and data.get("schema") == "eatkit.wordlists/1" and isinstance(dimensions, dict)
            and dimensions):
        raise EatkitError(f"word-list file {name} is not eatkit.wordlists/1 (schema and dimensions needed)")
    return name, dimensions


def _poles(spec: str) -> tuple[tuple[str, frozenset[str]], tuple[str, frozenset[str]]]:
    """The two poles' words of ``<list>[/<dimension>]``; a bad name or file is one line naming it."""
    head, _, tail = spec.rpartition("/")
    name, dimension = (head, tail) if head in BUNDLED or head.endswith(".json") else (spec, "")
    dimensions = _word_lists(name)[1]
    if not dimension and len(dimensions) == 1:
        dimension = next(iter(dimensions))
    poles = dimensions.get(dimension)
    if not isinstance(poles, dict) or len(poles) != 2 or not all(
            isinstance(words, list) and words and all(isinstance(w, str) for w in words) for words in poles.values()):
        raise EatkitError(f"word list {spec!r}: name a dimension of two non-empty word lists "
                          f"(found: {', '.join(sorted(dimensions))})")
    first, second = ((pole, frozenset(w.lower() for w in words)) for pole, words in poles.items())
    return first, second


def _counts(spec: str) -> tuple[tuple[str, str], Callable[[Answer], tuple[int, int]]]:
    """The poles' names and the function counting each pole's words in an answer."""
    if not spec:
        raise EatkitError(f"a word-list scorer needs a word list: <{' | '.join(BUNDLED)} | path>[/dimension]")
    (one, first), (two, second) = _poles(spec)

    def count(answer: Answer) -> tuple[int, int]:
        words = _WORD.findall((answer.text or "").lower())
        return sum(w in first for w in words), sum(w in second for w in words)

    return (one, two), count


def polarity(argument: str) -> Callable[[Answer], float]:
    """The scorer of the balance of a dimension's two word lists in an answer (module docstring)."""
    count = _counts(argument)[1]

    def score(answer: Answer) -> float:
        a, b = count(answer)
        return (a - b) / (a + b) if a + b else 0.0

    return score


def leaning(argument: str) -> Callable[[Answer], str]:
    """The scorer naming the pole with more words in an answer, ``neither`` on a tie (none included).

    >>> from eatkit.sources.answers import Answer
    >>> leaning("gender-polarity")(Answer(item="1", text="She said her brother would come."))
    'female'
    """
    (one, two), count = _counts(argument)

    def pole(answer: Answer) -> str:
        a, b = count(answer)
        return one if a > b else two if b > a else "neither"

    return pole
