"""The statistical options of every EAT-family test, declared and validated in one place.

:class:`TestOptions` is the one options model: the statistics functions (:func:`~eatkit.stats.eat`,
:func:`~eatkit.stats.sc_eat`, :func:`~eatkit.stats.ml_eat`, ...) validate their keyword options through
it, the runner's :class:`~eatkit.run.runner.RunOptions` extends it, and the command line takes its choices
and defaults from :data:`CHOICES` and the field defaults (as scipy's ``_permutation_test_iv`` checks
every option of ``permutation_test`` in one function).

The SD's delta degrees of freedom (``ddof``) follow one rule: the Caliskan SD (of all values of both
groups) takes any ``ddof >= 0``; the pooled SD and Welch's t-test take ``ddof`` 0 or 1, the variance
of each group being computed with that ``ddof`` (``ddof=0`` is the population-SD convention of the
"American == White" seed's authors; 1 is the sample SD). ``ddof`` is always recorded.
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass
from typing import Any

from eatkit.errors import EatkitError
from eatkit.params import CONFIDENCE_LEVEL, Param

ALTERNATIVES: tuple[str, ...] = ("greater", "less", "two-sided")
#: an alternative that :func:`~eatkit.stats.ml_eat` (and the runner's eat and sc-eat tests) also take: the
#: one-sided tail on the side of the observed effect size (ML-EAT seed: its starred negative Level-1 values)
OBSERVED = "observed"
SD_METHODS: tuple[str, ...] = ("caliskan", "pooled")
P_METHODS: tuple[str, ...] = ("permutation", "welch")
#: the allowed values of each option with a fixed set of choices
#: the families of the Benjamini-Hochberg correction of a run: the tests of each kind apart (EATs among EATs,
#: each metric among its own), or all of the run's tested records
CORRECTION_FAMILIES: tuple[str, ...] = ("kind", "run")
CHOICES: dict[str, tuple[str, ...]] = {"alternative": ALTERNATIVES, "sd": SD_METHODS, "p_method": P_METHODS,
                                       "correction_family": CORRECTION_FAMILIES}


#: the options of every run and of the statistics functions that take them, each declared once with its
#: range and its useful range (:class:`eatkit.params.Param`): the one place each is range-checked
#: (:func:`check_option`; the runner's ``RunOptions``, the command line and the statistics call it)
OPTIONS: dict[str, Param] = {p.name: p for p in (
    Param("permutations", int, "auto", words=("auto", "exact"), low=1, useful=(None, None),
          help="auto, exact, or a number of random draws (its usefulness against alpha: RunOptions.warnings)"),
    Param("alternative", choices=ALTERNATIVES, default="greater", help="alternative hypothesis of the p-values"),
    Param("sd", choices=SD_METHODS, default="caliskan", help="the SD of the effect size"),
    Param("p_method", choices=P_METHODS, default="permutation", help="how the p-value is computed"),
    Param("ddof", int, 1, low=0, high=10**6, useful=(0, 1), help="delta degrees of freedom of the SD"),
    Param("n_bootstrap", int, 2000, low=0, useful=(None, None),
          help="bootstrap resamples (0: none; too few for the CI's tails: RunOptions.warnings)"),
    CONFIDENCE_LEVEL,
    Param("alpha", float, 0.05, low=0, high=1, low_open=True, high_open=True, useful=(None, 0.2),
          help="significance level"),
    Param("effect_threshold", float, 0.2, low=0, high=1e6, useful=(None, 2.0), help="|d| below which a pattern is 'none'"),
    Param("seed", int, None, words=("random",), low=0, high=2**53 - 1, useful=(None, None),
          help="seed of the random draws (default 0; random: a fresh one, recorded; below 2^53, so that every "
          "tool reads it exactly from a file)"),
    Param("correction_family", choices=CORRECTION_FAMILIES, default="kind",
          help="the Benjamini-Hochberg family: each kind's tests (default) or the run's"),
    Param("validity", bool, False, help="the 'how far to trust this' panel of each EAT"),
)}


def check_option(name: str, value: Any) -> Any:
    """``value`` of the run option ``name`` checked against its declaration (:data:`OPTIONS`) and converted
    (a command line's text too), or the one-line error of that declaration.

    >>> check_option("confidence_level", 1.0)
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: confidence_level must be a number in (0, 1), got 1.0
    """
    if isinstance(value, numbers.Number) and hasattr(value, "item"):
        value = value.item()  # a numpy scalar
    return OPTIONS[name].convert(value)


def check_choice(name: str, value: Any, choices: tuple[str, ...] | None = None) -> str:
    """``value`` if it is one of ``choices`` (default ``CHOICES[name]``), else a one-line error listing them.

    >>> check_choice("sd", "pooled")
    'pooled'
    >>> check_choice("distance", "l1", ("euclidean", "cos"))
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: distance must be one of euclidean, cos, got 'l1'
    """
    allowed = CHOICES[name] if choices is None else choices
    if value not in allowed:
        raise EatkitError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def check_permutations(permutations: Any) -> str | int:
    """Validate ``permutations``: ``"auto"``, ``"exact"`` or a positive number of random draws.

    >>> check_permutations("exact"), check_permutations(1000)
    ('exact', 1000)
    """
    if isinstance(permutations, numbers.Integral) and not isinstance(permutations, bool):
        permutations = int(permutations)  # a numpy integer
    return check_option("permutations", permutations)


def check_ddof(ddof: Any) -> int:
    """A non-negative integer ``ddof``.

    >>> check_ddof(0)
    0
    """
    if isinstance(ddof, numbers.Integral) and not isinstance(ddof, bool):
        ddof = int(ddof)  # a numpy integer
    return check_option("ddof", ddof)


@dataclass(frozen=True, kw_only=True)
class TestOptions:
    """How a two-group EAT-family test is computed (see the module docstring for the ``ddof`` rule).

    >>> TestOptions(sd="pooled", ddof=0, p_method="welch").validated().ddof
    0
    >>> TestOptions(sd="pooled", ddof=2).validated()
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: ddof must be 0 or 1 with the pooled SD, got 2
    """

    __test__ = False  # not a pytest test class

    permutations: str | int = "auto"
    alternative: str = "greater"
    ddof: int = 1
    sd: str = "caliskan"
    p_method: str = "permutation"

    def validated(self) -> "TestOptions":
        """These options, checked (one precise error per problem) and normalised."""
        for name in ("alternative", "sd", "p_method"):
            check_option(name, getattr(self, name))
        ddof = check_ddof(self.ddof)
        for uses, what in ((self.sd == "pooled", "the pooled SD"), (self.p_method == "welch", "Welch's t-test")):
            if uses and ddof not in (0, 1):
                raise EatkitError(f"ddof must be 0 or 1 with {what}, got {ddof}")
        if self.p_method == "welch" and self.permutations != "auto":
            raise EatkitError(f"permutations={self.permutations!r} cannot apply with p_method 'welch': Welch's "
                              "t-test draws no permutations (leave permutations at 'auto')")
        return dataclasses.replace(self, permutations=check_permutations(self.permutations), ddof=ddof)

    def test_fields(self) -> dict[str, Any]:
        """The fields of :class:`TestOptions` (also of a subclass instance), as keyword arguments."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(TestOptions)}
