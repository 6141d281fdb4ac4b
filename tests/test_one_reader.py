"""Mechanisms by construction: no module but :mod:`eatkit.io` opens or parses a file (issue 45). The readers that
bypass it (a FIFO blocks them, /dev/zero is read until memory runs out, JSON depth and CSV shape unchecked)
are found by their calls, with ast; the modules that still have some are listed with how many, and the list
only shrinks: a new bypassing reader fails here (shown by a planted one)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "eatkit"
#: method names that open or read a file (``Path.read_text``, ``Path.open``, ``Image.open`` ...)
METHODS = {"read_text", "read_bytes", "open"}
#: module functions that open or parse a file, as (name the module is imported as, function)
FUNCTIONS = {("json", "load"), ("np", "load"), ("numpy", "load"), ("torch", "load"), ("pickle", "load"),
             ("tomllib", "load"), ("yaml", "safe_load"), ("csv", "reader"), ("csv", "DictReader"),
             ("pd", "read_csv"), ("pd", "read_json"), ("pd", "read_parquet"), ("np", "loadtxt"), ("np", "fromfile")}
#: library readers whose names say what they do, found whatever their module is imported as (safetensors' safe_open
#: and load_file, pyarrow's ParquetFile and read_table, OpenCV's imread)
LIBRARY = {"safe_open", "load_file", "ParquetFile", "read_table", "imread"}
#: the modules that still read files themselves, with how many such calls: to be emptied by moving each reader
#: through eatkit.io (issue 45 moved the CEAT corpus, --reference, the effects file of eatkit meta and
#: retrieval's desired proportions; then every reader of stimuli/, sources/, encoders/, stats/, analyses/ and the
#: registry, through open_input, open_image, load_npy, load_npz, read_frame, parse_csv and shipped_text). A count
#: may only go down: lower it here when a reader moves. Empty: every module reads through eatkit.io
BYPASSING: dict[str, int] = {}


def readers(source: str) -> list[str]:
    """The calls of a module's ``source`` that open or parse a file, as ``line: call``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and (func.id == "open" or func.id in LIBRARY):
            found.append(f"{node.lineno}: {func.id}")
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if (owner, func.attr) in FUNCTIONS or func.attr in LIBRARY:
                found.append(f"{node.lineno}: {owner}.{func.attr}")
            elif func.attr in METHODS and owner not in ("os", "webbrowser"):
                found.append(f"{node.lineno}: .{func.attr}")
    return found


def _modules() -> dict[str, list[str]]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        name = ".".join(path.relative_to(SRC.parent).with_suffix("").parts).removesuffix(".__init__")
        if name != "eatkit.io":
            out[name] = readers(path.read_text(encoding="utf-8"))
    return out


def _new_readers(found: dict[str, list[str]]) -> dict[str, list[str]]:
    """The modules of ``found`` (module: reading calls) with more reading calls than :data:`BYPASSING` allows."""
    return {name: calls for name, calls in found.items() if len(calls) > BYPASSING.get(name, 0)}


def test_no_module_but_eatkit_io_reads_files_beyond_the_shrinking_list() -> None:
    found = _modules()
    new = _new_readers(found)
    assert not new, f"read files through eatkit.io (read_input, read_text, read_json, read_csv ...): {new}"
    moved = {name: len(found.get(name, [])) for name, n in BYPASSING.items() if len(found.get(name, [])) < n}
    assert not moved, f"fewer bypassing readers than listed: lower BYPASSING to {moved}"


def test_a_planted_bypassing_reader_is_found() -> None:
    planted = "import json, csv\nimport numpy as np\nfrom pathlib import Path\n" \
              "def f(p):\n    rows = list(csv.reader(open(p)))\n    return json.load(open(p)), np.load(p), " \
              "Path(p).read_text(), rows\n"
    calls = readers(planted)
    assert sorted(call.split(": ")[1] for call in calls) == [".read_text", "csv.reader", "json.load", "np.load",
                                                             "open", "open"]
    assert _new_readers({**_modules(), "eatkit.stimuli.new_reader": calls}) == {"eatkit.stimuli.new_reader": calls}
    assert readers("from eatkit.io import read_csv\ndef f(p):\n    return read_csv(p, 'x', ['a'])\n") == []
    libraries = "import pyarrow.parquet as pq\nfrom safetensors.torch import load_file\ndef f(p, st):\n" \
                "    return pq.ParquetFile(p), load_file(p), st.safe_open(p, 'pt'), pq.read_table(p)\n"
    assert [call.split(": ")[1] for call in readers(libraries)] == ["pq.ParquetFile", "load_file", "st.safe_open",
                                                                    "pq.read_table"]


def test_every_count_that_scales_work_declares_its_legal_range() -> None:
    """issue 45: generation settings, --samples, --contexts had no upper bound (10^9 images, a kernel OOM kill):
    every whole-number parameter of a kind and of the probe's generation settings declares ``high``."""
    from eatkit.command_options import COMMAND_OPTIONS
    from eatkit.kinds import KINDS, Param, get_kind

    def unbounded(params: list[Param]) -> list[str]:
        return [p.name for p in params if p.type is int and p.high is None and p.cli is not False and not p.choices]

    missing = {kind: unbounded(list(get_kind(kind).params)) for kind in KINDS}
    missing["probe"] = unbounded(list(COMMAND_OPTIONS["probe"].values()))
    assert not {k: v for k, v in missing.items() if v}
    assert unbounded([Param("planted", int, 1, low=1)]) == ["planted"]  # a new unbounded one fails
