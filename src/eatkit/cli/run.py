"""``eatkit run``: run a suite of tests on an embedding source and print a table per kind of test."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from eatkit.analyses.base import RunOptions
from eatkit.cli import add_declared, declared, declared_warnings, print_warnings
from eatkit.flags import option_flag
from eatkit.stats.options import CHOICES, OBSERVED


#: the run options whose flag is not :func:`eatkit.flags.option_flag`'s
_FLAGS = {"name": "--model", "cache": "--no-cache", "checkpoint": "--weights"}


def model_flag(key: str) -> str:
    """The ``eatkit run`` flag of a model option (a key of :data:`eatkit.run.runner.MODEL_OPTIONS`) or of
    any other option of the run request: how the command line names it in errors.

    >>> model_flag("batch_size"), model_flag("checkpoint"), model_flag("name")
    ('--batch-size', '--weights', '--model')
    """
    return _FLAGS.get(key) or option_flag(key)


def _model(args: argparse.Namespace) -> dict[str, Any]:
    """The source the flags name, as :func:`eatkit.run.runner.build_source` takes it (a model option only
    when its flag is given: ``--workers 0`` and ``--layer 0`` are given)."""
    from eatkit.run.runner import MODEL_OPTIONS

    given = {"name": args.model, "vectors": args.vectors, "embeddings": args.embeddings, "answers": args.answers,
             "answer_field": args.answer_field, "answer_format": args.answer_format,
             "embeddings_model": args.embeddings_model, "lowercase": args.lowercase or None}
    for key in MODEL_OPTIONS:
        value = getattr(args, model_flag(key)[2:].replace("-", "_"))
        if value is not None and value is not False:
            given[key] = False if key == "cache" else value
    return given


def add_preprocessing_flags(parser: argparse.ArgumentParser) -> None:
    """The image-preprocessing flags of an image model, their choices from its declaration
    (:mod:`eatkit.encoders.images`: the study presets and the fields they set)."""
    from eatkit.encoders.presets import ALPHAS, CROPS, INTERPOLATIONS, PRESETS

    group = parser.add_argument_group("image preprocessing (default: each model's own evaluation transform)")
    group.add_argument("--preprocess", choices=tuple(PRESETS), help="a study's decoding, crop and resize "
                       "('eatkit list presets' shows what each sets; the rest, e.g. steed2021's size and "
                       "scaling, stays the model's own)")
    group.add_argument("--crop", choices=CROPS, help="override the crop")
    group.add_argument("--interpolation", choices=INTERPOLATIONS,
                       help="override the resize filter ('area': OpenCV's INTER_AREA, exactly)")
    group.add_argument("--alpha", choices=ALPHAS, help="transparency: composite onto white, or drop the alpha "
                       "channel as cv2.imread and Pillow's convert('RGB') do")


def suite_kinds() -> list[Any]:
    """The specs (:class:`eatkit.kinds.KindSpec`) of the kinds that suites hold (not probes), in registry order."""
    from eatkit.kinds import KINDS, get_kind

    return [spec for spec in map(get_kind, KINDS) if not spec.probe]


def add_kind_flags(parser: argparse.ArgumentParser, specs: Any) -> None:
    """One argument group per kind with parameters, its flags derived from the kind's spec (a parameter
    that several kinds declare is one flag)."""
    added: set[str] = set()
    for spec in specs:
        params = [p for p in spec.params if p.cli and p.name not in added]
        if params:
            group = parser.add_argument_group(f"{spec.name} tests: {spec.title}")
            for param in params:
                group.add_argument(param.option, **param.argparse_kwargs())
            added |= {p.name for p in params}


def given_params(args: argparse.Namespace, specs: Any) -> dict[str, Any]:
    """The kind parameters given on the command line, as text (validated by the kinds' specs)."""
    return {p.name: getattr(args, p.name) for spec in specs for p in spec.params
            if p.cli and getattr(args, p.name, None) is not None}


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
    src.add_argument("--answers", type=Path, metavar="FILE",
                     help="recorded answers of a model (a file or a folder: lm-evaluation-harness or lmms-eval "
                     "--log_samples, VLMEvalKit tables, HELM scenario_state.json, plain CSV/JSONL; docs/answers.md) "
                     "for the suite's answer tests")
    src.add_argument("--series", type=Path, nargs="+", metavar="PATH",
                     help="an ordered series to run and compare: a folder of decades in the HistWords layout "
                     "(<year>-w.npy and <year>-vocab.pkl), or two or more word-vector files (checkpoints), in order")
    run.add_argument("--answer-field", metavar="FIELD", help="the field of --answers that holds each item's answer "
                     "(read as its text), or FIELD=COLUMN pairs joined by commas (e.g. group=race,text=description)")
    run.add_argument("--answer-format", metavar="FORMAT", help="the format of --answers (default: detected): lm-eval, "
                     "lmms-eval, helm, decodingtrust, shaikh2023, llm-iat, vlmevalkit, jsonl, csv (docs/answers.md)")
    run.add_argument("--decades", metavar="FIRST-LAST",
                     help="the HistWords decades of --series to run, e.g. 1810-1990 (the ML-EAT seed's; default: all)")
    run.add_argument("--embeddings-model", help="model name in an iEAT-layout embeddings folder (e.g. igpt_l_32)")
    run.add_argument("--tests", help="comma-separated test ids (default: all)")
    from eatkit.specs import METRICS

    run.add_argument("--metrics", metavar="NAMES",
                     help="also run every selected EAT test as these metrics (comma-separated: "
                     f"{', '.join(METRICS.names())}, or all), each with its permutation p and bootstrap CI "
                     "(docs/metrics.md)")
    run.add_argument("--permutations", default=defaults.permutations, type=declared("permutations"),
                     help="auto (default), exact, or a number of random draws")
    run.add_argument("--alternative", default=defaults.alternative, choices=(*CHOICES["alternative"], OBSERVED),
                     help="alternative hypothesis of the p-values (default: the suite's, e.g. two-sided for "
                     "american-white; else greater); observed: the one-sided p on the side of the observed d "
                     "(ML-EAT's convention; eat and sc-eat tests). Records keep the p of all three alternatives")
    run.add_argument("--seed", type=declared("seed"), help="seed for Monte Carlo and bootstrap draws (default: 0, "
                     "so the same command gives the same digits; random: a fresh one); recorded")
    run.add_argument("--correction-family", default="kind", choices=CHOICES["correction_family"],
                     help="Benjamini-Hochberg q-values over each kind's tests (default: EATs among EATs, each metric "
                     "among its own) or over all of the run's tests (run)")
    run.add_argument("--ddof", type=declared("ddof"), default=defaults.ddof,
                     help="delta degrees of freedom of the SD (default 1; 0 or 1 with --sd pooled or --p-method welch)")
    run.add_argument("--sd", default=defaults.sd, choices=CHOICES["sd"],
                     help="SD of all target associations (Caliskan et al.) or pooled SD for unequal groups")
    run.add_argument("--p-method", default=defaults.p_method, choices=CHOICES["p_method"])
    run.add_argument("--bootstrap", dest="n_bootstrap", type=declared("n_bootstrap"), default=defaults.n_bootstrap,
                     help="bootstrap resamples for the CI of d (0: none)")
    run.add_argument("--validity", action="store_true",
                     help="per EAT: stimulus influence, stability over the sets, power and set diagnostics "
                     "(docs/validity.md)")
    run.add_argument("--oov", choices=("error", "drop"),
                     help="out-of-vocabulary words: fail (default) or drop them and record it")
    run.add_argument("--lowercase", action="store_true", help="look words up lower-cased (uncased --vectors)")
    run.add_argument("--images", type=Path, help="image folder: the iEAT layout <test>/<category>/*, or for the "
                     "grounded suites any folder holding the images (found by file name)")
    add_declared(run, "run", "layer")
    run.add_argument("--pooling", help="pooling of token/patch features (model-specific)")
    run.add_argument("--prompt", help="prompt template for words, e.g. 'a photo of {x}'")
    run.add_argument("--compare-prompts", nargs="+", metavar="PROMPT",
                     help="run --model once per prompt ('' = the bare word; others contain {x}) and compare them")
    run.add_argument("--postprocess", help="correct anisotropy: center (subtract the mean vector) or abtt:D "
                     "(also remove the top D principal components); fitted on the stimuli of the tests run")
    add_declared(run, "run", "batch_size")
    run.add_argument("--device", help="auto (default: a GPU when present), cpu, cuda, cuda:N or mps")
    run.add_argument("--precision", choices=("fp32", "bf16", "fp16"),
                     help="forward-pass precision (default fp32: exact reproducibility)")
    add_declared(run, "run", "workers")
    run.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    run.add_argument("--weights", type=Path, help="a checkpoint (safetensors, e.g. from 'eatkit finetune') to load "
                     "into --model")
    run.add_argument("--revision", help="hub revision (branch, tag or commit) of a hub model (hf:, hf-clip:, "
                     "hf-blip:, open_clip:hf-hub:<repo>); the commit it resolves to is recorded")
    add_preprocessing_flags(run)
    gen = run.add_argument_group("text-to-image models (diffusers:<hub id or folder>, docs/generation.md)")
    gen.add_argument("--embedder", metavar="MODEL", help="the image model that embeds the generated images (e.g. "
                     "hf-clip:openai/clip-vit-large-patch14; a CLIP-like model for depiction tests)")
    gen.add_argument("--generation", action="append", metavar="KEY=VALUE",
                     help="a generation setting (repeatable): images_per_prompt, seed (image i: seed + i), steps, "
                     "guidance_scale, scheduler, negative_prompt, size")
    add_kind_flags(run, suite_kinds())
    joint = run.add_argument_group("joint models (Grounded-WEAT/SEAT: hf-vilt: and others)")
    joint.add_argument("--regions", help="region features: a folder of .npz files (one per image), the "
                       "Grounded-WEAT authors' .th file (torch.save dict, read safely) or 'fasterrcnn' "
                       "(torchvision's detector)")
    joint.add_argument("--missing", choices=("error", "drop"),
                       help="images not found under --images: fail (default) or drop their pairs and record it")
    run.add_argument("--output", "-o", type=Path, help="output folder (default: a new folder eatkit-results/<date>_<time>)")
    run.add_argument("--report", action="store_true", help="also write report.html into the output folder")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress output (the results still print)")
    run.set_defaults(func=_cmd_run)


def _cmd_run(args: argparse.Namespace) -> int:
    """Parse the flags into a request (:func:`eatkit.run.request.build_request`), run it, print."""
    from eatkit.run.folder import prepare_output
    from eatkit.run.request import build_request, run_request

    # everything that can be checked is checked before a model is loaded or a test computed
    out = prepare_output(args.output, "series" if args.series or args.compare_prompts else "run",
                         inputs=[args.suite, args.vectors, args.embeddings, args.answers, *(args.series or ())])
    model_warnings = declared_warnings("run", args)  # --batch-size, --workers (printed below)
    options = RunOptions(
        permutations=args.permutations, alternative=args.alternative, seed=args.seed, ddof=args.ddof, sd=args.sd,
        correction_family=args.correction_family, p_method=args.p_method, n_bootstrap=args.n_bootstrap,
        validity=args.validity, params=given_params(args, suite_kinds()))
    request = build_request(args.suite, _model(args), options, tests=_split(args.tests), metrics=args.metrics,
                            series=args.series, decades=args.decades, compare_prompts=args.compare_prompts,
                            postprocess=args.postprocess, command="eatkit " + " ".join(map(shlex.quote, args.argv)),
                            warnings=model_warnings, flag=model_flag)
    done = run_request(request, out)
    warnings = [*model_warnings, *request.options.warnings()]
    warnings += _input_warnings(done, warnings)
    _print_notices(done.records)
    print_warnings(warnings)  # recorded in every record and the manifest; a record's own are in the table
    table, written = _tables(done, warnings)
    if request.options.correction_family == "run":  # the legends state the default family
        table += "\nq: Benjamini-Hochberg over all of the run's tested records (--correction-family run), not per kind"
    return show_run(table, written, done.out, args)


def _input_warnings(done: Any, known: list[str]) -> list[str]:
    """The run's warnings about its inputs (an image far smaller than the model's input), found while embedding
    and recorded in each run's manifest and records: printed once with the settings' warnings."""
    found = (w for run in done.runs for w in getattr(run, "manifest", {}).get("statistics", {}).get("warnings", []))
    return [w for w in dict.fromkeys(found) if w not in known]


def _tables(done: Any, run_warnings: list[str]) -> tuple[str, str]:
    """The console tables of a finished request and the files it wrote."""
    from eatkit.report.kinds import console_tables

    if done.series is not None:
        from eatkit.report.series import load_series, series_table

        per = "prompt" if done.series == "prompts" else "point"
        return series_table(load_series(done.out)), f"{done.out / 'series.json'} and one run folder per {per}"
    warned = [f"warning: {w}" for w in _record_warnings(done.records, run_warnings)]
    table = "\n".join([console_tables(done.records), *([""] + warned if warned else [])])
    return table, f"{done.out / 'results.json'}, results.csv, similarities.npz, manifest.json"


def _record_warnings(records: list[Any], run_warnings: list[str]) -> list[str]:
    """The warnings of single records (not the run's), as ``test: warning``, each once."""
    return list(dict.fromkeys(f"{r.test}: {w}" for r in records for w in r.warnings if w not in run_warnings))


def _print_notices(records: list[Any]) -> None:
    """One notice per set and drop, naming its tests (every drop is also recorded in results.json and the
    manifest)."""
    notices: dict[tuple[str, str], list[str]] = {}
    for r in records:
        names = {role.upper(): getattr(r, f"{role.lower()}_name", role) for role in r.dropped}
        for role, words in r.dropped.items():
            tests = notices.setdefault((f"{role} ({names[role.upper()]})", ", ".join(words)), [])
            tests += [] if r.test in tests else [r.test]
    for (where, words), tests in notices.items():
        print(f"{', '.join(tests)}: dropped from {where}: {words}", file=sys.stderr)


def show_run(table: str, written: str, out: Path, args: argparse.Namespace) -> int:
    """Print the tables and the files written (also with ``--quiet``, which silences progress only); write
    ``report.html`` with ``--report`` (shared by ``run`` and ``probe``)."""
    print(table)
    print(f"\nwrote {written}")
    if args.report:
        from eatkit.report import write_html_report

        print(f"wrote {write_html_report([out], out / 'report.html')}")
    return 0


def _split(value: str | None) -> list[str] | None:
    return None if value is None else [t.strip() for t in value.split(",") if t.strip()]
