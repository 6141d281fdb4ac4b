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
from collections.abc import Sequence
from typing import Any

import numpy as np

from eatkit.encoders.hf import hf_weights_identity, hub_pin, load_pretrained, pinned_revision
from eatkit.errors import EatkitError
from eatkit.io import ensure_installed
from eatkit.sources.answers import request_of
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stimuli.language import PAIRS, SENTENCES, request_settings
from eatkit.stimuli.types import StimulusSet

#: the system message of a chat template (Bai et al. 2025 sent this one to GPT-4o)
SYSTEM = "You are a helpful assistant."
PRECISIONS = {"float32": "float32", "float64": "float64", "bfloat16": "bfloat16", "float16": "float16"}


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
    """

    modalities = frozenset({"sentence"})

    def __init__(self, name: str, *, masked: bool = False, revision: str | None = None, device: str | None = None,
                 precision: str | None = None, batch_size: int | None = None, chat_template: bool = True) -> None:
        ensure_installed("transformers", f"the language model '{name}'", "text")
        self.name, self.masked, self.revision = name, bool(masked), revision
        self.id = f"{'hf-mlm' if masked else 'hf-lm'}:{name}"
        self.device = device or "cpu"
        self.precision = precision or "float32"
        if self.precision not in PRECISIONS:
            raise EatkitError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
            raise EatkitError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.batch_size = batch_size or 32
        self.chat_template = bool(chat_template)
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
            self._load()
            scores = [s for i in range(0, len(items), 2) for s in self.pair_scores(items[i], items[i + 1])]
            vectors: np.ndarray = np.asarray(scores, dtype=float)[:, None]
        elif request == SENTENCES:
            self._load()
            vectors = np.asarray([self.sentence_score(s) for s in items], dtype=float)[:, None]
        elif (settings := request_settings(stimuli)) is not None:
            settings.pop("recorded")
            vectors = np.asarray(self.generate(items, **settings), dtype=object)
        elif (asked := request_of(stimuli)) is not None:  # multiple-choice items (eatkit.encoders.answering)
            from eatkit.encoders.answering import answer_items

            return answer_items(self, stimuli, asked)
        elif not request and stimuli.modality == "sentence":  # their representation (an association test)
            vectors = np.asarray([self.hidden_mean(s) for s in items], dtype=float)
        else:
            raise EatkitError(f"'{self.id}' is a language model: it scores and answers text for the crows-pairs, "
                              f"stereoset and llm-iat tests; it does not embed set '{stimuli.name}'")
        return Embedded(vectors=vectors, ids=tuple(items))

    def manifest(self) -> dict[str, Any]:
        return {"id": self.id, "model": self.name, "weights": self.weights, "revision": self.revision,
                "hub": hub_pin(str(self.weights), self.revision), "kind": "masked" if self.masked else "causal",
                "device_requested": self.device, "precision": self.precision, "batch_size": self.batch_size,
                "chat_template": self._templated if self._model is not None else self.chat_template,
                "system_message": SYSTEM,
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
        self._load()
        if not self.masked:
            return self.log_likelihood(first), self.log_likelihood(second)
        ids1, ids2 = self._ids(first), self._ids(second)
        one, two = shared_positions(ids1, ids2)
        # metric.py masks template positions 1 .. N-2: the first and last shared tokens are [CLS] and [SEP]
        return self._masked_sum(ids1, one[1:-1]), self._masked_sum(ids2, two[1:-1])

    def sentence_score(self, sentence: str) -> float:
        """Mean token log-likelihood of one sentence (StereoSet; module docstring)."""
        self._load()
        if self.masked:
            ids = self._ids(sentence)
            positions = list(range(1, len(ids) - 1))
            return self._masked_sum(ids, positions) / max(len(positions), 1)
        import torch

        bos, *ids = self._causal_ids(sentence)
        # StereoSet's eval_generative_models.py: the first token given the start token alone, the others given
        # the sentence's earlier tokens (without the start token); the mean log-probability of the tokens
        with torch.inference_mode():
            first = torch.log_softmax(self._model(input_ids=torch.tensor([[bos]], device=self._model.device))
                                      .logits[0, -1].double(), dim=-1)[ids[0]]
        return (float(first) + (self._causal_sum(ids) if len(ids) > 1 else 0.0)) / len(ids)

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
        self._load()
        return self._causal_sum(self._causal_ids(sentence))

    def _causal_ids(self, sentence: str) -> list[int]:
        tok = self._tokenizer
        ids = list(tok.encode(sentence, add_special_tokens=False))
        bos = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        if bos is None:
            raise EatkitError(f"'{self.id}' has neither a BOS nor an end-of-text token to start a sentence with")
        if not ids:
            raise EatkitError(f"'{self.id}' tokenises the sentence {sentence!r} to nothing")
        return [bos, *ids]

    def _causal_sum(self, ids: list[int]) -> float:
        import torch

        with torch.inference_mode():
            x = torch.tensor([ids], device=self._model.device)
            logits = self._model(input_ids=x).logits[0, :-1].double()
            logp = torch.log_softmax(logits, dim=-1)
            return float(logp.gather(1, x[0, 1:, None]).sum())

    def _masked_sum(self, ids: list[int], positions: list[int]) -> float:
        """Sum over ``positions`` of log p(original token | the sentence with that one token masked)."""
        import torch

        if not positions:
            return 0.0
        mask = self._tokenizer.mask_token_id
        total = 0.0
        with torch.inference_mode():
            for start in range(0, len(positions), self.batch_size):
                chunk = positions[start:start + self.batch_size]
                x = torch.tensor([ids] * len(chunk), device=self._model.device)
                rows = torch.arange(len(chunk), device=x.device)
                cols = torch.tensor(chunk, device=x.device)
                x[rows, cols] = mask
                logits = self._model(input_ids=x).logits[rows, cols].double()
                target = torch.tensor([ids[p] for p in chunk], device=x.device)
                total += float(torch.log_softmax(logits, dim=-1)[rows, target].sum())
        return total

    # -- generation -----------------------------------------------------------------------------------------
    def generate(self, prompts: Sequence[str], *, max_new_tokens: int, temperature: float, seed: int) -> list[str]:
        """The model's answer to each prompt (prompt ``i`` sampled with torch seeded by ``seed + i``)."""
        import torch

        if self.masked:
            raise EatkitError(f"'{self.id}' is a masked language model: the llm-iat test needs a causal one (hf-lm:)")
        self._load()
        tok = self._tokenizer
        out = []
        for i, prompt in enumerate(prompts):
            if self._templated:
                messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
                ids = tok.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                              return_dict=True)["input_ids"]
            else:
                ids = tok(prompt, return_tensors="pt").input_ids
            ids = ids.to(self._model.device)
            limit = getattr(self._model.config, "max_position_embeddings", None)
            if limit is not None and ids.shape[1] + max_new_tokens > limit:
                raise EatkitError(f"prompt {i} is {ids.shape[1]} tokens; with {max_new_tokens} answer tokens it "
                                  f"exceeds the {limit} positions of '{self.id}' (fewer --answer-tokens, or a shorter "
                                  "template)")
            torch.manual_seed(seed + i)
            sample = temperature > 0
            with torch.inference_mode():
                new = self._model.generate(
                    ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new_tokens, do_sample=sample,
                    temperature=temperature if sample else None, top_k=0 if sample else None, top_p=None,
                    pad_token_id=tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id)
            out.append(tok.decode(new[0, ids.shape[1]:], skip_special_tokens=True))
        return out


def masked_lm(name: str, *, revision: str | None = None, device: str | None = None, precision: str | None = None,
              batch_size: int | None = None) -> LanguageModel:
    """``hf-mlm:<name>``: a masked language model (e.g. ``bert-base-uncased``)."""
    return LanguageModel(name, masked=True, revision=revision, device=device, precision=precision,
                         batch_size=batch_size)


def causal_lm(name: str, *, revision: str | None = None, device: str | None = None, precision: str | None = None,
              batch_size: int | None = None, chat_template: bool = True) -> LanguageModel:
    """``hf-lm:<name>``: a causal language model (e.g. ``gpt2``, an instruction-tuned chat model)."""
    return LanguageModel(name, masked=False, revision=revision, device=device, precision=precision,
                         batch_size=batch_size, chat_template=chat_template)
