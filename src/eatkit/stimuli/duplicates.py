"""The one rule for duplicate stimuli (``docs/duplicates.md``): a stimulus enters a set once.

Every embedding source applies it when it embeds a set: a later copy of a stimulus already in the set is
**dropped, and recorded** in :attr:`eatkit.sources.base.Embedded.dropped` (so in ``results.json``,
the manifest, the report and on the console), with what it duplicates. Copies are:

- a word or sentence listed twice in a set, or two items a source looks up as the same entry
  (``"Rose"`` and ``"rose"`` in a lower-cased vocabulary such as GloVe 6B's);
- two byte-identical image files in one set (same SHA-256), whatever their names (the later name goes);
- a word (or id) that a vectors or embeddings file lists more than once: its first vector is used, and a
  set that uses the word records that the file's later copies were left out.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence


def drop_duplicates(ids: Sequence[str], keys: Sequence[Hashable] | None = None,
                    same: str = "the same as") -> tuple[list[int], tuple[str, ...]]:
    """The positions of the first stimulus of each key (the ids themselves by default), and a record of
    every later copy: ``"<id> (repeated)"`` or ``"<id> (<same> <first id>)"``.

    >>> drop_duplicates(["rose", "tulip", "rose"])
    ([0, 1], ('rose (repeated)',))
    >>> drop_duplicates(["Rose", "rose"], ["rose", "rose"], "the same word for glove as")
    ([0], ('rose (the same word for glove as Rose)',))
    """
    keys = ids if keys is None else keys
    first: dict[Hashable, int] = {}
    kept: list[int] = []
    dropped: list[str] = []
    for index, key in enumerate(keys):
        if key not in first:
            first[key] = index
            kept.append(index)
            continue
        original, copy = ids[first[key]], ids[index]
        dropped.append(f"{copy} (repeated)" if copy == original else f"{copy} ({same} {original})")
    return kept, tuple(dropped)


def file_duplicates(words: Sequence[str], where: str) -> dict[str, str]:
    """``{word: record}`` for each entry a file lists more than once (its first occurrence is used).

    >>> file_duplicates(["rose", "ant", "rose"], "v.txt")
    {'rose': 'rose (listed 2 times in v.txt; the first used)'}
    """
    counts: dict[str, int] = {}
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    return {w: f"{w} (listed {n} times in {where}; the first used)" for w, n in counts.items() if n > 1}
