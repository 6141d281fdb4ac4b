"""Recorded answers to benchmark items as a source (``eatkit run bbq --answers FILE --answer-field FIELD``):
a JSON Lines file (plain or gzipped) with one answered item per line, e.g. the BBQ authors' UnifiedQA
predictions (``results/UnifiedQA/preds_<Category>.jsonl``: each item's fields plus one prediction per input
format). An item is identified by its ``id`` field, else by ``<category>/<example_id>`` (BBQ's join key);
``FIELD`` holds the answer (a text, or an option index 0-2).

An answer request (:func:`answer_request`) lists items as JSON (:meth:`eatkit.stimuli.bbq.BBQItem.request`);
the source returns each requested item's answer (``None``: not answered in the file). The manifest records the
file's SHA-256, the field and the number of answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.io import file_sha256
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stimuli.types import StimulusSet

ANSWER = "answer:items"


def answer_request(settings: dict[str, Any]) -> str:
    """The ``category`` of an answer request with its settings (they change a local model's answers).

    >>> answer_request({"mode": "loglik"})
    'answer:items {"mode": "loglik"}'
    """
    return f"{ANSWER} {json.dumps(settings, sort_keys=True)}"


def request_of(stimuli: StimulusSet) -> dict[str, Any] | None:
    """The settings of an answer request (:func:`answer_request`), ``None`` for another set."""
    category = stimuli.category or ""
    return json.loads(category[len(ANSWER) + 1:]) if category.startswith(ANSWER + " ") else None


def _item_id(row: dict[str, Any], where: str) -> str:
    if isinstance(row.get("id"), str):
        return row["id"]
    if isinstance(row.get("category"), str) and isinstance(row.get("example_id"), int):
        return f"{row['category']}/{row['example_id']}"
    raise EatkitError(f"{where}: no item id (an 'id' field, or 'category' and 'example_id')")


class RecordedAnswers(EmbeddingSource):
    """The answers in field ``field`` of the JSON Lines file ``path``.

    >>> RecordedAnswers("/nonexistent.jsonl", "pred")
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: the answers file /nonexistent.jsonl does not exist
    """

    modalities = frozenset({"sentence"})

    def __init__(self, path: str | Path, field: str | None) -> None:
        from eatkit.stimuli.bbq import read_jsonl

        self.path = Path(path).expanduser()
        if not self.path.exists():
            raise EatkitError(f"the answers file {path} does not exist")
        if not field:
            raise EatkitError("--answers needs --answer-field (the field that holds each item's answer)")
        self.field = field
        self.id = f"answers:{self.path.name}#{field}"
        self.answers: dict[str, Any] = {}
        for where, row in read_jsonl(self.path, "answers file"):
            if not isinstance(row, dict) or field not in row:
                raise EatkitError(f"answers file {where}: no field '{field}'")
            if not isinstance(row[field], (str, int)) or isinstance(row[field], bool):
                raise EatkitError(f"answers file {where}: field '{field}' is not a text or an option index")
            key = _item_id(row, f"answers file {where}")
            if key in self.answers:
                raise EatkitError(f"answers file {where}: item {key} is answered twice")
            self.answers[key] = row[field]
        self.sha256 = file_sha256(self.path)

    def embed(self, stimuli: StimulusSet) -> Embedded:
        if request_of(stimuli) is None:
            raise EatkitError(f"{self.id} holds recorded answers to benchmark items; it cannot embed set "
                              f"'{stimuli.name}'")
        ids = tuple(json.loads(item)["id"] for item in stimuli.items)
        return Embedded(vectors=np.asarray([self.answers.get(i) for i in ids], dtype=object), ids=ids)

    def manifest(self) -> dict[str, Any]:
        return {"id": self.id, "path": str(self.path.resolve()), "sha256": self.sha256, "field": self.field,
                "answers": len(self.answers)}
