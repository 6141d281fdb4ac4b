"""Benchmark of language-model scoring (issue 46.1; run by hand, not a test).

    python bench/bench_language_models.py [--model FOLDER] [--pairs CSV] [--batch-size 32] [--rounds 1]
                                          [--lm-eval-python /tmp/answerers-venv/bin/python]

Times, in one run and each side in its own process (Python start, imports, model load and tokenisation
included), the scoring of every sentence of a CrowS-Pairs file (default: all 1,508 pairs, 3,016 sentences, in
``../shared/data/crows-pairs``) by a causal LM:

- ``eatkit``: the whole ``eatkit run crows-pairs --model hf-lm:MODEL`` (statistics, bootstrap and run folder
  included);
- ``transformers``: one batched pass written plainly (the file's order, ``--batch-size`` sentences a forward
  pass, right-padded with an attention mask, BOS token first; float32 log-softmax summed over the tokens);
- ``lm-eval``: lm-evaluation-harness's ``HFLM.loglikelihood`` on ``("", sentence)`` requests (its empty
  context is the model's prefix token, so its value is eatkit's causal score), where ``--lm-eval-python`` names
  an interpreter that imports ``lm_eval`` (skipped with the reason otherwise).

It prints each side's seconds (median over ``--rounds``, sides interleaved), the ratios eatkit / transformers
(the goal: <= 2) and eatkit / lm-eval, and the largest difference between eatkit's per-sentence scores
(``crows_pairs_scores.csv``) and each other side's. Without ``--model`` it builds the docs' stand-in, the
untrained 2-layer GPT-2 of the tests (``tests/tiny_lm.py``, n_embd 16), in a temporary folder.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PAIRS = ROOT.parent / "shared" / "data" / "crows-pairs" / "crows_pairs_anonymized.csv"


def sentences(pairs: str) -> list[str]:
    """Every sentence of the file, each pair's ``sent_more`` then ``sent_less`` (read with csv alone)."""
    with open(pairs, newline="", encoding="utf-8") as f:
        return [s for row in csv.DictReader(f) for s in (row["sent_more"], row["sent_less"])]


def transformers_side(model: str, pairs: str, batch_size: int) -> dict[str, float]:
    """One batched transformers pass over the sentences; their log-likelihoods by sentence."""
    import torch
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(model)
    lm = transformers.AutoModelForCausalLM.from_pretrained(model).eval()
    bos = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    texts = sentences(pairs)
    scores: dict[str, float] = {}
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            chunk = texts[start:start + batch_size]
            ids = [[bos, *tok.encode(t, add_special_tokens=False)] for t in chunk]
            width = max(map(len, ids))
            x = torch.tensor([i + [bos] * (width - len(i)) for i in ids])
            mask = torch.tensor([[1] * len(i) + [0] * (width - len(i)) for i in ids])
            logp = torch.log_softmax(lm(input_ids=x, attention_mask=mask).logits[:, :-1].float(), dim=-1)
            token = logp.gather(2, x[:, 1:, None])[..., 0] * mask[:, 1:]
            scores.update(zip(chunk, token.sum(1).tolist()))
    return scores


def lm_eval_side(model: str, pairs: str, batch_size: int) -> dict[str, float]:
    """lm-evaluation-harness's HFLM.loglikelihood of each sentence after the model's prefix token."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=model, batch_size=batch_size, device="cpu", dtype="float32")
    texts = sentences(pairs)
    requests = [Instance("loglikelihood", {}, ("", t), i) for i, t in enumerate(texts)]
    return {t: float(ll) for t, (ll, _) in zip(texts, lm.loglikelihood(requests, disable_tqdm=True))}


def eatkit_side(model: str, pairs: str, batch_size: int) -> dict[str, float]:
    """The whole ``eatkit run crows-pairs`` in a child process; its per-sentence scores from the run folder."""
    out = Path(tempfile.mkdtemp(prefix="eatkit-bench-lm-")) / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"}
    subprocess.run([sys.executable, "-m", "eatkit", "run", "crows-pairs", "--model", f"hf-lm:{model}",
                    "--crows-pairs", pairs, "--batch-size", str(batch_size), "--seed", "0", "-q", "-o", str(out)],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    with open(out / "crows_pairs_scores.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    texts = sentences(pairs)
    # the file's rows are the pairs in order: sent_more's and sent_less's scores
    return {t: float(row[key]) for row, i in zip(rows, range(0, len(texts), 2))
            for t, key in ((texts[i], "sent_more_score"), (texts[i + 1], "sent_less_score"))}


SIDES = {"eatkit": eatkit_side, "transformers": transformers_side, "lm-eval": lm_eval_side}


def timed(side: str, python: str, args: argparse.Namespace) -> tuple[float, dict[str, float]]:
    """One side in its own process: wall seconds from its start to its last score, and its scores."""
    out = Path(tempfile.mkdtemp(prefix="eatkit-bench-lm-")) / "scores.json"
    start = time.perf_counter()
    subprocess.run([python, __file__, "--side", side, "--model", args.model, "--pairs", args.pairs,
                    "--batch-size", str(args.batch_size), "--scores", str(out)], check=True)
    return time.perf_counter() - start, json.loads(out.read_text())


def lm_eval_python(given: str | None) -> str | None:
    """An interpreter that imports lm_eval (``--lm-eval-python``, else this one), or None with the reason printed."""
    for python in filter(None, (given, sys.executable)):
        if subprocess.run([python, "-c", "import lm_eval.models.huggingface"], capture_output=True).returncode == 0:
            return python
    print("lm-eval: skipped (no interpreter here imports lm_eval; pip install lm-eval into a venv and pass "
          "--lm-eval-python)")
    return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", help="a causal LM folder (default: the tests' tiny GPT-2, built here)")
    parser.add_argument("--pairs", default=str(DEFAULT_PAIRS))
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--lm-eval-python")
    parser.add_argument("--side", choices=sorted(SIDES), help=argparse.SUPPRESS)
    parser.add_argument("--scores", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:  # a child: one side, its scores to --scores
        Path(args.scores).write_text(json.dumps(SIDES[args.side](args.model, args.pairs, args.batch_size)))
        return
    if args.model is None:
        sys.path.insert(0, str(ROOT / "tests"))
        from tiny_lm import make_gpt2

        args.model = make_gpt2(Path(tempfile.mkdtemp(prefix="eatkit-bench-")) / "gpt2")
    pythons = {"transformers": sys.executable, "eatkit": sys.executable}
    if (python := lm_eval_python(args.lm_eval_python)) is not None:
        pythons["lm-eval"] = python
    seconds: dict[str, list[float]] = {side: [] for side in pythons}
    scores: dict[str, dict[str, float]] = {}
    for _ in range(args.rounds):
        for side, python in pythons.items():
            elapsed, scores[side] = timed(side, python, args)
            seconds[side].append(elapsed)
    median = {side: statistics.median(s) for side, s in seconds.items()}
    n = len(scores["eatkit"])
    print(f"{n:,} distinct sentences ({len(sentences(args.pairs)):,} scored), batch size {args.batch_size}, "
          f"{args.rounds} round(s), load {os.getloadavg()[0]:.1f}")
    for side, value in median.items():
        diff = max(abs(scores[side][t] - scores["eatkit"][t]) for t in scores["eatkit"])
        print(f"{side:>12}: {value:7.1f} s  eatkit / {side} = {median['eatkit'] / value:.2f}  "
              f"max |score difference| {diff:.2e}")


if __name__ == "__main__":
    main()
