"""Validation of suite files, format ``eatkit.suite/1`` (documented in ``docs/suite-schema.md``).

A suite file is a JSON object with metadata, optional named stimulus ``sets`` and a list of ``tests``;
each test's X, Y, A and B is an inline set object or the name of one of the ``sets``. Every problem is
reported as one :class:`~eatkit.errors.EatkitError` line that names the file, the test and the set.
"""

from __future__ import annotations

import re
from typing import Any

from eatkit.errors import EatkitError
from eatkit.io import check_json_schema, parse_json
from eatkit.kinds import KINDS, ROLE_NAME, RoleGroup, get_kind
from eatkit.stats.options import ALTERNATIVES
from eatkit.stimuli.captioned import MODALITY, CaptionedImages
from eatkit.stimuli.types import MODALITIES, AssociationTest, StimulusSet, Suite

SCHEMA_ID = "eatkit.suite/1"

# Allowed keys of each kind of object: key -> (JSON type or types, required).
_SUITE_KEYS: dict[str, tuple[Any, bool]] = {
    "schema": (str, True),
    "id": (str, True),
    "title": (str, True),
    "citation": (str, False),
    "description": (str, False),
    "alternative": (str, False),
    "sets": (dict, False),
    "tests": (list, True),
    "$schema": (str, False),  # where an editor finds the JSON Schema (suite_json_schema); ignored
}
_TEST_KEYS: dict[str, tuple[Any, bool]] = {
    "id": (str, True),
    "title": (str, True),
    "kind": (str, False),
    "citation": (str, False),
    "notes": (str, False),
    "params": (dict, False),
}
_SET_KEYS: dict[str, tuple[Any, bool]] = {
    "name": (str, True),
    "modality": (str, True),
    "items": (list, False),
    "category": (str, False),
    "templates": (list, False),
    "captions": (list, False),
    "images": (list, False),
}
# Content keys each modality requires, and the ones it accepts (beyond name and modality).
_MODALITY_KEYS: dict[str, tuple[str, frozenset[str]]] = {
    "word": ("items", frozenset({"items", "templates"})),
    "sentence": ("items", frozenset({"items"})),
    "image": ("category", frozenset({"category"})),
    "image-caption": ("captions", frozenset({"captions", "images"})),
    "prompt": ("items", frozenset({"items"})),
}
assert tuple(_MODALITY_KEYS) == MODALITIES

_EXPECTED = {
    str: "a string",
    list: "an array",
    dict: "an object",
    (dict, str): "a set object or the name of an entry of 'sets'",
}
_JSON_TYPES = (
    (bool, "boolean"), (str, "string"), ((int, float), "number"), (list, "array"), (dict, "object")
)  # bool before number: True is an int
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def parse_suite(text: str, label: str, source: str = "", *, check_schema: bool = False) -> Suite:
    """Parse and validate the text of a suite file; errors are prefixed ``suite file <label>:``.
    ``check_schema``: also check it against the shipped JSON Schema (:func:`suite_json_schema`; with
    jsonschema installed), as the loader does for suite files (the bundled suites are checked by the tests).

    >>> text = '''{"schema": "eatkit.suite/1", "id": "s", "title": "S", "tests": [{"id": "t",
    ...   "title": "T", "X": {"name": "x", "modality": "word", "items": ["a"]}, "Y": "y", "A": "y",
    ...   "B": "y"}], "sets": {"y": {"modality": "word", "items": ["b"]}}}'''
    >>> parse_suite(text, "s.json").test("t").set("Y")
    StimulusSet(name='y', modality='word', items=('b',), category=None, templates=())
    """
    where = f"suite file {label}"

    def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in pairs:
            if key in obj:
                raise EatkitError(f"{where}: duplicate key '{key}' in a JSON object")
            obj[key] = value
        return obj

    data = parse_json(text, where, object_pairs_hook=unique_keys)  # depth and number limits
    suite = _suite(data, where, source)
    if check_schema:  # after eatkit's own checks, whose messages are more precise; the kinds registered now
        check_json_schema(data, suite_json_schema(), where)
    return suite


def _roles_schema(roles: tuple[Any, ...]) -> dict[str, Any]:
    """The JSON Schema of a kind's declared roles: its names required, its role groups by pattern."""
    names = [r for r in roles if not isinstance(r, RoleGroup)]
    schema: dict[str, Any] = {"required": names, "properties": {r: {"$ref": "#/$defs/set-or-name"} for r in names}}
    groups = {g.pattern: {"$ref": "#/$defs/set-or-name"} for g in roles if isinstance(g, RoleGroup)}
    return {**schema, "patternProperties": groups} if groups else schema


def _params_schema(params: tuple[Any, ...]) -> dict[str, Any]:
    """The JSON Schema of a kind's ``params`` in a suite file: its declared names only, each typed with its
    declared range (:meth:`eatkit.params.Param.json_schema`; null: not given)."""
    return {"type": "object", "additionalProperties": False,
            "properties": {p.name: {**p.json_schema(nullable=True), "description": p.help} for p in params}}


def suite_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of suite files, generated from this module's key tables and the kinds
    of tests (their specs in :data:`eatkit.kinds.KINDS`: names, titles, roles); shipped as ``suite.schema.json``
    (``tests/test_json_schemas.py`` checks that the shipped file is this), for editors and validation.

    >>> sorted(suite_json_schema()["$defs"])
    ['named-set', 'set', 'set-or-name', 'test']
    """
    def typed(kind: Any, required: bool) -> dict[str, Any]:
        if kind is str:
            return {"type": "string", **({"minLength": 1} if required else {})}
        if kind is list:
            return {"type": "array", "items": {"type": "string", "minLength": 1}, **({"minItems": 1} if required else {})}
        return {"type": "object", **({"minProperties": 1} if required else {})}

    def table(keys: dict[str, tuple[Any, bool]]) -> dict[str, Any]:
        return {"properties": {k: typed(kind, req) for k, (kind, req) in keys.items()},
                "required": [k for k, (_, req) in keys.items() if req]}

    set_table = table(_SET_KEYS)
    set_table["properties"]["modality"] = {"enum": list(MODALITIES)}
    per_modality = [{"if": {"properties": {"modality": {"const": m}}, "required": ["modality"]},
                     "then": {"required": [need], "properties": {
                         **({need: {"minItems": 1}} if need in ("items", "captions") else {}),
                         **{k: False for k in _SET_KEYS if k not in {"name", "modality"} | accepted}}}}
                    for m, (need, accepted) in _MODALITY_KEYS.items()]
    named = {**set_table, "required": [k for k in set_table["required"] if k != "name"]}
    kinds = []
    for kind in KINDS:
        roles = get_kind(kind).roles
        when = {"anyOf": [{"not": {"required": ["kind"]}}, {"properties": {"kind": {"const": kind}}}]} \
            if kind == "eat" else {"properties": {"kind": {"const": kind}}, "required": ["kind"]}
        then = ({"patternProperties": {ROLE_NAME.pattern.join("^$"): {"$ref": "#/$defs/set-or-name"}}}
                if roles is None else _roles_schema(roles))
        then["properties"] = {**then.get("properties", {}), "params": _params_schema(get_kind(kind).params)}
        kinds.append({"if": when, "then": then, "description": f"{kind}: {get_kind(kind).title}"})
    test = table(_TEST_KEYS)
    test["properties"]["id"]["pattern"] = _ID.pattern.join("^$")
    test["properties"]["kind"] = {"enum": list(KINDS), "default": "eat"}
    suite = table(_SUITE_KEYS)
    suite["properties"].update({"schema": {"const": SCHEMA_ID}, "id": {"type": "string", "pattern": _ID.pattern.join("^$")},
                                "sets": {"type": "object", "additionalProperties": {"$ref": "#/$defs/named-set"}},
                                "tests": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/test"}}})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://eatkit.invalid/schemas/suite.schema.json",
        "title": f"eatkit suite file ({SCHEMA_ID})",
        "description": "Generated by eatkit.stimuli.schema.suite_json_schema(); see docs/suite-schema.md.",
        "type": "object", **suite, "additionalProperties": False,
        "$defs": {
            "set": {"type": "object", **set_table, "additionalProperties": False, "allOf": per_modality},
            "named-set": {"type": "object", **named, "additionalProperties": False, "allOf": per_modality},
            "set-or-name": {"oneOf": [{"$ref": "#/$defs/set"}, {"type": "string", "minLength": 1}]},
            "test": {"type": "object", **test, "allOf": kinds, "unevaluatedProperties": False},
        },
    }


def _suite(data: Any, where: str, source: str) -> Suite:
    _check_keys(data, _SUITE_KEYS, where)
    if data["schema"] != SCHEMA_ID:
        raise EatkitError(f"{where}: unsupported schema '{data['schema']}' (expected '{SCHEMA_ID}')")
    _check_id(data["id"], f"{where}: suite id")
    named = {
        key: _stimulus_set({"name": key, **value} if isinstance(value, dict) else value,
                           f"{where}: set '{key}'")
        for key, value in data.get("sets", {}).items()
    }
    citation = data.get("citation", "")
    alternative = data.get("alternative")
    if alternative is not None and alternative not in ALTERNATIVES:
        raise EatkitError(f"{where}: 'alternative' must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}")
    tests: list[AssociationTest] = []
    first_index: dict[str, int] = {}
    for number, test in enumerate(data["tests"], start=1):
        tests.append(_test(test, f"{where}: test #{number}", where, named, citation))
        test_id = tests[-1].id
        if test_id in first_index:
            raise EatkitError(
                f"{where}: duplicate test id '{test_id}' (test #{first_index[test_id]} and test #{number})"
            )
        first_index[test_id] = number
    return Suite(
        id=data["id"],
        title=data["title"],
        tests=tuple(tests),
        citation=citation,
        description=data.get("description", ""),
        source=source,
        alternative=alternative,
    )


def _test(
    data: Any, numbered: str, where: str, named: dict[str, StimulusSet], citation: str
) -> AssociationTest:
    if isinstance(data, dict) and isinstance(data.get("id"), str) and _ID.fullmatch(data["id"]):
        numbered = f"{where}: test '{data['id']}'"  # name the test by its id once the id is valid
    kind = data.get("kind", "eat") if isinstance(data, dict) else "eat"
    if not isinstance(kind, str) or kind not in KINDS:
        raise EatkitError(f"{numbered}: unknown kind {kind!r} (known: {', '.join(KINDS)})")
    try:  # the kind's spec (eatkit.kinds): its names, its role groups' members, or any role-like keys
        roles = get_kind(kind).test_roles(data, _TEST_KEYS)
    except EatkitError as e:
        raise EatkitError(f"{numbered}: {e}") from None
    _check_keys(data, {**_TEST_KEYS, **{role: ((dict, str), True) for role in roles}}, numbered)
    _check_id(data["id"], f"{numbered}: test id")
    params = data.get("params") if isinstance(data.get("params"), dict) else None
    try:  # the test's params: the names and types its kind declares (eatkit.kinds.KindSpec.complete)
        get_kind(kind).complete({}, params)
    except EatkitError as e:
        hint = (" (a suite gives its tests' default direction in its top-level 'alternative'; --alternative "
                "replaces it)") if "alternative" in (params or {}) and "'alternative'" in str(e) else ""
        raise EatkitError(f"{numbered}: {e}{hint}") from None
    sets: list[tuple[str, StimulusSet]] = []
    for role in roles:
        value = data[role]
        if isinstance(value, dict):
            sets.append((role, _stimulus_set(value, f"{numbered}: set '{role}'")))
        elif value in named:
            sets.append((role, named[value]))
        else:
            known = ", ".join(sorted(named)) or "none defined"
            raise EatkitError(
                f"{numbered}: set '{role}' refers to unknown set '{value}' in 'sets' (known: {known})"
            )
    return AssociationTest(
        id=data["id"],
        title=data["title"],
        kind=kind,
        roles=tuple(sets),
        citation=data.get("citation", citation),
        notes=data.get("notes", ""),
        params=tuple(sorted(data.get("params", {}).items())),
    )


def _stimulus_set(data: Any, where: str) -> StimulusSet:
    _check_keys(data, _SET_KEYS, where)
    modality = data["modality"]
    if modality not in _MODALITY_KEYS:
        raise EatkitError(f"{where}: unknown modality '{modality}' (known: {', '.join(MODALITIES)})")
    required, accepted = _MODALITY_KEYS[modality]
    extra = sorted(data.keys() - {"name", "modality"} - accepted)
    if extra:
        only = " and ".join(sorted(accepted))
        raise EatkitError(f"{where}: {modality} sets take no '{extra[0]}' (only {only})")
    if required not in data:
        raise EatkitError(f"{where}: {modality} sets need '{required}'")
    if modality == MODALITY:
        return _captioned(data, where)
    category = data.get("category")
    if category is not None and ("\\" in category or {"", ".", ".."} & set(category.split("/"))):
        raise EatkitError(f"{where}: category '{category}' must be a relative folder path like 'gender/male'")
    items = _strings(data.get("items", []), f"{where}: items")
    if required == "items" and not items:
        raise EatkitError(f"{where} has no items")
    for item in items:
        if item != item.strip():
            raise EatkitError(f"{where}: item '{item}' has leading or trailing whitespace")
    templates = _strings(data.get("templates", []), f"{where}: templates")
    for template in templates:
        if "{x}" not in template:
            raise EatkitError(f"{where}: template '{template}' has no '{{x}}' placeholder")
    return StimulusSet(
        name=data["name"], modality=modality, items=items, category=category, templates=templates
    )


def _captioned(data: dict[str, Any], where: str) -> CaptionedImages:
    """An image-caption set: parallel ``captions`` and ``images`` (file names, found by name under the
    user's image folder); a pair may repeat (the grounded sources list some twice)."""
    captions = _strings(data["captions"], f"{where}: captions")
    images = _strings(data.get("images", []), f"{where}: images")
    if not captions or len(images) != len(captions):
        raise EatkitError(f"{where}: an image-caption set needs as many images as captions (at least one), "
                          f"got {len(images)} and {len(captions)}")
    for caption in captions:
        if caption != caption.strip():
            raise EatkitError(f"{where}: caption '{caption}' has leading or trailing whitespace")
    for image in images:
        if "/" in image or "\\" in image or image in (".", ".."):
            raise EatkitError(f"{where}: image '{image}' must be a file name (images are found by name)")
    return CaptionedImages(name=data["name"], modality=MODALITY, items=captions, images=images)


def _check_keys(data: Any, table: dict[str, tuple[Any, bool]], where: str) -> None:
    """Check that ``data`` is an object with only ``table``'s keys, all required ones, of the right types."""
    if not isinstance(data, dict):
        raise EatkitError(f"{where} must be an object, got {_json_type(data)}")
    for key in data:
        if key not in table:
            raise EatkitError(f"{where}: unknown key '{key}' (allowed: {', '.join(table)})")
    for key, (kind, required) in table.items():
        if key not in data:
            if required:
                raise EatkitError(f"{where}: missing key '{key}'")
        elif not isinstance(data[key], kind):
            raise EatkitError(f"{where}: '{key}' must be {_EXPECTED[kind]}, got {_json_type(data[key])}")
        elif required and data[key] in ("", [], {}):
            raise EatkitError(f"{where}: '{key}' is empty")


def _check_id(value: str, what: str) -> None:
    if not _ID.fullmatch(value):
        raise EatkitError(
            f"{what} '{value}' must be letters, digits, '_', '.' or '-', starting with a letter or digit"
        )


def _strings(values: list[Any], what: str) -> tuple[str, ...]:
    for index, value in enumerate(values):
        if not isinstance(value, str) or not value:
            raise EatkitError(f"{what}[{index}] must be a non-empty string, got {_json_type(value)}")
    return tuple(values)


def _json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if value == "":
        return "an empty string"
    for kind, name in _JSON_TYPES:
        if isinstance(value, kind):
            return name
    return "null"
