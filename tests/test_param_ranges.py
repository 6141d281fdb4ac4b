"""Every numeric option of every command, every kind parameter, run option, generation and decoding setting is a
declared ``Param`` with a legal range bounded on both sides and a useful range (issue 45 point 7); the census
finds every declaration (module-level Params, tuples or tables of them, every kind's), so a new one without
bounds fails; sweep files are checked whole, every table's typed keys from the declarations, before any cell
runs."""

from __future__ import annotations

import importlib
import json
import re
import pkgutil
import types
from pathlib import Path

import pytest

import eatkit
from eatkit.cli import main
from eatkit.command_options import COMMAND_OPTIONS, command_option
from eatkit.errors import EatkitError
from eatkit.kinds import KINDS, get_kind
from eatkit.params import Param


def _params_of(value) -> list[Param]:
    """The Params in a module attribute: a Param, or a tuple, list or table of them (one table deep)."""
    if isinstance(value, Param):
        return [value]
    if isinstance(value, dict):
        return [p for v in value.values() for p in ([v] if isinstance(v, Param) else
                                                      [x for x in v.values() if isinstance(x, Param)]
                                                      if isinstance(v, dict) else [])]
    if isinstance(value, (tuple, list)):
        return [p for p in value if isinstance(p, Param)]
    return []


def census(modules) -> dict[str, Param]:
    """``"<module>.<attribute>: <param>"`` -> Param, for every Param the modules declare."""
    return {f"{m.__name__}.{name}: {p.name}": p for m in modules for name, value in vars(m).items()
            for p in _params_of(value)}


def _modules():
    return [importlib.import_module(m.name) for m in pkgutil.walk_packages(eatkit.__path__, "eatkit.")]


#: numeric parameters without an upper bound: their cost (time, memory) is estimated before any work and a
#: value beyond what eatkit takes is refused with the estimate (eatkit.stats.cost, check_exact_feasible,
#: check_monte_carlo_feasible; tests/test_robust_corpus.py's "cost" rows), which a bound would pre-empt
COSTED = ("permutations", "n_bootstrap")


def _costed(p: Param) -> bool:
    from eatkit.stats.options import OPTIONS

    return any(p is OPTIONS[name] for name in COSTED)


def _unbounded(found: dict[str, Param]) -> list[str]:
    return sorted(where for where, p in found.items() if p.type in (int, float) and
                  (p.low is None or (p.high is None and not _costed(p)) or p.useful is None))


def test_every_numeric_parameter_is_bounded_on_both_sides_and_declares_its_useful_range():
    found = census(_modules())
    found |= {f"kind {spec.name}: {p.name}": p for spec in map(get_kind, KINDS) for p in spec.params}
    assert len(found) > 80  # the commands', the run's, every kind's, generation and decoding settings
    assert any(where.startswith("eatkit.encoders.diffusion.GENERATION_SETTINGS") for where in found)
    assert _unbounded(found) == []


def test_the_census_finds_a_new_unbounded_parameter():
    toy = types.ModuleType("eatkit_toy_settings")
    toy.SETTINGS = (Param("n_samples", int, 10, low=1, useful=(None, None)),)  # no upper bound
    toy.TABLE = {"cmd": {"rate": Param("rate", float, 0.5, low=0, high=1)}}  # no useful range
    assert _unbounded(census([toy])) == ["eatkit_toy_settings.SETTINGS: n_samples", "eatkit_toy_settings.TABLE: rate"]


@pytest.mark.parametrize("command", sorted(COMMAND_OPTIONS))
def test_every_command_option_refuses_a_value_beyond_its_bounds(command, capsys):
    """From the API (command_option) and from the command line (argparse, exit 2, one line naming the
    option), before any work."""
    for name, p in COMMAND_OPTIONS[command].items():
        above = p.high + 1 if p.type is int else p.high * 10
        with pytest.raises(EatkitError, match=rf"^{name} must be"):
            command_option(command, name, above)
        errors = []
        for sub in _SUBCOMMANDS.get(command, [[]]):  # probe's options belong to its sub-commands
            with pytest.raises(SystemExit) as stop:
                main([command, *sub, p.option, str(above)])
            assert stop.value.code == 2
            errors += capsys.readouterr().err.strip().splitlines()
        assert any(f"{name} must be" in line for line in errors), (command, name, errors)


#: the sub-commands of a command whose options are theirs
_SUBCOMMANDS = {"probe": [["ranking"], ["vqa"], ["caption"], ["generate"], ["retrieval"]]}


def test_the_generation_settings_refuse_what_a_pipeline_cannot_run():
    from eatkit.encoders.diffusion import generation_settings

    for given, message in (({"images_per_prompt": 10**9}, "images_per_prompt must be an integer in [1, 10000]"),
                           ({"seed": 2**64 - 1}, "seed must be an integer in"),
                           ({"size": 100}, "size must be a multiple of 8"),
                           ({"steps": 10**6}, "steps must be an integer in [1, 10000]")):
        with pytest.raises(EatkitError, match="^" + re.escape(message)):
            generation_settings(given)
    assert generation_settings({"size": 64, "seed": 2**53 - 10_001})["size"] == 64


def test_the_sweep_tables_typed_keys_come_from_the_declarations():
    from eatkit.run.schemas import param_schema, sweep_json_schema
    from eatkit.run.sweep_file import MODEL_KEYS
    from eatkit.stats.options import OPTIONS

    schema = sweep_json_schema()["$defs"]
    model = schema["model"]["oneOf"][1]["properties"]
    declared = {k: p for k, p in COMMAND_OPTIONS["run"].items() if k in MODEL_KEYS}
    assert set(declared) == {"batch_size", "layer", "workers"}
    assert all(model[k] == param_schema(p) and "maximum" in model[k] for k, p in declared.items())
    setting = schema["setting"]["properties"]
    numeric = {k: p for k, p in OPTIONS.items() if p.type in (int, float) and k not in COSTED}
    assert all("aximum" in json.dumps(setting[k]) for k in numeric), numeric  # maximum or exclusiveMaximum
    kinds = setting["params"]["properties"]
    assert all("aximum" in json.dumps(kinds[p.name]) for spec in map(get_kind, KINDS) for p in spec.params
               if p.type in (int, float))


@pytest.mark.parametrize(("where", "bad"), [
    ("models", {"vectors": "v.txt", "label": "b", "workers": 5000}),
    ("models", {"vectors": "v.txt", "label": "b", "batch_size": 10**6}),
    ("settings", {"label": "s2", "effect_threshold": 1e9}),
    ("settings", {"label": "s2", "params": {"contexts": 10**7}}),
])
def test_a_sweep_file_is_refused_whole_before_any_cell_runs(tmp_path, capsys, where, bad):
    """The bad value sits in the last table: the first model and setting are fine, yet nothing runs (no cell
    folder is made): exit 2, one line naming the key."""
    words = "rose lily ant fly love peace war hate".split()
    (tmp_path / "v.txt").write_text("".join(f"{w} {i % 3 + 1} {i % 2} {i % 5 + 1}\n" for i, w in enumerate(words)))
    (tmp_path / "s.json").write_text(json.dumps({"schema": "eatkit.suite/1", "id": "s", "title": "S", "tests": [
        {"id": "t", "title": "t", **{r: {"name": r, "modality": "word", "items": words[2 * i:2 * i + 2]}
                                     for i, r in enumerate("XYAB")}}]}))
    sweep = {"models": [{"vectors": "v.txt", "label": "a"}], "suites": ["s.json"],
             "settings": [{"label": "s1", "seed": 0, "n_bootstrap": 0}]}
    sweep[where].append(bad)
    (tmp_path / "sweep.toml").write_text("".join(f"{k} = [{', '.join(map(_toml, v))}]\n" for k, v in sweep.items()))
    out = tmp_path / "out"
    assert main(["sweep", str(tmp_path / "sweep.toml"), "-o", str(out), "--jobs", "0", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    key = next(iter(bad["params"])) if "params" in bad else next(k for k in bad if k not in ("label", "vectors"))
    assert len(err) == 1 and key in err[0], err
    assert not out.exists() or not any(p.is_dir() for p in Path(out).iterdir())


def _toml(value) -> str:
    """A value as TOML (an inline table; a string or number as JSON writes it, which TOML reads the same)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)
