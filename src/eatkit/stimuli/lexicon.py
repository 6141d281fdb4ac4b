"""Caption lexicons (``eatkit.lexicon/1``): which captions mention race or ethnicity.

A lexicon file is JSON with ``descriptors`` (words or phrases, e.g. ``"asian"``, ``"african-american"``)
and ``nouns`` (``"person"``, ``"man"``, ``"woman"``): a caption *mentions* the lexicon when it contains
``<descriptor> <noun>``, case-insensitively, the longest descriptor preferred. ``match`` says how:

- ``"substring"``: the lower-cased caption contains the text ``"<descriptor> <noun>"`` anywhere (the
  authors' code of the "American == White" study: ``f'{desc} man' in caption``, so "black man" also
  counts inside "a black manikin");
- ``"words"`` (default): as whole words, multi-word descriptors across any run of spaces.

The bundled ``race-ethnicity`` lexicon (``eatkit/stimuli/lexicons/race-ethnicity.json``) is the study's
rule: the authors' descriptors exactly (hyphenated forms such as "african-american" included);
``race-ethnicity-extended`` adds "oriental", which the study reports BLIP using and the authors' list
misses; copy and edit one, and pass the copy's path, to change the rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from eatkit.io import parse_json, read_text, shipped_text
from eatkit.errors import EatkitError

BUNDLED = ("race-ethnicity", "race-ethnicity-extended")
MATCHES = ("words", "substring")


@dataclass(frozen=True)
class Lexicon:
    """Descriptors and nouns; :meth:`match` finds ``<descriptor> <noun>`` in a caption."""

    id: str
    descriptors: tuple[str, ...]
    nouns: tuple[str, ...]
    source: str = ""
    match_mode: str = "words"

    @property
    def pattern(self) -> re.Pattern[str]:
        gap = " " if self.match_mode == "substring" else r"\s+"

        def alternatives(words: tuple[str, ...]) -> str:
            ordered = sorted(words, key=len, reverse=True)  # the longest descriptor first
            return "|".join(gap.join(map(re.escape, w.split())) for w in ordered)

        phrase = f"({alternatives(self.descriptors)}){gap}({alternatives(self.nouns)})"
        return re.compile(phrase if self.match_mode == "substring" else rf"\b{phrase}\b", re.IGNORECASE)

    def match(self, caption: str) -> str | None:
        """The first descriptor a caption uses before a noun (lower case, single-spaced), or None.

        >>> lex = load_lexicon("race-ethnicity")
        >>> lex.match("an African-American man in a grey shirt"), lex.match("a man wearing a white shirt")
        ('african-american', None)
        """
        found = self.pattern.search(caption)
        return " ".join(found.group(1).lower().split()) if found else None

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "descriptors": list(self.descriptors), "nouns": list(self.nouns),
                "match": self.match_mode, "source": self.source}


def load_lexicon(name_or_path: str | Path = "race-ethnicity") -> Lexicon:
    """A bundled lexicon by id or a lexicon JSON file; a file that does not parse is a one-line error."""
    name = str(name_or_path)
    if name in BUNDLED:
        text, where = shipped_text("eatkit.stimuli", f"lexicons/{name}.json"), name
    else:
        path = Path(name).expanduser()
        if not path.exists():
            raise EatkitError(f"lexicon '{name}' is neither bundled ({', '.join(BUNDLED)}) nor a file")
        text, where = read_text(path, "lexicon"), str(path)  # the one reader: regular files only, bounded
    doc = parse_json(text, f"lexicon {where}")
    if not isinstance(doc, dict) or doc.get("schema") != "eatkit.lexicon/1":
        raise EatkitError(f"lexicon {where} must be a JSON object with \"schema\": \"eatkit.lexicon/1\"")
    lists = {}
    for key in ("descriptors", "nouns"):
        value = doc.get(key)
        if not isinstance(value, list) or not value or not all(isinstance(w, str) and w.strip() for w in value):
            raise EatkitError(f"lexicon {where}: '{key}' must be a non-empty list of non-empty strings")
        lists[key] = tuple(" ".join(w.lower().split()) for w in value)
    match = doc.get("match", "words")
    if match not in MATCHES:
        raise EatkitError(f"lexicon {where}: 'match' must be one of {', '.join(MATCHES)}, got {match!r}")
    return Lexicon(id=str(doc.get("id", Path(name).stem)), source=where, match_mode=match, **lists)
