"""Local models as sources of answers (docs/answers.md): instruction-tuned causal LMs (``hf-lm:<name>``, with
their chat templates) and image-text-to-text models (``hf-vlm:<name>``: the LLaVA, Qwen2-VL, Idefics and
PaliGemma families through transformers' ``AutoModelForImageTextToText`` and ``AutoProcessor``) answer the
questions of a request for answers (:func:`eatkit.sources.answers.answers_request`) with the same
:class:`~eatkit.sources.answers.Answer` records that recorded answer files give.

A request's items are questions as JSON objects (``id``, ``context``, ``question``, ``options``, ``image``: an
image file, or none; BBQ's :meth:`eatkit.stimuli.bbq.BBQItem.request`, an answer benchmark's
:meth:`eatkit.stimuli.answer_items.AnswerItem.request`), its ``mode`` how to answer a multiple-choice question
(one with options; ``loglik`` when not given), an open-ended one (no options) always by generation
(:func:`answer_questions`):

- ``loglik`` (multiple choice by log-likelihood): the prompt (:func:`prompt_text`, in the model's chat
  template) followed by each option, ``" " + option``; the option's log-likelihood is the sum of
  log p(token | everything before it) over the option's tokens. ``logprobs`` holds one per option, ``choice``
  the letter of the largest, ``score`` its value. All options of all questions go through the model in
  batches of ``batch_size`` sequences (right-padded, the padding masked).
- ``generate``: the model writes an answer (greedy, or sampled: the ``i``-th question it writes for from its own
  generator seeded ``seed + i``, :class:`RowSampler`); ``text`` holds it and ``choice`` the option it names (:func:`parse_choice`:
  a leading option letter, else the one option text it contains), or nothing. ``batch_size`` prompts a
  ``generate`` call, left-padded.

The decoding settings are declared (:data:`DECODING`: ``--generation max_new_tokens=16 temperature=0.7
seed=1``) and recorded in the manifest with any value outside its useful range.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from eatkit.encoders.hf import hf_weights_identity, hub_pin, load_pretrained, pinned_revision
from eatkit.errors import EatkitError
from eatkit.io import ensure_installed
from eatkit.kinds import Param
from eatkit.progress import progress
from eatkit.sources.answers import Answer, embedded_answers, request_of
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stimuli.types import StimulusSet

#: the decoding settings of a model's answers (``--generation KEY=VALUE``), with their legal and useful ranges
DECODING: tuple[Param, ...] = (
    Param("max_new_tokens", int, 16, low=1, high=32_768, useful=(None, 512), help="longest answer, in new tokens"),
    # above 2 the distribution is close to uniform over the vocabulary: text without meaning
    Param("temperature", float, 0.0, low=0, high=100, useful=(None, 2), help="0: greedy; above 0: sampled at this temperature"),
    Param("seed", int, 0, low=0, high=2**53 - 1, useful=(None, None), help="answer i is sampled from seed + i"),
)
#: image-text-to-text models without a chat template that take the question as a prefix (``model_type``)
PREFIX_MODELS = frozenset({"paligemma"})
#: the ways to answer a multiple-choice question (a request's ``mode``)
MODES = ("loglik", "generate")
LETTERS = "abcdefghijklmnopqrstuvwxyz"
#: torch dtypes by name (the command line's fp32, bf16, fp16 too)
PRECISIONS = {"float32": "float32", "float64": "float64", "bfloat16": "bfloat16", "float16": "float16",
              "fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def model_settings(precision: str | None, batch_size: int | None, default_batch: int) -> tuple[str, int]:
    """A language or vision-language model's precision (``float32`` by default) and batch size checked.

    >>> model_settings(None, None, 8)
    ('float32', 8)
    """
    if (precision or "float32") not in PRECISIONS:
        raise EatkitError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
        raise EatkitError(f"batch_size must be a positive integer, got {batch_size!r}")
    return precision or "float32", batch_size or default_batch


def decoding_settings(given: Mapping[str, Any] | Sequence[str] | None) -> dict[str, Any]:
    """Every decoding setting of :data:`DECODING`: ``given`` (a mapping, or ``KEY=VALUE`` texts of
    ``--generation``) checked and converted, defaults filled in; an unknown name or bad value is one line.

    >>> decoding_settings(["temperature=0.7"])
    {'max_new_tokens': 16, 'temperature': 0.7, 'seed': 0}
    >>> decoding_settings({"beams": 2})
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: unknown decoding setting 'beams' (known: max_new_tokens, temperature, seed)
    """
    if isinstance(given, (list, tuple)):
        pairs = [str(text).partition("=") for text in given]
        if any(not sep or not key.strip() for key, sep, _ in pairs):
            raise EatkitError(f"--generation takes KEY=VALUE, got {given!r:.60}")
        given = {key.strip(): value.strip() for key, _, value in pairs}
    given = dict(given or {})
    names = [p.name for p in DECODING]
    for name in given:
        if name not in names:
            raise EatkitError(f"unknown decoding setting {name!r} (known: {', '.join(names)})")
    return {p.name: p.convert(given[p.name]) if given.get(p.name) is not None else p.default for p in DECODING}


def decoding_warnings(settings: Mapping[str, Any]) -> list[str]:
    """The settings outside their useful range (:meth:`Param.warning`)."""
    return [w for p in DECODING if (w := p.warning(settings[p.name])) is not None]


# -- questions ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """One multiple-choice question of a request: its id, context, question, options and image file."""

    id: str
    context: str
    question: str
    options: tuple[str, ...]
    image: str | None = None


def questions(stimuli: StimulusSet) -> list[Question]:
    """The questions of a request's items (JSON objects); a malformed one is a one-line error naming it."""
    out = []
    for number, item in enumerate(stimuli.items, 1):
        try:
            obj = json.loads(item)
        except json.JSONDecodeError:
            obj = None
        if not isinstance(obj, dict) or not isinstance(obj.get("question"), str):
            raise EatkitError(f"set '{stimuli.name}': item {number} is not a question (a JSON object with "
                              "'question', 'options' and optionally 'id', 'context', 'image')")
        options = obj.get("options") or []
        if not isinstance(options, list) or not all(isinstance(o, str) for o in options) or len(options) > 26:
            raise EatkitError(f"set '{stimuli.name}': item {number}: 'options' is not a list of at most 26 strings")
        image = obj.get("image")
        out.append(Question(str(obj.get("id", number)), str(obj.get("context") or ""), obj["question"],
                            tuple(options), image if isinstance(image, str) else None))
    return out


def prompt_text(question: Question) -> str:
    """The question as the model reads it: context, question, the options lettered, an answer cue.

    >>> prompt_text(Question("1", "Two people came in.", "Who was late?", ("Alex", "Sam")))
    'Two people came in.\\nWho was late?\\n(a) Alex\\n(b) Sam\\nAnswer with the letter of one option.\\nAnswer:'
    """
    lines = [question.context, question.question] if question.context else [question.question]
    lines += [f"({LETTERS[i]}) {option}" for i, option in enumerate(question.options)]
    if question.options:
        lines.append("Answer with the letter of one option.")
    return "\n".join(lines + ["Answer:"])


_LEADING = re.compile(r"^\W*(?:answer\s*(?:is)?\s*:?\s*)?\(?([a-z])\)?(?![a-z])", re.IGNORECASE)


def parse_choice(text: str, options: Sequence[str]) -> str | None:
    """The option an answer names: a leading option letter (``"B"``, ``"(b) Sam"``, ``"Answer: b"``), else
    the one option whose text it contains (case-insensitive), else ``None``.

    >>> parse_choice(" (B) Sam", ["Alex", "Sam"]), parse_choice("It was sam.", ["Alex", "Sam"])
    ('b', 'b')
    >>> parse_choice("Alex or Sam", ["Alex", "Sam"]) is None, parse_choice("z", ["Alex", "Sam"]) is None
    (True, True)
    """
    found = _LEADING.match(text)
    if found and found.group(1).lower() in LETTERS[:len(options)]:
        return found.group(1).lower()
    named = [i for i, option in enumerate(options) if option and option.lower() in text.lower()]
    return LETTERS[named[0]] if len(named) == 1 else None


def answer_records(model: str, asked: Sequence[Question], *, logprobs: Sequence[Sequence[float]] | None = None,
                   texts: Sequence[str] | None = None, condition: str | None = None) -> list[Answer]:
    """The :class:`Answer` of each question: by log-likelihood (``logprobs``, one per option) or by
    generation (``texts``); ``file`` is the model, ``line`` the question's position (1-based)."""
    out = []
    for i, q in enumerate(asked):
        if logprobs is not None:
            values = tuple(float(v) for v in logprobs[i])
            best = int(np.argmax(values)) if values else None
            out.append(Answer(item=q.id, condition=condition, choice=None if best is None else LETTERS[best],
                              score=None if best is None else values[best], logprobs=values, file=model, line=i + 1))
        else:
            text = (texts or [""] * len(asked))[i]
            out.append(Answer(item=q.id, condition=condition, choice=parse_choice(text, q.options), text=text,
                              file=model, line=i + 1))
    return out


def answer_questions(model: str, asked: Sequence[Question], mode: str,
                     score: Callable[[list[Question]], list[list[float]]],
                     write: Callable[[list[Question]], list[str]]) -> list[Answer]:
    """The :class:`Answer` of each question, in order: a multiple-choice question by ``mode`` (``loglik``: its
    options' log-likelihoods from ``score``; ``generate``: the answer ``write`` gives, parsed), an open-ended
    one (no options) always by ``write``; ``line`` is the question's position (1-based).

    >>> q = [Question("1", "", "Who?", ("Ann", "Bob")), Question("2", "", "Describe her.", ())]
    >>> got = answer_questions("m", q, "loglik", lambda a: [[-2.0, -1.0]] * len(a), lambda a: ["Tall."] * len(a))
    >>> [(a.item, a.choice, a.text, a.line) for a in got]
    [('1', 'b', None, 1), ('2', None, 'Tall.', 2)]
    """
    if mode not in MODES:
        raise EatkitError(f"'{model}' answers in mode {' or '.join(MODES)}, not {mode!r}")
    by_loglik = [i for i, q in enumerate(asked) if q.options and mode == "loglik"]
    written = sorted(set(range(len(asked))) - set(by_loglik))
    found: dict[int, Answer] = {}
    for chosen, how in ((by_loglik, "loglik"), (written, "generate")):
        found |= dict(zip(chosen, _answered(model, [asked[i] for i in chosen], how, score, write)))
    return [replace(found[i], line=i + 1) for i in range(len(asked))]


def _answered(model: str, asked: list[Question], how: str, score: Callable[[list[Question]], list[list[float]]],
              write: Callable[[list[Question]], list[str]]) -> list[Answer]:
    """The answers of ``asked`` (a request's questions of one way of answering, :func:`answer_questions`)."""
    if not asked:
        return []
    if how == "loglik":
        return answer_records(model, asked, logprobs=score(asked))
    return answer_records(model, asked, texts=write(asked))


def option_requests(asked: Sequence[Question]) -> list[tuple[int, str]]:
    """Every (question index, continuation) to score by log-likelihood: ``" " + option``."""
    return [(i, " " + option) for i, q in enumerate(asked) for option in q.options]


def per_question(asked: Sequence[Question], values: Sequence[float]) -> list[list[float]]:
    """The flat option scores of :func:`option_requests` back as one list per question."""
    out, start = [], 0
    for q in asked:
        out.append(list(values[start:start + len(q.options)]))
        start += len(q.options)
    return out


# -- batching -----------------------------------------------------------------------------------------------


def batches(seqs: Sequence[Sequence[Any]], size: int, unit: str) -> Iterator[list[int]]:
    """Indices into ``seqs`` in batches of ``size``, sequences of similar length together (sorted by length,
    stable), with progress in items (``scoring 1,200/3,016 sentences``)."""
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    batch: list[int] = []
    for i in progress(order, total=len(order), desc="scoring", unit=unit):
        batch.append(i)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def padded(seqs: Sequence[Sequence[int]], pad: int, device: Any, *, left: bool = False) -> tuple[Any, Any]:
    """The id sequences as one tensor padded with ``pad`` (on the right, or the left for generation) and its
    attention mask (1 at real tokens)."""
    import torch

    width = max(len(s) for s in seqs)
    x = torch.full((len(seqs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for r, s in enumerate(seqs):
        span = slice(width - len(s), width) if left else slice(0, len(s))
        x[r, span] = torch.tensor(list(s), dtype=torch.long)
        mask[r, span] = 1
    return x.to(device), mask.to(device)


class RowSampler:
    """A transformers logits processor that samples each row of a batch with its own ``torch.Generator``
    (row ``r`` seeded by ``seeds[r]``): softmax of the scores over ``temperature``, one
    ``torch.multinomial`` draw (as transformers' sampling, without top-k or top-p), returned as scores that
    are ``-inf`` except at the drawn token, so that greedy decoding keeps it. A row's answer is then the
    one an unbatched ``generate`` gives after ``torch.manual_seed(seeds[r])``.
    """

    def __init__(self, seeds: Sequence[int], temperature: float, device: Any) -> None:
        import torch

        self.temperature = float(temperature)
        self.generators = [torch.Generator(device=device).manual_seed(int(s)) for s in seeds]

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        probs = torch.softmax(scores / self.temperature, dim=-1)
        drawn = torch.cat([torch.multinomial(probs[r:r + 1], 1, generator=g)[0]
                           for r, g in enumerate(self.generators)])
        out = torch.full_like(scores, float("-inf"))
        out[torch.arange(len(drawn), device=scores.device), drawn] = 0.0
        return out


def sampler(seeds: Sequence[int], temperature: float, device: Any) -> list[RowSampler] | None:
    """The logits processors of a ``generate`` call: a :class:`RowSampler` when sampling, none when greedy."""
    return [RowSampler(seeds, temperature, device)] if temperature > 0 else None


#: the most float64 log-probabilities held at once (256 MiB): rows of a batch are taken this many values at a time
LOGP_VALUES = 2**25


def continuation_sums(logits: Any, ids: Any, spans: Sequence[tuple[int, int]]) -> list[float]:
    """For each row ``r`` of a forward pass: sum over t in ``spans[r]`` = (start, end) of
    log p(ids[r, t] | ids[r, < t]), in float64 (the log-softmax of the logits at t - 1; one call over as many
    rows as :data:`LOGP_VALUES` allows, each row's values as its own call gives them)."""
    import torch

    width = max(end for _, end in spans) - 1
    step = max(1, LOGP_VALUES // max(1, width * logits.shape[-1]))
    out = []
    for first in range(0, len(spans), step):
        logp = torch.log_softmax(logits[first:first + step, :width].double(), dim=-1)
        for row, (start, end) in enumerate(spans[first:first + step]):
            out.append(float(logp[row, start - 1:end - 1].gather(1, ids[first + row, start:end, None]).sum()))
    return out


# -- image-text-to-text models ------------------------------------------------------------------------------


class VisionLanguageModel(EmbeddingSource):
    """``hf-vlm:<name>``: an image-text-to-text model (``AutoModelForImageTextToText`` with its
    ``AutoProcessor`` and chat template: LLaVA, Qwen2-VL, Idefics, PaliGemma families) answering the questions
    of a request for answers (module docstring), an item's image shown before its text.

    Parameters
    ----------
    name : a Hugging Face model id or a local model folder.
    revision, device, precision, batch_size : as :class:`eatkit.encoders.language_models.LanguageModel`.
    generation : decoding settings (:data:`DECODING`), a mapping or ``KEY=VALUE`` texts.
    """

    modalities = frozenset({"sentence", "image", "prompt"})

    def __init__(self, name: str, *, revision: str | None = None, device: str | None = None,
                 precision: str | None = None, batch_size: int | None = None,
                 generation: Mapping[str, Any] | Sequence[str] | None = None) -> None:
        ensure_installed("transformers", f"the vision-language model '{name}'", "vl")
        self.name, self.revision, self.id = name, revision, f"hf-vlm:{name}"
        self.device = device or "cpu"
        self.precision, self.batch_size = model_settings(precision, batch_size, 8)
        self.decoding = decoding_settings(generation)
        self.weights = hf_weights_identity(name, revision)
        self._model: Any = None
        self._processor: Any = None
        self._prefix = False

    def _load(self) -> None:
        if self._model is not None:
            return
        import torch

        model, processor = load_pretrained("AutoModelForImageTextToText", self.name,
                                           pinned_revision(self.weights, self.revision),
                                           f"the vision-language model '{self.id}'", "vl", processor="AutoProcessor")
        try:
            model = model.to(device=torch.device(self.device), dtype=getattr(torch, PRECISIONS[self.precision]))
        except (RuntimeError, ValueError) as exc:
            raise EatkitError(f"cannot place '{self.id}' on device {self.device!r}: {exc}") from None
        self._prefix = getattr(model.config, "model_type", "") in PREFIX_MODELS
        if not self._prefix and not getattr(processor, "chat_template", None):
            raise EatkitError(f"'{self.id}' has no chat template: its processor cannot place the image in a prompt")
        self._model, self._processor = model.eval(), processor

    def embed(self, stimuli: StimulusSet) -> Embedded:
        settings = request_of(stimuli)
        if settings is None:
            raise EatkitError(f"'{self.id}' is an image-text-to-text model: it answers questions (bbq and other "
                              f"answer tests); it does not embed set '{stimuli.name}'")
        asked = questions(stimuli)
        if asked:
            self._load()
        return embedded_answers(answer_questions(self.id, asked, settings.get("mode") or "loglik",
                                                 self.option_logprobs, self.generate))

    def manifest(self) -> dict[str, Any]:
        return {"id": self.id, "model": self.name, "weights": self.weights, "revision": self.revision,
                "hub": hub_pin(str(self.weights), self.revision), "kind": "image-text-to-text",
                "device_requested": self.device, "precision": self.precision, "batch_size": self.batch_size,
                "decoding": self.decoding, "decoding_warnings": decoding_warnings(self.decoding),
                "prompt": "context, question, lettered options, 'Answer:' (encoders/answerers.py prompt_text), "
                          "in the processor's chat template, the image first"}

    # -- inputs ------------------------------------------------------------------------------------------
    def _chat(self, question: Question, continuation: str = "") -> str:
        """The prompt: in the processor's chat template, the image first (LLaVA, Qwen2-VL, Idefics); for a
        prefix model (PaliGemma) the image token then the question, to which the processor adds BOS and "\n"."""
        if self._prefix:
            return (self._processor.image_token if question.image else "") + prompt_text(question) + continuation
        content: list[dict[str, str]] = [{"type": "image"}] if question.image else []
        content.append({"type": "text", "text": prompt_text(question)})
        text = self._processor.apply_chat_template([{"role": "user", "content": content}],
                                                   add_generation_prompt=True)
        return text + continuation

    def _inputs(self, texts: Sequence[str], images: Sequence[str | None], *, left: bool,
                suffixes: Sequence[str] | None = None) -> Any:
        from eatkit.encoders.images import load_image

        self._processor.tokenizer.padding_side = "left" if left else "right"
        # Image.open(path).convert("RGB"), through the one image decoder (an unreadable file: one line)
        pictures = [load_image(path, decoder="pil-open", alpha="drop") for path in images if path]
        if pictures and len(pictures) != len(texts):
            raise EatkitError(f"'{self.id}' answers a batch of questions all with images or all without")
        extra = {} if suffixes is None else {"suffix": list(suffixes)}
        try:
            inputs = self._processor(text=list(texts), images=pictures or None, padding=True, return_tensors="pt",
                                     **extra)
        except (ValueError, TypeError) as exc:
            raise EatkitError(f"'{self.id}': its processor refused the questions: {exc}") from None
        inputs.pop("labels", None)  # PaliGemma's processor adds training labels
        return self._on_device(inputs)

    def _on_device(self, inputs: Mapping[str, Any]) -> dict[str, Any]:
        """The processor's tensors on the model's device, floating ones in its precision."""
        dtype = self._model.dtype
        return {k: (v.to(self._model.device, dtype=dtype) if v.is_floating_point() else v.to(self._model.device))
                for k, v in inputs.items()}

    # -- answering -----------------------------------------------------------------------------------------
    def _groups(self, asked: Sequence[Question]) -> list[list[int]]:
        """Question indices in batches of ``batch_size``, questions with and without an image apart, questions
        of similar length together."""
        out = []
        for with_image in (True, False):
            chosen = sorted((i for i, q in enumerate(asked) if bool(q.image) == with_image),
                            key=lambda i: len(asked[i].context) + len(asked[i].question))
            out += [chosen[j:j + self.batch_size] for j in range(0, len(chosen), self.batch_size)]
        return out

    def generate(self, asked: Sequence[Question]) -> list[str]:
        """Each question's written answer (module docstring), ``batch_size`` a ``generate`` call."""
        import torch

        s = self.decoding
        out = [""] * len(asked)
        for batch in progress(self._groups(asked), desc="answering: batches of questions"):
            inputs = self._inputs([self._chat(asked[i]) for i in batch], [asked[i].image for i in batch], left=True)
            width = inputs["input_ids"].shape[1]
            with torch.inference_mode():
                new = self._model.generate(
                    **inputs, max_new_tokens=s["max_new_tokens"], do_sample=False, temperature=None, top_k=None,
                    top_p=None, logits_processor=sampler([s["seed"] + i for i in batch], s["temperature"],
                                                         self._model.device))
            for i, row in zip(batch, new):
                out[i] = self._processor.tokenizer.decode(row[width:], skip_special_tokens=True)
        return out

    def _option_inputs(self, asked: Sequence[Question], options: Sequence[str]) -> tuple[Any, list[int], list[int]]:
        """The inputs of each question's prompt followed by an option (right-padded), and the option's tokens'
        span in each row: after the chat prompt, ``" " + option``; after a prefix model's prompt, the option as
        its suffix (its tokens causal, the prefix attended bidirectionally, as the model was trained; the EOS the
        processor appends left out)."""
        images = [q.image for q in asked]
        if self._prefix:
            full = self._inputs([self._chat(q) for q in asked], images, left=False,
                                suffixes=[option.strip() for option in options])
            mask = full["attention_mask"]
            return full, (mask * (full["token_type_ids"] == 0)).sum(1).tolist(), (mask.sum(1) - 1).tolist()
        full = self._inputs([self._chat(q, option) for q, option in zip(asked, options)], images, left=False)
        prompt = self._inputs([self._chat(q) for q in asked], images, left=False)
        return full, prompt["attention_mask"].sum(1).tolist(), full["attention_mask"].sum(1).tolist()

    def option_logprobs(self, asked: Sequence[Question]) -> list[list[float]]:
        """Each option's log-likelihood after its question's prompt (module docstring), in batches."""
        import torch

        requests = option_requests(asked)
        flat = [asked[i] for i, _ in requests]
        values = [0.0] * len(requests)
        for batch in progress(self._groups(flat), desc="scoring: batches of options"):
            full, starts, ends = self._option_inputs([flat[r] for r in batch], [requests[r][1] for r in batch])
            with torch.inference_mode():
                logits = self._model(**full).logits
            for r, value in zip(batch, continuation_sums(logits, full["input_ids"], list(zip(starts, ends)))):
                values[r] = value
        return per_question(asked, values)


def vision_language_model(name: str, *, revision: str | None = None, device: str | None = None,
                          precision: str | None = None, batch_size: int | None = None,
                          generation: Mapping[str, Any] | Sequence[str] | None = None) -> VisionLanguageModel:
    """``hf-vlm:<name>``: an image-text-to-text model answering questions (e.g. a LLaVA or Qwen2-VL model)."""
    return VisionLanguageModel(name, revision=revision, device=device, precision=precision, batch_size=batch_size,
                               generation=generation)
