"""``eatkit meta``: a random-effects meta-analysis of effect sizes listed in a CSV file (docs/meta-analysis.md)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from eatkit.cli import add_declared, declared_warnings, print_warnings


def register(sub: Any) -> None:
    p = sub.add_parser("meta", help="combine effect sizes by a random-effects meta-analysis",
                       description="Combine the effect sizes of a CSV file (columns effect, variance or se, and "
                       "optionally label) by a random-effects model: the combined effect with its CI, tau², I², "
                       "Cochran's Q and its p, and the prediction interval; --html writes a forest plot.")
    p.add_argument("effects", type=Path, help="CSV file with columns effect and variance (or se), optionally label")
    p.add_argument("--method", choices=("dl", "pm", "reml"), default="dl",
                   help="estimator of tau²: DerSimonian-Laird (default), Paule-Mandel, REML")
    add_declared(p, "meta", "confidence_level")
    p.add_argument("--html", type=Path, help="also write the forest plot as an HTML page")
    p.set_defaults(func=_cmd_meta)


def _cmd_meta(args: argparse.Namespace) -> int:
    from eatkit.io import atomic_write_bytes, check_output_file
    from eatkit.report.meta_analysis import forest_page, summary_line
    from eatkit.run.meta_analysis import read_effects
    from eatkit.stats.meta_analysis import random_effects

    page = (check_output_file(args.html, "forest plot", inputs=[args.effects], kind="html")
            if args.html is not None else None)
    labels, effects, variances = read_effects(args.effects)
    result = random_effects(effects, variances, method=args.method, confidence_level=args.confidence_level)
    width = max(len(label) for label in labels)
    for label, effect, (low, high), weight in zip(labels, result.effects, result.effect_cis, result.weights):
        print(f"{label:<{width}}  {effect: .3f}  [{low: .3f}, {high: .3f}]  weight {weight:.1%}")
    print(summary_line(result))
    if page is not None:
        atomic_write_bytes(page, forest_page(result, labels, args.effects.stem).encode("utf-8"))
        print(f"wrote {page}")
    print_warnings(declared_warnings("meta", args))
    return 0
