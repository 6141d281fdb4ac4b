"""A sweep resolves each hub model's revision once, records it (revisions.json) and uses that commit for every
cell and every resume: a branch moved in between is a warning naming both commits, never cells from two
commits. The hub is a local hub-layout cache (tests/test_hub_revision.py's fixture), read offline."""

from __future__ import annotations

import json

import pytest
from test_hub_revision import NEW, OLD, SUITE, hub  # noqa: F401 -- the fixture

from eatkit.run.sweep import run_sweep


def test_a_sweep_keeps_the_commit_it_recorded_when_the_branch_moves(hub, tmp_path, capsys):  # noqa: F811
    (tmp_path / "suite.json").write_text(json.dumps(SUITE))
    second = {**SUITE, "id": "tiny2"}
    (tmp_path / "suite2.json").write_text(json.dumps(second))
    (tmp_path / "sweep.toml").write_text(
        'models = [{ name = "hf:eatkit-tests/tiny-bert", label = "bert" }]\n'
        'suites = ["suite.json", "suite2.json"]\nsettings = [{ seed = 0, n_bootstrap = 0, permutations = 99 }]\n')
    first = run_sweep(tmp_path / "sweep.toml", tmp_path / "out", jobs=0)
    assert first.statuses["bert__suite__default"] == "done"
    assert json.loads((tmp_path / "out" / "revisions.json").read_text()) == {
        "bert": {"repo": "eatkit-tests/tiny-bert", "revision": "main", "commit": OLD}}
    (tmp_path / "out" / "cells" / "bert__suite2__default" / "cell.json").unlink()  # as if it had not finished
    (hub / "models--eatkit-tests--tiny-bert" / "refs" / "main").write_text(NEW)  # main moves on
    capsys.readouterr()
    again = run_sweep(tmp_path / "sweep.toml", tmp_path / "out", jobs=0)
    assert again.computed == ["bert__suite2__default"]
    err = capsys.readouterr().err
    assert f"revision 'main' of eatkit-tests/tiny-bert is now commit {NEW}; this sweep keeps commit {OLD}" in err
    for cell in ("bert__suite__default", "bert__suite2__default"):
        source = json.loads((tmp_path / "out" / "cells" / cell / "manifest.json").read_text())["source"]
        assert source["hub"]["commit"] == OLD and source["weights"] == f"hf:eatkit-tests/tiny-bert@{OLD}"
    one, two = (json.loads((tmp_path / "out" / "cells" / f"bert__{s}__default" / "results.json").read_text())[0]
                for s in ("suite", "suite2"))
    assert one["effect_size"] == pytest.approx(two["effect_size"], abs=0)  # the same weights, the same d
