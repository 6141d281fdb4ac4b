"""``eatkit probe ranking|vqa|caption|generate``: what a vision-language model does with labelled images.

Each probe reads a folder per group (``--images DIR`` with ``DIR/<group>/*``, or ``--cfd`` to link a
Chicago Face Database copy into that layout; ``generate --text-only`` reads none), runs the model, prints a table and writes
``results.json``, ``results.csv``, ``similarities.npz`` and ``manifest.json`` (plus ``captions.csv`` for
captions and ``frames/`` for generation) to the output folder; ``--report`` adds ``report.html``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from eatkit.cli import add_declared, declared, declared_warnings, print_warnings
from eatkit.cli.run import add_kind_flags, given_params, show_run
from eatkit.flags import option_flag


def register(sub: Any) -> None:
    from eatkit.kinds import probe_kinds

    probe = sub.add_parser("probe", help="probe what a vision-language model does with labelled images",
                           description="Probes of the 'American == White' study: image ranking against a region "
                           "table, visual question answering, captioning, CLIP-guided generation.")
    kinds = probe.add_subparsers(dest="probe", required=True, parser_class=type(probe))
    for command, spec in probe_kinds().items():  # one sub-command per probe kind, its flags from its spec
        p = kinds.add_parser(command, help=spec.title, description=spec.title)
        _common(p)
        add_kind_flags(p, [spec])
        p.set_defaults(func=_cmd_probe, kind=spec)


#: the numeric decoding options of the BLIP probe heads, declared with their ranges in
#: :data:`eatkit.command_options.COMMAND_OPTIONS` (the keyword is the name)
_DECLARED: tuple[str, ...] = ("max_new_tokens", "max_length", "min_length", "num_beams", "top_k", "repetition_penalty")
#: their other decoding options: flag, type, help (the keyword is the flag's name)
_DECODING: tuple[tuple[str, Any, str], ...] = (
    ("--caption-prompt", str, "captions: the text the caption continues, removed from it (default 'a picture of ')"),
    ("--preprocess", str, "image input: a preset of 'eatkit list presets', or 'model' for the model's own "
     "preprocessor config (default: the authors' BLIP input, 480 px for VQA, 384 px for captions)"),
)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, help="a registered model (see 'eatkit list models')")
    images = p.add_mutually_exclusive_group()
    images.add_argument("--images", type=Path, help="image folder with a folder per group, DIR/<group>/* "
                        "(required, or --cfd; generate --text-only takes none)")
    images.add_argument("--cfd", type=Path, help="a Chicago Face Database folder: its neutral images are linked "
                        "into <output>/images/<race>/ from the file-name codes")
    p.add_argument("--groups", help="comma-separated group folders to use (default: all)")
    p.add_argument("--seed", type=declared("seed"), help="seed of every random draw (default 0; random: a fresh one, recorded)")
    add_declared(p, "probe", "confidence_level")
    add_declared(p, "probe", "batch_size")
    p.add_argument("--device", help="torch device of the BLIP probe heads (default cpu)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    gen = p.add_argument_group("decoding of models that generate text (default: as the \"American == White\" "
                               "authors ran BLIP; recorded in the manifest)")
    for name in _DECLARED:
        add_declared(gen, "probe", name)
    for flag, kind, what in _DECODING:
        gen.add_argument(flag, type=kind, help=what)
    p.add_argument("--output", "-o", type=Path, help="output folder (default: a new folder eatkit-results/<date>_<time>)")
    p.add_argument("--report", action="store_true", help="also write report.html into the output folder")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output (the results still print)")


def _cmd_probe(args: argparse.Namespace) -> int:
    from eatkit.analyses import get_analysis
    from eatkit.analyses.base import RunOptions, options_by_test
    from eatkit.report.kinds import console_tables
    from eatkit.run.probes import probe_params, probe_suite, run_probe
    from eatkit.run.folder import prepare_output

    kind = args.kind.name
    params = given_params(args, [args.kind])
    probe_params(kind, params)  # a preset's settings and the options beside it, checked before anything runs
    out = prepare_output(args.output)
    images = args.images
    if args.cfd is not None:
        from eatkit.stimuli.image_groups import cfd_layout

        layout = cfd_layout(args.cfd, out / "images")
        images = layout.root
        print(f"eatkit: {layout.message()}", file=sys.stderr)
    groups = [g.strip() for g in args.groups.split(",") if g.strip()] if args.groups else None
    # check the options and the images before the model is built
    test = probe_suite(kind, images, groups).tests[0]
    get_analysis(kind).check(test, options_by_test([test], RunOptions(params=params, n_bootstrap=0))[test.id])
    model = _model(args, kind)
    command = "eatkit " + " ".join(shlex.quote(a) for a in args.argv)
    warnings = declared_warnings("probe", args)  # recorded in every record and the manifest
    run = run_probe(kind, model, images, groups=groups, seed=args.seed, params=params,
                    confidence_level=args.confidence_level, command=command, warnings=warnings)
    out = run.save(out)
    print_warnings(run.manifest["statistics"]["warnings"])  # the settings' and the inputs' (a tiny image), once
    extra = "".join(f", {name}" for name in dict.fromkeys(f"{Path(f).parts[0]}/" if "/" in f else f for f in run.files))
    written = f"{out / 'results.json'}, results.csv, similarities.npz, manifest.json{extra}"
    return show_run(console_tables(run.records), written, out, args)


def _model(args: argparse.Namespace, kind: str) -> Any:
    """The model with the options given (a model that does not take one is refused by its registry entry)."""
    from eatkit.registry import get_model

    spec = get_model(args.model)
    options: dict[str, Any] = {}
    if args.batch_size is not None:
        options["batch_size"] = args.batch_size
    if args.no_cache:
        options["cache"] = False
    if args.device is not None:
        options["device"] = args.device
    for key in [*_DECLARED, *(flag[2:].replace("-", "_") for flag, _, _ in _DECODING)]:
        if getattr(args, key, None) is not None:
            options["prompt" if key == "caption_prompt" else key] = getattr(args, key)
    spec.refuse_options(options, option_flag)
    return spec.build(**options)
