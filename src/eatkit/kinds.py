"""The kinds of test: one :class:`KindSpec` per kind, in one registry (:data:`KINDS`).

A kind's spec says everything the rest of eatkit needs to know about it: its roles (the stimulus sets a
suite test of that kind names), its typed parameters (:class:`Param`: name, type, default, choices or
range, help), its analysis (``"module:Class"``, whose ``record_type`` is the kind's record type), and how
its records are shown (:class:`Presentation`, or a renderer ``"module:Class"`` of the report layer). From
the spec come the suite schema's roles check, the command-line flags of ``eatkit run`` and ``eatkit
probe``, the validation of every parameter (:meth:`KindSpec.resolve`, the one place, at the boundary) and
the report's dispatch.

The registry maps a kind's name to ``"module:object"``, the spec, imported only when the kind is used (as
lm-evaluation-harness registers its tasks), so importing eatkit stays light. A spec is plain data: it
names its analysis and renderer by string, so this module imports nothing above eatkit's base modules
and any layer may read a spec. Adding a kind is its spec (eatkit's own kinds: in :mod:`eatkit.specs`),
one line in :data:`KINDS` (or :func:`register_kind` from outside eatkit) and its analysis module; see
``docs/architecture.md``.

>>> spec = get_kind("grounded")
>>> spec.roles[:2], spec.param("experiment").choices
(('X', 'Y'), (1, 2, 3, 'all'))
>>> spec.resolve({"experiment": "5"})
Traceback (most recent call last):
...
eatkit.errors.EatkitError: experiment must be one of 1, 2, 3, all, got '5'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from eatkit.errors import EatkitError
from eatkit.io import load_object
from eatkit.params import Param

__all__ = ["Param"]  # and the names below (Param: declared in eatkit.params, the declaration primitive)

#: kind -> "module:object" of its :class:`KindSpec` (one line per kind; imported when the kind is used)
KINDS: dict[str, str | KindSpec] = {
    "eat": "eatkit.specs:EAT",
    "sc-eat": "eatkit.specs:SC_EAT",
    "grounded": "eatkit.specs:GROUNDED",
    "ranking": "eatkit.specs:RANKING",
    "vqa": "eatkit.specs:VQA",
    "caption": "eatkit.specs:CAPTION",
    "generation": "eatkit.specs:GENERATION",
    "geometry": "eatkit.specs:GEOMETRY",
    "rnd": "eatkit.specs:RND",
    "ect": "eatkit.specs:ECT",
    "ripa": "eatkit.specs:RIPA",
    "mac": "eatkit.specs:MAC",
    "rnsb": "eatkit.specs:RNSB",
    "direct-bias": "eatkit.specs:DIRECT_BIAS",
    "clustering": "eatkit.specs:CLUSTERING",
    "retrieval": "eatkit.specs:RETRIEVAL",
    "t2iat": "eatkit.specs:T2IAT",
    "depiction": "eatkit.specs:DEPICTION",
    "crows-pairs": "eatkit.specs:CROWS_PAIRS",
    "stereoset": "eatkit.specs:STEREOSET",
    "llm-iat": "eatkit.specs:LLM_IAT",
    "bbq": "eatkit.specs:BBQ",
    "answers": "eatkit.specs:ANSWERS",
    "same": "eatkit.specs:SAME",
    "generalized-weat": "eatkit.specs:GENERALIZED_WEAT",
    "ceat": "eatkit.specs:CEAT",
    "seed-sets": "eatkit.specs:SEED_SETS",
}

#: role names of kinds that take any roles (``KindSpec.roles`` None): a capital, then letters, digits, _
ROLE_NAME = re.compile(r"[A-Z][A-Za-z0-9_]*")


@dataclass(frozen=True)
class RoleGroup:
    """A group of roles of one meaning whose number a suite test chooses: ``<prefix>1``, ``<prefix>2``, ...
    (numbered from 1 without gaps), at least ``least`` and at most ``most`` (``None``: no limit); e.g. the
    generalised WEAT's n target sets and m attribute sets, ``roles=(RoleGroup("T", 2), RoleGroup("A", 2))``.

    >>> RoleGroup("T", 2).match(["A1", "T2", "T1", "title"])
    ('T1', 'T2')
    >>> RoleGroup("T", 3).match(["T1", "T2"])
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: needs at least 3 sets T1, T2, ... (got T1, T2)
    """

    prefix: str
    least: int = 1
    most: int | None = None
    help: str = ""

    @property
    def pattern(self) -> str:
        """The regular expression of the group's role names."""
        return f"^{re.escape(self.prefix)}[1-9][0-9]*$"

    def match(self, keys: Iterable[str]) -> tuple[str, ...]:
        """The roles of this group among ``keys``, in order, checked: numbered 1..n, ``least <= n <= most``."""
        found = sorted((k for k in keys if re.fullmatch(self.pattern, k)), key=lambda k: int(k[len(self.prefix):]))
        expected = [f"{self.prefix}{i}" for i in range(1, len(found) + 1)]
        got = ", ".join(found) or "none"
        if found != expected:
            raise EatkitError(f"sets {self.prefix}1, {self.prefix}2, ... must be numbered from 1 without gaps "
                              f"(got {got})")
        if len(found) < self.least or (self.most is not None and len(found) > self.most):
            bound = f"at least {self.least}" if len(found) < self.least else f"at most {self.most}"
            raise EatkitError(f"needs {bound} sets {self.prefix}1, {self.prefix}2, ... (got {got})")
        return tuple(found)

    def __str__(self) -> str:
        return f"{self.prefix}1..{self.prefix}n"


@dataclass(frozen=True)
class Rules:
    """The degeneracy rules that apply to the inputs of a kind's tests (names of
    :data:`eatkit.stats.degeneracy.RULES`), declared with the kind (a family's: with the family, for every
    member). ``sets``: rules on the vectors of the test's roles, applied before its analysis computes by
    :func:`eatkit.analyses.base.check_inputs`, the one place (the runner for every kind, :mod:`eatkit.metrics`
    for a family's members); ``compared``: the roles compared with each other, each a pair of role names or a
    role group's prefix (every pair of its sets ``A1``, ``A2``, ...); ``values``: rules the kind's statistics
    apply to the values they compute or read (an empty group, every pair tied, sums leaving float64);
    ``note``: why a rule one might expect does not apply.

    >>> Rules(("coincide",), compared=(("X", "Y"), ("A",))).pairs(["X", "Y", "A1", "A2", "A3"])
    [('X', 'Y'), ('A1', 'A2'), ('A1', 'A3'), ('A2', 'A3')]
    """

    sets: tuple[str, ...] = ()
    compared: tuple[tuple[str, ...], ...] = (("X", "Y"), ("A", "B"))
    values: tuple[str, ...] = ()
    note: str = ""

    def pairs(self, names: Iterable[str]) -> list[tuple[str, str]]:
        """The pairs of the sets ``names`` that the test compares (:attr:`compared` expanded)."""
        names = list(names)
        out: list[tuple[str, str]] = []
        for group in self.compared:
            members = group if len(group) > 1 else [n for n in names if re.fullmatch(
                f"{re.escape(group[0])}[1-9][0-9]*", n)]
            out += [(a, b) for i, a in enumerate(members) for b in members[i + 1:] if a in names and b in names]
        return out


#: the rules of a test whose roles are sets of vectors compared two by two (the EAT's X, Y and A, B)
VECTOR_SETS = Rules(("zero-variance", "coincide", "overlap", "targets-attributes", "numeric-range"))


@dataclass(frozen=True)
class Presentation:
    """How a kind's records are shown when it has no renderer of its own: ``columns`` are the record
    fields of its table (empty: every field), ``headline`` the field the multi-run heatmap shows (``None``:
    the kind is not in it), ``formats`` a format spec per field (e.g. ``{"effect_size": ".2f"}``),
    ``heading`` the table's heading and ``legend`` a line under it."""

    columns: tuple[str, ...] = ()
    headline: str | None = None
    formats: Mapping[str, str] = field(default_factory=dict)
    heading: str = ""
    legend: str = ""
    plots: tuple["Plot", ...] = ()


@dataclass(frozen=True)
class Plot:
    """A figure of a kind's records (the report draws it from the records, computing nothing): a point per
    record at its ``value`` field (a field holding ``{key: value}`` gives a point per key), with its
    interval (``interval``: the one field holding ``[low, high]``, or ``{key: [low, high]}``), labelled by
    the ``label`` fields, a dashed line at ``reference`` (no effect), the y axis titled ``axis``; ``panels``: a field whose values each get a panel of their own (values of different
    scales, as the metrics)."""

    value: str
    interval: tuple[str, ...] = ()
    label: tuple[str, ...] = ("test",)
    reference: float | None = 0.0
    axis: str = ""
    panels: str | None = None


@dataclass(frozen=True)
class KindSpec:
    """Everything eatkit knows about one kind of test (module docstring).

    ``roles``: the role names, in order, of a suite test of this kind, each a name or a
    :class:`RoleGroup` (n sets of one meaning, e.g. n target sets), or ``None``: any names starting with
    a capital, at least two (e.g. the classes of a geometry test or the groups of a probe); ``params``:
    its parameters; ``analysis``: ``"module:Class"`` of its :class:`eatkit.analyses.base.Analysis`;
    ``renderer``: ``"module:Class"`` of a renderer of the report layer (``None``: the generic one, from
    ``presentation``); ``probe``: the ``eatkit probe`` sub-command that runs it (``None``: suites run it);
    ``title``: a one-line description (a probe's test title); ``degeneracy``: the degeneracy rules that apply
    to its inputs (:class:`Rules`; ``tests/test_degeneracy.py`` fails for a kind without).
    """

    name: str
    roles: tuple[str | RoleGroup, ...] | None
    analysis: str
    params: tuple[Param, ...] = ()
    renderer: str | None = None
    presentation: Presentation = field(default_factory=Presentation)
    probe: str | None = None
    title: str = ""
    member: Member | None = None
    ranking: Ranking | None = None
    degeneracy: Rules | None = None

    @property
    def api_name(self) -> str:
        """The kind's name in Python (the one rule: dashes become underscores): its public API function
        and its statistics function, e.g. ``direct-bias`` -> ``direct_bias``."""
        return api_name(self.name)

    def test_roles(self, keys: Iterable[str], reserved: Iterable[str] = ()) -> tuple[str, ...]:
        """The roles of a suite test of this kind whose keys are ``keys`` (``reserved``: keys that are not
        roles): the declared names, each group's members, or (roles ``None``) every key that looks like a
        role; a one-line error when a group's sets are miscounted or fewer than two sets are given.

        >>> KindSpec("k", ("X", RoleGroup("A", 2)), "m:C").test_roles(["A2", "X", "A1", "id"])
        ('X', 'A1', 'A2')
        """
        keys = [k for k in keys if k not in set(reserved)]
        if self.roles is None:
            roles = tuple(k for k in keys if ROLE_NAME.fullmatch(k))
            if len(roles) < 2:
                raise EatkitError(f"a {self.name} test needs at least two sets (keys starting with a capital)")
            return roles
        found: list[str] = []
        for role in self.roles:
            if isinstance(role, RoleGroup):
                try:
                    found += role.match(keys)
                except EatkitError as e:
                    raise EatkitError(f"a {self.name} test {e}") from None
            else:
                found.append(role)
        return tuple(found)

    def param(self, name: str) -> Param:
        """The parameter ``name``."""
        for p in self.params:
            if p.name == name:
                return p
        raise EatkitError(f"{self.name} tests have no parameter {name!r}")

    def check(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters ``given`` (run options), each checked and converted; a name the kind does not
        take is an error."""
        names = [p.name for p in self.params]
        unknown = sorted(set(given) - set(names))
        if unknown:
            takes = f"(its options: {', '.join(names)})" if names else "(it takes none)"
            raise EatkitError(f"{self.name} tests do not take the option {unknown[0]!r} {takes}")
        return {p.name: p.convert(given[p.name]) for p in self.params if p.name in given}

    def complete(self, checked: Mapping[str, Any], test_params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Every parameter of the kind: ``checked`` (from :meth:`check`) over ``test_params`` (a suite test's
        ``params``, checked here) over the defaults."""
        suite = test_params or {}
        unknown = sorted(set(suite) - {p.name for p in self.params})
        if unknown:
            known = ", ".join(p.name for p in self.params) or "none"
            raise EatkitError(f"params: {self.name} tests take no parameter {unknown[0]!r} (known: {known})")
        return {p.name: checked[p.name] if p.name in checked else
                p.convert(suite[p.name]) if p.name in suite else p.default for p in self.params}

    def resolve(self, given: Mapping[str, Any], test_params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """:meth:`check` then :meth:`complete`: every parameter of the kind, validated."""
        return self.complete(self.check(given), test_params)

    def load_analysis(self) -> Any:
        """An instance of the kind's analysis (a family's analysis is told which member it runs)."""
        analysis = load_object(self.analysis)
        return analysis.for_member(self) if self.member is not None else analysis()


def api_name(kind: str) -> str:
    """A kind's name in Python: dashes become underscores (the one rule between the two spellings).

    >>> api_name("direct-bias")
    'direct_bias'
    """
    return kind.replace("-", "_")


@dataclass(frozen=True)
class Ranking:
    """How a kind's records rank models (a sweep's ``rankings.csv``, WEFE's rankings): the record field
    ``headline`` of each record, turned into a bias magnitude, its distance from the kind's ``chance`` level
    (the value of no bias: 0 for the EAT's d, 1 for ECT's coherence, 0.5 for a clustering accuracy;
    :func:`eatkit.stats.metrics.bias_magnitude`), aggregated over all the records of a model's tests
    (``aggregation``, a numpy reduction: every prompt group and attribute of a depiction test, every metric
    record) and shown as the column ``measure``; ``higher_is_better`` says which way the raw value points
    (``None``: neither, e.g. a signed value whose distance from 0 is the bias), shown by ``eatkit list kinds``.
    ``per`` names the record fields that tell a test's records apart where each should rank as a test of its own
    (BBQ: ``category``, ``context``: each combination counts as one test of the measure, ``<test>[<values>]``).

    >>> Ranking("value", "ect", chance=1.0).chance
    1.0
    """

    headline: str
    measure: str
    chance: float = 0.0
    higher_is_better: bool | None = None
    aggregation: str = "mean"
    per: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.chance, bool) or not isinstance(self.chance, (int, float)):
            raise EatkitError(f"Ranking {self.measure!r}: chance is the value of no bias, a number (0, 0.5, 1, ...), "
                              f"got {self.chance!r}")


@dataclass(frozen=True)
class Family:
    """What the kinds of one family share, declared once (as lm-evaluation-harness attaches a metric's
    direction and aggregation to its registration): the roles of their suite tests, one analysis
    (``"module:Class"`` with a ``for_member(spec)`` constructor) and record base for all members, one
    renderer and presentation (its ``headline`` is the field that models are ranked by), and the name of
    a member (``noun``: what ``--metrics`` and error messages call it). A member is its statistics function
    plus one :meth:`member` declaration; :meth:`members` lists those registered in :data:`KINDS`, from
    which the command line, the report's legend, the sweep's rankings, the JSON Schemas and the public API
    derive (``docs/architecture.md``, "How to add"); ``degeneracy``: the degeneracy rules on every member's
    inputs (:class:`Rules`), applied where a member runs, so a new member has them without a line of its own.

    >>> from eatkit.specs import METRICS
    >>> METRICS.names()[:2], len(METRICS.names()) == len(METRICS.members())
    (('rnd', 'ect'), True)
    >>> METRICS.parse("all") == METRICS.names(), METRICS.parse("mac,rnd")
    (True, ('mac', 'rnd'))
    """

    name: str
    noun: str
    roles: tuple[str | RoleGroup, ...] | None
    analysis: str
    renderer: str | None = None
    presentation: Presentation = field(default_factory=Presentation)
    title: str = ""
    degeneracy: Rules | None = None

    def member(self, name: str, stats: str, *, title: str, params: tuple[Param, ...] = (),
               template: tuple[int | None, int | None] = (2, 1), null: str = "", chance: float = 0.0,
               higher_is_better: bool | None = None, fixed: Mapping[str, Any] | None = None,
               label: str | None = None) -> KindSpec:
        """The spec of the member ``name`` (a kind): ``stats`` (``"module:function"``) computes it;
        ``template`` is its numbers of target and attribute sets (WEFE's query template; ``None``: any
        number, passed as a list; attributes ``0``: the member reads the targets only, and its function
        takes no attribute set); ``null`` what its permutation null re-arranges (``""``: no p; the one
        place it is written: records, the API's results and the report's legend take it from here);
        ``chance`` its value of no bias and ``higher_is_better`` which way its value points
        (:class:`Ranking`: the magnitude is the distance from ``chance``); ``fixed`` options the member
        always passes its function; ``label`` its name in tables (default: upper-case)."""
        traits = Member(self, stats, template, null, dict(fixed or {}), label or name.upper())
        ranking = Ranking(self.presentation.headline or "", api_name(name), float(chance), higher_is_better)
        return KindSpec(name, self.roles, self.analysis, params=params, renderer=self.renderer,
                        presentation=self.presentation, title=title, member=traits, ranking=ranking,
                        degeneracy=self.degeneracy)

    def members(self) -> list[KindSpec]:
        """The registered members, in registry order."""
        return [spec for spec in map(get_kind, KINDS) if spec.member is not None and spec.member.family == self]

    def names(self) -> tuple[str, ...]:
        """The kind names of the registered members."""
        return tuple(spec.name for spec in self.members())

    def parse(self, text: str) -> tuple[str, ...]:
        """The members named in a comma-separated list (``all``: every one), or a one-line error."""
        known = self.names()
        names = known if text.strip() == "all" else tuple(n.strip() for n in text.split(",") if n.strip())
        unknown = [n for n in names if n not in known]
        if unknown or not names:
            raise EatkitError(f"unknown {self.noun}(s) {', '.join(unknown) or repr(text)} "
                              f"(known: {', '.join(known)}, all)")
        return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class Member:
    """What one member of a :class:`Family` declares beside its spec (see :meth:`Family.member`)."""

    family: Family
    stats: str
    template: tuple[int | None, int | None]
    null: str
    fixed: Mapping[str, Any]
    label: str

    @property
    def reads(self) -> tuple[str, ...]:
        """The roles the member reads: the targets X, Y, and the attributes A, B unless its template takes
        none (``(2, 0)``: targets only).

        >>> from eatkit.kinds import get_kind
        >>> get_kind("rnd").member.reads
        ('X', 'Y', 'A', 'B')
        """
        return ("X", "Y") if self.template[1] == 0 else ("X", "Y", "A", "B")

    def arguments(self, targets: list[Any], attributes: list[Any]) -> list[Any]:
        """The positional arguments of the statistics function: each group of sets unpacked when the
        template fixes its number, else passed as one list (one rule for the runner and the API); no
        attribute set when the template takes none."""
        out: list[Any] = []
        for sets, count in ((targets, self.template[0]), (attributes, self.template[1])):
            if count != 0:
                out += list(sets) if count is not None else [list(sets)]
        return out


def ranked_kinds() -> list[KindSpec]:
    """The registered kinds whose records rank models (a :class:`Ranking`), in registry order."""
    return [spec for spec in map(get_kind, KINDS) if spec.ranking is not None]


def register_kind(name: str, spec: str | KindSpec) -> None:
    """Register a kind (``spec``: its :class:`KindSpec` or ``"module:object"`` naming it): the one line
    that adds a kind from outside eatkit. Registering a known name replaces it.

    >>> register_kind("eat", "eatkit.specs:EAT")
    """
    KINDS[name] = spec
    get_kind.cache_clear()


@cache
def get_kind(name: str) -> KindSpec:
    """The spec of a kind; an unknown kind is a one-line error listing the known ones."""
    if not isinstance(name, str) or name not in KINDS:
        raise EatkitError(f"unknown test kind {name!r} (known: {', '.join(KINDS)})")
    found = KINDS[name]
    spec = load_object(found) if isinstance(found, str) else found
    if not isinstance(spec, KindSpec) or spec.name != name:
        raise EatkitError(f"the registry entry of kind {name!r} ({found!r:.60}) is not its KindSpec")
    return spec


def param_owners(name: str) -> list[KindSpec]:
    """The kinds that take the parameter ``name``; none is a one-line error.

    >>> [spec.name for spec in param_owners("prompt")]
    ['ranking', 'generation']
    """
    owners = [spec for spec in map(get_kind, KINDS) if any(p.name == name for p in spec.params)]
    if not owners:
        raise EatkitError(f"no kind of test takes the option {name!r}")
    return owners


def check_params(given: Mapping[str, Any]) -> None:
    """Refuse, before any suite is loaded, a parameter that no kind takes or a value that the first kind
    taking it refuses (e.g. a sweep file's settings; the runner checks them again against its tests' kinds).

    >>> check_params({"iterations": 0})
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: iterations must be an integer in [1, 1000000], got 0
    """
    if not isinstance(given, Mapping):
        raise EatkitError(f"params must map parameter names to values, got {given!r:.60}")
    for name, value in given.items():
        param_owners(name)[0].check({name: value})


def probe_kinds() -> dict[str, KindSpec]:
    """The kinds that ``eatkit probe`` runs, by sub-command."""
    specs = [get_kind(name) for name in KINDS]
    return {spec.probe: spec for spec in specs if spec.probe}
