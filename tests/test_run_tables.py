"""Tables a researcher loads (issue 34): ``results.csv`` with one column per value and one headline name
(``estimate``) across kinds, panels in ``tables/*.csv``, ``to_frame()`` and ``eatkit.read_run``."""

from __future__ import annotations

import csv
import json

import pandas as pd
import pytest

import eatkit
from eatkit.cli import main


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("tables") / "run"
    assert main(["run", "weat", "--model", "glove-6b-50d", "--tests", "weat6,weat7", "--metrics", "rnd,rnsb",
                 "--validity", "--n-bootstrap", "100", "-q", "-o", str(out)]) == 0
    return out


def _rows(path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_results_csv_has_one_value_per_cell_and_one_headline_name(folder):
    rows = _rows(folder / "results.csv")
    records = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    assert len(rows) == len(records) == 6
    for row in rows:
        for column, cell in row.items():
            assert not cell.startswith(("{", "[")), (column, cell)  # no JSON in a cell
    assert "validity" not in rows[0] and "anisotropy" not in rows[0] and "options" not in rows[0]
    for row, record in zip(rows, records):
        headline = record["effect_size"] if record["kind"] == "eat" else record["value"]
        assert float(row["estimate"]) == pytest.approx(headline, rel=1e-15)
        if record["kind"] != "eat":
            assert float(row["ci_low"]) == record["ci"][0] and float(row["ci_high"]) == record["ci"][1]
    rnsb = next(row for row in rows if row["kind"] == "rnsb")
    assert rnsb["options_n_fits"] and rnsb["spread_sd"]  # nested objects: a column per value


def test_panels_are_tables_of_their_own_joined_by_row(folder):
    validity = _rows(folder / "tables" / "validity.csv")
    assert [(v["row"], v["test"]) for v in validity] == [("1", "weat6"), ("2", "weat7")]
    record = json.loads((folder / "results.json").read_text(encoding="utf-8"))[0]
    assert float(validity[0]["power_alpha"]) == record["validity"]["power"]["alpha"]
    influential = _rows(folder / "tables" / "validity_influence_most_influential.csv")
    first = record["validity"]["influence"]["most_influential"][0]
    assert influential[0]["stimulus"] == first["stimulus"] and influential[0]["row"] == "1"
    assert (folder / "tables" / "anisotropy.csv").is_file()


def test_read_run_and_to_frame_give_the_csv_columns(folder):
    run = eatkit.read_run(folder)
    frame = run.to_frame()
    csv_frame = pd.read_csv(folder / "results.csv")
    assert list(frame.columns) == list(csv_frame.columns)
    assert frame["estimate"].tolist() == pytest.approx(csv_frame["estimate"].tolist(), rel=1e-15)
    one = run.records[0].to_frame()
    assert one.shape[0] == 1 and one.loc[0, "estimate"] == run.records[0].effect_size
