"""Families of kinds (eatkit.kinds: role groups, Family): what members share is declared once, and a new
member is a statistics function plus one declaration, shown everywhere without touching another file."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from eatkit.errors import EatkitError
from eatkit.kinds import KINDS, KindSpec, RoleGroup, get_kind, register_kind


@pytest.fixture
def grouped():
    """A kind with n target sets and m attribute sets (role groups), registered for the test only."""
    register_kind("toy-groups", KindSpec("toy-groups", (RoleGroup("T", 2), RoleGroup("A", 1, 3)),
                                         "eatkit.analyses.eat:EATAnalysis", title="toy role groups"))
    yield
    del KINDS["toy-groups"]
    get_kind.cache_clear()


def _suite(**roles):
    word = lambda *w: {"name": w[0], "modality": "word", "items": list(w)}  # noqa: E731
    test = {"id": "g1", "title": "groups", "kind": "toy-groups", **{r: word(*w) for r, w in roles.items()}}
    return json.dumps({"schema": "eatkit.suite/1", "id": "g", "title": "g", "tests": [test]})


def test_role_groups_are_declared_and_checked(grouped):
    from eatkit.stimuli.schema import check_json_schema, parse_suite, suite_json_schema

    text = _suite(T1=["a"], T3=["c"], T2=["b"], A1=["x"])
    test = parse_suite(text, "g.json").tests[0]
    assert [r for r, _ in test.roles] == ["T1", "T2", "T3", "A1"]
    check_json_schema(json.loads(text), suite_json_schema(), "g.json")  # the schema's patterns admit them
    with pytest.raises(EatkitError, match=r"^suite file g.json: test 'g1': a toy-groups test needs at least 2 sets T1, "
                                          r"T2, \.\.\. \(got T1\)$"):
        parse_suite(_suite(T1=["a"], A1=["x"]), "g.json")
    with pytest.raises(EatkitError, match=r"numbered from 1 without gaps \(got T1, T3\)$"):
        parse_suite(_suite(T1=["a"], T3=["c"], A1=["x"]), "g.json")
    with pytest.raises(EatkitError, match=r"at most 3 sets A1, A2, \.\.\. \(got A1, A2, A3, A4\)$"):
        parse_suite(_suite(T1=["a"], T2=["b"], A1=["x"], A2=["y"], A3=["z"], A4=["w"]), "g.json")
    with pytest.raises(EatkitError, match="B1"):  # a key of no role is refused as before
        parse_suite(_suite(T1=["a"], T2=["b"], A1=["x"], B1=["y"]), "g.json")


# --- a new member of the metrics family: a statistics function and one declaration ----------------------

METRIC_MODULE = '''
"""Two members added from outside eatkit: WEAT's effect size (Caliskan et al. 2017) as a metric, and an
unusual shape, a member that reads the targets only and whose value of no bias is 0.5."""
import numpy as np

from eatkit.specs import METRICS
from eatkit.stats import check_sets
from eatkit.stats.metrics import MetricResult


def _unit(M):
    M = np.asarray(M, dtype=float)
    return M / np.linalg.norm(M, axis=1, keepdims=True)


def weat_es(X, Y, A, B, *, n_bootstrap=0, confidence_level=0.95, rng=None):
    X, Y, A, B = map(_unit, check_sets(X=X, Y=Y, A=A, B=B).values())
    s = lambda W: (W @ A.T).mean(1) - (W @ B.T).mean(1)
    sx, sy = s(X), s(Y)
    d = (sx.mean() - sy.mean()) / np.concatenate([sx, sy]).std(ddof=1)
    return MetricResult(metric="weat_es", value=float(d), confidence_level=confidence_level)


def near_share(X, Y, *, rng=None):
    X, Y = map(_unit, check_sets(X=X, Y=Y).values())
    mx, my = X.mean(0), Y.mean(0)
    near = lambda W, own, other: np.linalg.norm(W - own, axis=1) < np.linalg.norm(W - other, axis=1)
    share = (near(X, mx, my).sum() + near(Y, my, mx).sum()) / (len(X) + len(Y))
    return MetricResult(metric="near_share", value=float(share))


WEAT_ES = METRICS.member("weat-es", "toy_metric:weat_es", title="WEAT effect size (Caliskan et al. 2017)",
                         template=(2, 2), label="WEAT d")
NEAR_SHARE = METRICS.member("near-share", "toy_metric:near_share", title="Share nearer their own mean",
                            template=(2, 0), chance=0.5, label="NEAR")
'''

#: words of the toy suite and three models' vectors (models 2 and 3: X further out; the members' values differ:
#: WEAT d -1.22, -1.55, -1.44; the share nearer their own mean 2/3, 1, 5/6)
WORDS = {"x1": (1, 0), "x2": (1, 0.2), "y1": (0, 1), "y2": (0.2, 1), "a1": (1, 1), "a2": (0.8, 1),
         "b1": (1, 0.5), "b2": (0.9, 0.6), "x3": (0.3, 0.7), "y3": (0.5, 0.5)}
SETS = {"Xs": ["x1", "x2", "x3"], "Ys": ["y1", "y2", "y3"], "As": ["a1", "a2"], "Bs": ["b1", "b2"]}
SCALES = {1: 1.0, 2: 3.0, 3: 2.0}


def _toy_suite(kind: str) -> dict:
    return {"schema": "eatkit.suite/1", "id": "toyfam", "title": "Toy", "tests": [
        {"id": "t1", "title": "T one", **{r: {"name": n, "modality": "word", "items": SETS[n]}
                                          for r, n in zip("XYAB", SETS)}},
        {"id": "g1", "title": "from a suite file", "kind": kind, "X": "Xs", "Y": "Ys", "A": "As", "B": "Bs"}],
        "sets": {n: {"modality": "word", "items": w} for n, w in SETS.items()}}


def _vectors(scale: float) -> dict[str, np.ndarray]:
    return {w: np.array([x * (scale if w[0] == "x" else 1), y], dtype=float) for w, (x, y) in WORDS.items()}


def _weat_es(v):
    """WEAT's d by eatkit's own EAT (Caliskan SD, ddof 1): an independent path to the member's value."""
    from eatkit.stats import eat

    sets = [np.array([v[w] for w in SETS[n]]) for n in SETS]
    return eat(*sets, permutations="exact").effect_size


def _near_share(v):
    unit = {w: x / np.linalg.norm(x) for w, x in v.items()}
    mean = {n: np.mean([unit[w] for w in SETS[n]], axis=0) for n in ("Xs", "Ys")}
    own = [(w, n, "Ys" if n == "Xs" else "Xs") for n in ("Xs", "Ys") for w in SETS[n]]
    return float(np.mean([np.linalg.norm(unit[w] - mean[n]) < np.linalg.norm(unit[w] - mean[o]) for w, n, o in own]))


@pytest.fixture
def new_metrics(tmp_path, monkeypatch):
    """The members' module on sys.path; registered by each test with its one line, after the last real
    member (whichever it is); everything gone afterwards."""
    import sys
    import textwrap

    (tmp_path / "toy_metric.py").write_text(textwrap.dedent(METRIC_MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    for k, scale in SCALES.items():
        (tmp_path / f"v{k}.txt").write_text("".join(f"{w} {x:g} {y:g}\n" for w, (x, y) in _vectors(scale).items()),
                                            encoding="utf-8")
    yield tmp_path
    for kind in ("weat-es", "near-share"):
        KINDS.pop(kind, None)
    get_kind.cache_clear()
    sys.modules.pop("toy_metric", None)


def _every_surface(d, kind, compute, chance, capsys):
    """Every place a member reaches from its declaration: --metrics choices and help, a suite file's test,
    results.json, the console table and report with the legend, the JSON Schemas, eatkit.metrics, a sweep's
    rankings.csv (distance from the declared chance level) and audit page."""
    import pandas as pd

    import eatkit.metrics
    from eatkit.cli import main
    from eatkit.report import load_run
    from eatkit.run.schemas import sweep_json_schema
    from eatkit.specs import METRICS
    from eatkit.stimuli.schema import suite_json_schema

    real = [n for n in METRICS.names() if n != kind]
    assert METRICS.names()[-1] == kind and "clustering" in real  # after the last real member
    spec, api = get_kind(kind), kind.replace("-", "_")
    expected = compute(_vectors(1.0))
    (d / "suite.json").write_text(json.dumps(_toy_suite(kind)), encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert f"{real[-1]}, {kind}, or all" in " ".join(capsys.readouterr().out.split()).replace("- ", "-")
    assert main(["run", str(d / "suite.json"), "--vectors", str(d / "v1.txt"), "--metrics", kind,
                 "-o", str(d / "r"), "--report", "--seed", "0"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    legend = f"{spec.member.label}: {spec.title}, no bias {chance:g}"
    assert f"t1:{kind}" in out and legend in out  # the table and its legend
    records = {r.test: r for r in load_run(d / "r").records}
    assert records[f"t1:{kind}"].value == pytest.approx(expected)
    assert records["g1"].value == pytest.approx(expected) and records["g1"].metric == api
    saved = json.loads((d / "r" / "results.json").read_text(encoding="utf-8"))
    assert {r["kind"] for r in saved if r["test"] != "t1"} == {kind}
    html = (d / "r" / "report.html").read_text(encoding="utf-8")
    assert f"t1:{kind}" in html and legend in html
    assert kind in suite_json_schema()["$defs"]["test"]["properties"]["kind"]["enum"]
    assert kind in json.dumps(sweep_json_schema()["$defs"]["suite"])
    vectors = _vectors(1.0)
    sets = [[vectors[w].tolist() for w in SETS[n]] for n in SETS]
    attributes = None if spec.member.template[1] == 0 else sets[2:]
    assert getattr(eatkit.metrics, api)(sets[:2], attributes).value == pytest.approx(expected)
    assert api in dir(eatkit.metrics)
    (d / "sweep.toml").write_text(
        "models = [" + ", ".join(f'{{ vectors = "{d / f"v{k}.txt"}", label = "m{k}" }}' for k in SCALES) + "]\n"
        f'suites = [{{ suite = "{d / "suite.json"}", tests = ["t1"], metrics = ["{kind}", "rnd"] }}]\n'
        'settings = [{ seed = 0, n_bootstrap = 0, permutations = 9 }]\n', encoding="utf-8")
    assert main(["sweep", str(d / "sweep.toml"), "-o", str(d / "s"), "--jobs", "0", "--quiet"]) == 0
    rankings = pd.read_csv(d / "s" / "rankings.csv").set_index("model")
    for k, scale in SCALES.items():
        assert rankings.loc[f"m{k}", api] == pytest.approx(abs(compute(_vectors(scale)) - chance))
    assert f">{api}<" in (d / "s" / "audit.html").read_text(encoding="utf-8")
    # the bad-input corpus: the member's rows, generated from its declaration, each a one-line error
    from test_robust_corpus import member_rows

    rows = member_rows(spec)
    assert len(rows) == (3 if "A" in spec.member.reads else 2)
    for _, call, message in rows:
        with pytest.raises(EatkitError, match=re.escape(message)):
            call()


def test_a_new_metric_is_a_function_and_one_declaration(new_metrics, capsys):
    register_kind("weat-es", "toy_metric:WEAT_ES")  # the one registry line
    _every_surface(new_metrics, "weat-es", _weat_es, 0.0, capsys)


def test_a_member_of_an_unusual_shape_targets_only_and_chance_one_half(new_metrics, capsys):
    """A member that reads X and Y only (its function takes no attribute set) and whose value of no bias is
    0.5: the runner passes it the targets only, the API takes no attributes, the ranking's magnitude is
    |value - 0.5|."""
    import eatkit.metrics

    register_kind("near-share", "toy_metric:NEAR_SHARE")
    assert get_kind("near-share").member.reads == ("X", "Y")
    _every_surface(new_metrics, "near-share", _near_share, 0.5, capsys)
    with pytest.raises(EatkitError, match="NEAR reads the targets only: pass no attribute sets"):
        eatkit.metrics.near_share([[[1, 0]], [[0, 1]]], [[[1, 1]]])


# --- a new association-test kind with role groups (n target sets, m attribute sets) ------------------------

GROUPS_MODULE = '''
"""A throwaway generalised association test: the spread (max - min) over the target sets T1..Tn of each
set's mean cosine with the attribute sets A1..Am pooled."""
from dataclasses import dataclass

import numpy as np

from eatkit.analyses.base import Analysis, Outcome
from eatkit.kinds import KindSpec, Presentation, Ranking, RoleGroup
from eatkit.records import Record

SPEC = KindSpec(
    "toy-spread", (RoleGroup("T", 2), RoleGroup("A", 1)), "toy_groups:SpreadAnalysis", title="Toy spread over n targets",
    presentation=Presentation(columns=("n_targets", "spread"), headline="spread", formats={"spread": ".4f"},
                              legend="spread: max - min of the target sets' mean cosine with the attributes"),
    ranking=Ranking("spread", "spread"))


@dataclass(frozen=True, kw_only=True)
class SpreadRecord(Record):
    kind = "toy-spread"

    n_targets: int
    spread: float


class SpreadAnalysis(Analysis):
    kind = "toy-spread"
    record_type = SpreadRecord

    def compute(self, test, embedded, options, *, suite, seed):
        unit = lambda v: v / np.linalg.norm(v, axis=1, keepdims=True)
        A = unit(np.concatenate([e.vectors for r, e in embedded.items() if r.startswith("A")]))
        means = [float((unit(e.vectors) @ A.T).mean()) for r, e in embedded.items() if r.startswith("T")]
        return [Outcome(SpreadRecord(suite=suite, test=test.id, title=test.title, seed=seed, n_targets=len(means),
                                     spread=max(means) - min(means)))]
'''


def test_a_new_kind_with_role_groups_in_one_module_and_one_line(tmp_path, monkeypatch, capsys):
    import sys
    import textwrap

    from eatkit.cli import main
    from eatkit.report import load_run
    from eatkit.stimuli.schema import check_json_schema, suite_json_schema

    (tmp_path / "toy_groups.py").write_text(textwrap.dedent(GROUPS_MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    register_kind("toy-spread", "toy_groups:SPEC")  # the one registry line
    try:
        word = lambda *w: {"name": w[0], "modality": "word", "items": list(w)}  # noqa: E731
        suite = {"schema": "eatkit.suite/1", "id": "spread", "title": "Spread", "tests": [
            {"id": "s3", "title": "three targets", "kind": "toy-spread", "T1": word("x1", "x2"),
             "T2": word("y1", "y2"), "T3": word("b1", "b2"), "A1": word("a1"), "A2": word("a2")}]}
        check_json_schema(suite, suite_json_schema(), "spread.json")
        (tmp_path / "s.json").write_text(json.dumps(suite), encoding="utf-8")
        (tmp_path / "v.txt").write_text("".join(f"{w} {x:g} {y:g}\n" for w, (x, y) in WORDS.items()), encoding="utf-8")
        assert main(["run", str(tmp_path / "s.json"), "--vectors", str(tmp_path / "v.txt"), "-o",
                     str(tmp_path / "r"), "--report"]) == 0
        out = capsys.readouterr().out
        v = {w: np.array(x, dtype=float) / np.linalg.norm(x) for w, x in WORDS.items()}
        means = [np.mean([v[t] @ v[a] for t in ts for a in ("a1", "a2")]) for ts in (("x1", "x2"), ("y1", "y2"),
                                                                                     ("b1", "b2"))]
        record = load_run(tmp_path / "r").records[0]
        assert record.n_targets == 3 and record.spread == pytest.approx(max(means) - min(means))
        assert f"{max(means) - min(means):.4f}" in out and "spread: max - min" in out
        html = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
        assert "Toy spread over n targets" in html and f"{max(means) - min(means):.4f}" in html
        # a sweep ranks models by its declared Ranking (the spread's distance from 0), in rankings.csv and audit.html
        import pandas as pd

        for k, scale in ((2, 3.0), (3, 2.0)):
            (tmp_path / f"v{k}.txt").write_text("".join(f"{w} {x * (scale if w[0] == 'x' else 1):g} {y:g}\n"
                                                        for w, (x, y) in WORDS.items()), encoding="utf-8")
        (tmp_path / "sweep.toml").write_text(
            "models = [" + ", ".join(f'{{ vectors = "{tmp_path / f"v{k}.txt"}", label = "m{k}" }}' for k in (1, 2, 3))
            + f']\nsuites = ["{tmp_path / "s.json"}"]\n', encoding="utf-8")
        (tmp_path / "v1.txt").write_bytes((tmp_path / "v.txt").read_bytes())
        assert main(["sweep", str(tmp_path / "sweep.toml"), "-o", str(tmp_path / "sw"), "--jobs", "0", "-q"]) == 0
        rankings = pd.read_csv(tmp_path / "sw" / "rankings.csv").set_index("model")
        assert rankings.loc["m1", "spread"] == pytest.approx(max(means) - min(means))
        assert list(rankings.columns[:3]) == ["setting", "group", "spread"] and ">spread<" in (tmp_path / "sw" / "audit.html").read_text()
    finally:
        del KINDS["toy-spread"]
        get_kind.cache_clear()
        sys.modules.pop("toy_groups", None)


# --- one validation mechanism: suite params, facts, API keywords --------------------------------------------

@pytest.mark.parametrize("test, params, message", [
    ({"id": "t", "title": "t"}, {"no_such_param": 3},
     r"test 't': params: eat tests take no parameter 'no_such_param' \(known: specificity, iat_d\)"),
    ({"id": "t", "title": "t", "kind": "rnd"}, {"distanse": "cosine"},
     r"test 't': params: rnd tests take no parameter 'distanse' \(known: distance\)"),
    ({"id": "t", "title": "t", "kind": "mac"}, {"distance": "cosine"},
     r"test 't': params: mac tests take no parameter 'distance' \(known: none\)"),
    ({"id": "t", "title": "t"}, {"iat_d": "big"}, r"test 't': iat_d must be a number in \[-100, 100\], got 'big'"),
    ({"id": "t", "title": "t", "kind": "rnsb"}, {"n_fits": 0}, r"test 't': n_fits must be an integer in \[2, 10000\], got 0"),
])
def test_a_suite_params_name_or_type_is_refused_with_the_known_names(tmp_path, capsys, test, params, message):
    from eatkit.cli import main

    word = lambda *w: {"name": w[0], "modality": "word", "items": list(w)}  # noqa: E731
    suite = {"schema": "eatkit.suite/1", "id": "p", "title": "p", "tests": [
        {**test, "params": params, "X": word("x1"), "Y": word("y1"), "A": word("a1"), "B": word("b1")}]}
    (tmp_path / "s.json").write_text(json.dumps(suite), encoding="utf-8")
    (tmp_path / "v.txt").write_text("x1 1 0\ny1 0 1\na1 1 1\nb1 1 0.5\n", encoding="utf-8")
    code = main(["run", str(tmp_path / "s.json"), "--vectors", str(tmp_path / "v.txt"), "-o", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and re.fullmatch(f"eatkit: error: suite file .*s.json: {message}\n", err), err


def test_the_facts_a_suite_carries_are_declared():
    """Every key of every bundled test's params is a declared parameter of its kind."""
    from eatkit.stimuli.loader import list_suites, load_suite

    for info in list_suites():
        for test in load_suite(info.id).tests:
            names = {p.name for p in get_kind(test.kind).params}
            assert {k for k, _ in test.params} <= names, (info.id, test.id)
    assert get_kind("eat").param("iat_d").type is float and not get_kind("eat").param("iat_d").cli
    with pytest.raises(EatkitError, match="iat_d must be a finite number, got nan"):
        get_kind("eat").complete({}, {"iat_d": float("nan")})


def _declared_params():
    from eatkit.stats.options import OPTIONS

    return [("run options", p) for p in OPTIONS.values()] + [
        (spec.name, p) for spec in map(get_kind, KINDS) for p in spec.params]


def test_every_numeric_parameter_declares_its_useful_range():
    """A new int or float parameter (of a kind or of the run) without ``useful=`` fails here (issue 36)."""
    missing = [f"{owner}: {p.name}" for owner, p in _declared_params() if p.type in (int, float) and p.useful is None]
    assert missing == []
    from eatkit.kinds import Param

    register_kind("toy-undeclared", KindSpec("toy-undeclared", ("T", "A"), "m:C", params=(Param("n", int, 3, low=1),)))
    try:
        assert [p.name for _, p in _declared_params() if p.type in (int, float) and p.useful is None] == ["n"]
    finally:
        del KINDS["toy-undeclared"]
        get_kind.cache_clear()


def test_no_option_is_range_checked_outside_its_declaration():
    """The run options' messages ("<name> must ...") come from their declarations (eatkit.kinds.Param) only:
    no module writes its own check of a declared option (a second check with another message)."""
    from pathlib import Path

    import eatkit
    from eatkit.stats.options import OPTIONS

    src = Path(eatkit.__file__).parent
    # rules between options or kinds, which one range cannot say, and a namesake of another meaning
    between = {"stats/options.py: \"ddof must",  # ddof 0 or 1 with the pooled SD or Welch's test
               "stats/grounded.py: \"alternative must",  # the grounded experiments test "greater" only
               "stats/debias.py: \"alpha must"}  # RAN's repulsion weight, not a significance level
    found = []
    for path in src.rglob("*.py"):
        if path.name == "kinds.py" and path.parent == src:
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(src)}: {m.group(0)}" for name in OPTIONS
                  for m in re.finditer(rf"[\"'](?:--)?{name}(?:=[^\"']*)? must\b", text)]
    assert set(found) == between


def test_a_value_outside_the_useful_range_runs_with_a_warning_printed_once_and_recorded(tmp_path, capsys):
    from eatkit.cli import main
    from eatkit.report import load_run

    word = lambda *w: {"name": w[0], "modality": "word", "items": list(w)}  # noqa: E731
    suite = {"schema": "eatkit.suite/1", "id": "u", "title": "u", "tests": [
        {"id": "t", "title": "t", "X": word("x1", "x2"), "Y": word("y1", "y2"), "A": word("a1", "a2"),
         "B": word("b1", "b2")}]}
    (tmp_path / "s.json").write_text(json.dumps(suite), encoding="utf-8")
    (tmp_path / "v.txt").write_text("".join(f"{w} {x:g} {y:g}\n" for w, (x, y) in WORDS.items()), encoding="utf-8")
    assert main(["run", str(tmp_path / "s.json"), "--vectors", str(tmp_path / "v.txt"), "--metrics", "rnsb,mac",
                 "--n-fits", "2", "--seed", "0", "--bootstrap", "0", "-o", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    warning = "n_fits=2 is outside its useful range (>= 5): the result may mean little"
    assert err.count(warning) == 1
    run = load_run(tmp_path / "r")
    assert all(warning in r.warnings for r in run.records)
    assert warning in json.dumps(json.loads((tmp_path / "r" / "manifest.json").read_text(encoding="utf-8")))


def test_the_recipe_in_the_architecture_doc_names_every_keyword_of_a_declaration():
    """docs/architecture.md's recipe for a new member stays true to Family.member and Param."""
    import inspect
    from pathlib import Path

    from eatkit.kinds import Family, Param

    doc = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    recipe = doc[doc.index("**a member of a family of kinds**"):doc.index("**a command:**")]
    keywords = [n for n in inspect.signature(Family.member).parameters if n not in ("self", "name", "stats")]
    assert [k for k in keywords if f"{k}=" not in recipe] == []
    assert "useful=" in recipe and "words" in recipe and "python -m eatkit.run.schemas" in recipe
    assert {f.name for f in __import__("dataclasses").fields(Param)} >= {"useful", "words", "high_open"}


def test_a_members_record_pickles_across_processes():
    """Sweeps send records between processes: a member's record type is made at run time, pickled by kind."""
    import pickle

    from eatkit.analyses.metrics import record_type

    record = record_type("direct-bias")(suite="s", test="t", title="T", seed=0, metric="direct_bias", value=0.5,
                                        x_name="X", y_name="Y", a_name="A", b_name="B", n_x=1, n_y=1, n_a=1, n_b=1)
    again = pickle.loads(pickle.dumps(record))
    assert again == record and type(again) is record_type("direct-bias") and again.kind == "direct-bias"


def test_analyses_read_validated_parameters_not_raw_suite_facts():
    """A suite's params reach an analysis only through its kind's declarations (options.params)."""
    from pathlib import Path

    import eatkit.analyses

    folder = Path(eatkit.analyses.__file__).parent  # base.py: options_by_test, the boundary that checks them
    assert [p.name for p in folder.glob("*.py") if p.name != "base.py" and re.search(r"\btest\.param\(|\btest\.params\b",
                                                             p.read_text(encoding="utf-8"))] == []


def test_a_parameter_given_as_null_is_not_given():
    """eatkit analysis-set writes "reference": null when a set has no 'random' class: the loader and the
    JSON Schema both take null as "not given"."""
    from eatkit.stimuli.schema import check_json_schema, parse_suite, suite_json_schema

    image = lambda c: {"name": c, "modality": "image", "category": c}  # noqa: E731
    data = {"schema": "eatkit.suite/1", "id": "g", "title": "g", "tests": [
        {"id": "geo", "title": "geo", "kind": "geometry", "params": {"reference": None, "pairs": [["a", "b"]]},
         "Ca": image("a"), "Cb": image("b")}]}
    check_json_schema(data, suite_json_schema(), "g.json")
    assert dict(parse_suite(json.dumps(data), "g.json").tests[0].params)["reference"] is None


# --- every list of members derives from, or is checked against, the declarations --------------------------

def _member_names() -> dict[str, str]:
    """Every spelling of a metrics member (kind name, API name, label, their case and dash variants) ->
    its kind."""
    from eatkit.specs import METRICS

    names = {}
    for spec in METRICS.members():
        for spelling in (spec.name, spec.api_name, spec.member.label):
            names[re.sub(r"[-_ ]", "-", spelling.lower())] = spec.name
    return names


def _normal(token: str) -> str:
    return re.sub(r"[-_ ]", "-", re.sub(r"^:func:|[`*]", "", token.strip()).lower())


def member_lists(text: str, names: dict[str, str]) -> list[set[str]]:
    """The lists of members in ``text``: runs of five or more member names joined by commas, "and", "or"
    (prose, docstrings: fewer is a statement about some members, e.g. "RND, ECT and RIPA take one attribute
    set"), and tables (markdown or rst) with three or more rows that start with a member."""
    spelling = "|".join(sorted((re.escape(n).replace(r"\-", "[-_ ]") for n in names), key=len, reverse=True))
    token = rf"(?<![\w-])(?::func:)?`?(?:{spelling})`?(?![\w-])"
    found = [{names[_normal(t)] for t in re.findall(token, m.group(0), flags=re.I)}
             for m in re.finditer(rf"{token}(?:\s*(?:,|,?\s+and|,?\s+or)\s+{token}){{4,}}", text, flags=re.I)]
    block: list[str] = []
    for line in text.splitlines() + [""]:
        cell = line.strip().strip("|").split("|")[0] if line.strip().startswith("|") else line.strip().split("  ")[0]
        if not line.strip():
            if len(block) >= 3:
                found.append(set(block))
            block = []
        elif _normal(cell) in names:
            block.append(names[_normal(cell)])
    return found


def test_every_list_of_members_in_the_docs_and_docstrings_is_the_declared_one():
    """README.md, docs/ and the docstrings of src/ list the metrics family's members only as the declarations
    do: a list naming a member that is gone, or missing a new one, fails here (issue 44)."""
    from pathlib import Path

    from eatkit.specs import METRICS

    root = Path(__file__).resolve().parents[1]
    names, declared = _member_names(), set(METRICS.names())
    files = [root / "README.md", *sorted((root / "docs").glob("*.md")), *sorted((root / "src" / "eatkit").rglob("*.py"))]
    # fenced blocks of the docs are recorded output of their time (a benchmark's table), not lists
    texts = {path: re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S) for path in files}
    wrong = {f"{path.relative_to(root)}: {sorted(found)}" for path, text in texts.items()
             for found in member_lists(text, names) if found != declared}
    assert wrong == set()
    definitions = (root / "docs" / "metrics.md").read_text(encoding="utf-8").split("## Definitions")[1]
    assert member_lists(definitions.split("\n## ")[0], names) == [declared]  # the docs section of each member


def test_the_list_check_finds_a_stale_list():
    names = _member_names()
    assert member_lists("RND, ECT, RIPA, MAC, RNSB, direct bias", names) == [
        {"rnd", "ect", "ripa", "mac", "rnsb", "direct-bias"}]  # clustering missing: not the declared list
    assert member_lists("(`rnd`, `ect`, `ripa`, `mac` or `clustering`)", names) == [
        {"rnd", "ect", "ripa", "mac", "clustering"}]
    assert member_lists("RND, ECT and RIPA take one attribute set", names) == []  # about some members
    assert member_lists("| RND | a |\n| ECT | b |\n| MAC | c |\n\ntext", names) == [{"rnd", "ect", "mac"}]


def test_the_suite_schema_carries_every_declared_range():
    """A suite file's params are checked by the JSON Schema with the same ranges as the declarations (one
    place: Param.json_schema): every bound of every kind's numeric parameter is in the schema."""
    from eatkit.stimuli.schema import check_json_schema, suite_json_schema

    schema = suite_json_schema()
    params = {}
    for rule in schema["$defs"]["test"]["allOf"]:
        kind = rule["if"]["properties"]["kind"].get("const", "eat") if "properties" in rule["if"] else "eat"
        params[kind] = rule["then"]["properties"]["params"]["properties"]
    bounds = 0
    for kind in KINDS:
        for p in get_kind(kind).params:
            if p.type in (int, float) and p.many is None and (p.low is not None or p.high is not None):
                value = params[kind][p.name]["anyOf"][0]
                value = value["anyOf"][1] if "anyOf" in value else value  # after its words (e.g. "auto")
                assert value.get("exclusiveMinimum" if p.low_open else "minimum") == p.low, (kind, p.name, value)
                assert value.get("exclusiveMaximum" if p.high_open else "maximum") == p.high, (kind, p.name, value)
                bounds += 1
    assert bounds >= 20
    word = lambda w: {"name": w, "modality": "word", "items": [w]}  # noqa: E731
    bad = {"schema": "eatkit.suite/1", "id": "s", "title": "s", "tests": [
        {"id": "t", "title": "t", "kind": "rnsb", "params": {"n_fits": 1}, **{r: word(r.lower()) for r in "XYAB"}}]}
    with pytest.raises(EatkitError):  # the range refuses it (jsonschema names the test's keys, then)
        check_json_schema(bad, schema, "s.json")
    bad["tests"][0]["params"]["n_fits"] = 2
    check_json_schema(bad, schema, "s.json")
