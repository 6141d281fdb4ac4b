"""``eatkit run``: run a suite of tests on an embedding source and print a table per kind of test."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from eatkit.analyses.base import RunOptions
from eatkit.cli import non_negative
from eatkit.errors import EatkitError
from eatkit.stats.options import CHOICES

#: model options of the run command: (flag, keyword of the model's factory)
MODEL_FLAGS: tuple[tuple[str, str], ...] = (
    ("--images", "images"), ("--layer", "layer"), ("--pooling", "pooling"), ("--prompt", "prompt"),
    ("--batch-size", "batch_size"), ("--device", "device"), ("--precision", "precision"),
    ("--workers", "workers"), ("--no-cache", "cache"), ("--oov", "oov"),
)


def register(sub: Any) -> None:
    defaults = RunOptions()
    run = sub.add_parser("run", help="run a suite of tests on an embedding source",
                         description="Run a suite of tests; print a table and write results.json, "
                         "results.csv, similarities.npz and manifest.json to the output folder.")
    run.add_argument("suite", help="a bundled suite (see 'eatkit list suites') or a suite JSON file")
    src = run.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="a registered model (see 'eatkit list models')")
    src.add_argument("--vectors", type=Path, help="a word-vector file (GloVe/word2vec text or binary)")
    src.add_argument("--embeddings", type=Path, help="a folder or file of precomputed embeddings")
    run.add_argument("--embeddings-model", help="model name in an iEAT-layout embeddings folder (e.g. igpt_l_32)")
    run.add_argument("--tests", help="comma-separated test ids (default: all)")
    run.add_argument("--permutations", default=defaults.permutations,
                     help="auto (default), exact, or a number of random draws")
    run.add_argument("--alternative", default=defaults.alternative, choices=CHOICES["alternative"])
    run.add_argument("--seed", type=non_negative, help="seed for Monte Carlo and bootstrap draws (default: drawn and recorded)")
    run.add_argument("--ddof", type=non_negative, default=defaults.ddof,
                     help="delta degrees of freedom of the SD (default 1; 0 or 1 with --sd pooled or --p-method welch)")
    run.add_argument("--sd", default=defaults.sd, choices=CHOICES["sd"],
                     help="SD of all target associations (Caliskan et al.) or pooled SD for unequal groups")
    run.add_argument("--p-method", default=defaults.p_method, choices=CHOICES["p_method"])
    run.add_argument("--bootstrap", type=non_negative, default=defaults.n_bootstrap,
                     help="bootstrap resamples for the CI of d (0: none)")
    run.add_argument("--oov", choices=("error", "drop"),
                     help="out-of-vocabulary words: fail (default) or drop them and record it")
    run.add_argument("--lowercase", action="store_true", help="look words up lower-cased (uncased --vectors)")
    run.add_argument("--images", type=Path, help="image folder in the iEAT layout <test>/<category>/*")
    run.add_argument("--layer", type=int, help="model layer to read (model-specific default)")
    run.add_argument("--pooling", help="pooling of token/patch features (model-specific)")
    run.add_argument("--prompt", help="prompt template for words, e.g. 'a photo of {x}'")
    run.add_argument("--batch-size", type=int, help="inference batch size")
    run.add_argument("--device", help="auto (default: a GPU when present), cpu, cuda, cuda:N or mps")
    run.add_argument("--precision", choices=("fp32", "bf16", "fp16"),
                     help="forward-pass precision (default fp32: exact reproducibility)")
    run.add_argument("--workers", type=non_negative, help="image-decoding worker processes (default 2; 0: inline)")
    run.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    run.add_argument("--output", "-o", type=Path, default=Path("eatkit-results"), help="output folder")
    run.add_argument("--report", action="store_true", help="also write report.html into the output folder")
    run.add_argument("--quiet", "-q", action="store_true", help="no table, no progress output")
    run.set_defaults(func=_cmd_run)


def _cmd_run(args: argparse.Namespace) -> int:
    from eatkit.report.kinds import console_tables
    from eatkit.runner import prepare_output, run_suite, select_tests
    from eatkit.stimuli.loader import load_suite

    # everything that can be checked is checked before a model is loaded or a test computed
    suite = load_suite(args.suite)
    tests = _split(args.tests)
    select_tests(suite, tests)
    options = RunOptions(
        permutations=_permutations(args.permutations), alternative=args.alternative, seed=args.seed,
        ddof=args.ddof, sd=args.sd, p_method=args.p_method, n_bootstrap=args.bootstrap,
    ).validated()
    prepare_output(args.output)
    source = _source(args, suite)
    command = "eatkit " + " ".join(shlex.quote(a) for a in args.argv)
    run = run_suite(suite, source, tests=tests, options=options, command=command)
    out = run.save(args.output)
    for r in run.records:
        names = {role.upper(): getattr(r, f"{role.lower()}_name", role) for role in r.dropped}
        for role, words in r.dropped.items():
            print(f"{r.test}: dropped from {role} ({names[role.upper()]}): {', '.join(words)}", file=sys.stderr)
    if not args.quiet:
        print(console_tables(run.records))
        print(f"\nwrote {out / 'results.json'}, results.csv, similarities.npz, manifest.json")
    if args.report:
        from eatkit.report import write_html_report

        html = write_html_report([out], out / "report.html")
        if not args.quiet:
            print(f"wrote {html}")
    return 0


def _source(args: argparse.Namespace, suite: Any) -> Any:
    """The embedding source chosen by --model, --vectors or --embeddings and the model flags."""
    from eatkit.runner import build_source

    given = {key: getattr(args, flag[2:].replace("-", "_")) for flag, key in MODEL_FLAGS}
    given["cache"] = False if args.no_cache else None
    return build_source({**given, "name": args.model, "vectors": args.vectors, "embeddings": args.embeddings,
                         "embeddings_model": args.embeddings_model, "lowercase": args.lowercase}, suite)


def _permutations(value: str) -> str | int:
    if value in ("auto", "exact"):
        return value
    if value.isdigit() and int(value) > 0:
        return int(value)
    raise EatkitError(f"--permutations must be auto, exact or a positive number of draws, got '{value}'")


def _split(value: str | None) -> list[str] | None:
    return None if value is None else [t.strip() for t in value.split(",") if t.strip()]
