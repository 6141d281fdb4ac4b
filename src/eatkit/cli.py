"""The ``eatkit`` command line: presentation only (argument parsing, printing, files).

Bad input ends with ``eatkit: error: <one line>`` on stderr and exit status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any, Sequence

from eatkit.errors import EatkitError

EXIT_BAD_INPUT = 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``eatkit`` command."""
    parser = _parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    from eatkit import progress

    progress.set_enabled(not getattr(args, "quiet", False))
    try:
        return args.func(args) or 0
    except EatkitError as err:
        print(f"eatkit: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("eatkit: interrupted", file=sys.stderr)
        return 130


# --- eatkit run --------------------------------------------------------------------------------------


def _cmd_run(args: argparse.Namespace) -> int:
    from eatkit.runner import RunOptions, prepare_output, run_suite, select_tests
    from eatkit.stimuli.loader import load_suite

    # everything that can be checked is checked before a model is loaded or a test computed
    suite = load_suite(args.suite)
    tests = _split(args.tests)
    select_tests(suite, tests)
    options = RunOptions(
        permutations=_permutations(args.permutations),
        alternative=args.alternative,
        seed=args.seed,
        ddof=args.ddof,
        sd=args.sd,
        p_method=args.p_method,
        n_bootstrap=args.bootstrap,
    ).validate()
    prepare_output(args.output)
    source = _source(args, suite)
    command = "eatkit " + " ".join(shlex.quote(a) for a in args.argv)
    run = run_suite(suite, source, tests=tests, options=options, command=command)
    out = run.save(args.output)
    for r in run.records:
        for role, words in r["dropped"].items():
            print(f"{r['test']}: dropped from {role} ({r[role.lower() + '_name']}): {', '.join(words)}", file=sys.stderr)
    if not args.quiet:
        print(format_table(run.records))
        print(f"\nwrote {out / 'results.json'}, results.csv, similarities.npz, manifest.json")
    if args.report:
        from eatkit.report import write_html_report

        html = write_html_report([out], out / "report.html")
        if not args.quiet:
            print(f"wrote {html}")
    return 0


def _source(args: argparse.Namespace, suite: Any) -> Any:
    """The embedding source chosen by --model, --vectors or --embeddings (and their options)."""
    from eatkit.sweep import build_source

    model = {
        "name": args.model, "vectors": args.vectors, "embeddings": args.embeddings,
        "embeddings_model": args.embeddings_model, "oov": args.oov, "lowercase": args.lowercase or None,
        "images": args.images, "layer": args.layer, "pooling": args.pooling, "prompt": args.prompt,
        "batch_size": args.batch_size, "device": args.device, "precision": args.precision,
        "workers": args.workers, "cache": False if args.no_cache else None,
    }
    return build_source(model, suite)


def _permutations(value: str) -> str | int:
    if value in ("auto", "exact"):
        return value
    if value.isdigit() and int(value) > 0:
        return int(value)
    raise EatkitError(f"--permutations must be auto, exact or a positive number of draws, got '{value}'")


def _non_negative(value: str) -> int:
    """argparse type for --seed and --bootstrap: a whole number >= 0."""
    if not value.isdigit():
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got '{value}'")
    return int(value)


def _split(value: str | None) -> list[str] | None:
    return None if value is None else [t.strip() for t in value.split(",") if t.strip()]


def format_table(records: list[dict[str, Any]]) -> str:
    """A plain-text table of a run's records (level 1, level 2 d's and the pattern)."""
    header = ("test", "n_x", "n_y", "n_a", "n_b", "d", "p", "q", "d(X)", "d(Y)", "pattern")
    rows = [header]
    for r in records:
        sampled = r["p_method"] == "permutation" and not r["p_value_exact"]
        if sampled and r["p_value"] * (r["n_permutations"] + 1) < 1.5:  # no draw reached the observed value
            p = "≤" + _p(r["p_value"])
        else:
            p = _p(r["p_value"]) + ("†" if sampled else "")
        rows.append((
            r["test"], str(r["n_x"]), str(r["n_y"]), str(r["n_a"]), str(r["n_b"]),
            f"{r['effect_size']:.2f}", p, _p(r["q_value"]),
            f"{r['level2_x_effect_size']:.2f}", f"{r['level2_y_effect_size']:.2f}", r["pattern"],
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(c.rjust(w) if 0 < i < 10 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths)))
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if records and records[0]["p_method"] == "welch":
        lines.append("p: Welch's t-test; q: Benjamini-Hochberg across the run")
    else:
        lines.append("p: exact permutation p-value; † sampled (Monte Carlo); ≤ no random partition reached the "
                     "observed value; q: Benjamini-Hochberg across the run")
    lines.append("d(X), d(Y): ML-EAT level 2 (X, resp. Y, with A vs B)")
    return "\n".join(lines)


def _p(p: float) -> str:
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


# --- eatkit list / report / data / cache --------------------------------------------------------------


def _cmd_list(args: argparse.Namespace) -> int:
    if args.what == "suites":
        from eatkit.stimuli.loader import list_suites

        for s in list_suites():
            print(f"{s.id:24s} {len(s.tests):3d} tests  {s.title}")
    elif args.what == "tests":
        from eatkit.stimuli.loader import load_suite

        if not args.suite:
            raise EatkitError("'eatkit list tests' needs a suite name, e.g. eatkit list tests weat")
        suite = load_suite(args.suite)
        for t in suite.tests:
            print(f"{t.id:24s} {t.title}")
    else:
        from eatkit.encoders.registry import models

        for m in models():
            print(f"{m.name:24s} [{','.join(m.modalities)}] (extra: {m.extra})  {m.description}")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from eatkit.report import write_html_report

    out = write_html_report([Path(d) for d in args.run_dirs], Path(args.html))
    if not args.quiet:
        print(f"wrote {out}")
    return 0


def _cmd_data(args: argparse.Namespace) -> int:
    from eatkit.stimuli.datasets import download_dataset, list_datasets

    if args.action == "list":
        for d in list_datasets():
            print(f"{d.name:12s} {d.description}")
        return 0
    if not args.name:
        raise EatkitError("'eatkit data get' needs a dataset name, e.g. eatkit data get ieat")
    dest = download_dataset(args.name, args.dest, base_url=args.base_url)
    if not args.quiet:
        print(f"{args.name}: verified in {dest}")
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from eatkit.sweep import run_sweep

    result = run_sweep(args.config, args.output, executor=args.executor, jobs=args.jobs, address=args.address,
                       report=not args.no_report)
    for cell in result.failed:
        print(f"eatkit: cell {cell} failed: {result.errors[cell]}", file=sys.stderr)
    if not args.quiet:
        counts = {s: list(result.statuses.values()).count(s) for s in ("done", "skipped", "failed")}
        print(f"{len(result.statuses)} cells: {counts['done']} computed, {counts['skipped']} finished before, "
              f"{counts['failed']} failed; wrote {result.out / 'results.csv'}, cells.csv"
              + (", report.html" if (result.out / "report.html").exists() and not args.no_report else ""))
    return 1 if result.failed else 0


def _cmd_cache(args: argparse.Namespace) -> int:
    from eatkit.encoders.cache import cache_info, clear_cache

    if args.action == "info":
        info = cache_info()
        for key, value in info.items():
            print(f"{key}: {value}")
    else:
        removed = clear_cache()
        print(f"removed {removed} cache entries")
    return 0


# --- the parser ---------------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse with the one-line error format of the rest of the CLI."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, f"eatkit: error: {message} (see '{self.prog} --help')\n")


def _parser() -> argparse.ArgumentParser:
    from eatkit._version import __version__

    parser = _Parser(prog="eatkit", description="Embedding association tests (WEAT, iEAT, SEAT, ML-EAT).")
    parser.add_argument("--version", action="version", version=f"eatkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

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
    run.add_argument("--permutations", default="auto", help="auto (default), exact, or a number of random draws")
    run.add_argument("--alternative", default="greater", choices=("greater", "less", "two-sided"))
    run.add_argument("--seed", type=_non_negative, help="seed for Monte Carlo and bootstrap draws (default: drawn and recorded)")
    run.add_argument("--ddof", type=_non_negative, default=1, help="delta degrees of freedom of the effect-size SD (default 1)")
    run.add_argument("--sd", default="caliskan", choices=("caliskan", "pooled"),
                     help="SD of all target associations (Caliskan et al.) or pooled SD for unequal groups")
    run.add_argument("--p-method", default="permutation", choices=("permutation", "welch"))
    run.add_argument("--bootstrap", type=_non_negative, default=2000, help="bootstrap resamples for the CI of d (0: none)")
    run.add_argument("--oov", default="error", choices=("error", "drop"),
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
    run.add_argument("--workers", type=_non_negative, help="image-decoding worker processes (default 2; 0: inline)")
    run.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    run.add_argument("--output", "-o", type=Path, default=Path("eatkit-results"), help="output folder")
    run.add_argument("--report", action="store_true", help="also write report.html into the output folder")
    run.add_argument("--quiet", "-q", action="store_true", help="no table, no progress output")
    run.set_defaults(func=_cmd_run)

    lst = sub.add_parser("list", help="list suites, the tests of a suite, or models")
    lst.add_argument("what", choices=("suites", "tests", "models"))
    lst.add_argument("suite", nargs="?", help="the suite, for 'list tests'")
    lst.set_defaults(func=_cmd_list)

    rep = sub.add_parser("report", help="write an HTML report of one or more run folders")
    rep.add_argument("run_dirs", nargs="+", help="run folders written by 'eatkit run'")
    rep.add_argument("--html", required=True, help="the HTML file to write")
    rep.add_argument("--quiet", "-q", action="store_true")
    rep.set_defaults(func=_cmd_report)

    data = sub.add_parser("data", help="download datasets (e.g. the iEAT images) with checksums")
    data.add_argument("action", choices=("get", "list"))
    data.add_argument("name", nargs="?", help="dataset name, e.g. ieat")
    data.add_argument("--dest", type=Path, help="destination folder (default: the eatkit data folder)")
    data.add_argument("--base-url", help="download from this mirror instead of the upstream repository")
    data.add_argument("--quiet", "-q", action="store_true")
    data.set_defaults(func=_cmd_data)

    sweep = sub.add_parser("sweep", help="run models x suites x settings from a sweep file (resumable)",
                           description="Run every cell of a sweep file (TOML, or YAML with PyYAML) not finished "
                           "before; write each cell's run folder, a combined results.csv and report.html.")
    sweep.add_argument("config", help="the sweep file (see docs/scale.md)")
    sweep.add_argument("--output", "-o", type=Path, help="output folder (default: 'output' in the sweep file)")
    sweep.add_argument("--executor", default="local", choices=("local", "ray"))
    sweep.add_argument("--address", help="Ray cluster: auto or HOST:PORT (default: start a local Ray)")
    sweep.add_argument("--jobs", type=_non_negative, default=1,
                       help="local worker processes (default 1; 0: in this process)")
    sweep.add_argument("--no-report", action="store_true", help="do not write report.html")
    sweep.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    sweep.set_defaults(func=_cmd_sweep)

    cache = sub.add_parser("cache", help="show or clear the embedding cache")
    cache.add_argument("action", choices=("info", "clear"))
    cache.set_defaults(func=_cmd_cache)
    return parser


if __name__ == "__main__":
    sys.exit(main())
