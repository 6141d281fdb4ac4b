"""Compute WEFE's reference values for eatkit's metric tests (tests/test_metrics.py).

Run in a virtual environment with WEFE 1.0.1 (it pins old numpy/scipy, so never in eatkit's own):

    python3 -m venv /tmp/metrics-venv && /tmp/metrics-venv/bin/pip install wefe==1.0.1
    /tmp/metrics-venv/bin/python tests/data/wefe/generate.py ../shared/data > tests/data/wefe/reference.json

It reads the GloVe 840B items and the WEAT word lists of ../shared/data and writes only numbers (WEFE's
RND, ECT, RIPA, MAC and RNSB over 20 seeds) with the queries' word lists, plus a tiny synthetic set
(its vectors included, drawn here from a fixed seed). The vectors enter WEFE as float64, like eatkit's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import wefe
from gensim.models import KeyedVectors
from wefe.metrics import ECT, MAC, RIPA, RND, RNSB
from wefe.query import Query
from wefe.word_embedding_model import WordEmbeddingModel

#: WEAT tests whose target sets have equal sizes (RIPA pairs them)
WEAT_TESTS = (1, 2, 6, 7, 8)
RNSB_SEEDS = range(20)


def model_of(words: list[str], vectors: np.ndarray) -> WordEmbeddingModel:
    kv = KeyedVectors(vectors.shape[1], count=0, dtype=np.float64)
    kv.add_vectors(words, vectors.astype(np.float64))
    return WordEmbeddingModel(kv, "reference")


def values(model: WordEmbeddingModel, X: list[str], Y: list[str], A: list[str], B: list[str]) -> dict:
    """WEFE's metrics of one query: (2, 1) metrics with the attribute set A ∪ B (as eatkit's run kinds)."""
    q21 = Query([X, Y], [A + B], ["X", "Y"], ["AB"])
    q22 = Query([X, Y], [A, B], ["X", "Y"], ["A", "B"])
    kw = {"lost_vocabulary_threshold": 0.0}
    rnsb = [RNSB().run_query(q22, model, random_state=s, **kw)["result"] for s in RNSB_SEEDS]
    return {
        "rnd_euclidean": RND().run_query(q21, model, distance="norm", **kw)["result"],
        "rnd_cosine": RND().run_query(q21, model, distance="cos", **kw)["result"],
        "ect": ECT().run_query(q21, model, **kw)["result"],
        "ripa": RIPA().run_query(q21, model, **kw)["result"],
        "mac": MAC().run_query(q22, model, **kw)["result"],
        "rnsb": {"seeds": list(RNSB_SEEDS), "values": rnsb, "mean": float(np.mean(rnsb)),
                 "sd": float(np.std(rnsb, ddof=1)), "min": float(np.min(rnsb)), "max": float(np.max(rnsb))},
    }


def read_vectors(path: Path) -> dict[str, np.ndarray]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.rstrip().split(" ")
        out[parts[0]] = np.array(parts[1:], dtype=np.float64)
    return out


def main(shared: Path) -> dict:
    vectors = read_vectors(shared / "glove840b-weat" / "glove.840B.300d.weat-items.txt")
    model = model_of(list(vectors), np.stack(list(vectors.values())))
    out = {"wefe": wefe.__version__, "numpy": np.__version__, "queries": {}}
    for n in WEAT_TESTS:
        spec = json.loads((shared / "weat-stimuli" / f"weat_{n}.json").read_text(encoding="utf-8"))
        sets = {r: spec[r] for r in "XYAB"}
        missing = [w for s in sets.values() for w in s if w not in vectors]
        if missing:
            raise SystemExit(f"weat_{n}: words missing from the vectors: {missing}")
        out["queries"][f"weat_{n}"] = {"sets": sets, "values": values(model, *sets.values())}
    rng = np.random.default_rng(27)
    synthetic = {r: [f"{r.lower()}{i}" for i in range(size)] for r, size in zip("XYAB", (4, 4, 5, 5))}
    words = [w for s in synthetic.values() for w in s]
    table = rng.normal(size=(len(words), 6))
    out["synthetic"] = {"sets": synthetic, "vectors": dict(zip(words, table.tolist())),
                        "values": values(model_of(words, table), *synthetic.values())}
    return out


if __name__ == "__main__":
    json.dump(main(Path(sys.argv[1])), sys.stdout, indent=1)
    sys.stdout.write("\n")
