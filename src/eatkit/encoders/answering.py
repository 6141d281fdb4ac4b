"""A local causal language model answering multiple-choice items (BBQ and any benchmark that sends the same
request): an answers request (:func:`eatkit.sources.answers.answers_request`) whose items are JSON objects
``{"id", "context", "question", "options": [...], "image"}`` (:meth:`eatkit.stimuli.bbq.BBQItem.request`).

- ``mode="loglik"``: each option's log-likelihood given the prompt ``"<context> <question>\\nAnswer:"``,
  log p(option | prompt) = LL(prompt + " " + option) - LL(prompt) (:meth:`LanguageModel.log_likelihood`, the
  sum over the option's tokens), returned as the answer's ``logprobs`` (the answer: the largest);
- ``mode="generate"``: the model's answer to the prompt listing the options (``"A. ...\\nB. ..."``), greedy,
  ``max_new_tokens`` tokens, in its chat template where it has one, returned as ``text``, and as ``choice``
  the option letter it starts with, if any (else the benchmark parses the text).

Image-grounded items need a vision-language answerer: a language model refuses them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from eatkit.errors import EatkitError
from eatkit.sources.answers import Answer, embedded_answers
from eatkit.sources.base import Embedded
from eatkit.stimuli.types import StimulusSet

#: tokens of a generated answer (an option's text is a few words)
MAX_NEW_TOKENS = 32
LETTERS = "ABCDEFGHIJ"


def _items(stimuli: StimulusSet, model_id: str) -> list[dict[str, Any]]:
    items = [json.loads(text) for text in stimuli.items]
    if any(item.get("image") for item in items):
        raise EatkitError(f"'{model_id}' is a language model: image-grounded items need a vision-language model")
    return items


def loglik_prompt(item: dict[str, Any]) -> str:
    """The prompt whose continuations are the options (multiple choice by log-likelihood)."""
    return f"{item['context']} {item['question']}\nAnswer:"


def choice_prompt(item: dict[str, Any]) -> str:
    """The prompt that lists the options (multiple choice by generation)."""
    options = "\n".join(f"{LETTERS[i]}. {option}" for i, option in enumerate(item["options"]))
    return f"{item['context']} {item['question']}\n{options}\nAnswer:"


def option_letter(text: str, options: int) -> str | None:
    """The option letter a generated answer starts with (``"B"``, ``"B."``, ``"(B)"``, ``"B) ..."``), else ``None``
    (the benchmark then parses the text).

    >>> option_letter(" B. The grandson", 3), option_letter("Because", 3), option_letter("(c)", 3)
    ('B', None, 'C')
    """
    match = re.match(r"\s*\(?([A-Za-z])(?:[.):]|\s|$)", text)
    letter = match.group(1).upper() if match else None
    return letter if letter is not None and letter in LETTERS[:options] else None


def answer_items(model: Any, stimuli: StimulusSet, settings: dict[str, Any]) -> Embedded:
    """The answers of ``model`` (a causal :class:`eatkit.encoders.language_models.LanguageModel`) to the items."""
    if model.masked:
        raise EatkitError(f"'{model.id}' is a masked language model: answering needs a causal one (hf-lm:)")
    items = _items(stimuli, model.id)
    mode = settings.get("mode", "loglik")
    if mode == "loglik":
        answers = []
        for item in items:
            prompt = loglik_prompt(item)
            base = model.log_likelihood(prompt)
            logprobs = tuple(model.log_likelihood(f"{prompt} {option}") - base for option in item["options"])
            answers.append(Answer(item=item["id"], logprobs=logprobs, file=model.id, line=len(answers) + 1))
    elif mode == "generate":
        texts = model.generate([choice_prompt(item) for item in items], max_new_tokens=MAX_NEW_TOKENS,
                               temperature=0.0, seed=0)
        answers = [Answer(item=item["id"], choice=option_letter(text, len(item["options"])), text=text,
                          file=model.id, line=i + 1) for i, (item, text) in enumerate(zip(items, texts))]
    else:
        raise EatkitError(f"answer mode must be loglik or generate, got {mode!r}")
    return embedded_answers(answers)
