"""Fine-tuning checkpoints: safetensors files of a network's tensors plus eatkit metadata (JSON).

Loading never executes code (safetensors holds tensors only), and a checkpoint must fit the network it is
loaded into exactly (every tensor name and shape), or the error names the first mismatch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eatkit.io import atomic_write_bytes, file_sha256, load_torch_weights, require, safetensors_metadata
from eatkit.errors import EatkitError

CHECKPOINT_FORMAT = "eatkit.finetune/1"


def save_checkpoint(path: str | Path, net: Any, metadata: dict[str, Any]) -> Path:
    """Write the network's state dict and ``metadata`` (JSON) as a safetensors file."""
    st = require("safetensors.torch", "fine-tuning checkpoints", "image")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().contiguous() for k, v in net.state_dict().items()}
    # through the one writer: whole or not at all, with the mode of every file eatkit writes (0644 under the
    # usual umask; safetensors' own save_file left 0600)
    atomic_write_bytes(path, st.save(state, metadata={"format": CHECKPOINT_FORMAT, "eatkit": json.dumps(metadata)}))
    return path


def checkpoint_metadata(path: str | Path) -> dict[str, Any]:
    """The metadata of an eatkit checkpoint (``{}`` for a plain safetensors state dict)."""
    path = Path(path)
    if not path.exists():
        raise EatkitError(f"checkpoint {path} not found")
    meta = safetensors_metadata(path, "checkpoint")  # the one reader: a regular safetensors file
    return json.loads(meta["eatkit"]) if meta.get("format") == CHECKPOINT_FORMAT else {}


def finetuned_checkpoint(path: str | Path | None, architecture: str) -> tuple[Path | None, int | None]:
    """A fine-tuning checkpoint and its head width, checked against the model it is loaded into
    (``(None, None)`` without one)."""
    if path is None:
        return None, None
    meta = checkpoint_metadata(path)
    if meta and meta.get("architecture") != architecture:
        raise EatkitError(f"checkpoint {path} was fine-tuned from {meta.get('model')} "
                          f"({meta.get('architecture')}), which does not fit {architecture}")
    return Path(path), meta.get("num_classes")


def required_checkpoint(model: str, path: str | Path | None) -> Path:
    """The checkpoint file a model cannot do without (``--weights``), or a one-line error.

    >>> required_checkpoint("simclrv2", None)
    Traceback (most recent call last):
    eatkit.errors.EatkitError: simclrv2 needs its checkpoint file: --weights PATH (see docs/models.md)
    """
    if path is None:
        raise EatkitError(f"{model} needs its checkpoint file: --weights PATH (see docs/models.md)")
    path = Path(path).expanduser()
    if not path.is_file():
        raise EatkitError(f"checkpoint {path} not found")
    return path


def checkpoint_identity(path: str | Path) -> str:
    """The weights identity of a checkpoint file: its name and SHA-256 (part of the cache key)."""
    return f"checkpoint {Path(path).name} sha256:{file_sha256(path)}"


def load_checkpoint_into(net: Any, path: str | Path, model: str) -> None:
    """Load a checkpoint's tensors into ``net`` (strictly: every key and shape must match), or raise one
    line saying why the checkpoint does not fit ``model``."""
    checkpoint_metadata(path)   # a readable safetensors file
    load_state_strict(net, load_torch_weights(path, what="checkpoint", safetensors=True), f"checkpoint {path}", model)


def load_state_strict(net: Any, state: dict[str, Any], source: str, model: str) -> None:
    """Load ``state`` into ``net`` only if it fits exactly (the same keys, the same shapes); otherwise
    nothing is loaded and the one-line error names the first missing or unexpected key (or the first
    shape that differs) of ``source`` (e.g. ``"checkpoint moco.pth.tar"``)."""
    expected = net.state_dict()
    missing = [k for k in expected if k not in state]
    extra = [k for k in state if k not in expected]
    shapes = [k for k in expected if k in state and tuple(state[k].shape) != tuple(expected[k].shape)]
    if missing or extra or shapes:
        what = (f"{len(missing)} missing tensor(s) (e.g. {missing[0]})" if missing else
                f"{len(extra)} unexpected tensor(s) (e.g. {extra[0]})" if extra else
                f"tensor {shapes[0]} has shape {tuple(state[shapes[0]].shape)}, the model's is "
                f"{tuple(expected[shapes[0]].shape)}")
        raise EatkitError(f"{source} does not fit {model}: {what}")
    net.load_state_dict(state)
