"""Digests of every bundled suite's results.json on a stand-in embedding source (deterministic vectors from
each stimulus's text), with the metrics on its smallest EAT tests: the refactors must leave them byte-identical.
``python tests/suite_digests.py`` prints them (run it on a commit to record that commit's digests)."""

from __future__ import annotations

import hashlib
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from eatkit.sources.base import Embedded, EmbeddingSource

#: the options of every run (small, so that the whole corpus runs in seconds)
OPTIONS = {"seed": 0, "permutations": 99, "n_bootstrap": 5}
#: the metrics run on the smallest EAT tests of each suite (all of them: SEAT's sentence sets take minutes)
METRIC_TESTS = 3
#: the members of the metrics family the digests were recorded with (a later member, e.g. clustering, adds
#: records, and with them q-values of a run-wide family: the recorded bytes stay those of these members)
RECORDED_METRICS = "rnd,ect,ripa,mac,rnsb,direct-bias"
#: stimuli standing in for an image category (the stand-in embeds no files)
PER_CATEGORY = 6


class StandIn(EmbeddingSource):
    """Every stimulus (word, sentence, image category member) to a unit vector seeded by its text."""

    id = "stand-in"
    modalities = frozenset({"word", "sentence", "image"})

    def embed(self, stimuli):
        ids = stimuli.items or tuple(f"{stimuli.category}/{i}" for i in range(PER_CATEGORY))
        rows = [np.random.default_rng(int.from_bytes(hashlib.sha256(i.encode()).digest()[:8], "little"))
                .normal(size=16) for i in ids]
        return Embedded(np.asarray(rows), tuple(ids))

    def manifest(self):
        return {"model": self.id}


def recorded_names(text: str) -> bytes:
    """results.json with the field names of the recorded digests: issue 44 gave each quantity one name
    (records' ``renamed``: EAT ``effect_size_ci`` -> ``ci``, ``level2_x_p_exact`` -> ``level2_x_p_value_exact``,
    metrics ``n_resamples`` -> ``n_bootstrap``); the values, their order and the JSON layout are unchanged,
    so the bytes hashed are those written before the renames (``eatkit.run.folder.results_json``'s layout)."""
    import json

    from eatkit.analyses import get_analysis

    def back(record: dict) -> dict:
        old = {new: old for old, new in get_analysis(record.get("kind", "eat")).record_type.renamed.items()}
        return {old.get(k, k): v for k, v in record.items()}

    ending = text[len(text.rstrip("\n")):]  # the file's own line end
    return (json.dumps([back(r) for r in json.loads(text)], indent=2, allow_nan=False) + ending).encode()


def digests() -> dict[str, str]:
    """suite id -> SHA-256 of its results.json (or the error it stops with)."""
    from eatkit.analyses.metrics import parse_metrics, with_metrics
    from eatkit.run.runner import run_suite
    from eatkit.stimuli.loader import list_suites, load_suite

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for info in list_suites():
            suite = load_suite(info.id)
            if any(t.kind != "eat" and t.kind != "sc-eat" for t in suite.tests):
                continue  # grounded suites need a joint model
            size = lambda t: (sum(len(s.items) for s in t.sets().values()), t.id)  # noqa: E731
            eats = sorted((t for t in suite.tests if t.kind == "eat"), key=size)[:METRIC_TESTS]
            paired = {t.id: len({len(t.sets()[r].items) for r in "XY"}) == 1 for t in eats}
            for metrics, equal in ((RECORDED_METRICS, True), ("rnd,ect,mac,rnsb", False)):  # ripa, direct bias: |X| = |Y|
                if any(v == equal for v in paired.values()):
                    suite, _ = with_metrics(suite, parse_metrics(metrics), [t for t, v in paired.items() if v == equal])
            started = time.perf_counter()
            run = run_suite(suite, StandIn(), **OPTIONS)
            print(info.id, f"{time.perf_counter() - started:.1f} s", file=sys.stderr)
            folder = run.save(Path(tmp) / info.id)
            out[info.id] = hashlib.sha256(recorded_names((folder / "results.json").read_text())).hexdigest()
    return out


if __name__ == "__main__":
    for suite, digest in digests().items():
        print(f'    "{suite}": "{digest}",')
    sys.exit(0)
