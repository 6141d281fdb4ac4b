"""Language models as sources of scores and answers: masked LMs (``hf-mlm:<name>``) and causal LMs
(``hf-lm:<name>``) for the likelihood pair tests (CrowS-Pairs, StereoSet) and the prompted association
test (LLM-IAT). ``<name>`` is a Hugging Face model id or a local model folder.

A language model does not embed: the analyses of these kinds hand it a *request*, a sentence set whose
``category`` names what to compute for its items (:data:`PAIRS`, :data:`SENTENCES`, :func:`generate_request`),
through the runner's one ``embed`` path (so the run's manifest records the SHA-256 of every item). The
result's ``vectors`` hold one row per item:

- ``PAIRS`` (items ``s1, s2, s1', s2', ...``): each sentence's score against its partner. A masked LM scores
  as CrowS-Pairs' ``metric.py`` does (Nangia et al. 2020): both sentences are tokenised with their special
  tokens (lower-cased first when the tokenizer lower-cases), the tokens they share are found by
  ``difflib.SequenceMatcher`` on the two id sequences (its ``equal`` blocks, the first sentence first),
  and every shared token but the first and the last (the ``[CLS]`` and ``[SEP]``) is masked one at a time
  and the log-softmax of the original token at the mask summed: the pseudo-log-likelihood of the
  unmodified tokens. A causal LM gives each sentence's log-likelihood,
  sum over t >= 1 of log p(token_t | tokens < t), the sentence preceded by the tokenizer's BOS token (the
  end-of-text token where it has none) so that its first token is scored too.
- ``SENTENCES``: each sentence's mean token log-likelihood (StereoSet). Causal: as StereoSet's
  ``eval_generative_models.py`` scores it, the first token given the start token alone and every other
  token given the sentence's earlier tokens (not the start token); masked: the pseudo-log-likelihood of
  every token divided by their number (the authors' masked-model scoring fills the context's blank token by
  token instead; not reproduced).
- generation requests: the model's answer to each prompt (text, in an object array), in the model's chat
  template where it has one (system message :data:`SYSTEM`, as Bai et al. 2025 sent), prompt ``i`` sampled
  with torch seeded by ``seed + i`` (``temperature`` 0: greedy).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from eatkit.encoders.answerers import (PRECISIONS, Question, answer_questions, batches, continuation_sums,
                                       decoding_settings, decoding_warnings, model_settings, option_requests, padded,
                                       per_question, prompt_text, questions, sampler)
from eatkit.encoders.hf import hf_weights_identity, hub_pin, load_pretrained, pinned_revision
from eatkit.errors import EatkitError
from eatkit.io import ensure_installed
from eatkit.sources.answers import embedded_answers, request_of
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stimuli.language import PAIRS, SENTENCES, request_settings
from eatkit.stimuli.types import StimulusSet

#: the system message of a chat template (Bai et al. 2025 sent this one to GPT-4o)
SYSTEM = "You are a helpful assistant."


def shared_positions(first: Sequence[int], second: Sequence[int]) -> tuple[list[int], list[int]]:
    """The positions of the tokens two id sequences share (``difflib.SequenceMatcher``'s ``equal`` blocks,
    ids compared as strings as CrowS-Pairs' ``get_span`` does).

    >>> shared_positions([101, 7, 8, 9, 102], [101, 7, 5, 9, 102])
    ([0, 1, 3, 4], [0, 1, 3, 4])
    """
    matcher = difflib.SequenceMatcher(None, [str(x) for x in first], [str(x) for x in second])
    one: list[int] = []
    two: list[int] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            one += range(i1, i2)
            two += range(j1, j2)
    return one, two


class LanguageModel(EmbeddingSource):
    """A transformers language model answering the requests of the module docstring.

    Parameters
    ----------
    name : a Hugging Face model id or a local model folder.
    masked : a masked LM (``AutoModelForMaskedLM``) or a causal one (``AutoModelForCausalLM``).
    revision : hub revision to load.
    device : torch device (default ``cpu``).
    precision : ``float32`` (default), ``float64``, ``bfloat16`` or ``float16``.
    batch_size : sequences per forward pass (masked variants of a sentence; sentences of a causal LM).
    chat_template : use the tokenizer's chat template for prompts where it has one (default True).
    generation : decoding settings of its answers to questions (:data:`eatkit.encoders.answerers.DECODING`).
    """

    modalities = frozenset({"sentence"})

    def __init__(self, name: str, *, masked: bool = False, revision: str | None = None, device: str | None = None,
                 precision: str | None = None, batch_size: int | None = None, chat_template: bool = True,
                 generation: Mapping[str, Any] | Sequence[str] | None = None) -> None:
        ensure_installed("transformers", f"the language model '{name}'", "text")
        self.name, self.masked, self.revision = name, bool(masked), revision
        self.id = f"{'hf-mlm' if masked else 'hf-lm'}:{name}"
        self.device = device or "cpu"
        self.precision, self.batch_size = model_settings(precision, batch_size, 32)
        self.chat_template = bool(chat_template)
        self.decoding = decoding_settings(generation)
        self.weights = hf_weights_identity(name, revision)
        self._model: Any = None
        self._tokenizer: Any = None
        self._templated = False

    # -- loading ------------------------------------------------------------------------------------------
    def _load(self) -> None:
        if self._model is not None:
            return
        import torch

        cls = "AutoModelForMaskedLM" if self.masked else "AutoModelForCausalLM"
        model, tokenizer = load_pretrained(cls, self.name, pinned_revision(self.weights, self.revision),
                                           f"the language model '{self.id}'", "text")
        try:
            model = model.to(device=torch.device(self.device), dtype=getattr(torch, PRECISIONS[self.precision]))
        except (RuntimeError, ValueError) as exc:
            raise EatkitError(f"cannot place '{self.id}' on device {self.device!r}: {exc}") from None
        if self.masked and tokenizer.mask_token_id is None:
            raise EatkitError(f"'{self.id}' has no mask token: it is not a masked language model")
        self._model, self._tokenizer = model.eval(), tokenizer
        self._templated = self.chat_template and bool(getattr(tokenizer, "chat_template", None))

    # -- the source interface -------------------------------------------------------------------------------
    def embed(self, stimuli: StimulusSet) -> Embedded:
        request = stimuli.category or ""
        items = list(stimuli.items)
        if request == PAIRS:
            if len(items) % 2:
                raise EatkitError(f"set '{stimuli.name}': a pair request needs an even number of sentences")
            vectors: np.ndarray = np.asarray(self.pairs_scores(items[0::2], items[1::2]), dtype=float)[:, None]
        elif request == SENTENCES:
            vectors = np.asarray(self.sentence_scores(items), dtype=float)[:, None]
        elif (settings := request_settings(stimuli)) is not None:
            settings.pop("recorded")
            vectors = np.asarray(self.generate(items, **settings), dtype=object)
        elif (asked := request_of(stimuli)) is not None:
            return self.answer(stimuli, asked.get("mode") or "loglik")
        else:
            vectors = self._represent(stimuli)
        return Embedded(vectors=vectors, ids=tuple(items))

    def _represent(self, stimuli: StimulusSet) -> np.ndarray:
        """A plain sentence set's representations (:meth:`hidden_mean`: an association test on the model that
        answers); any other set is refused."""
        if stimuli.category or stimuli.modality != "sentence":
            raise EatkitError(f"'{self.id}' is a language model: it scores and answers text for the crows-pairs, "
                              f"stereoset and llm-iat tests; it does not embed set '{stimuli.name}'")
        return np.asarray([self.hidden_mean(s) for s in stimuli.items], dtype=float)

    def manifest(self) -> dict[str, Any]:
        return {"id": self.id, "model": self.name, "weights": self.weights, "revision": self.revision,
                "hub": hub_pin(str(self.weights), self.revision), "kind": "masked" if self.masked else "causal",
                "device_requested": self.device, "precision": self.precision, "batch_size": self.batch_size,
                "batching": BATCHING, "chat_template": self._templated if self._model is not None
                else self.chat_template, "system_message": SYSTEM, "decoding": self.decoding,
                "decoding_warnings": decoding_warnings(self.decoding),
                "scoring": "pseudo-log-likelihood of the shared tokens (CrowS-Pairs metric.py)" if self.masked
                else "sentence log-likelihood after the BOS token",
                "pooling": "mean of the last layer's hidden states over the sentence's tokens (association tests)"}

    # -- scoring --------------------------------------------------------------------------------------------
    def _ids(self, text: str) -> list[int]:
        if self.masked and getattr(self._tokenizer, "do_lower_case", False):
            text = text.lower()  # metric.py lower-cases for its uncased models
        return list(self._tokenizer.encode(text))

    def pair_scores(self, first: str, second: str) -> tuple[float, float]:
        """The two sentences' scores (module docstring: shared-token PLL, or log-likelihood)."""
        a, b = self.pairs_scores([first], [second])
        return a, b

    def pairs_scores(self, firsts: Sequence[str], seconds: Sequence[str]) -> list[float]:
        """The scores of ``firsts[i]`` and ``seconds[i]`` against each other, in the order
        ``first_0, second_0, first_1, ...`` (module docstring), every forward pass a batch of sentences
        (causal) or of masked copies across sentences (masked)."""
        self._load()
        sentences = [s for pair in zip(firsts, seconds) for s in pair]
        if not self.masked:
            return self.log_likelihoods(sentences)
        jobs: list[tuple[list[int], list[int]]] = []
        for first, second in zip(firsts, seconds):
            ids1, ids2 = self._ids(first), self._ids(second)
            one, two = shared_positions(ids1, ids2)
            # metric.py masks template positions 1 .. N-2: the first and last shared tokens are [CLS] and [SEP]
            jobs += [(ids1, one[1:-1]), (ids2, two[1:-1])]
        return self._masked_sums(jobs)

    def sentence_score(self, sentence: str) -> float:
        """Mean token log-likelihood of one sentence (StereoSet; module docstring)."""
        return self.sentence_scores([sentence])[0]

    def sentence_scores(self, sentences: Sequence[str]) -> list[float]:
        """Each sentence's mean token log-likelihood (StereoSet; module docstring), in batches."""
        self._load()
        if self.masked:
            jobs = [(ids, list(range(1, len(ids) - 1))) for ids in map(self._ids, sentences)]
            return [total / max(len(positions), 1) for total, (_, positions) in zip(self._masked_sums(jobs), jobs)]
        import torch

        seqs = [self._causal_ids(s) for s in sentences]
        bos = seqs[0][0] if seqs else 0
        # StereoSet's eval_generative_models.py: the first token given the start token alone, the others given
        # the sentence's earlier tokens (without the start token); the mean log-probability of the tokens
        with torch.inference_mode():
            start = torch.log_softmax(self._model(input_ids=torch.tensor([[bos]], device=self._model.device))
                                      .logits[0, -1].double(), dim=-1)
        rest = iter(self._causal_sums([ids[1:] for ids in seqs if len(ids) > 2]))
        return [(float(start[ids[1]]) + (next(rest) if len(ids) > 2 else 0.0)) / (len(ids) - 1) for ids in seqs]

    def hidden_mean(self, sentence: str) -> np.ndarray:
        """The sentence's representation: the mean over its tokens of the last layer's hidden states (causal:
        the tokens after the BOS token; masked: without the special tokens), in float64."""
        import torch

        self._load()
        ids = self._ids(sentence) if self.masked else self._causal_ids(sentence)
        with torch.inference_mode():
            out = self._model(input_ids=torch.tensor([ids], device=self._model.device), output_hidden_states=True)
        states = out.hidden_states[-1][0].double()
        return (states[1:-1] if self.masked else states[1:]).mean(0).cpu().numpy()

    def log_likelihood(self, sentence: str) -> float:
        """sum_t log p(token_t | tokens < t) of a causal LM, after the BOS token."""
        return self.log_likelihoods([sentence])[0]

    def log_likelihoods(self, sentences: Sequence[str]) -> list[float]:
        """Each sentence's sum_t log p(token_t | tokens < t) after the BOS token, in batches of sentences."""
        self._load()
        return self._causal_sums([self._causal_ids(s) for s in sentences])

    def _causal_ids(self, sentence: str) -> list[int]:
        tok = self._tokenizer
        ids = list(tok.encode(sentence, add_special_tokens=False))
        bos = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        if bos is None:
            raise EatkitError(f"'{self.id}' has neither a BOS nor an end-of-text token to start a sentence with")
        if not ids:
            raise EatkitError(f"'{self.id}' tokenises the sentence {sentence!r} to nothing")
        return [bos, *ids]

    def _pad_id(self) -> int:
        tok = self._tokenizer
        return next((i for i in (tok.pad_token_id, tok.eos_token_id) if i is not None), 0)

    def _causal_sums(self, seqs: Sequence[Sequence[int]], starts: Sequence[int] | None = None) -> list[float]:
        """sum_{t >= starts[i]} log p(ids_t | ids_<t) of each id sequence (``starts`` default 1: every token
        after the first): sequences of similar length in one forward pass, right-padded, the padding masked
        (``attention_mask``) and never scored."""
        import torch

        totals = [0.0] * len(seqs)
        with torch.inference_mode():
            for batch in batches(seqs, self.batch_size, "sentences"):
                x, mask = padded([seqs[i] for i in batch], self._pad_id(), self._model.device)
                logits = self._model(input_ids=x, attention_mask=mask).logits
                spans = [(starts[i] if starts else 1, len(seqs[i])) for i in batch]
                for i, value in zip(batch, continuation_sums(logits, x, spans)):
                    totals[i] = value
        return totals

    def _masked_sums(self, jobs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> list[float]:
        """For each ``(ids, positions)``: the sum over ``positions`` of log p(original token | the sentence
        with that one token masked). The masked copies of all sentences go through the model together,
        ``batch_size`` copies a pass (copies of similar length together, right-padded and masked)."""
        import torch

        copies = [(j, p) for j, (_, positions) in enumerate(jobs) for p in positions]
        logps = [0.0] * len(copies)
        mask_id = self._tokenizer.mask_token_id
        with torch.inference_mode():
            for batch in batches([jobs[j][0] for j, _ in copies], self.batch_size, "masked copies"):
                x, attention = padded([jobs[copies[c][0]][0] for c in batch], self._pad_id(), self._model.device)
                rows = torch.arange(len(batch), device=x.device)
                cols = torch.tensor([copies[c][1] for c in batch], device=x.device)
                target = x[rows, cols].clone()
                x[rows, cols] = mask_id
                logits = self._model(input_ids=x, attention_mask=attention).logits[rows, cols].double()
                for c, value in zip(batch, torch.log_softmax(logits, dim=-1)[rows, target].tolist()):
                    logps[c] = value
        totals = [0.0] * len(jobs)
        for (j, _), value in zip(copies, logps):
            totals[j] += value
        return totals

    # -- answers to questions -------------------------------------------------------------------------------
    def answer(self, stimuli: StimulusSet, mode: str) -> Embedded:
        """The :class:`~eatkit.sources.answers.Answer` of each question of a request for answers
        (:mod:`eatkit.encoders.answerers`: ``loglik`` or ``generate``, in the chat template where it has one)."""
        if self.masked:
            raise EatkitError(f"'{self.id}' is a masked language model: questions need a causal one (hf-lm:)")
        asked = questions(stimuli)
        if any(q.image for q in asked):
            raise EatkitError(f"'{self.id}' reads text only: questions with an image need an image-text-to-text "
                              "model (hf-vlm:<name>)")
        if asked:
            self._load()
        return embedded_answers(answer_questions(self.id, asked, mode, self.option_logprobs, self.written))

    def option_logprobs(self, asked: Sequence[Question]) -> list[list[float]]:
        """Each option's log-likelihood after its question's prompt (:mod:`eatkit.encoders.answerers`)."""
        prompts = [self._prompt_ids(i, prompt_text(q), 0) for i, q in enumerate(asked)]
        requests = option_requests(asked)
        seqs = [prompts[i] + list(self._tokenizer.encode(text, add_special_tokens=False)) for i, text in requests]
        return per_question(asked, self._causal_sums(seqs, [len(prompts[i]) for i, _ in requests]))

    def written(self, asked: Sequence[Question]) -> list[str]:
        """Each question's written answer, decoded as :attr:`decoding` says; the ``i``-th of ``asked`` sampled
        from seed + ``i`` (:meth:`generate`)."""
        s = self.decoding
        return self.generate([prompt_text(q) for q in asked], max_new_tokens=s["max_new_tokens"],
                             temperature=s["temperature"], seed=s["seed"])

    # -- generation -----------------------------------------------------------------------------------------
    def generate(self, prompts: Sequence[str], *, max_new_tokens: int, temperature: float, seed: int) -> list[str]:
        """The model's answer to each prompt (prompt ``i`` sampled with its own torch generator seeded by
        ``seed + i``, so that an answer does not depend on the batch it was decoded in), ``batch_size`` prompts
        a ``generate`` call, left-padded."""
        if self.masked:
            raise EatkitError(f"'{self.id}' is a masked language model: the llm-iat test needs a causal one (hf-lm:)")
        self._load()
        seqs = [self._prompt_ids(i, prompt, max_new_tokens) for i, prompt in enumerate(prompts)]
        out = [""] * len(seqs)
        for batch in batches(seqs, self.batch_size, "answers"):
            for i, text in zip(batch, self._generate_batch([seqs[i] for i in batch], [seed + i for i in batch],
                                                            max_new_tokens, temperature)):
                out[i] = text
        return out

    def _prompt_ids(self, i: int, prompt: str, max_new_tokens: int) -> list[int]:
        tok = self._tokenizer
        if self._templated:
            messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
            ids = tok.apply_chat_template(messages, add_generation_prompt=True, return_dict=True)["input_ids"]
        else:
            ids = tok(prompt).input_ids
        ids = list(ids[0] if ids and isinstance(ids[0], list) else ids)
        limit = getattr(self._model.config, "max_position_embeddings", None)
        if limit is not None and len(ids) + max_new_tokens > limit:
            raise EatkitError(f"prompt {i} is {len(ids)} tokens; with {max_new_tokens} answer tokens it "
                              f"exceeds the {limit} positions of '{self.id}' (fewer --answer-tokens, or a shorter "
                              "template)")
        return ids

    def _generate_batch(self, seqs: Sequence[Sequence[int]], seeds: Sequence[int], max_new_tokens: int,
                        temperature: float) -> list[str]:
        import torch

        tok = self._tokenizer
        x, mask = padded(seqs, self._pad_id(), self._model.device, left=True)
        with torch.inference_mode():
            new = self._model.generate(
                x, attention_mask=mask, max_new_tokens=max_new_tokens, do_sample=False, temperature=None,
                top_k=None, top_p=None, pad_token_id=self._pad_id(),
                logits_processor=sampler(seeds, temperature, x.device))
        return [tok.decode(row[x.shape[1]:], skip_special_tokens=True) for row in new]


#: how the forward passes are filled (the manifest's ``batching``)
BATCHING = ("batch_size sequences a forward pass (sentences of a causal LM; masked copies across sentences of a "
            "masked LM; prompts of a generation), of similar length, right-padded for scores and left-padded "
            "for generation, padding masked")


def masked_lm(name: str, *, revision: str | None = None, device: str | None = None, precision: str | None = None,
              batch_size: int | None = None) -> LanguageModel:
    """``hf-mlm:<name>``: a masked language model (e.g. ``bert-base-uncased``)."""
    return LanguageModel(name, masked=True, revision=revision, device=device, precision=precision,
                         batch_size=batch_size)


def causal_lm(name: str, *, revision: str | None = None, device: str | None = None, precision: str | None = None,
              batch_size: int | None = None, chat_template: bool = True,
              generation: Mapping[str, Any] | Sequence[str] | None = None) -> LanguageModel:
    """``hf-lm:<name>``: a causal language model (e.g. ``gpt2``, an instruction-tuned chat model)."""
    return LanguageModel(name, masked=False, revision=revision, device=device, precision=precision,
                         batch_size=batch_size, chat_template=chat_template, generation=generation)
