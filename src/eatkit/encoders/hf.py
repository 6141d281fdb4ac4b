"""Hugging Face models: their files (local folder or hub), weights identity, and checked loading.

Shared by the text encoders (``hf:``), the vision-language encoders (``hf-clip:``, ``hf-blip:``) and
ImageGPT. A model's weights identity is the hub commit it resolves to (the snapshot folder of its
``config.json``), or for a local folder the SHA-256 of its weight, configuration and vocabulary files.
:func:`load_pretrained` refuses a model of another family (``config.json``'s ``model_type``) and a
checkpoint that lacks weights of the model class or holds weights of the wrong shape, which
transformers would otherwise initialise at random with a warning.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eatkit.io import file_sha256, require
from eatkit.errors import EatkitError, one_line

#: files of a local model folder that determine its output (weights, configuration, vocabulary)
_IDENTITY_SUFFIXES: tuple[str, ...] = (".safetensors", ".bin", ".pt", ".pth", ".json", ".txt", ".model")
#: ``model_type`` of the vision-language models and the family that embeds them (not ``hf:``)
VL_MODEL_TYPES: dict[str, str] = {"clip": "hf-clip", "blip": "hf-blip"}


def hf_file(model_id: str, filename: str, revision: str | None = None) -> Path | None:
    """A file of a Hugging Face model: from a local model folder, or from the hub (its local cache when
    ``HF_HUB_OFFLINE=1``); ``None`` when the model has no such file."""
    local = Path(model_id).expanduser()
    if local.is_dir():
        path = local / filename
        return path if path.is_file() else None
    hub = require("huggingface_hub", f"the Hugging Face model '{model_id}'", "text")
    errors = require("huggingface_hub.errors", f"the Hugging Face model '{model_id}'", "text")
    try:
        return Path(hub.hf_hub_download(model_id, filename, revision=revision))
    except errors.LocalEntryNotFoundError as exc:  # a subclass of EntryNotFoundError: offline, not cached
        failure: Exception = exc
    except errors.EntryNotFoundError:
        return None
    except errors.RepositoryNotFoundError:
        raise EatkitError(f"unknown Hugging Face model '{model_id}' (no such repository, or it is private)") from None
    except errors.RevisionNotFoundError:
        raise EatkitError(f"Hugging Face model '{model_id}' has no revision '{revision}'") from None
    except Exception as exc:  # noqa: BLE001 -- network errors come in many types
        failure = exc
    raise EatkitError(f"cannot fetch the Hugging Face model '{model_id}' (offline and not cached?): "
                      f"{one_line(failure)}")


def hf_json(model_id: str, filename: str, revision: str | None = None) -> dict[str, Any] | None:
    """A JSON file of a Hugging Face model (see :func:`hf_file`), parsed; ``None`` when absent."""
    path = hf_file(model_id, filename, revision)
    if path is None:
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EatkitError(f"cannot read {filename} of model '{model_id}': {one_line(exc)}") from None


def hf_weights_identity(model_id: str, revision: str | None = None,
                        hashes: Callable[[list[str]], list[str]] | None = None) -> str:
    """What pins a model's weights: the hub commit of ``model_id`` (resolved through its config.json), or
    for a local folder the SHA-256 of its weight, configuration and vocabulary files (computed by
    ``hashes``, e.g. an encoder's remembered :meth:`~eatkit.encoders.base.NeuralEncoder.file_hashes`).

    >>> import tempfile, pathlib; d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "config.json").write_text("{}")
    >>> hf_weights_identity(str(d))
    'config.json:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a'
    """
    local = Path(model_id).expanduser()
    if local.is_dir():
        files = sorted(p for p in local.iterdir() if p.is_file() and p.suffix in _IDENTITY_SUFFIXES)
        digests = hashes([str(p) for p in files]) if hashes else [file_sha256(p) for p in files]
        return " ".join(f"{p.name}:{digest}" for p, digest in zip(files, digests))
    config = hf_file(model_id, "config.json", revision)
    if config is None:
        raise EatkitError(f"Hugging Face model '{model_id}' has no config.json")
    # hub cache layout: .../models--org--name/snapshots/<commit>/config.json
    commit = config.parent.name if config.parent.parent.name == "snapshots" else revision or "unknown"
    return f"hf:{model_id}@{commit}"


def check_model_type(name: str, model_type: str, expected: str | None, what: str) -> None:
    """Refuse a model of another family: ``expected`` is the required ``model_type`` of config.json, or
    ``None`` for a text model (any type but the vision-language ones of :data:`VL_MODEL_TYPES`).

    >>> check_model_type("m", "bert", "clip", "the model 'hf-clip:m'")
    Traceback (most recent call last):
    eatkit.errors.EatkitError: cannot load the model 'hf-clip:m': its config.json says model_type 'bert', not 'clip'
    """
    if expected is None and model_type in VL_MODEL_TYPES:
        raise EatkitError(f"cannot load {what}: its config.json says model_type '{model_type}': "
                          f"use {VL_MODEL_TYPES[model_type]}:{name}")
    if expected is not None and model_type != expected:
        raise EatkitError(f"cannot load {what}: its config.json says model_type '{model_type}', not '{expected}'")


def load_pretrained(model_class: str, name: str, revision: str | None, what: str, extra: str, *,
                    model_type: str | None = None, processor: str = "AutoTokenizer") -> tuple[Any, Any]:
    """``transformers.<model_class>.from_pretrained(name)`` in eval mode and its ``<processor>`` (the
    tokenizer by default), after :func:`check_model_type`; a checkpoint that lacks weights of the model
    (other than a pooler, which no eatkit embedding reads) or holds weights of the wrong shape is
    refused. transformers' progress bars and warnings are off (eatkit draws its own progress); any load
    failure is a one-line :class:`EatkitError`."""
    transformers = require("transformers", what, extra)
    logging = transformers.utils.logging
    bars, verbosity = logging.is_progress_bar_enabled(), logging.get_verbosity()
    logging.disable_progress_bar()
    logging.set_verbosity_error()
    try:
        config = transformers.AutoConfig.from_pretrained(name, revision=revision)
        check_model_type(name, config.model_type, model_type, what)
        companion = getattr(transformers, processor).from_pretrained(name, revision=revision)
        model, info = getattr(transformers, model_class).from_pretrained(
            name, revision=revision, config=config, output_loading_info=True)
    except EatkitError:
        raise
    except Exception as exc:  # noqa: BLE001 -- hub, file and checkpoint errors come in many types
        raise EatkitError(f"cannot load {what}: {one_line(exc)}") from None
    finally:
        logging.set_verbosity(verbosity)
        if bars:
            logging.enable_progress_bar()
    missing = sorted(k for k in info["missing_keys"] if not k.startswith("pooler."))
    wrong = sorted(str(k[0] if isinstance(k, tuple) else k) for k in info["mismatched_keys"])
    if missing or wrong:
        raise EatkitError(f"cannot load {what}: its checkpoint lacks {len(missing)} weights and has {len(wrong)} "
                          f"of the wrong shape for {model_class} (first: {(missing or wrong)[0]}); eatkit does not "
                          "embed with randomly initialised weights")
    return model.eval(), companion
