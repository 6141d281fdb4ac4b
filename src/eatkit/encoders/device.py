"""Where and in which precision a neural encoder runs: ``device`` and ``precision`` options.

- ``device``: ``"auto"`` (a CUDA GPU when one is visible, else Apple's MPS, else the CPU), ``"cpu"``,
  ``"cuda"``, ``"cuda:N"`` or ``"mps"``. Asking for a GPU that is not there is a one-line error.
- ``precision``: ``"fp32"`` (default: exact reproducibility; on a CUDA GPU IEEE float32, TensorFloat-32
  off, see :func:`strict_fp32`), ``"bf16"`` or ``"fp16"`` (the forward pass under ``torch.autocast``; the
  embeddings are returned as float32).

Both change the embedding's bits, so the *kind* of device (``cpu``, ``cuda``, ``mps``) and the precision
are part of every cache key; the manifest also records the device's name. The device kind of ``"auto"``
is decided without importing torch (a fully cached run never imports it): from torch itself when it is
already imported, else from the NVIDIA driver's list of GPUs (``/proc/driver/nvidia/gpus``, filtered by
``CUDA_VISIBLE_DEVICES``) or an Apple-silicon Mac; the model load confirms it with torch.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import platform
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eatkit.errors import EatkitError

PRECISIONS: tuple[str, ...] = ("fp32", "bf16", "fp16")
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda", "cuda:N", "mps")
_DEVICE = re.compile(r"auto|cpu|mps|cuda(:\d+)?")
_NVIDIA_GPUS = Path("/proc/driver/nvidia/gpus")


def check_device(device: str) -> str:
    """Validate the spelling of a device option.

    >>> check_device("cuda:1")
    'cuda:1'
    >>> check_device("gpu")
    Traceback (most recent call last):
    eatkit.errors.EatkitError: unknown device 'gpu' (known: auto, cpu, cuda, cuda:N, mps)
    """
    if not isinstance(device, str) or not _DEVICE.fullmatch(device):
        raise EatkitError(f"unknown device '{device}' (known: {', '.join(DEVICES)})")
    return device


def check_precision(precision: str) -> str:
    """Validate a precision option.

    >>> check_precision("bf16")
    'bf16'
    """
    if precision not in PRECISIONS:
        raise EatkitError(f"unknown precision '{precision}' (known: {', '.join(PRECISIONS)})")
    return precision


def _visible_nvidia_gpus() -> int:
    """How many NVIDIA GPUs the driver lists and ``CUDA_VISIBLE_DEVICES`` leaves visible (no torch import)."""
    try:
        found = len(list(_NVIDIA_GPUS.iterdir()))
    except OSError:
        return 0
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return found
    listed = [v for v in visible.split(",") if v.strip()]
    if not listed or listed[0].strip() == "-1":
        return 0
    return min(found, len(listed))


def _apple_silicon() -> bool:
    return sys.platform == "darwin" and platform.machine() == "arm64"


def probe(kind: str) -> bool:
    """Whether a device of ``kind`` (``"cuda"`` or ``"mps"``) is usable, without importing torch unless it
    is already imported (see the module docstring)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        return bool(torch.cuda.is_available()) if kind == "cuda" else bool(torch.backends.mps.is_available())
    if importlib.util.find_spec("torch") is None:
        return False
    return _visible_nvidia_gpus() > 0 if kind == "cuda" else _apple_silicon()


def device_kind(device: str) -> str:
    """The kind of device (``"cpu"``, ``"cuda"`` or ``"mps"``) that ``device`` runs on: what enters the cache
    key. An explicit GPU that is not there is an error.

    >>> device_kind("cpu")
    'cpu'
    """
    kind = check_device(device).partition(":")[0]
    if kind == "auto":
        return next((k for k in ("cuda", "mps") if probe(k)), "cpu")
    if kind != "cpu" and not probe(kind):
        raise _absent(device)
    return kind


def default_batch_size(kind: str) -> int:
    """Stimuli per forward pass unless given: 32 on the CPU, 256 on a GPU (``kind`` from :func:`device_kind`).

    >>> default_batch_size("cpu"), default_batch_size("cuda")
    (32, 256)
    """
    return 32 if kind == "cpu" else 256


def default_workers(kind: str) -> int:
    """Image-decoding worker processes unless given: 2 on the CPU (the forward pass needs the cores); on a
    GPU, which waits for decoding, every usable core but one (at least 2, at most 32).

    >>> default_workers("cpu")
    2
    """
    if kind == "cpu":
        return 2
    return max(2, min(32, usable_cores() - 1))


def usable_cores() -> int:
    """The cores this process may run on.

    >>> usable_cores() >= 1
    True
    """
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


#: how the command line asks for another device; a sweep file says it with its model entry's key
#: (:func:`eatkit.run.sweep.run_sweep` words the cell's error with SWEEP_DEVICE_FIX)
DEVICE_FIX = "use --device cpu or auto"
SWEEP_DEVICE_FIX = "set the model entry's key device = \"cpu\" or \"auto\" in the sweep file"


def _absent(device: str) -> EatkitError:
    what = "no CUDA GPU is visible" if device.startswith("cuda") else "Apple's MPS is not available"
    return EatkitError(f"device '{device}' was requested but {what}: {DEVICE_FIX}")


def torch_device(torch: Any, device: str) -> Any:
    """The ``torch.device`` of ``device`` (``"auto"`` resolved by torch itself); an absent GPU, or a CUDA
    index past the last GPU, is a one-line error."""
    kind = check_device(device).partition(":")[0]
    if kind == "auto":
        kind = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
        device = kind
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise _absent(device)
        index = int(device.partition(":")[2] or 0)
        if index >= torch.cuda.device_count():
            raise EatkitError(f"device '{device}' does not exist: {torch.cuda.device_count()} CUDA GPU(s) visible")
        return torch.device("cuda", index)
    if kind == "mps" and not torch.backends.mps.is_available():
        raise _absent(device)
    return torch.device(kind)


def device_name(torch: Any, device: Any) -> str:
    """A human-readable name of a ``torch.device`` for the manifest (the GPU model, or the CPU)."""
    if device.type == "cuda":
        return str(torch.cuda.get_device_name(device))
    if device.type == "mps":
        return "Apple MPS"
    return platform.processor() or platform.machine() or "cpu"


def inference(torch: Any, device: Any, precision: str) -> contextlib.ExitStack:
    """``torch.inference_mode()``, plus ``torch.autocast`` to bf16/fp16 unless ``precision`` is fp32; on a
    CUDA GPU in fp32, :func:`strict_fp32` as well."""
    stack = contextlib.ExitStack()
    stack.enter_context(torch.inference_mode())
    if precision == "fp32" and device.type == "cuda":
        stack.enter_context(strict_fp32(torch))
    if precision != "fp32":
        dtype = torch.bfloat16 if precision == "bf16" else torch.float16
        stack.enter_context(torch.autocast(device_type=device.type, dtype=dtype))
    return stack


@contextlib.contextmanager
def strict_fp32(torch: Any) -> Iterator[None]:
    """IEEE float32 on a CUDA GPU for the duration: TensorFloat-32 off in cuDNN convolutions (on by default in
    PyTorch) and in cuBLAS matrix products, and cuDNN restricted to deterministic algorithms chosen without
    benchmarking, so that ``fp32`` means float32 arithmetic and a rerun gives the same bits. The previous
    settings are restored on exit (no global state is left changed)."""
    matmul = torch.backends.cuda.matmul
    previous = matmul.allow_tf32
    matmul.allow_tf32 = False
    try:
        with torch.backends.cudnn.flags(enabled=True, benchmark=False, deterministic=True, allow_tf32=False):
            yield
    finally:
        matmul.allow_tf32 = previous
