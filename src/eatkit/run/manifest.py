"""The run manifest: everything a reader needs to reproduce a run to the digit."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import platform
import sys
from datetime import datetime, timezone
from typing import Any

import numpy as np
import scipy

from eatkit._version import __version__
from eatkit.sources.base import EmbeddingSource
from eatkit.stimuli.types import Suite


def suite_sha256(suite: Suite) -> str:
    """SHA-256 of the suite's content (its tests and stimuli), independent of file formatting."""
    payload = json.dumps(dataclasses.asdict(suite) | {"source": ""}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def build_manifest(
    suite: Suite,
    source: EmbeddingSource,
    statistics: dict[str, Any],
    stimuli: dict[str, Any],
    command: str | None,
) -> dict[str, Any]:
    """The manifest of a run: versions, suite, source (model, layer, pooling, preprocessing, checksums),
    statistical options (seed, permutations, ddof...), and per test and set every stimulus embedded with
    its SHA-256 and one SHA-256 over the set."""
    return {
        "eatkit_version": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "suite": {
            "id": suite.id,
            "title": suite.title,
            "citation": suite.citation,
            "file": suite.source,
            "content_sha256": suite_sha256(suite),
        },
        "source": source.manifest(),
        "statistics": statistics,
        "stimuli": stimuli,
        "environment": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "platform": platform.platform(),
            "executable": sys.executable,
        },
    }
