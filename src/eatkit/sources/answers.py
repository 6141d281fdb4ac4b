"""Answers of language and vision-language models as data: a source, like embeddings.

An *answer* is what a model said about one item of a benchmark: the text it wrote, the option it chose, a
score (a log-probability, p(yes), an agreement label), and what the item varies (a demographic group, a
counterfactual pair, a prompt template, a condition such as a system prompt). Every answer benchmark reads
the same record, :class:`Answer`, whoever made it:

- recorded files, read by :func:`read_answers` (the format detected or given, :data:`FORMATS`):
  lm-evaluation-harness ``--log_samples`` JSONL, lmms-eval sample logs, VLMEvalKit result tables
  (``.xlsx``/``.tsv``/``.csv``), HELM ``scenario_state.json``, the plain CSV/JSONL of docs/answers.md, and
  the formats of published bias studies (DecodingTrust's stereotype generations, Shaikh et al. 2023's
  direct / chain-of-thought outputs, the BBQ authors' prediction files);
- a local model (an answerer, :mod:`eatkit.encoders`), which returns the same records.

The runner reaches answers as it reaches embeddings: an analysis hands the source one *request* (a
stimulus set whose ``category`` is :func:`answers_request`), and the source returns
:class:`~eatkit.sources.base.Embedded` whose ``vectors`` hold the :class:`Answer` records (``dtype=object``)
and whose ``ids`` say where each came from (``<file>:<line>``). :class:`RecordedAnswers` is the source of
recorded files (``eatkit run SUITE --answers FILE``); its manifest holds each file's SHA-256, tool, model and
task, which ``eatkit verify`` checks.

Every file is read through :mod:`eatkit.io` (regular files, size limits, JSON limits); a gzip-compressed
file is read as its content. A malformed file (empty, truncated, binary, of another format, a missing field)
is a one-line :class:`~eatkit.errors.EatkitError` naming the file, the line and the field.

>>> import pathlib, tempfile
>>> p = pathlib.Path(tempfile.mkdtemp()) / "answers.csv"
>>> _ = p.write_text("item,group,choice\\n1,female,yes\\n2,male,no\\n")
>>> got = read_answers(p)
>>> [(a.item, a.group, a.choice, a.line) for a in got.records], got.files[0].format
([('1', 'female', 'yes', 2), ('2', 'male', 'no', 3)], 'csv')
"""

from __future__ import annotations

import ast
import csv
import io
import json
import math
import re
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields as dataclass_fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from eatkit.errors import EatkitError
from eatkit.io import MAX_INPUT_BYTES, check_regular, file_sha256, parse_json, read_input
from eatkit.sources.base import Embedded, EmbeddingSource
from eatkit.stimuli.types import StimulusSet


@dataclass(frozen=True)
class Answer:
    """One answer of a model to one item: the record every answer benchmark scores (the spec).

    Fields (``None`` / empty where the source does not say):

    - ``item``: the item's id in its benchmark (``doc_id`` of lm-eval, ``index`` of VLMEvalKit, a row
      number); with ``sample`` and ``condition`` it identifies the answer;
    - ``group``: the value of the attribute the item varies (``"female"``, ``"Muslim"``, ``"Black"``);
      ``attribute`` names that attribute (``"gender"``, ``"race"``, ``"target_group"``);
    - ``pair``: the counterfactual-pair id: answers with the same ``pair`` (and ``sample``) answer items that
      differ only in ``group`` (or only in ``condition``: the same item asked directly and with
      chain-of-thought); paired tests match answers on it;
    - ``template``: the prompt template (or scenario, decision question) the item was filled from: answers
      of one template are a cluster;
    - ``condition``: the setting the answer was given under (a system prompt, ``"direct"`` / ``"cot"``, a
      HELM perturbation);
    - ``sample``: the index of this answer among repeated samples of the same item (0 for one answer);
    - ``choice``: the option the model chose, as the source names it (an option letter or index, ``"yes"``,
      ``"agree"``); ``text``: what it wrote (a generation, a prediction string); at least one of ``choice``,
      ``text`` and ``score`` is set;
    - ``score``: one number the source gives for the answer (the log-probability of the chosen option, a
      probability of "yes", an agreement label -1/0/1); ``logprobs``: the log-probability of each option,
      in the item's option order (multiple choice by log-likelihood);
    - ``target``: the correct or reference answer when the source records one;
    - ``fields``: the item's other fields as the source holds them (the dataset row: BBQ's ``answer_info``
      and ``context_condition``, VLMEvalKit's options), for a benchmark's scorer; not compared;
    - ``file``, ``line``: where the answer was read (the file's name and its 1-based line or row; a JSON
      file's position of the item).

    >>> Answer(item="7", group="female", choice="yes", file="a.csv", line=8).response
    'yes'
    """

    item: str
    group: str | None = None
    attribute: str | None = None
    pair: str | None = None
    template: str | None = None
    condition: str | None = None
    sample: int = 0
    choice: str | None = None
    text: str | None = None
    score: float | None = None
    logprobs: tuple[float, ...] = ()
    target: str | None = None
    fields: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)
    file: str = ""
    line: int = 0

    @property
    def response(self) -> str | None:
        """The answer as one string: the ``choice``, else the ``text``."""
        return self.choice if self.choice is not None else self.text


#: the record's fields a plain file may hold in columns of the same name (docs/answers.md)
ANSWER_FIELDS = tuple(f.name for f in dataclass_fields(Answer) if f.name not in ("fields", "file", "line"))


@dataclass(frozen=True)
class AnswerFile:
    """Provenance of one file of answers: its path and SHA-256, the format it was read as, the tool that
    wrote it (and its version where the file says), the model, the task, and how many answers it holds."""

    path: str
    sha256: str
    format: str
    tool: str
    model: str | None
    task: str | None
    answers: int
    tool_version: str | None = None

    def manifest(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "format": self.format, "tool": self.tool,
                "tool_version": self.tool_version, "model": self.model, "task": self.task, "answers": self.answers}


@dataclass(frozen=True)
class Answers:
    """What :func:`read_answers` returns: the ``records`` (in file order) and each file's provenance."""

    records: tuple[Answer, ...]
    files: tuple[AnswerFile, ...]

    def manifest(self) -> list[dict[str, Any]]:
        return [f.manifest() for f in self.files]


# -- reading bytes ------------------------------------------------------------------------------------------

_GZIP = b"\x1f\x8b"


def _content(path: Path, what: str) -> bytes:
    """The bytes of ``path`` (a gzip file decompressed, at most :data:`MAX_INPUT_BYTES`)."""
    data = read_input(path, what)
    if not data.startswith(_GZIP):
        return data
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflate.decompress(data, MAX_INPUT_BYTES + 1)
    except zlib.error as err:
        raise EatkitError(f"{what} {path} is not readable gzip data ({err})") from None
    if len(out) > MAX_INPUT_BYTES:
        raise EatkitError(f"{what} {path} decompresses to more than eatkit reads from one ({MAX_INPUT_BYTES} bytes)")
    if not inflate.eof:
        raise EatkitError(f"{what} {path} is truncated (its gzip stream ends early)")
    return out


def _text(path: Path, what: str = "answer file") -> str:
    data = _content(path, what)
    if b"\x00" in data[:4096]:
        raise EatkitError(f"{what} {path} is binary, not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise EatkitError(f"{what} {path} is not UTF-8 text ({err.reason} at byte {err.start})") from None
    if not text.strip():
        raise EatkitError(f"{what} {path} is empty")
    return text


def _json_lines(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each non-blank line of a JSON Lines file as (line number, object); a bad line names itself."""
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        value = parse_json(line, f"{path}: line {number}")
        if not isinstance(value, dict):
            raise EatkitError(f"{path}: line {number} is not a JSON object")
        yield number, value


def _table_rows(path: Path, text: str, delimiter: str) -> Iterator[tuple[int, dict[str, str]]]:
    """Each row of a CSV/TSV table with a header as (line number, row); a short or long row names itself."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader)
        for row in reader:
            if not row:
                continue
            if len(row) != len(header):
                raise EatkitError(f"{path}: line {reader.line_num} has {len(row)} fields, the header {len(header)}")
            yield reader.line_num, dict(zip(header, row))
    except csv.Error as err:
        raise EatkitError(f"{path}: line {reader.line_num}: {err}") from None


# -- plain CSV / JSONL (docs/answers.md) --------------------------------------------------------------------


def _number(value: Any, where: str) -> float | None:
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise EatkitError(f"{where}: not a number: {str(value)[:40]!r}") from None
    if not math.isfinite(number):
        raise EatkitError(f"{where}: not a finite number: {value!r}")
    return number


def _logprobs(value: Any, where: str) -> tuple[float, ...]:
    if value is None or value == "":
        return ()
    items = parse_json(value, where) if isinstance(value, str) else value
    if not isinstance(items, list):
        raise EatkitError(f"{where}: not a list of numbers")
    return tuple(_number(v, where) or 0.0 for v in items)


def _text_or_none(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


#: the columns that name an item when no ``item`` column is given (else the line number)
_ITEM_KEYS = ("id", "example_id", "doc_id", "index")


def plain_answer(row: Mapping[str, Any], names: Mapping[str, str], file: str, line: int) -> Answer:
    """The :class:`Answer` of one row of a plain file: each record field read from the column ``names``
    gives it (default: the field's own name); the other columns go to ``fields``."""
    where = f"{file}: line {line}"
    get = {name: row.get(names.get(name, name)) for name in ANSWER_FIELDS}
    if get["item"] in (None, ""):
        get["item"] = next((str(row[k]) for k in _ITEM_KEYS if row.get(k) not in (None, "")), str(line))
    _check_answered(get, names, where)
    used = {names.get(name, name) for name in ANSWER_FIELDS}
    sample = _number(get["sample"], f"{where}: field {names.get('sample', 'sample')}")
    return Answer(
        item=str(get["item"]), group=_text_or_none(get["group"]), attribute=_text_or_none(get["attribute"]),
        pair=_text_or_none(get["pair"]), template=_text_or_none(get["template"]),
        condition=_text_or_none(get["condition"]), sample=int(sample or 0), choice=_text_or_none(get["choice"]),
        text=_text_or_none(get["text"]), score=_number(get["score"], f"{where}: field {names.get('score', 'score')}"),
        logprobs=_logprobs(get["logprobs"], f"{where}: field {names.get('logprobs', 'logprobs')}"),
        target=_text_or_none(get["target"]), fields={k: v for k, v in row.items() if k not in used},
        file=file, line=line)


def _check_answered(get: Mapping[str, Any], names: Mapping[str, str], where: str) -> None:
    """A row gives at least one of choice, text, score and logprobs."""
    if all(get[k] in (None, "", []) for k in ("choice", "text", "score", "logprobs")):
        wanted = ", ".join(sorted({names.get(k, k) for k in ("choice", "text", "score", "logprobs")}))
        raise EatkitError(f"{where}: no answer (field {wanted} missing or empty)")


@dataclass(frozen=True)
class Read:
    """What one format reader returns for one file: the answers and what the file says of its making."""

    records: list[Answer]
    tool: str
    model: str | None = None
    task: str | None = None
    tool_version: str | None = None


def _read_jsonl(path: Path, names: Mapping[str, str]) -> Read:
    rows = _json_lines(path, _text(path))
    return Read([plain_answer(row, names, path.name, n) for n, row in rows], "eatkit")


def _read_csv(path: Path, names: Mapping[str, str]) -> Read:
    delimiter = "\t" if path.name.removesuffix(".gz").endswith(".tsv") else ","
    rows = _table_rows(path, _text(path), delimiter)
    return Read([plain_answer(row, names, path.name, n) for n, row in rows], "eatkit")


# -- lm-evaluation-harness and lmms-eval sample logs --------------------------------------------------------

_LM_EVAL_KEYS = ("doc_id", "resps", "filtered_resps")


def _unwrap(value: Any) -> Any:
    """A response as logged: lists of one element unwrapped (``[[lp, greedy]]`` -> ``[lp, greedy]``)."""
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    return value


def _harness_answer(row: dict[str, Any], names: Mapping[str, str], file: str, line: int,
                    keys: Sequence[str] = _LM_EVAL_KEYS, tool: str = "lm-eval") -> Answer:
    """One lm-eval / lmms-eval sample: loglikelihood requests give ``logprobs`` (one per option) and
    ``choice`` (the continuation of the largest); a generation gives ``text`` (lmms-eval 0.7 logs it as a
    string, without the document: only ``doc_id``, ``target``, ``input`` and the metrics)."""
    where = f"{file}: line {line}"
    responses = _harness_responses(row, keys, tool, where)
    doc = row.get("doc") if isinstance(row.get("doc"), dict) else {}
    first = _unwrap(responses[0])
    extra = {"doc": doc, **{k: v for k, v in row.items() if k not in ("doc", "arguments", "resps")}}
    base = dict(item=str(row["doc_id"]), target=_text_or_none(row.get("target")), fields=extra, file=file, line=line,
                **_doc_fields(doc, names))
    if isinstance(first, list):  # loglikelihood: [logprob, is_greedy] per option
        logprobs = tuple(_number(_unwrap(r)[0], f"{where}: field filtered_resps") for r in responses)
        best = int(np.argmax(logprobs))
        options = _continuations(row.get("arguments"))
        choice = options[best].strip() if len(options) == len(logprobs) else str(best)
        return Answer(**base, logprobs=logprobs, choice=choice, score=float(logprobs[best]))
    return Answer(**base, text=str(first))


def _harness_responses(row: dict[str, Any], keys: Sequence[str], tool: str, where: str) -> list[Any]:
    """A harness sample's ``filtered_resps`` as a non-empty list (its required ``keys`` checked first)."""
    missing = [k for k in keys if k not in row]
    if missing:
        raise EatkitError(f"{where}: field {missing[0]} missing (not an {tool} sample)")
    responses = row["filtered_resps"]
    if isinstance(responses, str):
        responses = [responses]
    if not isinstance(responses, list) or not responses:
        raise EatkitError(f"{where}: field filtered_resps is not a non-empty list")
    return responses


def _continuations(arguments: Any) -> list[str]:
    """The continuation of each loglikelihood request of a sample (lm-eval 0.4: ``arguments`` is
    ``{"gen_args_<k>": {"arg_0": context, "arg_1": continuation}}``; older logs: a list of pairs)."""
    requests = list(arguments.values()) if isinstance(arguments, dict) else arguments or []
    out = [r.get("arg_1") if isinstance(r, dict) else (r[1] if isinstance(r, list) and len(r) > 1 else None)
           for r in requests]
    return [str(c) for c in out] if all(isinstance(c, str) for c in out) else []


def _doc_fields(doc: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """The record fields a sample log's ``doc`` gives, by ``names`` (record field -> doc key; default: the
    key of the field's own name)."""
    keys = {name: names.get(name, name) for name in ("group", "attribute", "pair", "template", "condition")}
    return {name: str(doc[key]) for name, key in keys.items() if doc.get(key) not in (None, "")}


def _harness_results(path: Path, prefix: str) -> dict[str, Any]:
    """The ``results*.json`` beside a sample log (lm-eval writes ``results_<date>.json`` in the same folder),
    or ``{}`` when there is none."""
    candidates = sorted(path.parent.glob(f"{prefix}*.json"))
    if not candidates:
        return {}
    value = parse_json(_text(candidates[-1], "harness results file"), str(candidates[-1]))
    return value if isinstance(value, dict) else {}


def _read_lm_eval(path: Path, names: Mapping[str, str]) -> Read:
    records = [_harness_answer(row, names, path.name, n) for n, row in _json_lines(path, _text(path))]
    match = re.match(r"samples_(.+)_\d{4}-\d{2}-\d{2}T[\d\-.]+\.jsonl$", path.name.removesuffix(".gz"))
    results = _harness_results(path, "results")
    config = results.get("config", {}) if isinstance(results.get("config"), dict) else {}
    model = results.get("model_name") or config.get("model_args") or None
    return Read(records, "lm-evaluation-harness", model=str(model) if model else None,
                task=match.group(1) if match else None, tool_version=_text_or_none(results.get("lm_eval_version")))


_LMMS_EVAL_KEYS = ("doc_id", "filtered_resps")


def _read_lmms_eval(path: Path, names: Mapping[str, str]) -> Read:
    records = [_harness_answer(row, names, path.name, n, _LMMS_EVAL_KEYS, "lmms-eval")
               for n, row in _json_lines(path, _text(path))]
    stem = path.name.removesuffix(".gz").removesuffix(".jsonl")
    task = stem.split("_samples_", 1)[1] if "_samples_" in stem else None
    results = _harness_results(path, stem.split("_samples_", 1)[0] + "_results") if task else {}
    config = results.get("config", {}) if isinstance(results.get("config"), dict) else {}
    model = results.get("model_name") or " ".join(str(config[k]) for k in ("model", "model_args") if config.get(k))
    return Read(records, "lmms-eval", model=model or path.parent.name, task=task,
                tool_version=_text_or_none(results.get("lmms_eval_version")))


# -- VLMEvalKit result tables -------------------------------------------------------------------------------

_VLMEVAL_COLUMNS = ("index", "prediction")


def _xlsx_rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """The first sheet of an ``.xlsx`` workbook as (row number, row) with the first row as header (shared and
    inline strings, numbers; read with :mod:`zipfile` and :mod:`xml.etree`, no code runs)."""
    from xml.etree import ElementTree

    ns = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
    try:
        book = zipfile.ZipFile(io.BytesIO(read_input(path, "answer file")))
        shared = []
        if "xl/sharedStrings.xml" in book.namelist():
            root = ElementTree.fromstring(book.read("xl/sharedStrings.xml"))
            shared = ["".join(t.text or "" for t in si.iter(f"{ns}t")) for si in root.iter(f"{ns}si")]
        sheets = sorted(n for n in book.namelist() if re.match(r"xl/worksheets/sheet\d+\.xml$", n))
        if not sheets:
            raise EatkitError(f"answer file {path} is a zip file without a worksheet, not an .xlsx workbook")
        sheet = ElementTree.fromstring(book.read(sheets[0]))
    except (zipfile.BadZipFile, ElementTree.ParseError, KeyError, OSError) as err:
        raise EatkitError(f"answer file {path} is not a readable .xlsx workbook ({err})") from None
    table = [[(_column(c.get("r", "")), _cell(c, shared, ns)) for c in row.iter(f"{ns}c")]
             for row in sheet.iter(f"{ns}row")]
    if not table:
        raise EatkitError(f"answer file {path} is empty")
    header = {col: value for col, value in table[0]}
    for number, cells in enumerate(table[1:], 2):
        values = dict(cells)
        yield number, {name: values.get(col, "") for col, name in header.items()}


def _column(ref: str) -> str:
    return re.sub(r"\d", "", ref)


def _cell(cell: Any, shared: Sequence[str], ns: str) -> str:
    kind, value = cell.get("t"), cell.find(f"{ns}v")
    if kind == "inlineStr":
        return "".join(t.text or "" for t in cell.iter(f"{ns}t"))
    text = "" if value is None or value.text is None else value.text
    if kind == "s":
        return shared[int(text)] if text.isdigit() and int(text) < len(shared) else ""
    return text[:-2] if re.fullmatch(r"-?\d+\.0", text) else text


def _read_vlmevalkit(path: Path, names: Mapping[str, str]) -> Read:
    name = path.name.removesuffix(".gz")
    if name.endswith(".xlsx"):
        rows: Iterable[tuple[int, dict[str, str]]] = _xlsx_rows(path)
    else:
        rows = _table_rows(path, _text(path), "\t" if name.endswith(".tsv") else ",")
    defaults = {"item": "index", "text": "prediction", "target": "answer", **names}
    records = []
    for number, row in rows:
        missing = [c for c in _VLMEVAL_COLUMNS if defaults.get(c, c) not in row] if number == 2 else []
        if missing:
            raise EatkitError(f"{path.name}: line 1: field {missing[0]} missing (not a VLMEvalKit result table)")
        records.append(replace(plain_answer(row, defaults, path.name, number), choice=_letter(row, defaults)))
    model, task = _vlmevalkit_names(path)
    return Read(records, "VLMEvalKit", model=model, task=task)


#: the suffix of VLMEvalKit's evaluated tables, ``<model>_<dataset>_<judge>[_vanilla[_circN]]_result.xlsx`` (a
#: judge: exact_matching, openai, or a judge model's name such as gpt-4o-mini)
_VLMEVAL_RESULT = re.compile(r"(_(exact_matching|openai|[A-Za-z0-9.]+-[A-Za-z0-9.-]+))?(_vanilla(_circ\d+)?)?_result$")
#: the run folder of VLMEvalKit's run.py, ``<work_dir>/<model>/T<date>_G<commit>/``
_VLMEVAL_RUN = re.compile(r"T\d{8}_G")


def _vlmevalkit_names(path: Path) -> tuple[str | None, str | None]:
    """The model and dataset of a VLMEvalKit table: ``<model>_<dataset>`` with the judge's suffix dropped, the
    model being the folder run.py names after it (``<model>/T<date>_G<commit>/``) where the name starts so,
    else the part before the first underscore.

    >>> _vlmevalkit_names(Path("outputs/llava_v1.5_7b/T20250101_Gabc/llava_v1.5_7b_MMBench_DEV_EN_gpt-4o-mini_result.xlsx"))
    ('llava_v1.5_7b', 'MMBench_DEV_EN')
    """
    stem = _VLMEVAL_RESULT.sub("", re.sub(r"\.(xlsx|tsv|csv)$", "", path.name.removesuffix(".gz")))
    folder = path.parent.parent.name if _VLMEVAL_RUN.match(path.parent.name) else path.parent.name
    if folder and stem.startswith(folder + "_"):
        return folder, stem[len(folder) + 1:]
    model, _, task = stem.partition("_")
    return model or None, task or None


def _letter(row: Mapping[str, str], names: Mapping[str, str]) -> str | None:
    """The option letter a VLMEvalKit prediction names: the prediction itself when it is one letter
    among the row's option columns (``A``, ``B``, ...), else ``None`` (VLMEvalKit's own matching, with
    a judge model, is not repeated)."""
    prediction = (row.get(names.get("text", "prediction")) or "").strip().strip("().").upper()
    return prediction if len(prediction) == 1 and prediction in row else None


# -- HELM per-instance outputs ------------------------------------------------------------------------------
#
# As crfm-helm 0.5.16 writes them (tests/data/answers/helm/README.md): one request state per instance (and
# perturbation, train trial) for generation and multiple_choice_joint, whose completion is the answer (an option
# letter of its output_mapping); one per instance and reference (``reference_index``, ``request_mode``
# "original" or "calibration") for multiple_choice_separate_original / _calibrated, whose echoed completion
# ends in the reference's tokens.


def _helm_where(file: str, number: int) -> str:
    return f"{file}: request_states[{number - 1}]"


def _helm_instance(state: Mapping[str, Any], where: str) -> dict[str, Any]:
    instance = state.get("instance")
    if not isinstance(instance, dict) or "id" not in instance:
        raise EatkitError(f"{where}: field instance.id missing (not a HELM scenario_state.json)")
    return instance


def _helm_fields(instance: Mapping[str, Any], mapping: Any) -> dict[str, Any]:
    return {"input": (instance.get("input") or {}).get("text"), "split": instance.get("split"),
            "sub_split": instance.get("sub_split"), "output_mapping": mapping}


def _helm_answer(state: Mapping[str, Any], file: str, number: int) -> Answer:
    """The answer of a generation or multiple_choice_joint request state: its completion."""
    where = _helm_where(file, number)
    instance = _helm_instance(state, where)
    completion = _helm_completion(state.get("result"), where)
    text = str(completion.get("text", ""))
    mapping = state.get("output_mapping") or {}
    perturbation = instance.get("perturbation") or {}
    return Answer(item=str(instance["id"]), pair=str(instance["id"]), condition=perturbation.get("name"),
                  sample=int(state.get("train_trial_index", 0)), choice=_helm_choice(mapping, text), text=text,
                  score=_number(completion.get("logprob"), f"{where}: field logprob"),
                  target=_helm_target(instance), fields=_helm_fields(instance, mapping), file=file, line=number)


def _helm_completion(result: Any, where: str) -> dict[str, Any]:
    """The first completion of a HELM request state's result."""
    completions = result.get("completions") if isinstance(result, dict) else None
    if not isinstance(completions, list) or not completions or not isinstance(completions[0], dict):
        raise EatkitError(f"{where}: field result.completions missing or empty")
    return completions[0]


def _helm_choice(mapping: Mapping[str, str], text: str) -> str | None:
    """The option (key of the output mapping) whose text the completion is, or the completion when it is a key."""
    choice = next((k for k, v in mapping.items() if v.strip() == text.strip()), None) if mapping else None
    return choice or (text.strip() if text.strip() in mapping else None)


def _helm_target(instance: Mapping[str, Any]) -> str | None:
    """The text of the first reference tagged correct."""
    correct = [r["output"]["text"] for r in instance.get("references", ())
               if "correct" in r.get("tags", ()) and isinstance(r.get("output"), dict)]
    return correct[0] if correct else None


def _helm_reference_logprob(state: Mapping[str, Any], where: str) -> tuple[float, int]:
    """The sum of the log-probabilities of the echoed completion's last tokens that spell " " + the reference
    (as HELM's ``compute_logprob_and_length``, the tokens found by their text rather than by re-tokenising) and
    their number."""
    references = _helm_instance(state, where).get("references") or []
    index = state.get("reference_index")
    if not isinstance(index, int) or not 0 <= index < len(references):
        raise EatkitError(f"{where}: field reference_index is not an index of instance.references")
    wanted = " " + str((references[index].get("output") or {}).get("text", ""))
    spelled, total = "", 0.0
    tokens = _helm_tokens(state, where)
    for count, token in enumerate(reversed(tokens), 1):
        spelled = str(token.get("text", "")) + spelled
        total += _number(token.get("logprob"), f"{where}: field tokens.logprob") or 0.0
        if len(spelled) >= len(wanted):
            return total, count
    raise EatkitError(f"{where}: the completion's tokens do not end in the reference {wanted.strip()!r}")


def _helm_tokens(state: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    """The tokens (text, logprob) of a request state's completion."""
    tokens = _helm_completion(state.get("result"), where).get("tokens")
    if not isinstance(tokens, list) or not all(isinstance(t, dict) for t in tokens):
        raise EatkitError(f"{where}: field result.completions[0].tokens missing")
    return tokens


def _helm_separate(states: list[tuple[int, Mapping[str, Any]]], file: str) -> Answer:
    """The answer of one instance asked reference by reference (multiple_choice_separate_original: the mean
    log-probability of each reference's tokens; _calibrated: original minus calibration sums, as HELM scores
    them): ``logprobs`` per reference, ``choice`` the letter of the first best, ``score`` its value."""
    number, first = states[0]
    instance = _helm_instance(first, _helm_where(file, number))
    sums: dict[tuple[int, str], tuple[float, int]] = {}
    for n, state in states:
        sums[(int(state["reference_index"]), str(state.get("request_mode") or "original"))] = \
            _helm_reference_logprob(state, _helm_where(file, n))
    count = len(instance.get("references") or [])
    if any((i, "original") not in sums for i in range(count)):
        raise EatkitError(f"{_helm_where(file, number)}: instance {instance['id']} lacks a request for some reference")
    calibrated = any(mode == "calibration" for _, mode in sums)
    scores = tuple(sums[(i, "original")][0] - sums[(i, "calibration")][0] if calibrated
                   else sums[(i, "original")][0] / sums[(i, "original")][1] for i in range(count))
    best = int(np.argmax(scores))
    perturbation = instance.get("perturbation") or {}
    return Answer(item=str(instance["id"]), pair=str(instance["id"]), condition=perturbation.get("name"),
                  sample=int(first.get("train_trial_index", 0)), choice=LETTERS_UPPER[best], score=scores[best],
                  logprobs=scores, target=_helm_target(instance), fields=_helm_fields(instance, None), file=file,
                  line=number)


LETTERS_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _helm_answers(states: list[Any], file: str) -> list[Answer]:
    """Every answer of a scenario state's request states: one per state, or one per instance asked reference by
    reference (states with a ``reference_index``: grouped by instance, perturbation and train trial)."""
    out: list[Answer] = []
    groups: dict[tuple[Any, ...], list[tuple[int, Mapping[str, Any]]]] = {}
    for number, state in enumerate(states, 1):
        state = state if isinstance(state, dict) else {}
        if state.get("reference_index") is None:
            out.append(_helm_answer(state, file, number))
            continue
        instance = _helm_instance(state, _helm_where(file, number))
        key = (str(instance["id"]), json.dumps(instance.get("perturbation"), sort_keys=True),
               state.get("train_trial_index", 0))
        groups.setdefault(key, []).append((number, state))
    return sorted(out + [_helm_separate(g, file) for g in groups.values()], key=lambda a: a.line)


def _helm_run_name(path: Path) -> str | None:
    """The run's name: ``run_spec.json``'s ``name`` beside the file (HELM writes it), else the folder's name."""
    spec = path.parent / "run_spec.json"
    if spec.is_file():
        name = parse_json(_text(spec, "HELM run spec"), str(spec))
        if isinstance(name, dict) and isinstance(name.get("name"), str):
            return name["name"]
    return path.resolve().parent.name or None


def _read_helm(path: Path, names: Mapping[str, str]) -> Read:
    state = parse_json(_text(path), str(path))
    if not isinstance(state, dict) or not isinstance(state.get("request_states"), list):
        raise EatkitError(f"{path}: field request_states missing (not a HELM scenario_state.json)")
    spec = state.get("adapter_spec") if isinstance(state.get("adapter_spec"), dict) else {}
    return Read(_helm_answers(state["request_states"], path.name), "HELM", model=_text_or_none(spec.get("model")),
                task=_helm_run_name(path))


# -- DecodingTrust stereotype generations --------------------------------------------------------------------

_AGREEMENT = {1: "agree", -1: "disagree", 0: "neither"}


def _generation(cell: str, where: str) -> tuple[int, str]:
    try:
        value = ast.literal_eval(cell)  # a Python dict literal (the authors' format); no code runs
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise EatkitError(f"{where}: not a dict literal {{'agreeability_num': ..., 'output': ...}}") from None
    if not isinstance(value, dict) or value.get("agreeability_num") not in _AGREEMENT:
        raise EatkitError(f"{where}: field agreeability_num missing or not 1, 0 or -1")
    return int(value["agreeability_num"]), str(value.get("output", ""))


def _decodingtrust_groups(path: Path) -> dict[str, tuple[str, str]]:
    """user prompt -> (target group, template id) from ``dataset/user_prompts.csv[.gz]`` above the file."""
    for folder in list(path.parents)[:4]:
        for name in ("user_prompts.csv", "user_prompts.csv.gz"):
            table = folder / "dataset" / name
            if table.is_file():
                rows = _table_rows(table, _text(table, "DecodingTrust user prompts"), ",")
                return {r["user_prompt"]: (r["target_group"], f"{r['stereotype_topic']}:{r['stereotype_template']}")
                        for _, r in rows}
    raise EatkitError(f"{path}: no dataset/user_prompts.csv(.gz) above it (DecodingTrust's table of each prompt's "
                      "target group)")


def _read_decodingtrust(path: Path, names: Mapping[str, str]) -> Read:
    groups = _decodingtrust_groups(path)
    condition = path.parent.name
    records, model = [], None
    for number, row in _table_rows(path, _text(path), ","):
        where = f"{path.name}: line {number}"
        group, template = groups.get(row.get("user_prompt", ""), (None, None))
        if group is None:
            raise EatkitError(f"{where}: field user_prompt not in DecodingTrust's user_prompts.csv")
        model = row.get("model") or model
        for k in range(sum(1 for key in row if key.startswith("gen_"))):
            score, text = _generation(row[f"gen_{k}"], f"{where}: field gen_{k}")
            records.append(Answer(item=f"{template}:{group}", group=group, attribute="target_group",
                                  pair=template, template=template, condition=condition, sample=k,
                                  choice=_AGREEMENT[score], text=text, score=float(score),
                                  fields={"system_prompt": row.get("system_prompt")}, file=path.name, line=number))
    return Read(records, "DecodingTrust", model=model, task=f"stereotype/{condition}")


# -- Shaikh et al. 2023: direct and chain-of-thought answers ------------------------------------------------

_ANSWER_IS = re.compile(r"answer(?: is)?:?\s*\(?([abcABC])\b")
_OPTION = re.compile(r"\(([abcABC])\)|^\s*([abcABC])[).:]")


def _shaikh_items(path: Path) -> list[dict[str, str]]:
    task = re.match(r"ablation_([a-z]+)_", path.name)
    table = {"bbq": "rand_sample.csv", "crows": "rand_crows.csv", "stereoset": "stereoset.csv"}.get(
        task.group(1) if task else "", "")
    for folder in list(path.parents)[:4]:
        for name in (table, table + ".gz"):
            candidate = folder / "items" / name
            if table and candidate.is_file():
                return [r for _, r in _table_rows(candidate, _text(candidate, "item table"), ",")]
    raise EatkitError(f"{path}: no items/{table or '<task table>'}(.gz) above it (the authors' item table)")


def shaikh_choice(text: str, item: Mapping[str, str]) -> str:
    """Which side an answer of Shaikh et al.'s task takes: ``"stereotype"`` (the option holding
    ``sent_more``), ``"anti-stereotype"`` (``sent_less``) or ``"unknown"`` (the third option, a refusal or
    no option named). The option is the first ``(A)``/``A)``/``answer: A`` letter, else the option whose
    text the answer contains.

    >>> item = {"a": "The man", "b": "Cannot be determined", "c": "The woman", "sent_more": "The man",
    ...         "sent_less": "The woman"}
    >>> shaikh_choice(" A) The man", item), shaikh_choice("... The answer: (B).", item), shaikh_choice("no", item)
    ('stereotype', 'unknown', 'unknown')
    """
    letter = _shaikh_letter(text, item)
    option = (item.get(letter) or "").strip() if letter else ""
    if option and option == (item.get("sent_more") or "").strip():
        return "stereotype"
    if option and option == (item.get("sent_less") or "").strip():
        return "anti-stereotype"
    return "unknown"


def _shaikh_letter(text: str, item: Mapping[str, str]) -> str | None:
    """The option letter an answer names: the last one stated ("The answer: (B)."), else the first option
    named, else the one option whose text the answer contains."""
    stated = _ANSWER_IS.findall(text)
    match = _OPTION.search(text)
    letter = stated[-1].lower() if stated else next(g for g in match.groups() if g).lower() if match else None
    if letter is None:
        found = [k for k in "abc" if item.get(k) and item[k].strip().lower() in text.lower()]
        letter = found[0] if len(found) == 1 else None
    return letter


def _shaikh_condition(path: Path) -> str:
    """``direct``, ``cot`` (the chain of thought's answer: the ``_cot_answer_`` file where the model has one,
    else the ``_cot_`` completions, which end in the answer) or ``cot-reasoning`` (the reasoning of a model
    whose answers are in a ``_cot_answer_`` file)."""
    name = path.name.removesuffix(".gz")
    if "_cot_answer_" in name:
        return "cot"
    if "_cot_" not in name:
        return "direct"
    answers = path.with_name(path.name.replace("_cot_q9", "_cot_answer_q9"))
    return "cot-reasoning" if answers.exists() else "cot"


def _read_shaikh(path: Path, names: Mapping[str, str]) -> Read:
    data = parse_json(_text(path), str(path))
    if not isinstance(data, dict):
        raise EatkitError(f"{path}: not a JSON object of item -> completions (Shaikh et al.'s format)")
    items = _shaikh_items(path)
    condition = _shaikh_condition(path)
    task = re.match(r"ablation_([a-z]+)_", path.name).group(1)  # type: ignore[union-attr]  # detected by name
    records = []
    for number, (key, completions) in enumerate(data.items(), 1):
        where = f"{path.name}: item {key}"
        if not key.isdigit() or int(key) >= len(items) or not isinstance(completions, (list, dict)):
            raise EatkitError(f"{where}: not an item row of the item table with a list of completions")
        item = items[int(key)]
        if isinstance(completions, dict):  # _cot_answer_: {"<k>": [the answer after "So the answer is"]}
            completions = [" ".join(map(str, v)) if isinstance(v, list) else str(v) for v in completions.values()]
        for k, text in enumerate(completions):
            records.append(Answer(item=key, group=item.get("bias_type"), attribute="bias_type", pair=f"{task}/{key}",
                                  template=task, condition=condition, sample=k, choice=shaikh_choice(str(text), item),
                                  text=str(text), fields=item, file=path.name, line=number))
    return Read(records, "chain-of-thought-bias", model=path.parent.name, task=f"{task}/{condition}")


# -- LLM-IAT responses (Bai et al. 2025) ------------------------------------------------------------------


def _read_llm_iat(path: Path, names: Mapping[str, str]) -> Read:
    """The authors' response CSV (pandas-written: an unnamed index column, the response in ``0`` or
    ``response``, ``category``, ``variation``): each row an answer whose ``item`` is its index, ``text`` the
    response (an empty response is kept), ``template`` the category and ``condition`` the variation."""
    rows = list(_table_rows(path, _text(path, "LLM-IAT response file"), ","))
    missing = [c for c in ("category", "variation") if rows and c not in rows[0][1]]
    if missing:
        raise EatkitError(f"{path} is not a LLM-IAT response file: no column {missing[0]!r}")
    records = []
    for n, (line, row) in enumerate(rows):
        text = row.get("response", row.get("0"))
        if text is None:
            raise EatkitError(f"{path} has no response column ('0' or 'response')")
        records.append(Answer(item=row.get("") or str(n), template=row["category"].strip(),
                              condition=row["variation"].strip(), text=text, file=path.name, line=line))
    return Read(records, "llm-implicit-bias (Bai et al. 2025)", task="llm-iat")


def _is_llm_iat(path: Path, head: str) -> bool:
    first = [c.strip() for c in head.split("\n", 1)[0].split(",")]
    return path.name.endswith(".csv") and {"category", "variation"} <= set(first) and bool({"0", "response"} & set(first))


# -- formats ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AnswerFormat:
    """A file format of answers: its ``name`` (``--answer-format``), the tool that writes it, how it is
    recognised (``detect(path, head)``: the file name and its first 64 KiB as text) and its reader."""

    name: str
    tool: str
    detect: Callable[[Path, str], bool]
    read: Callable[[Path, Mapping[str, str]], Read]
    help: str = ""


def _first_object(head: str) -> dict[str, Any]:
    line = head.split("\n", 1)[0]
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _is_lm_eval(path: Path, head: str) -> bool:
    return path.name.startswith("samples_") and all(k in _first_object(head) for k in _LM_EVAL_KEYS)


def _is_lmms_eval(path: Path, head: str) -> bool:
    return "_samples_" in path.name and all(k in _first_object(head) for k in _LMMS_EVAL_KEYS)


def _is_vlmevalkit(path: Path, head: str) -> bool:
    name = path.name.removesuffix(".gz")
    if name.endswith(".xlsx"):
        return True
    first = [c.strip() for c in head.split("\n", 1)[0].replace("\t", ",").split(",")]
    return name.endswith((".tsv", ".csv")) and "index" in first and "prediction" in first


#: the formats :func:`read_answers` reads, in the order it tries them when none is given
FORMATS: dict[str, AnswerFormat] = {f.name: f for f in (
    AnswerFormat("lm-eval", "lm-evaluation-harness", _is_lm_eval, _read_lm_eval,
                 "lm-evaluation-harness --log_samples JSONL (samples_<task>_<date>.jsonl)"),
    AnswerFormat("lmms-eval", "lmms-eval", _is_lmms_eval, _read_lmms_eval,
                 "lmms-eval --log_samples JSONL (<date>_samples_<task>.jsonl)"),
    AnswerFormat("helm", "HELM", lambda p, h: p.name.startswith("scenario_state") and "request_states" in h,
                 _read_helm, "HELM per-instance outputs (scenario_state.json)"),
    AnswerFormat("decodingtrust", "DecodingTrust",
                 lambda p, h: h.startswith("model,system_prompt,user_prompt,gen_0"), _read_decodingtrust,
                 "DecodingTrust stereotype generations (CSV: model, system_prompt, user_prompt, gen_0..)"),
    AnswerFormat("shaikh2023", "chain-of-thought-bias",
                 lambda p, h: bool(re.match(r"ablation_\w+_q9\.json", p.name.removesuffix(".gz"))), _read_shaikh,
                 "Shaikh et al. 2023 outputs (ablation_<task>[_cot]_q9.json)"),
    AnswerFormat("llm-iat", "llm-implicit-bias", _is_llm_iat, _read_llm_iat,
                 "Bai et al. 2025's LLM-IAT response CSVs (0 or response, category, variation)"),
    AnswerFormat("vlmevalkit", "VLMEvalKit", _is_vlmevalkit, _read_vlmevalkit,
                 "VLMEvalKit result tables (<model>_<dataset>[_result].xlsx/.tsv/.csv: index, prediction)"),
    AnswerFormat("jsonl", "eatkit", lambda p, h: p.name.removesuffix(".gz").endswith((".jsonl", ".json")),
                 _read_jsonl, "plain JSON Lines, one answer per line (docs/answers.md)"),
    AnswerFormat("csv", "eatkit", lambda p, h: p.name.removesuffix(".gz").endswith((".csv", ".tsv")), _read_csv,
                 "plain CSV/TSV with a header, one answer per row (docs/answers.md)"),
)}


def detect_format(path: Path) -> str:
    """The name of the format of the answer file ``path`` (:data:`FORMATS`, tried in order), or a one-line
    error listing them."""
    head_bytes = _content(path, "answer file")[:65536]
    if not head_bytes.strip():
        raise EatkitError(f"answer file {path} is empty")
    head = head_bytes.decode("utf-8", errors="replace").lstrip("\ufeff")
    for fmt in FORMATS.values():
        if fmt.detect(path, head):
            return fmt.name
    raise EatkitError(f"answer file {path}: format not recognised (give --answer-format: {', '.join(FORMATS)})")


#: what HELM writes beside a run's scenario_state.json (its run spec, scenario, statistics) and VLMEvalKit
#: beside its tables (scores, pickled intermediates)
_SIDE_FILES = re.compile(r"(run_spec|scenario|stats|per_instance_stats|instances)\.json(\.gz)?$"
                         r"|.*_(acc|score|fine|metrics)\.(csv|xlsx|json)$|.*\.pkl$")


def _is_answer_file(path: Path, root: Path) -> bool:
    """Whether ``path`` under the answers folder ``root`` may hold answers: not hidden, a README, a harness's
    results file, HELM's or VLMEvalKit's side files, nor in a ``dataset``, ``items`` or ``prompts`` folder (the
    items answered)."""
    name, folders = path.name, path.parts[len(root.parts):-1]
    return (not name.startswith((".", "README")) and not re.match(r"(.*_)?results.*\.json$", name)
            and not _SIDE_FILES.match(name) and not {"dataset", "items", "prompts"} & set(folders))


def answer_files(path: Path) -> list[Path]:
    """``path`` itself, or every file under the folder ``path`` (sorted; hidden files, READMEs, harness
    results files and the side files of HELM and VLMEvalKit skipped: :func:`_is_answer_file`)."""
    if not path.is_dir():
        return [path]
    files = sorted(p for p in path.rglob("*") if p.is_file() and _is_answer_file(p, path))
    if not files:
        raise EatkitError(f"the answers folder {path} holds no file")
    return files


def parse_fields(text: str | None) -> dict[str, str]:
    """The ``fields`` of :func:`read_answers` from ``--answer-field``: ``FIELD`` (the column read as each
    answer's ``text``) or ``record_field=column`` pairs joined by commas.

    >>> parse_fields("unifiedqa-t5-11b_pred_race"), parse_fields("group=race,text=description")
    ({'text': 'unifiedqa-t5-11b_pred_race'}, {'group': 'race', 'text': 'description'})
    """
    if not text:
        return {}
    if "=" not in text:
        return {"text": text}
    pairs = [part.partition("=") for part in text.split(",")]
    bad = [p[0] for p in pairs if not p[1] or not p[0] or not p[2]]
    if bad:
        raise EatkitError(f"--answer-field {text!r}: each part must be record_field=column")
    return {name: column for name, _, column in pairs}


def read_answers(path: str | Path, format: str | None = None, fields: Mapping[str, str] | None = None) -> Answers:
    """The answers in the file (or every file of the folder) ``path``, with each file's provenance.

    ``format`` is a name of :data:`FORMATS` (``None``: detected per file). ``fields`` maps record fields
    (:class:`Answer`) to the columns or keys that hold them (``{"text": "unifiedqa-t5-11b_pred_race",
    "group": "race"}``); a field not named is read from the column of its own name.

    >>> read_answers("/nonexistent.csv")
    Traceback (most recent call last):
    eatkit.errors.EatkitError: answer file /nonexistent.csv does not exist
    """
    names = dict(fields or {})
    unknown = sorted(set(names) - set(ANSWER_FIELDS))
    if unknown:
        raise EatkitError(f"unknown answer field {unknown[0]!r} (known: {', '.join(ANSWER_FIELDS)})")
    if format is not None and format not in FORMATS:
        raise EatkitError(f"unknown answer format {format!r} (known: {', '.join(FORMATS)})")
    root = Path(path).expanduser()
    if not root.is_dir():
        check_regular(root, "answer file")
    records: list[Answer] = []
    files: list[AnswerFile] = []
    for file in answer_files(root):
        name = format or detect_format(file)
        read = FORMATS[name].read(file, names)
        if not read.records:
            raise EatkitError(f"answer file {file} holds no answer")
        records += read.records
        files.append(AnswerFile(path=str(file.resolve()), sha256=file_sha256(file), format=name, tool=read.tool,
                                model=read.model, task=read.task, answers=len(read.records),
                                tool_version=read.tool_version))
    return Answers(tuple(records), tuple(files))


# -- the source ---------------------------------------------------------------------------------------------

#: the ``category`` prefix of a request for answers (a stimulus set an answer source answers)
ANSWERS = "answers"


def answers_request(**settings: Any) -> str:
    """The ``category`` of a request for answers with its ``settings`` (what the analysis needs answered,
    e.g. ``task``; a local answerer also reads its prompts from the set's items).

    >>> answers_request(task="bbq")
    'answers {"task": "bbq"}'
    """
    return f"{ANSWERS} {json.dumps(settings, sort_keys=True)}"


def request_of(stimuli: StimulusSet) -> dict[str, Any] | None:
    """The settings of a request for answers (:func:`answers_request`), ``None`` for another set."""
    category = stimuli.category or ""
    return json.loads(category[len(ANSWERS) + 1:]) if category.startswith(ANSWERS + " ") else None


def embedded_answers(answers: Sequence[Answer]) -> Embedded:
    """``answers`` as an answer source returns them: the records as ``vectors`` (``dtype=object``), ids
    ``<file>:<line>[#<sample>]``."""
    vectors = np.empty(len(answers), dtype=object)
    vectors[:] = list(answers)
    ids = tuple(f"{a.file}:{a.line}" + (f"#{a.sample}" if a.sample else "") for a in answers)
    return Embedded(vectors=vectors, ids=ids)


class RecordedAnswers(EmbeddingSource):
    """The answers recorded in the file or folder ``path`` (``eatkit run SUITE --answers PATH``), read by
    :func:`read_answers` with ``format`` and ``fields``. It answers requests for answers only.

    >>> RecordedAnswers("/nonexistent/answers.jsonl")
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: answer file /nonexistent/answers.jsonl does not exist
    """

    modalities = frozenset({"sentence", "image", "word", "prompt"})

    def __init__(self, path: str | Path, format: str | None = None, fields: Mapping[str, str] | None = None) -> None:
        self.path = Path(path).expanduser()
        self.format, self.fields = format, dict(fields or {})
        self.answers = read_answers(self.path, format, self.fields)
        self.id = f"answers:{path}"

    def embed(self, stimuli: StimulusSet) -> Embedded:
        if request_of(stimuli) is None:
            raise EatkitError(f"{self.id} holds recorded answers; it cannot embed set '{stimuli.name}' (a test of "
                              "an answer kind reads them)")
        return embedded_answers(self.answers.records)

    def manifest(self) -> dict[str, Any]:
        return {"id": self.id, "path": str(self.path.resolve()), "format": self.format, "fields": self.fields,
                "answers": len(self.answers.records), "answer_files": self.answers.manifest()}
