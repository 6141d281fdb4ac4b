"""``eatkit probe ranking|vqa|caption|generate``: what a vision-language model does with labelled images.

Each probe reads a folder per group (``--images DIR`` with ``DIR/<group>/*``, or ``--cfd`` to link a
Chicago Face Database copy into that layout), runs the model, prints a table and writes
``results.json``, ``results.csv``, ``similarities.npz`` and ``manifest.json`` (plus ``captions.csv`` for
captions and ``frames/`` for generation) to the output folder; ``--report`` adds ``report.html``.
"""

from __future__ import annotations

import argparse
import csv
import shlex
import sys
from pathlib import Path
from typing import Any

from eatkit.cli import non_negative
from eatkit.cli.run import show_run
from eatkit.errors import EatkitError, one_line

#: CLI sub-command -> probe kind
KINDS: dict[str, str] = {"ranking": "ranking", "vqa": "vqa", "caption": "caption", "generate": "generation"}


def register(sub: Any) -> None:
    probe = sub.add_parser("probe", help="probe what a vision-language model does with labelled images",
                           description="Probes of the 'American == White' study: image ranking against a region "
                           "table, visual question answering, captioning, CLIP-guided generation.")
    kinds = probe.add_subparsers(dest="probe", required=True, parser_class=type(probe))
    for name, help_text in (("ranking", "rank the images for a prompt per region; compare shares with a table"),
                            ("vqa", "ask questions about every image (hf-blip-vqa:<name>)"),
                            ("caption", "caption every image at several top-p (hf-blip-caption:<name>)"),
                            ("generate", "optimise each image toward a prompt under a CLIP-like model")):
        p = kinds.add_parser(name, help=help_text, description=help_text)
        _common(p)
        globals()[f"_{name}_options"](p)
        p.set_defaults(func=_cmd_probe)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, help="a registered model (see 'eatkit list models')")
    images = p.add_mutually_exclusive_group(required=True)
    images.add_argument("--images", type=Path, help="image folder with a folder per group, DIR/<group>/*")
    images.add_argument("--cfd", type=Path, help="a Chicago Face Database folder: its neutral images are linked "
                        "into <output>/images/<race>/ from the file-name codes")
    p.add_argument("--groups", help="comma-separated group folders to use (default: all)")
    p.add_argument("--seed", type=non_negative, help="seed of every random draw (default: drawn and recorded)")
    p.add_argument("--confidence-level", type=float, default=0.95, help="of the Wilson intervals (default 0.95)")
    p.add_argument("--batch-size", type=int, help="inference batch size")
    p.add_argument("--device", help="torch device of the BLIP probe heads (default cpu)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    p.add_argument("--output", "-o", type=Path, help="output folder (default: a new folder eatkit-results/<date>_<time>)")
    p.add_argument("--report", action="store_true", help="also write report.html into the output folder")
    p.add_argument("--quiet", "-q", action="store_true", help="no table, no progress output")


def _ranking_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--reference", default="us-states-2019", help="bundled region table or CSV (default us-states-2019)")
    p.add_argument("--prompt", default="lives-in", help="prompt set (lives-in, lives-in-state) or a template with "
                   "{region} (default lives-in)")
    p.add_argument("--override", action="append", default=[], metavar="REGION=PROMPT", help="a region's whole prompt")
    p.add_argument("--column", action="append", default=[], metavar="GROUP=COLUMN",
                   help="the reference column of a group (default: the table's own mapping, else the group name)")
    p.add_argument("--k", type=int, help="images kept per region (default: the downsampled group size)")
    p.add_argument("--group-size", type=int, help="images drawn per group (default: the smallest group's size)")
    p.add_argument("--repeats", type=int, default=1000, help="random balancings averaged (default 1000)")
    p.add_argument("--table", action="append", default=[], help="another per-region table (CSV) to correlate")


def _vqa_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--question", action="append", help="a question (repeatable; default: the study's two)")
    p.add_argument("--yes", default="yes", help="the answer whose rate is reported (default 'yes')")
    p.add_argument("--max-new-tokens", type=int, help="longest answer in tokens (default 20)")


def _caption_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--top-p", default="0.5,0.6,0.7,0.8,0.9", help="comma-separated nucleus sizes (default .5-.9)")
    p.add_argument("--lexicon", default="race-ethnicity", help="bundled lexicon or a lexicon JSON file")
    p.add_argument("--max-new-tokens", type=int, help="longest caption in tokens (default 20)")


def _generate_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prompt", default="an American person", help="the text the image is optimised toward")
    p.add_argument("--steps", type=int, default=80, help="optimisation steps (default 80)")
    p.add_argument("--every", type=int, default=10, help="keep a frame every N steps (default 10)")
    p.add_argument("--lr", type=float, default=0.05, help="Adam learning rate (default 0.05)")
    p.add_argument("--parameterization", default="pixel", choices=("pixel", "fourier"))
    p.add_argument("--size", type=int, help="side of the generated image (default: the model's input size)")
    p.add_argument("--cutouts", type=int, default=4, help="random crops per step (0: the whole image; default 4)")
    p.add_argument("--region", default=None, help="left,top,width,height of the measured region as fractions "
                   "(default: a centred square of 1/12 of the side)")
    p.add_argument("--max-images", type=int, help="at most N images per group")


def _params(args: argparse.Namespace, kind: str) -> dict[str, Any]:
    """The probe's parameters from its options (validated by the analysis before any model loads)."""
    if kind == "ranking":
        return {"reference": args.reference, "prompt": args.prompt, "overrides": _pairs(args.override, "--override"),
                "columns": _pairs(args.column, "--column"), "k": args.k, "group_size": args.group_size,
                "repeats": args.repeats, "tables": args.table}
    if kind == "vqa":
        return {"yes": args.yes, **({"questions": args.question} if args.question else {})}
    if kind == "caption":
        return {"top_p": _floats(args.top_p, "--top-p"), "lexicon": args.lexicon}
    region = {} if args.region is None else {"region": _floats(args.region, "--region")}
    return {"prompt": args.prompt, "steps": args.steps, "every": args.every, "lr": args.lr,
            "parameterization": args.parameterization, "size": args.size, "cutouts": args.cutouts,
            "max_images": args.max_images, **region}


def _cmd_probe(args: argparse.Namespace) -> int:
    from eatkit.analyses import get_analysis
    from eatkit.report.kinds import console_tables
    from eatkit.analyses.base import RunOptions
    from eatkit.run.probes import probe_suite, run_probe
    from eatkit.run.runner import prepare_output

    kind = KINDS[args.probe]
    params = _params(args, kind)
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
    get_analysis(kind).check(test, RunOptions(params=params, n_bootstrap=0).validated())
    model = _model(args, kind)
    command = "eatkit " + " ".join(shlex.quote(a) for a in args.argv)
    run = run_probe(kind, model, images, groups=groups, seed=args.seed, params=params,
                    confidence_level=args.confidence_level, command=command)
    out = run.save(out)
    written = f"{out / 'results.json'}, results.csv, similarities.npz, manifest.json{_write_extras(run, out)}"
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
    if getattr(args, "max_new_tokens", None) is not None:
        options["max_new_tokens"] = args.max_new_tokens
    accepted = spec.option_names()
    for key in options:
        if accepted is not None and key not in accepted:
            raise EatkitError(f"model '{spec.name}' does not take the option --{key.replace('_', '-')}")
    return spec.build(**options)


def _write_extras(run: Any, out: Path) -> str:
    """captions.csv (every caption) and frames/<group>/<image>-step<k>.png (every kept frame)."""
    try:
        captions = [r for r in run.records if r.kind == "caption"]
        if captions:
            with open(out / "captions.csv", "w", newline="", encoding="utf-8") as fh:
                writer = csv.writer(fh)
                writer.writerow(["image", "top_p", "caption"])
                for r in captions:
                    writer.writerows([img, f"{r.top_p:g}", c] for img, c in r.captions_by_image.items())
            return ", captions.csv"
        generated = [o for o in run.outcomes if o.record.kind == "generation"]
        if generated:
            from PIL import Image

            for o in generated:
                for group, frames in o.result["frames"].items():
                    folder = out / "frames" / group
                    folder.mkdir(parents=True, exist_ok=True)
                    for image_id, series in zip(o.result["files"][group][1], frames):
                        for step, frame in zip(o.record.steps, series):
                            Image.fromarray(frame).save(folder / f"{Path(image_id).stem}-step{step:04d}.png")
            return ", frames/"
    except OSError as err:
        raise EatkitError(f"cannot write to {out}: {one_line(err)}") from None
    return ""


def _pairs(values: list[str], flag: str) -> dict[str, str]:
    out = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key.strip() or not val.strip():
            raise EatkitError(f"{flag} takes KEY=VALUE, got '{value}'")
        out[key.strip()] = val.strip()
    return out


def _floats(value: str, flag: str) -> list[float]:
    try:
        return [float(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise EatkitError(f"{flag} takes comma-separated numbers, got '{value}'") from None
