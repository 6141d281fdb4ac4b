"""The analysis interface: how the runner hands a test to the statistics and gets records back.

A test's ``kind`` (``"eat"``, ``"sc-eat"``, ...) names an :class:`Analysis` (registered in
:data:`eatkit.kinds.KINDS`). The runner calls, for every selected test,

1. :meth:`Analysis.check` before any model is loaded (options that cannot apply, malformed tests),
2. :meth:`Analysis.embed` for all tests first (so a bad stimulus is reported before minutes of statistics),
3. :meth:`Analysis.precheck` on the embeddings of every test (e.g. an exact count that cannot run),
4. :meth:`Analysis.compute`: the statistics (:mod:`eatkit.stats` only), returning :class:`Outcome`\\ s,

then adds Benjamini-Hochberg q-values (over each kind's tests, or the run's: ``correction_family``) and writes the records.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    import numpy as np

from eatkit.errors import EatkitError
from eatkit.kinds import KindSpec, get_kind, param_owners
from eatkit.records import Record
from eatkit.sources.base import Embedded
from eatkit.stats.options import OBSERVED, OPTIONS, TestOptions, check_option
from eatkit.stimuli.types import AssociationTest, StimulusSet

Embed = Callable[[StimulusSet], Embedded]


@dataclass(frozen=True, kw_only=True)
class RunOptions(TestOptions):
    """The options of a run: the statistical options of every test (:class:`TestOptions`), the run seed,
    the bootstrap and ML-EAT pattern settings, ``validity`` (the "how far to trust this" panel of each EAT,
    ``docs/validity.md``), and ``params``, the parameters of the kinds of test
    (:class:`eatkit.kinds.Param`, e.g. the grounded tests' ``experiment``). :func:`options_by_test` checks
    them once against each test's kind; an analysis gets every parameter of its kind, validated, with its
    default where none was given, and trusts them.

    ``alternative=None`` (the default) leaves the alternative to the suite: its ``alternative`` (e.g.
    two-sided in ``american-white``, whose study reports effects of both signs), else ``"greater"``;
    the runner resolves it before any test runs, so every record and the manifest hold the one used.

    >>> RunOptions(seed=1, n_bootstrap=0).validated().n_bootstrap
    0
    >>> RunOptions().for_suite("two-sided").alternative, RunOptions(alternative="less").for_suite("two-sided").alternative
    ('two-sided', 'less')
    """

    alternative: str | None = None  # type: ignore[assignment]  # None: the suite's default
    seed: int | str | None = None  # None: the run layer's fixed default; "random": a fresh seed (recorded)
    correction_family: str = "kind"  # Benjamini-Hochberg over each kind's tests ("kind") or all ("run")
    n_bootstrap: int = 2000
    confidence_level: float = 0.95
    effect_threshold: float = 0.2
    alpha: float = 0.05
    validity: bool = False
    params: Mapping[str, Any] = field(default_factory=dict)

    def validated(self) -> "RunOptions":
        """Check every option before any model is loaded; one precise error per problem."""
        from eatkit.stats import resolve_rng

        stand_in = "greater" if self.alternative in (None, OBSERVED) else self.alternative
        base = TestOptions.validated(dataclasses.replace(self, alternative=stand_in))
        checked = {name: check_option(name, getattr(self, name))  # each by its one declaration
                   for name in ("seed", "correction_family", "n_bootstrap", "confidence_level", "alpha", "validity",
                             "effect_threshold")}
        resolve_rng(checked["seed"])
        return dataclasses.replace(self, **{**base.test_fields(), **checked, "alternative": self.alternative})

    def for_suite(self, default: str | None) -> "RunOptions":
        """These options with the alternative resolved: the one given, else the suite's ``default``, else
        ``"greater"``."""
        return dataclasses.replace(self, alternative=self.alternative or default or "greater")

    def warnings(self) -> list[str]:
        """Legal but useless option values (printed, and recorded in every record and the manifest): a
        Monte Carlo p-value whose floor 1/(N + 1) exceeds ``alpha`` (no test can be significant), a
        bootstrap CI with fewer than 2 / (1 - confidence_level) resamples (no resample in its tails), and any
        option or kind parameter outside the useful range its declaration states (:meth:`Param.warning`).

        >>> RunOptions(permutations=1, n_bootstrap=1).warnings()[0]
        'permutations=1: a sampled p-value is at least 1/(1 + 1) = 0.5, above alpha=0.05, so no test can be significant'
        >>> [w.split(" is outside")[0] for w in RunOptions(confidence_level=0.2, params={"iterations": 5}).warnings()]
        ['confidence_level=0.2', 'iterations=5']
        """
        declared = [(param, getattr(self, name)) for name, param in OPTIONS.items() if hasattr(self, name)]
        declared += [(param_owners(name)[0].param(name), value) for name, value in self.params.items()]
        out = [w for w in (param.warning(value) for param, value in declared) if w]
        return out + [w for w in (self._p_floor_warning(), self._tails_warning()) if w]

    def _p_floor_warning(self) -> str | None:
        """A sampled p-value's floor 1/(N + 1) above ``alpha``: no test can be significant."""
        n = self.permutations
        if isinstance(n, int) and self.p_method == "permutation" and 1 / (n + 1) > self.alpha:
            return (f"permutations={n}: a sampled p-value is at least 1/({n} + 1) = {1 / (n + 1):.3g}, above "
                    f"alpha={self.alpha:g}, so no test can be significant")
        return None

    def _tails_warning(self) -> str | None:
        """Fewer bootstrap resamples than 2 / (1 - confidence_level): no resample in the CI's tails."""
        tails = 2 / (1 - self.confidence_level)
        if 0 < self.n_bootstrap < tails:
            return (f"n_bootstrap={self.n_bootstrap}: fewer than 2/(1 - {self.confidence_level:g}) = {tails:.0f} "
                    f"resamples leave the {self.confidence_level:.0%} bootstrap CI no resample in its tails")
        return None

    def manifest(self) -> dict[str, Any]:
        """The options as the manifest records them."""
        return {f.name: (dict(getattr(self, f.name)) if f.name == "params" else getattr(self, f.name))
                for f in dataclasses.fields(self)}


def options_by_test(tests: Sequence[AssociationTest], options: RunOptions) -> dict[str, RunOptions]:
    """Each test's options, its kind's parameters resolved (:meth:`eatkit.kinds.KindSpec.check` and
    :meth:`~eatkit.kinds.KindSpec.complete`: the run's ``params`` over the test's suite ``params`` over the
    defaults): the one place where parameters are validated. A run parameter that no test of the run takes
    is an error naming the kinds that take it.

    >>> t = AssociationTest("g", "G", "geometry", ())
    >>> options_by_test([t], RunOptions(params={"fold": "pair"}))["g"].params["iterations"]
    1000
    >>> options_by_test([t], RunOptions(params={"mask": "vision"}))
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: --mask applies to grounded tests only
    """
    specs = {test.kind: get_kind(test.kind) for test in tests}
    given = dict(options.params)
    for name in given:
        if not any(name in (p.name for p in spec.params) for spec in specs.values()):
            owners = param_owners(name)
            raise EatkitError(f"{owners[0].param(name).option} applies to "
                              f"{', '.join(spec.name for spec in owners)} tests only")
    checked = {kind: spec.check({k: v for k, v in given.items() if k in {p.name for p in spec.params}})
               for kind, spec in specs.items()}
    out = {}
    for test in tests:
        try:
            params = specs[test.kind].complete(checked[test.kind], dict(test.params))
        except EatkitError as err:
            raise EatkitError(f"test '{test.id}': {err}") from None
        out[test.id] = dataclasses.replace(options, params=params)
    return out


def checked_options(tests: Sequence[AssociationTest], options: RunOptions) -> RunOptions:
    """``options`` with its ``params`` checked against the kinds of ``tests`` (:func:`options_by_test`) and
    converted (e.g. ``"10"`` from a command line to ``10``): what the manifest records.

    >>> t = AssociationTest("g", "G", "geometry", ())
    >>> checked_options([t], RunOptions(params={"iterations": "10"})).params
    {'iterations': 10}
    """
    by_test = options_by_test(tests, options)
    return dataclasses.replace(options, params={k: v for o in by_test.values() for k, v in o.params.items()
                                                if k in options.params})


def check_inputs(spec: KindSpec, sets: Mapping[str, Any]) -> None:
    """The one place a kind's declared degeneracy rules on sets of vectors (``spec.degeneracy.sets``,
    :class:`eatkit.kinds.Rules`) run on a test's sets, by role, before its statistics: the runner calls it for
    every test of every kind, :mod:`eatkit.metrics` for every call of a family's member (a member reads its
    roles only: ``Member.reads``). A set is an :class:`~eatkit.sources.base.Embedded` or an array of vectors;
    what is neither (answers, prompts) is left to the kind's statistics and their ``values`` rules.

    >>> import numpy as np; from eatkit.kinds import get_kind
    >>> X = np.eye(3)[:2]; check_inputs(get_kind("eat"), {"X": X, "Y": X, "A": np.eye(3)[1:], "B": np.eye(3)[::2]})
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: sets 'X' and 'Y' hold the same vectors: the test would compare a set with itself, and its effect size and p-value would mean nothing
    """
    from eatkit.stats import check_sets

    rules = spec.degeneracy
    if rules is None or not rules.sets:
        return
    unread = set("XYAB") - set(spec.member.reads) if spec.member is not None else set()
    arrays = {role: _vectors(value) for role, value in sets.items() if role not in unread}
    arrays = {role: v for role, v in arrays.items() if v is not None}
    if arrays:
        check_sets(1, rules=rules.sets, compared=rules.pairs(arrays), **arrays)


def _vectors(value: Any) -> np.ndarray | None:
    """A set's vectors as a float ``(n, d)`` array, or None for what is not a set of vectors."""
    import numpy as np

    try:
        arr = np.asarray(getattr(value, "vectors", value))
    except (TypeError, ValueError):
        return None
    return arr.astype(float) if arr.ndim == 2 and arr.dtype.kind in "biuf" else None


@dataclass(frozen=True)
class Outcome:
    """What an analysis returns for a test: its record, the arrays saved beside it in ``similarities.npz``
    (as ``"<test>/<name>"``), and the statistics result object for Python users."""

    record: Record
    arrays: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    result: Any = field(default=None, repr=False)


class Analysis(ABC):
    """One kind of test (see the module docstring for the order of the calls)."""

    #: the test kind this analysis runs (a key of eatkit.kinds.KINDS)
    kind: ClassVar[str]
    #: the record type of its results
    record_type: ClassVar[type[Record]]
    #: whether it takes ``alternative="observed"`` (the one-sided p on the side of the observed effect)
    observed_alternative: ClassVar[bool] = False
    #: whether its records get the "how far to trust this" panel with ``RunOptions.validity``
    takes_validity: ClassVar[bool] = False

    def check(self, test: AssociationTest, options: RunOptions) -> None:
        """Refuse what the parameters' types and ranges cannot say (e.g. two parameters that contradict each
        other, a malformed test); ``options.params`` are already validated (:func:`options_by_test`)."""

    def stimulus_sets(self, test: AssociationTest, options: RunOptions) -> dict[str, StimulusSet]:
        """The sets :meth:`embed` embeds, by role (the runner embeds those of all tests in one stream)."""
        return dict(test.sets())

    def embed(self, test: AssociationTest, embed: Embed, options: RunOptions) -> dict[str, Embedded]:
        """Embed every set of :meth:`stimulus_sets` (``embed`` memoises sets shared by several tests)."""
        return {role: embed(stimuli) for role, stimuli in self.stimulus_sets(test, options).items()}

    def precheck(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions) -> None:
        """Refuse, before any test is computed, what cannot be computed at these sizes."""

    @abstractmethod
    def compute(self, test: AssociationTest, embedded: dict[str, Embedded], options: RunOptions, *,
                suite: str, seed: int) -> list[Outcome]:
        """The statistics of one test: one or more outcomes."""

    def files(self, outcomes: Sequence[Outcome]) -> dict[str, bytes]:
        """Files this kind adds to the run folder, from the run's outcomes of this kind: relative path ->
        content (e.g. ``captions.csv``); written with the run by :func:`eatkit.run.folder.write_run`."""
        return {}
