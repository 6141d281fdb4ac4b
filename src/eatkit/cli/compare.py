"""``eatkit compare``: two text-to-image models' runs of the same depiction tests compared per prompt group
and attribute, by a permutation test of the difference of DALL-Eval's MAD (or the KL divergence)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from eatkit.cli import add_declared, declared_warnings, print_warnings


def register(sub: Any) -> None:
    cmp = sub.add_parser("compare", help="compare two models' depiction runs (who gets generated)",
                         description="For every depiction record the two run folders share (test, prompt group, "
                         "attribute): measure(first) - measure(second) and its two-sided permutation p, the images' "
                         "classes re-split between the two models (docs/generation.md).")
    cmp.add_argument("first", type=Path, help="a run folder with depiction records")
    cmp.add_argument("second", type=Path, help="a run folder of another model with the same tests")
    cmp.add_argument("--measure", choices=("mad", "kl"), default="mad",
                     help="DALL-Eval's mean absolute deviation from uniform (default) or the KL divergence from the "
                     "records' reference")
    add_declared(cmp, "compare", "permutations")
    add_declared(cmp, "compare", "seed")
    cmp.set_defaults(func=_cmd_compare)


def _cmd_compare(args: argparse.Namespace) -> int:
    from eatkit.report.eat_html import aligned
    from eatkit.report.formatting import fmt_number, fmt_p
    from eatkit.run.generated import compare_depiction_runs

    rows = compare_depiction_runs(args.first, args.second, measure=args.measure, permutations=args.permutations,
                                  seed=args.seed)
    table = [("test", "group", "attribute", f"{args.measure} first", f"{args.measure} second", "difference", "p"),
             *((r["test"], r["group"], r["attribute"], fmt_number(r["first"], 3), fmt_number(r["second"], 3),
                fmt_number(r["difference"], 3), fmt_p(r["p_value"])) for r in rows)]
    print(aligned(table, numeric=range(3, 7)))
    seeds = sorted({r["seed"] for r in rows if r["seed"] is not None})
    print(f"p: two-sided, {args.permutations} random re-splits of the pooled images' classes per row"
          + (f" (seeds {seeds[0]}..{seeds[-1]})" if seeds else ""))
    print_warnings(declared_warnings("compare", args))
    return 0
