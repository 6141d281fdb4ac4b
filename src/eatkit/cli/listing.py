"""``eatkit list``: the bundled suites, the tests of a suite, the registered models or the kinds of test."""

from __future__ import annotations

import argparse
from typing import Any

from eatkit.errors import EatkitError


def register(sub: Any) -> None:
    lst = sub.add_parser("list", help="list suites, the tests of a suite, models, or kinds of test")
    lst.add_argument("what", choices=("suites", "tests", "models", "kinds"))
    lst.add_argument("suite", nargs="?", help="the suite, for 'list tests'")
    lst.set_defaults(func=_cmd_list)


def _cmd_list(args: argparse.Namespace) -> int:
    {"suites": _suites, "tests": _tests, "kinds": _kinds, "models": _models}[args.what](args)
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


def _kinds(args: argparse.Namespace) -> None:
    from eatkit.kinds import KINDS, get_kind

    for spec in map(get_kind, KINDS):
        roles = ",".join(map(str, spec.roles)) if spec.roles else "groups" if spec.probe else "classes"
        runner = f"eatkit probe {spec.probe}" if spec.probe else "suites"
        flags = " ".join(p.option for p in spec.params if p.cli)
        print(f"{spec.name:12s} {roles:22s} {runner:22s} {spec.title}" + (f"  [{flags}]" if flags else ""))


def _models(args: argparse.Namespace) -> None:
    from eatkit.registry import models

    for m in models():
        print(f"{m.name:24s} [{','.join(m.modalities)}] (extra: {m.extra})  {m.description}")
