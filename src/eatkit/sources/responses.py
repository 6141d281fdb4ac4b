"""Recorded answers of a language model as a source (``responses:<file or folder>``): the LLM-IAT test
scores answers a model gave elsewhere (e.g. Bai et al. 2025's published GPT-4o responses) exactly as it
scores a local model's (:mod:`eatkit.analyses.language_models`).

A generation request (:func:`eatkit.stimuli.language.generate_request`) names the recorded answers
that stand for it: those of the test's ``category`` in its ``variations`` (the authors' response files
record no prompt, so the answers are not matched to prompts). Each answer's id is
``<variation>/<file>:<row>``; the manifest records every file's SHA-256.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.sources.answers import read_answers
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stimuli.language import request_settings
from eatkit.stimuli.types import StimulusSet


class RecordedResponses(EmbeddingSource):
    """The answers recorded in ``name``: a CSV file or a folder of them, in the authors' format.

    >>> RecordedResponses("/nonexistent/answers")
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: the responses /nonexistent/answers do not exist
    """

    modalities = frozenset({"sentence"})

    def __init__(self, name: str) -> None:
        self.path = Path(name).expanduser()
        if not self.path.exists():
            raise EatkitError(f"the responses {name} do not exist")
        self.id = f"responses:{name}"
        files = sorted(self.path.glob("*.csv")) if self.path.is_dir() else [self.path]
        if not files:
            raise EatkitError(f"{name} holds no .csv response file")
        answers = [read_answers(f, "llm-iat") for f in files]  # the one answer layer (eatkit.sources.answers)
        self.responses = [a for got in answers for a in got.records]
        self.files = {Path(got.files[0].path).name: got.files[0].sha256 for got in answers}

    def embed(self, stimuli: StimulusSet) -> Embedded:
        settings = request_settings(stimuli)
        if settings is None or not settings.get("recorded"):
            raise EatkitError(f"{self.id} holds recorded answers to LLM-IAT prompts; it cannot score or embed set "
                              f"'{stimuli.name}'")
        category, variations = settings["recorded"]["category"], settings["recorded"]["variations"]
        chosen = [r for r in self.responses if r.template == category and (not variations or r.condition in variations)]
        if not chosen:
            raise EatkitError(f"{self.id} holds no response of category '{category}'"
                              f"{' in variations ' + ', '.join(variations) if variations else ''}")
        return Embedded(vectors=np.asarray([r.text for r in chosen], dtype=object),
                        ids=tuple(f"{r.condition}/{r.file}:{r.item}" for r in chosen))

    def manifest(self) -> dict[str, Any]:
        return {"id": self.id, "path": str(self.path.resolve()), "files": self.files, "responses": len(self.responses)}
