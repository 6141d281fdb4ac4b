"""Sentence contexts of stimulus words (CEAT, Guo & Caliskan 2021): the sentences of a corpus file that
contain a word, N distinct ones sampled per word (without replacement), each marked where the word is so that a contextual encoder
embeds the word in that sentence.

A marked sentence holds the word between ``⟦`` and ``⟧`` (U+27E6, U+27E7), e.g. ``"the ⟦nurse⟧ smiled"``;
:func:`marked_span` gives back the plain sentence and the word's character span.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from eatkit.errors import EatkitError

OPEN, CLOSE = "\u27e6", "\u27e7"


def mark(sentence: str, span: tuple[int, int]) -> str:
    """``sentence`` with the characters of ``span`` marked as the stimulus word.

    >>> mark("the nurse smiled", (4, 9))
    'the ⟦nurse⟧ smiled'
    """
    start, end = span
    return f"{sentence[:start]}{OPEN}{sentence[start:end]}{CLOSE}{sentence[end:]}"


def marked_span(text: str) -> tuple[str, tuple[int, int]] | None:
    """The plain sentence and the marked word's span, or None when ``text`` marks no word.

    >>> marked_span("the ⟦nurse⟧ smiled")
    ('the nurse smiled', (4, 9))
    """
    start = text.find(OPEN)
    end = text.find(CLOSE, start + 1)
    if start < 0 or end < 0:
        return None
    return text[:start] + text[start + 1:end] + text[end + 1:], (start, end - 1)


def read_corpus(text: str, where: str) -> list[str]:
    """The sentences of a corpus file: one per line, blank lines skipped; marker characters refused."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise EatkitError(f"corpus {where} has no sentences (one sentence per line)")
    if any(OPEN in line or CLOSE in line for line in lines):
        raise EatkitError(f"corpus {where} contains the marker characters {OPEN} or {CLOSE}")
    return lines


def contexts_of(sentences: Sequence[str], word: str) -> list[str]:
    """The distinct corpus sentences that contain ``word`` (a whole-word, case-insensitive match), marked at
    the word's first occurrence, in corpus order; an error when there is none.

    >>> contexts_of(["A rose.", "No.", "The rose is red.", "A rose."], "rose")
    ['A ⟦rose⟧.', 'The ⟦rose⟧ is red.']
    """
    pattern = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)", re.IGNORECASE)
    found = list(dict.fromkeys(mark(s, m.span()) for s in sentences if (m := pattern.search(s))))
    if not found:
        raise EatkitError(f"no sentence of the corpus contains the word {word!r}")
    return found


def sample_contexts(sentences: Sequence[str], word: str, n: int, rng: np.random.Generator) -> list[str]:
    """``n`` distinct marked sentences containing ``word`` (:func:`contexts_of`), drawn without replacement:
    the first ``n`` of a random order of them, so that a larger ``n`` extends a smaller one's draws; an error
    when fewer than ``n`` exist (CEAT's samples must be independent: a context drawn twice is one
    observation counted twice).

    >>> sample_contexts(["A rose.", "No.", "The rose is red."], "rose", 2, np.random.default_rng(0))
    ['A ⟦rose⟧.', 'The ⟦rose⟧ is red.']
    """
    return draw(contexts_of(sentences, word), word, n, rng)


def draw(found: Sequence[str], word: str, n: int, rng: np.random.Generator) -> list[str]:
    """The first ``n`` of a random order of ``word``'s distinct contexts ``found`` (:func:`sample_contexts`)."""
    if n > len(found):
        raise EatkitError(f"the word {word!r} has {len(found)} distinct context(s), fewer than the {n} asked for")
    return [found[int(i)] for i in rng.permutation(len(found))[:n]]
