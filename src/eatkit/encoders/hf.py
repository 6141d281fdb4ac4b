"""Hugging Face models: their files (local folder or hub), weights identity, and checked loading.

Shared by the text encoders (``hf:``), the vision-language encoders (``hf-clip:``, ``hf-blip:``) and
ImageGPT. A model's weights identity is the hub commit it resolves to (the snapshot folder of its
``config.json``), or for a local folder the SHA-256 of its weight, configuration and vocabulary files.
:func:`load_pretrained` refuses a model of another family (``config.json``'s ``model_type``) and a
checkpoint that lacks weights of the model class or holds weights of the wrong shape, which
transformers would otherwise initialise at random with a warning.
"""

from __future__ import annotations

import socket
import urllib.parse
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from eatkit.io import file_sha256, read_json, require
from eatkit.errors import EatkitError, one_line

#: files of a local model folder that determine its output (weights, configuration, vocabulary)
_IDENTITY_SUFFIXES: tuple[str, ...] = (".safetensors", ".bin", ".pt", ".pth", ".json", ".txt", ".model")
#: ``model_type`` of the vision-language models and the family that embeds them (not ``hf:``)
VL_MODEL_TYPES: dict[str, str] = {"clip": "hf-clip", "blip": "hf-blip"}


#: seconds to wait for the hub's TCP connection before treating it as unreachable
HUB_PROBE_TIMEOUT_S = 3.0


@cache
def hub_offline() -> bool:
    """Whether Hugging Face downloads are off: ``HF_HUB_OFFLINE=1``, or the hub cannot be reached (one
    TCP connection to its endpoint, :data:`HUB_PROBE_TIMEOUT_S`), in which case huggingface_hub is put in
    offline mode for the rest of the process (transformers, timm and open_clip included): models are read
    from the local cache only, and a model that is not there fails at once, without huggingface_hub's
    retries (about 25 s of repeated messages per file). Checked once per process.

    >>> isinstance(hub_offline(), bool)
    True
    """
    try:
        from huggingface_hub import constants
    except ImportError:  # nothing can download from the hub
        return True
    if constants.HF_HUB_OFFLINE:
        return True
    host = urllib.parse.urlsplit(constants.ENDPOINT).hostname or "huggingface.co"
    try:
        socket.create_connection((host, 443), timeout=HUB_PROBE_TIMEOUT_S).close()
    except OSError:
        constants.HF_HUB_OFFLINE = True  # read at call time by huggingface_hub and transformers
        return True
    return False


#: what an offline error about a transformers model adds: the fix that needs no network
LOCAL_FOLDER = ("a local model folder works in its place: the model's prefix and the folder, e.g. hf-lm:<folder> "
                "(a folder written by save_pretrained)")


def fetch_error(what: str, failure: object, folder_works: bool = False) -> EatkitError:
    """The one-line error for a model whose files could not be fetched: offline (:func:`hub_offline`), that
    it is not in the local cache (and, where ``folder_works``, that a local folder works instead:
    :data:`LOCAL_FOLDER`); online, the failure (e.g. no such model).

    >>> str(fetch_error("the model 'x'", OSError("404"))).startswith("cannot load the model 'x'")
    True
    """
    if hub_offline():
        return EatkitError(f"cannot load {what}: it is not in the local cache and the Hugging Face hub cannot be "
                           "reached (HF_HUB_OFFLINE=1 or no network)" + (f"; {LOCAL_FOLDER}" if folder_works else ""))
    return EatkitError(f"cannot load {what} (not published?): {one_line(failure)}")


def hf_file(model_id: str, filename: str, revision: str | None = None) -> Path | None:
    """A file of a Hugging Face model: from a local model folder, or from the hub (its local cache when
    ``HF_HUB_OFFLINE=1``); ``None`` when the model has no such file."""
    local = Path(model_id).expanduser()
    if local.is_dir():
        if revision not in (None, "main"):
            raise EatkitError(f"revision '{revision}' applies to hub models; {model_id} is a local folder (its "
                              "files are what they are)")
        path = local / filename
        return path if path.is_file() else None
    hub = require("huggingface_hub", f"the Hugging Face model '{model_id}'", "text")
    errors = require("huggingface_hub.errors", f"the Hugging Face model '{model_id}'", "text")
    hub_offline()
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
    raise fetch_error(f"the Hugging Face model '{model_id}'", failure, folder_works=True)


def hf_json(model_id: str, filename: str, revision: str | None = None) -> dict[str, Any] | None:
    """A JSON file of a Hugging Face model (see :func:`hf_file`), parsed; ``None`` when absent."""
    path = hf_file(model_id, filename, revision)
    if path is None:
        return None
    return read_json(path, f"{filename} of model '{model_id}'")  # the one reader: regular, bounded, depth checked


def hub_commit(model_id: str, revision: str | None = None, filename: str = "config.json") -> str:
    """The commit that ``revision`` (a branch, tag or commit; default ``main``) of a hub model resolves to
    now: the snapshot folder of its ``filename`` (fetched, or read from the local cache when offline)."""
    config = hf_file(model_id, filename, revision)
    if config is None:
        raise EatkitError(f"Hugging Face model '{model_id}' has no {filename}")
    # hub cache layout: .../models--org--name/snapshots/<commit>/config.json
    return config.parent.name if config.parent.parent.name == "snapshots" else revision or "unknown"


def hub_pin(weights: str, revision: str | None) -> dict[str, str] | None:
    """The manifest's record of a hub model's weights: repository, the revision asked for and the commit
    it resolved to, from a weights identity ``hf:<repo>@<commit>`` (``None`` for other weights).

    >>> hub_pin("hf:org/tiny@0123abc", None)
    {'repo': 'org/tiny', 'revision': 'main', 'commit': '0123abc'}
    """
    if not weights.startswith("hf:") or "@" not in weights:
        return None
    repo, _, commit = weights[3:].rpartition("@")
    return {"repo": repo, "revision": revision or "main", "commit": commit}


def pinned_revision(weights: str, revision: str | None) -> str | None:
    """The revision to load a hub model at: the commit its weights identity pins (:func:`hub_pin`), so that
    the weights loaded are the ones recorded even if the branch moves in between; else ``revision``.

    >>> pinned_revision("hf:org/tiny@0123abc", "main"), pinned_revision("config.json:ab12", None)
    ('0123abc', None)
    """
    pin = hub_pin(weights, revision)
    return pin["commit"] if pin is not None and pin["commit"] != "unknown" else revision


def hf_weights_identity(model_id: str, revision: str | None = None,
                        hashes: Callable[[list[str]], list[str]] | None = None, filename: str = "config.json") -> str:
    """What pins a model's weights: the hub commit of ``model_id`` (resolved through its ``filename``,
    :func:`hub_commit`), or for a local folder the SHA-256 of its weight, configuration and vocabulary files
    (computed by ``hashes``, e.g. an encoder's remembered :meth:`~eatkit.encoders.base.NeuralEncoder.file_hashes`).

    >>> import tempfile, pathlib; d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "config.json").write_text("{}")
    >>> hf_weights_identity(str(d))
    'config.json:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a'
    """
    local = Path(model_id).expanduser()
    if local.is_dir():
        files = sorted(p for p in local.iterdir() if p.is_file() and p.suffix in _IDENTITY_SUFFIXES)
        digests = hashes([str(p) for p in files]) if hashes else [file_sha256(p) for p in files]
        return " ".join(f"{p.name}:{digest}" for p, digest in zip(files, digests))
    return f"hf:{model_id}@{hub_commit(model_id, revision, filename)}"


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
    offline = not Path(name).expanduser().is_dir() and hub_offline()
    try:
        config = transformers.AutoConfig.from_pretrained(name, revision=revision)
        check_model_type(name, config.model_type, model_type, what)
        companion = getattr(transformers, processor).from_pretrained(name, revision=revision)
        model, info = getattr(transformers, model_class).from_pretrained(
            name, revision=revision, config=config, output_loading_info=True)
    except EatkitError:
        raise
    except OSError as exc:  # a file that is neither in a local folder nor fetchable
        raise (fetch_error(what, exc, folder_works=True) if offline else EatkitError(f"cannot load {what}: {one_line(exc)}")) from None
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
