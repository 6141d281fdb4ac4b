"""The items of an answer benchmark (docs/answers.md): the questions a local model answers for a test of the
``answers`` kind, and what each item varies, from the JSON Lines file its ``items`` param names (plain or
gzipped; a path relative to the suite file's folder, inside it).

One JSON object per line:

- ``id`` (required, unique): the item's id, which its answers carry (``Answer.item``);
- ``question`` (required): the question or instruction; ``context`` (optional) is shown before it;
- ``options`` (optional): a multiple-choice item's options (a list of at most 26 strings); without options an
  item is open-ended: the model writes an answer, which the test's declared ``scorer`` reads;
- ``image`` (optional): an image file shown with the question (relative to the items file's folder, inside
  it), for an image-text-to-text model;
- ``group``, ``attribute``, ``pair``, ``template``, ``condition``, ``target`` (optional): the answer record's
  fields of the same names (:class:`eatkit.sources.answers.Answer`); any other key goes to its ``fields``.

>>> import pathlib, tempfile
>>> p = pathlib.Path(tempfile.mkdtemp()) / "items.jsonl"
>>> _ = p.write_text('{"id": "1", "question": "Who is late?", "options": ["Ann", "Bob"], "group": "f", "n": 2}\\n')
>>> (item,) = read_answer_items(p)
>>> item.id, item.options, item.facts
('1', ('Ann', 'Bob'), {'group': 'f', 'n': 2})
>>> item.request()
'{"id": "1", "context": "", "question": "Who is late?", "options": ["Ann", "Bob"], "image": null}'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from eatkit.errors import EatkitError
from eatkit.io import file_sha256, inside
from eatkit.stimuli.bbq import read_jsonl
from eatkit.stimuli.types import AssociationTest

#: the keys of an item that say how it is asked (the rest are facts of the item)
QUESTION_KEYS = ("id", "question", "options", "context", "image")
#: the answer record's fields an item may set (:class:`eatkit.sources.answers.Answer`)
RECORD_FIELDS = ("group", "attribute", "pair", "template", "condition", "target")


@dataclass(frozen=True)
class AnswerItem:
    """One item of an answer benchmark: how it is asked (id, question, options, context, image) and its
    facts (the record fields of :data:`RECORD_FIELDS` and any other key of its line)."""

    id: str
    question: str
    options: tuple[str, ...] = ()
    context: str = ""
    image: str | None = None
    facts: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def request(self) -> str:
        """The item as a model is asked it (JSON: id, context, question, options, image), the items of a
        request for answers (:mod:`eatkit.encoders.answerers`)."""
        return json.dumps({"id": self.id, "context": self.context, "question": self.question,
                           "options": list(self.options), "image": self.image}, ensure_ascii=False)


def _text(obj: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str:
    value = obj.get(key)
    if value is None and not required:
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or (required and str(value) == ""):
        raise EatkitError(f"{where}: field {key} {'missing or ' if required else ''}not a string")
    return str(value)


def _options(obj: Mapping[str, Any], where: str) -> tuple[str, ...]:
    options = obj.get("options") or []
    if not isinstance(options, list) or not all(isinstance(o, str) and o for o in options) or len(options) > 26:
        raise EatkitError(f"{where}: field options is not a list of at most 26 non-empty strings")
    return tuple(options)


def _image(obj: Mapping[str, Any], folder: Path, where: str) -> str | None:
    name = obj.get("image")
    if name is None:
        return None
    if not isinstance(name, str) or not name:
        raise EatkitError(f"{where}: field image is not a file name")
    path = inside(folder, name, f"image of {where}")
    if not path.is_file():
        raise EatkitError(f"{where}: image {name} does not exist in {folder}")
    return str(path)


def parse_item(obj: Any, folder: Path, where: str) -> AnswerItem:
    """One line of an items file as an :class:`AnswerItem`; a malformed one is a one-line error naming the file,
    line and field."""
    if not isinstance(obj, dict):
        raise EatkitError(f"{where}: not a JSON object")
    for key in RECORD_FIELDS:
        if obj.get(key) is not None and (isinstance(obj[key], (dict, list, bool))):
            raise EatkitError(f"{where}: field {key} is not a string or number")
    facts = {k: v for k, v in obj.items() if k not in QUESTION_KEYS}
    return AnswerItem(id=_text(obj, "id", where, required=True), question=_text(obj, "question", where, required=True),
                      options=_options(obj, where), context=_text(obj, "context", where),
                      image=_image(obj, folder, where), facts=facts)


def read_answer_items(path: str | Path) -> list[AnswerItem]:
    """The items of the JSON Lines file ``path`` (docs/answers.md; the module docstring), checked: an unreadable
    file, a malformed line, a missing field or an id given twice is a one-line error naming file and line."""
    path = Path(path).expanduser()
    items, seen = [], set()
    for where, obj in read_jsonl(path, "items file"):
        item = parse_item(obj, path.parent, f"items file {where}")
        if item.id in seen:
            raise EatkitError(f"items file {where}: item id {item.id!r} given twice")
        seen.add(item.id)
        items.append(item)
    return items


def with_items(test: AssociationTest, base: Path | None) -> AssociationTest:
    """An ``answers`` test whose ``items`` names a file: the path found from the suite file's folder ``base``
    (inside it; a bundled suite's, ``base`` ``None``, as it is) and ``items_sha256`` set to the file's SHA-256
    (a suite that gives ``items_sha256`` is refused when the file differs); any other test as it is."""
    params = dict(test.params)
    if test.kind != "answers" or not params.get("items"):
        return test
    path = inside(base, params["items"], "items file") if base is not None else Path(params["items"])
    params["items"] = str(path)
    if path.is_file():
        expected, actual = params.get("items_sha256"), file_sha256(path)
        if expected and expected.lower() != actual:
            raise EatkitError(f"test '{test.id}': items file {path} has SHA-256 {actual}, not the expected {expected}")
        params["items_sha256"] = actual
    return replace(test, params=tuple(sorted(params.items())))
