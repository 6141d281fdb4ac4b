"""The run layer: orchestration of a suite over a source (:mod:`~eatkit.run.runner`), the manifest, probes,
series of sources, sweeps of models x suites, and verification of a run folder against the files on disk.

It sits below :mod:`eatkit.report` and :mod:`eatkit.cli` and imports nothing from them.
"""
