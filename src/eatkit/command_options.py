"""The numeric options of eatkit's commands that are neither run statistics options
(:data:`eatkit.stats.options.OPTIONS`) nor kind parameters, each declared once as a
:class:`eatkit.kinds.Param` with its legal range (an error) and its useful range (a warning, printed once
and recorded where the command records its settings): the command line takes its flags, help and checks
from here (:func:`eatkit.cli.add_declared`) and the Python API its checks and warnings.

Bounds that depend on the machine (e.g. ``os.cpu_count()``) are not declared: a useful range is a
constant, so that the same command records the same warnings on every machine. Worker processes are
useful up to 64 (eatkit's own default on a GPU stops at 32; more processes than that decode images
faster on no machine eatkit targets, and each holds a copy of the model's preprocessing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from eatkit.params import CONFIDENCE_LEVEL, Param

#: batch sizes above this rarely run faster and risk running out of memory on a GPU
_BATCH = dict(low=1, high=65_536, useful=(None, 1024))
#: worker processes: a fixed bound (module docstring)
_WORKERS = dict(low=0, high=1024, useful=(None, 64))  # each a process: 1024 would exhaust any host

#: seeds are recorded as JSON numbers: below 2^53, every tool reads them exactly (as the run option ``seed``)
_SEED = dict(low=0, high=2**53 - 1, useful=(None, None))

#: ``{command: {name: Param}}``: the declared numeric options of each command
COMMAND_OPTIONS: dict[str, dict[str, Param]] = {command: {p.name: p for p in params} for command, params in {
    "run": (
        Param("layer", int, low=-10_000, high=10_000, help="model layer to read (model-specific default; negative: "
              "from the last)", useful=(None, None)),  # every layer a model has is useful; the model refuses one it lacks
        Param("batch_size", int, help="inference batch size (default 32 on the CPU, 256 on a GPU)", **_BATCH),
        Param("workers", int, help="image-decoding worker processes (default 2 on the CPU; on a GPU the usable "
              "cores but one, at most 32; 0: inline)", **_WORKERS),
    ),
    "probe": (
        Param("batch_size", int, help="inference batch size", **_BATCH),
        Param("max_new_tokens", int, low=1, high=32_768, useful=(None, 512),
              help="longest answer or caption in new tokens (replaces --max-length)"),
        Param("max_length", int, low=1, high=32_768, useful=(None, 512),
              help="longest sequence in tokens, a prompt's included (default: VQA 10, captions 20)"),
        Param("min_length", int, low=0, high=32_768, useful=(None, 512),
              help="shortest sequence in tokens (default: VQA 1, captions 5)"),
        Param("num_beams", int, low=1, high=100, useful=(None, 20), help="VQA beam width (default 3; 1: greedy)"),
        # k above the vocabulary restricts nothing; a thousand tokens already leaves top-p alone in effect
        Param("top_k", int, low=0, high=10**6, useful=(None, 1000),
              help="captions: sample among the k most likely tokens too (default 50; 0: top-p alone)"),
        # below 1 rewards repetition; above 2 garbles the text (Keskar et al. 2019 use 1.2)
        Param("repetition_penalty", float, low=0, low_open=True, high=100, useful=(1, 2),
              help="captions: repetition penalty (default 1.1)"),
        replace(CONFIDENCE_LEVEL, help="of the Wilson intervals"),
    ),
    "finetune": (
        Param("val_fraction", float, 0.2, low=0, high=1, low_open=True, high_open=True, useful=(0.05, 0.5),
              help="without --val-instances: share of the training images held out"),
        Param("epochs", int, 15, low=1, high=100_000, useful=(None, 1000), help="default 15 (thesis Table 3)"),
        Param("batch_size", int, 32, help="training batch size (default 32; the thesis gives none)", **_BATCH),
        Param("momentum", float, 0.9, low=0, high=1, high_open=True, useful=(None, 0.99), help="SGD momentum"),
        Param("weight_decay", float, 0.0, low=0, high=1e3, useful=(None, 0.1), help="default 0 (1e-5 in some thesis settings)"),
        Param("workers", int, 0, help="data-loading worker processes", **_WORKERS),
        # SGD on a pretrained network: a rate above 1 diverges (the thesis uses 0.001)
        Param("lr", float, 0.001, low=0, low_open=True, high=1e3, useful=(None, 1.0), help="learning rate (thesis Table 3)"),
        Param("seed", int, 0, help="seed of the split, the shuffling and the new layer", **_SEED),
    ),
    "debias": (
        # Wang et al. 2020 cluster the 1000 most biased words of each group and try the top 4 components
        Param("n_words", int, 1000, low=1, high=10**7, useful=(50, 10000), help="double-hard: biased words per group"),
        Param("n_components", int, 4, low=1, high=10_000, useful=(None, 20),
              help="double-hard: principal components tried as the frequency direction"),
        # HSR's ridge penalty (Yang & Feng 2020 use 60); any non-negative penalty is a ridge regression
        Param("alpha", float, 60.0, low=0, high=1e100, useful=(None, None), help="hsr: ridge penalty"),
        Param("seed", int, 0, help="seed of double-hard's 2-means and of the tests' draws", **_SEED),
    ),
    "analysis-set": (
        Param("per_class", int, low=2, high=10**7, useful=(10, None),
              help="coco: at most this many images per class (seeded sample)"),
        Param("seed", int, 0, help="coco: seed of the sampling", **_SEED),
    ),
    "compare": (
        # p is at least 1 / (draws + 1): fewer than 999 draws cannot show a p below 0.001
        Param("permutations", int, 10_000, low=1, high=10**9, useful=(999, None), help="random re-splits"),
        Param("seed", int, 0, help="seed of the re-splits", **_SEED),
    ),
    "meta": (replace(CONFIDENCE_LEVEL, help="of the CI and prediction interval"),),
    "sweep": (
        Param("jobs", int, 1, help="local worker processes (0: in this process)", **_WORKERS),
    ),
}.items()}


def command_option(command: str, name: str, value: Any) -> Any:
    """``value`` of the option ``name`` of ``command`` checked against its declaration and converted (a
    command line's text too), or the declaration's one-line error.

    >>> command_option("finetune", "momentum", "0.5")
    0.5
    >>> command_option("probe", "num_beams", 0)
    Traceback (most recent call last):
    ...
    eatkit.errors.EatkitError: num_beams must be an integer in [1, 100], got 0
    """
    return COMMAND_OPTIONS[command][name].convert(value)


def option_warnings(command: str, values: Mapping[str, Any]) -> list[str]:
    """The warnings of the values of ``command``'s declared options outside their useful range (other
    names are ignored), in declaration order.

    >>> option_warnings("finetune", {"momentum": 0.995, "epochs": 15, "lr": 0.1})
    ['momentum=0.995 is outside its useful range (<= 0.99): the result may mean little']
    """
    declared = COMMAND_OPTIONS[command]
    return [w for name, p in declared.items() if name in values for w in [p.warning(values[name])] if w]
