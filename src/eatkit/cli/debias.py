"""``eatkit debias``: debias static word vectors; write them, a manifest and a before/after table."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from eatkit.cli import add_declared, declared_warnings, non_negative, print_warnings


def register(sub: Any) -> None:
    p = sub.add_parser("debias", help="debias static word vectors and compare tests before/after",
                       description="Debias word vectors (hard: Bolukbasi et al. 2016; double-hard: Wang et al. 2020; "
                       "hsr: half-sibling regression, Yang & Feng 2020; ran: repulsion-attraction-neutralisation, Kumar et al. "
                       "2020); write vectors.txt (word2vec text), "
                       "manifest.json and before-after.csv into the output folder, and print the before/after "
                       "table of the chosen tests and metrics.")
    p.add_argument("--vectors", type=Path, required=True, help="a word-vector file (GloVe/word2vec text or binary)")
    p.add_argument("--method", required=True, choices=("hard", "double-hard", "hsr", "ran"))
    p.add_argument("--word-lists", default="gender",
                   help="bundled word lists (gender) or an eatkit.debias-words/1 JSON file")
    p.add_argument("--suite", default="weat", help="suite of the before/after table (default weat)")
    p.add_argument("--tests", default="weat6,weat7,weat8", help="comma-separated test ids (default weat6,weat7,weat8)")
    p.add_argument("--metrics", help="also compare these metrics (comma-separated, or all; see 'eatkit run --metrics')")
    p.add_argument("--lowercase", action="store_true", help="look words up lower-cased (uncased --vectors)")
    add_declared(p, "debias", "n_words")
    add_declared(p, "debias", "n_components")
    p.add_argument("--alpha", type=float, default=60.0, help="hsr: ridge penalty (default 60)")
    p.add_argument("--seed", type=non_negative, help="seed (double-hard's 2-means; the tests' draws)")
    p.add_argument("--output", "-o", type=Path, default=Path("eatkit-debiased"), help="output folder")
    p.add_argument("--quiet", "-q", action="store_true", help="no table")
    p.set_defaults(func=_cmd_debias)


def _cmd_debias(args: argparse.Namespace) -> int:
    from eatkit.analyses.metrics import parse_metrics
    from eatkit.io import atomic_write_bytes
    from eatkit.report.eat_html import aligned
    from eatkit.run.debias import before_after, debias, load_word_lists, manifest, measure, write_vectors
    from eatkit.run.folder import filling, prepare_output
    from eatkit.run.runner import select_tests
    from eatkit.sources.vectors import load_word_vectors
    from eatkit.stimuli.loader import load_suite

    warnings = declared_warnings("debias", args)  # recorded in the manifest
    suite = load_suite(args.suite)
    tests = [t.strip() for t in args.tests.split(",") if t.strip()]
    select_tests(suite, tests)
    metrics = parse_metrics(args.metrics) if args.metrics else ()
    lists = load_word_lists(args.word_lists)
    out = prepare_output(args.output, "debias", inputs=[args.vectors, args.suite, args.word_lists])
    source = load_word_vectors(args.vectors, cased=not args.lowercase)
    options = {"n_words": args.n_words, "n_components": args.n_components, "alpha": args.alpha, "seed": args.seed,
               "suite": args.suite, "tests": tests, "metrics": list(metrics), "lowercase": args.lowercase}
    before: list[Any] = []  # the suite measured once the word lists are checked, before the debiasing
    result = debias(source, args.method, lists, n_words=args.n_words, n_components=args.n_components,
                    alpha=args.alpha, seed=args.seed,
                    checked=lambda: before.append(measure(suite, tests, metrics, source, args.seed)))
    for name, words in result.dropped.items():
        print(f"eatkit debias: not in the vectors, dropped from the {name} list: {', '.join(words)}", file=sys.stderr)
    rows = before_after(before[0], measure(suite, tests, metrics, result.vectors, args.seed))
    table = [("test", "measure", "before", "after"),
             *((r["test"], r["measure"], f"{r['before']:.4g}", f"{r['after']:.4g}") for r in rows)]
    csv = "".join(",".join(map(str, row)) + "\n" for row in
                  [("test", "measure", "before", "after"), *((r["test"], r["measure"], repr(r["before"]), repr(r["after"])) for r in rows)])
    command = "eatkit " + " ".join(shlex.quote(a) for a in args.argv)
    with filling(out, "debias"):  # interrupted: a new folder is removed whole
        sha = write_vectors(out / "vectors.txt", result.vectors)
        atomic_write_bytes(out / "before-after.csv", csv.encode("utf-8"))
        data = manifest(command=command, method=args.method, options=options, source=source, lists=lists,
                        result=result, output={"vectors.txt": sha}, comparison=rows, warnings=warnings)
        atomic_write_bytes(out / "manifest.json", (json.dumps(data, indent=2, allow_nan=False) + "\n").encode("utf-8"))
    print_warnings(warnings)
    if not args.quiet:
        print(aligned(table, numeric=range(2, 4)))
        print(f"\nwrote {out / 'vectors.txt'}, before-after.csv, manifest.json")
    return 0
