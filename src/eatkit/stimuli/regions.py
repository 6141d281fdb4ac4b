"""Per-region tables (reference shares such as census data, or any per-region measure) and region prompts.

Bundled data (``eatkit/stimuli/tables/``):

- ``us-states-2019.json`` (``eatkit.regions/1``): 2019 U.S. census population shares (White, Black, Asian,
  Hispanic) of the 50 states and the District of Columbia, as used by the "American == White" study.
- ``region-prompts.json`` (``eatkit.prompts/1``): the named prompt sets ``lives-in`` ("a photo of someone
  who lives in {region}", the paper's text) and ``lives-in-state`` ("... who lives in the state of
  {region}", its authors' code), each with per-region overrides (Washington, D.C.).

A user's table is a CSV file: the first column names the regions, the others are numbers (a header row).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from eatkit.errors import EatkitError
from eatkit.io import read_frame, shipped_json


@dataclass(frozen=True)
class RegionTable:
    """Numbers per region: ``frame`` is regions x columns; ``group_columns`` maps image-group names to
    the column each is compared with (e.g. ``latino -> Hispanic``)."""

    id: str
    title: str
    frame: pd.DataFrame = field(compare=False)
    source: str = ""
    group_columns: Mapping[str, str] = field(default_factory=dict)

    @property
    def regions(self) -> list[str]:
        return [str(r) for r in self.frame.index]


def _bundled(name: str) -> Any:
    return shipped_json("eatkit.stimuli", f"tables/{name}")


@cache
def _bundled_tables() -> dict[str, str]:
    folder = resources.files("eatkit.stimuli") / "tables"
    return {f.name.removesuffix(".json"): f.name for f in folder.iterdir()
            if f.name.endswith(".json") and f.name != "region-prompts.json"}


def _check_frame(frame: Any, path: Path) -> None:
    """A region table read from a CSV file: regions and at least one column, all numbers, no empty cell, no
    region twice."""
    if frame.shape[1] == 0 or frame.shape[0] == 0:
        raise EatkitError(f"region table {path} needs a region column and at least one column of numbers")
    bad = [str(c) for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    if bad:
        raise EatkitError(f"region table {path} has non-numeric column(s): {', '.join(bad)}")
    if frame.isna().any().any():
        raise EatkitError(f"region table {path} has empty cells")
    if frame.index.duplicated().any():
        raise EatkitError(f"region table {path} lists region '{frame.index[frame.index.duplicated()][0]}' twice")


def load_region_table(name_or_path: str | Path) -> RegionTable:
    """A bundled region table by id (``"us-states-2019"``) or a CSV file (first column: region names).

    >>> t = load_region_table("us-states-2019")
    >>> len(t.regions), list(t.frame.columns), t.group_columns["latino"]
    (51, ['White', 'Black', 'Asian', 'Hispanic'], 'Hispanic')
    """
    name = str(name_or_path)
    if name in _bundled_tables():
        doc = _bundled(_bundled_tables()[name])
        frame = pd.DataFrame.from_dict(doc["regions"], orient="index")[doc["columns"]]
        frame.index.name = "region"
        return RegionTable(id=doc["id"], title=doc["title"], frame=frame, source=doc.get("source", ""),
                           group_columns=dict(doc.get("group_columns", {})))
    path = Path(name).expanduser()
    if not path.is_file():
        raise EatkitError(f"region table '{name}' is neither a bundled table ({', '.join(sorted(_bundled_tables()))}) "
                          "nor a CSV file")
    frame = read_frame(path, "region table", index_col=0)  # the one reader: regular files only, bounded
    _check_frame(frame, path)
    frame.index = frame.index.astype(str).str.strip()
    frame.index.name = "region"
    return RegionTable(id=path.stem, title=path.name, frame=frame, source=str(path))


def prompt_sets() -> dict[str, dict[str, Any]]:
    """The bundled named prompt sets (``template``, ``overrides``, ``source``)."""
    return _bundled("region-prompts.json")["sets"]


def region_prompts(regions: list[str], prompt: str = "lives-in",
                   overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """The prompt of each region: ``prompt`` is a bundled set's name or a template with ``{region}``;
    ``overrides`` (region -> whole prompt) add to and replace the set's own.

    >>> region_prompts(["Ohio", "District of Columbia"], "lives-in-state")
    {'Ohio': 'a photo of someone who lives in the state of Ohio', 'District of Columbia': 'a photo of someone who lives in Washington, D.C.'}
    """
    sets = prompt_sets()
    if prompt in sets:
        template, fixed = sets[prompt]["template"], dict(sets[prompt].get("overrides", {}))
    else:
        template, fixed = prompt, {}
        if "{region}" not in template:
            raise EatkitError(f"prompt '{template}' is neither a prompt set ({', '.join(sorted(sets))}) nor a "
                              "template containing {region}")
        try:
            template.format(region="x")
        except (KeyError, IndexError, ValueError):
            raise EatkitError(f"prompt '{template}' may contain only the placeholder {{region}}") from None
    fixed.update(overrides or {})
    unknown = sorted(set(overrides or {}) - set(regions))
    if unknown:
        raise EatkitError(f"prompt override(s) for region(s) not in the table: {', '.join(unknown)}")
    return {r: fixed.get(r, template.format(region=r)) for r in regions}
