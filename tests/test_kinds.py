"""A kind of test is one unit: its spec (eatkit.kinds) drives the suite schema, the command line,
parameter validation and the reports. The key test builds a throwaway kind in a temporary module and
registers it with one line, touching no file of eatkit."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from eatkit.cli import main
from eatkit.errors import EatkitError
from eatkit.kinds import KINDS, KindSpec, Param, get_kind, register_kind

TOY_MODULE = '''
"""A throwaway kind: the mean of T's first coordinate minus A's, times the parameter ``scale``."""
from dataclasses import dataclass

from eatkit.analyses.base import Analysis, Outcome
from eatkit.kinds import KindSpec, Param, Presentation
from eatkit.records import Record

SPEC = KindSpec(
    "toy-shift", ("T", "A"), "toy_kind:ToyAnalysis", title="Toy shift of T against A",
    params=(Param("scale", float, 1.0, low=0, low_open=True, help="multiply the shift"),),
    presentation=Presentation(columns=("shift", "scale", "p_value"), headline="shift", formats={"shift": ".3f"}),
)


@dataclass(frozen=True, kw_only=True)
class ToyRecord(Record):
    kind = "toy-shift"

    shift: float
    scale: float


class ToyAnalysis(Analysis):
    kind = "toy-shift"
    record_type = ToyRecord

    def compute(self, test, embedded, options, *, suite, seed):
        t, a = embedded["T"].vectors[:, 0], embedded["A"].vectors[:, 0]
        scale = options.params["scale"]
        record = ToyRecord(suite=suite, test=test.id, title=test.title, seed=seed, scale=scale,
                           shift=scale * float(t.mean() - a.mean()), p_value=0.5)
        return [Outcome(record)]
'''

SUITE = {
    "schema": "eatkit.suite/1", "id": "toy", "title": "Toy suite",
    "tests": [{"id": "toy1", "title": "Toy one", "kind": "toy-shift", "params": {"scale": 2},
               "T": {"name": "Tees", "modality": "word", "items": ["a", "b"]},
               "A": {"name": "Ays", "modality": "word", "items": ["c", "d"]}}],
}


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy kind's module on sys.path and its one registry line; both gone afterwards."""
    (tmp_path / "toy_kind.py").write_text(textwrap.dedent(TOY_MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    register_kind("toy-shift", "toy_kind:SPEC")  # the one registry line
    (tmp_path / "suite.json").write_text(json.dumps(SUITE), encoding="utf-8")
    (tmp_path / "v.txt").write_text("a 1 0\nb 3 0\nc 0 1\nd 0 1\n", encoding="utf-8")
    yield tmp_path
    del KINDS["toy-shift"]
    get_kind.cache_clear()
    sys.modules.pop("toy_kind", None)


def _cli(capsys, *argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def test_a_kind_in_one_module_and_one_registry_line(toy, capsys):
    from eatkit.report import load_run, write_html_report
    from eatkit.report.plots import effect_size_heatmap

    # from a suite file: its params set scale 2; mean(1, 3) - mean(0, 0) = 2, times 2
    code, out, err = _cli(capsys, "run", toy / "suite.json", "--vectors", toy / "v.txt", "-o", toy / "r1", "--report")
    assert code == 0, err
    assert load_run(toy / "r1").records[0].shift == pytest.approx(4.0)
    assert "shift" in out and "4.000" in out and "toy1" in out  # the console table of its presentation
    html = (toy / "r1" / "report.html").read_text(encoding="utf-8")
    assert "Toy shift of T against A" in html and "<td>4.000</td>" in html
    # its flag on the command line overrides the suite's value
    code, out, err = _cli(capsys, "run", toy / "suite.json", "--vectors", toy / "v.txt", "-o", toy / "r2",
                          "--scale", "0.5")
    assert code == 0, err
    assert "1.000" in out and load_run(toy / "r2").records[0].scale == 0.5
    # a bad value: one line, exit 2, naming the parameter, its range and the value received
    code, out, err = _cli(capsys, "run", toy / "suite.json", "--vectors", toy / "v.txt", "-o", toy / "r3",
                          "--scale", "-1")
    assert code == 2 and err == "eatkit: error: scale must be a number > 0, got -1.0\n"
    code, _, err = _cli(capsys, "run", "weat", "--vectors", toy / "v.txt", "-o", toy / "r3", "--scale", "2")
    assert code == 2 and err == "eatkit: error: --scale applies to toy-shift tests only\n"
    # the multi-run heatmap shows its headline field
    report = write_html_report([toy / "r1", toy / "r2"], toy / "both.html")
    assert "Comparison of runs" in report.read_text(encoding="utf-8")
    fig = effect_size_heatmap([load_run(toy / "r1"), load_run(toy / "r2")])
    cells = [t.get_text() for t in fig.axes[0].texts]
    assert [c.split("\n")[0] for c in cells] == ["4.00", "1.00"]
    assert fig.axes[1].get_ylabel() == "shift"


def test_suite_roles_come_from_the_spec(toy):
    from eatkit.stimuli.schema import parse_suite

    bad = json.loads(json.dumps(SUITE))
    del bad["tests"][0]["A"]
    with pytest.raises(EatkitError, match="'A'"):
        parse_suite(json.dumps(bad), "toy.json")
    assert parse_suite(json.dumps(SUITE), "toy.json").tests[0].kind == "toy-shift"


def test_params_are_validated_in_one_place_with_the_range_and_the_value():
    spec = get_kind("generation")
    assert spec.resolve({"steps": "40"})["steps"] == 40
    with pytest.raises(EatkitError, match=r"^steps must be an integer in \[1, 100000\], got 0$"):
        spec.resolve({"steps": 0})
    with pytest.raises(EatkitError, match=r"^region must be 4 values, got 3"):
        spec.resolve({"region": "0.1,0.1,0.2"})
    with pytest.raises(EatkitError, match=r"^parameterization must be one of pixel, fourier, got 'dct'$"):
        spec.resolve({"parameterization": "dct"})
    with pytest.raises(EatkitError, match="do not take the option 'stepz'"):
        spec.resolve({"stepz": 3})
    assert get_kind("grounded").resolve({"experiment": "2"})["experiment"] == 2
    assert get_kind("ranking").resolve({"overrides": ["Ohio=a photo from Ohio"]})["overrides"] == {
        "Ohio": "a photo from Ohio"}


def test_the_specs_agree_with_the_statistics_they_configure():
    from eatkit.stats.geometry import FOLDS, SIMILARITIES
    from eatkit.stats.grounded import EXPERIMENTS
    from eatkit.stimuli.captioned import MASKS

    assert get_kind("geometry").param("fold").choices == FOLDS
    assert get_kind("geometry").param("similarity").choices == SIMILARITIES
    assert get_kind("grounded").param("experiment").choices == (*EXPERIMENTS, "all")
    assert get_kind("grounded").param("mask").choices == MASKS


def test_every_registered_kind_is_consistent():
    for name in KINDS:
        spec = get_kind(name)
        analysis = spec.load_analysis()
        assert isinstance(spec, KindSpec) and analysis.kind == name == analysis.record_type.kind
        assert all(isinstance(p, Param) for p in spec.params)


def test_an_unknown_kind_is_one_line():
    with pytest.raises(EatkitError, match=r"^unknown test kind 'weat' \(known: eat, sc-eat, "):
        get_kind("weat")


def test_results_of_eatkit_0_2_load_with_the_base_fields_they_lacked(tmp_path):
    """eatkit 0.2 wrote q_value only on tested records and dropped only on embedding kinds: a VQA record
    (no dropped) and a geometry record (no p_value, no q_value) of 0.2 load, the missing fields defaulted."""
    from eatkit.report import load_run

    common = {"schema_version": 2, "suite": "probe-vqa", "seed": 7, "warnings": []}
    vqa = {**common, "kind": "vqa", "test": "vqa-1", "title": "VQA: q?", "groups": ["a", "b"],
           "n": {"a": 2, "b": 2}, "counts": {"a": 1, "b": 2}, "rates": {"a": 0.5, "b": 1.0},
           "intervals": {"a": [0.09, 0.91], "b": [0.34, 1.0]}, "confidence_level": 0.95, "chi_square": 1.33,
           "dof": 1, "p_value": 0.248, "min_expected": 0.5, "q_value": 0.248, "question": "q?",
           "yes_answer": "yes", "answers": {"a": {"yes": 1, "no": 1}, "b": {"yes": 2}},
           "answers_by_image": {"a/1.png": "yes"}}
    geometry = {**common, "kind": "geometry", "test": "g", "title": "G", "models": ["m"], "classes": {"x": 3},
                "iterations": 10, "fold": "half", "similarity": "cosine", "reference": None,
                "alternative": "two-sided", "scores": [], "comparisons": [], "spearman": [],
                "compare_sources": [], "dropped": {}}
    (tmp_path / "results.json").write_text(json.dumps([vqa, geometry]), encoding="utf-8")
    (tmp_path / "manifest.json").write_text(json.dumps({"eatkit_version": "0.2.1"}), encoding="utf-8")
    first, second = load_run(tmp_path).records
    assert (first.kind, first.p_value, first.q_value, first.dropped) == ("vqa", 0.248, 0.248, {})
    assert (second.kind, second.p_value, second.q_value) == ("geometry", None, None)


def test_a_new_kind_is_shown_over_a_series_by_its_headline(toy, capsys):
    (toy / "w.txt").write_text("a -1 0\nb -1 0\nc 0 1\nd 0 1\n", encoding="utf-8")
    code, out, err = _cli(capsys, "run", toy / "suite.json", "--series", toy / "v.txt", toy / "w.txt",
                          "-o", toy / "s")
    assert code == 0, err
    rows = [line.split() for line in out.splitlines() if line.startswith(("v ", "w "))]
    assert rows == [["v", "4.00"], ["w", "-2.00~"]]  # 2 x (mean(-1, -1) - 0): a sign change; q 0.5: no mark


def test_list_kinds_prints_the_registry(toy, capsys):
    """docs/architecture.md: ``eatkit list kinds``."""
    code, out, _ = _cli(capsys, "list", "kinds")
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert code == 0 and list(lines) == list(KINDS)
    assert lines["toy-shift"].split()[1:3] == ["T,A", "suites"] and lines["toy-shift"].endswith("[--scale]")
    assert "eatkit probe generate" in lines["generation"]


def test_the_facts_of_every_bundled_test_pass_their_kinds_checks():
    """A suite test's params are checked like run options: every bundled suite's tests resolve."""
    from eatkit.analyses.base import RunOptions, options_by_test
    from eatkit.stimuli.loader import list_suites, load_suite

    for suite in list_suites():
        resolved = options_by_test(load_suite(suite.id).tests, RunOptions())
        assert set(resolved) == {t.id for t in suite.tests}
    weat8 = options_by_test([load_suite("grounded-concap").test("weat8")], RunOptions())["weat8"].params
    assert weat8["contextual_words"] == [] and weat8["embeddings"]


def test_a_sweep_setting_with_a_bad_parameter_is_refused_before_any_run(tmp_path):
    from eatkit.kinds import check_params
    from eatkit.run.sweep import load_sweep

    with pytest.raises(EatkitError, match=r"^no kind of test takes the option 'nosuch'$"):
        check_params({"nosuch": 1})
    with pytest.raises(EatkitError, match=r"^params must map parameter names to values"):
        check_params(["fold"])
    sweep = tmp_path / "s.toml"
    sweep.write_text('models = [{name = "glove-6b-50d"}]\nsuites = ["weat"]\n'
                     'settings = [{seed = 0, params = {fold = "thirds"}}]\n', encoding="utf-8")
    # the sweep file's schema is typed from the kinds' declarations: the loader and the schema say the same
    with pytest.raises(EatkitError, match=r"\(settings/0/params/fold\) 'thirds' is not one of "
                                          r"\['half', 'pair', 'centroid'\]"):
        load_sweep(sweep)
