"""Sentence contexts of stimulus words (CEAT, Guo & Caliskan 2021): the sentences of a corpus file that
contain a word, N of them sampled per word, each marked where the word is so that a contextual encoder
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


def sample_contexts(sentences: Sequence[str], word: str, n: int, rng: np.random.Generator) -> list[str]:
    """``n`` marked sentences containing ``word`` (a whole-word, case-insensitive match; the first
    occurrence is marked), drawn with replacement from the corpus sentences that contain it.

    >>> sample_contexts(["A rose.", "No.", "The rose is red."], "rose", 3, np.random.default_rng(0))
    ['The ⟦rose⟧ is red.', 'The ⟦rose⟧ is red.', 'The ⟦rose⟧ is red.']
    """
    pattern = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)", re.IGNORECASE)
    found = [(s, m.span()) for s in sentences if (m := pattern.search(s))]
    if not found:
        raise EatkitError(f"no sentence of the corpus contains the word {word!r}")
    return [mark(*found[int(i)]) for i in rng.integers(0, len(found), n)]
