"""Results of every bundled suite (grounded ones aside: they need a joint model) are those of eatkit at commit
fa3c7e6, before the families refactor, to ten significant digits: results.json on a deterministic stand-in
source, the metrics on each suite's smallest EAT tests (tests/suite_digests.py; rerun it there to record
digests). The digests do not depend on the machine: ``test_the_digests_do_not_depend_on_the_blas_kernel``
recomputes them with another OpenBLAS kernel."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from suite_digests import digests  # noqa: E402

#: :func:`suite_digests.results_digest` of results.json at commit fa3c7e6 (``python tests/suite_digests.py`` with
#: that commit's ``src`` first on ``PYTHONPATH``), with one fix applied to that commit as to this one: ECT's ranks
#: treat values within ``stats.metrics.RANK_TIE_RTOL`` as tied (a resampled duplicate attribute's cosine could
#: differ in its last bits by BLAS kernel, and the broken tie moved ECT's bootstrap CI: without the fix the
#: CIs of the four ECT records depend on the machine)
BEFORE = {
    "american-white": "4f142efb4fbfb6eb02df89d05efe6596d7cda4db351583b47487938915f99fdf",
    "ieat": "bf242093b25aff9303f235b8e0f64b4ace1678769d4f619e61b3c154d5a92099",
    "ieat-intersectional": "18b72abd7b976569e0aac9256155cc4379ce015df901d55c84919f658c317e8b",
    "mleat-clip": "6094bc9329411090d520646254b695559029ba5fee9d5330b8b9a04d2260919a",
    "mleat-gpt2": "92698a53296b1a3c7951657c4c892110ad97dfd3bf9c6a0f1f080663647b68a2",
    "mleat-histwords": "5e48e04cf51921c656507c790d6ece0a1b683eee0937d6d13f6d69c8c95685c0",
    "seat": "18543782ef2435b10307fc3be0f31c0a02d4ad6b255cfb77a379aab18e441987",
    "weat": "768b784e3456b33f8d146db7dbfd968b68f5fda189444fe40d7b18f311b72383",
    "weat-w2v": "9380c00ff93cdfe1a025d4eb2858ca3763a7f9d2beee9fdf12a4a37562f18dcd",
}


#: the same since issue 34's statistics defaults: per-test seeds below 2**53 (read exactly by every tool) and
#: Benjamini-Hochberg over each kind's tests (``correction_family="kind"``), and issue 35's two-sided default
#: of the ML-EAT suites (their study stars effects of both signs); the test below shows that these three are
#: all that changed
NOW = {
    "american-white": "bb3a77d81f313e77ae0c1c050970a3f4c8974723d29056e96482769797fac5d8",
    "ieat": "8b8242a1772f2586607279be37537b0c2b100491ee5343ebb096cb4ff56a8afd",
    "ieat-intersectional": "2f51770073b92c4ce4374e79372f66b26edf2914104ce7d7f3a6c66097fda3b7",
    "mleat-clip": "820a6d173dad98d2baa19016e071be3a60691b7b2f42f6836298e6018afa69c3",
    "mleat-gpt2": "ec8a077b1e3e2809e4440f08b990fa83963494f9749e299392ff3305e07f1a79",
    "mleat-histwords": "6b77c554c1772971c3c6bd9e8840141ae40dcd0f78c9c496160d104e79c6963d",
    "seat": "2dd73c8d968d1c8a60478b127c9bca45b8544c3b48f867534384d3fc69187526",
    "weat": "a9246ee17283667002d590ae470f26f1fdce84b7d1780db6cf32f9c68d43eda5",
    "weat-w2v": "0811284644ba6b242241d97ae525afb8617c46fd1cdbb714ecd3835a2fd122aa",
}


def test_every_bundled_suite_gives_the_same_bytes_as_before_the_refactor():
    assert digests() == NOW


def test_the_old_seed_range_and_one_correction_family_give_the_bytes_of_before(monkeypatch):
    """With the per-test seeds of 64 bits and one Benjamini-Hochberg family for the whole run (the defaults
    before issue 34), and the ML-EAT suites without their two-sided default (issue 35), every digest is that
    of commit fa3c7e6: nothing else changed a result."""
    import dataclasses
    import zlib

    import numpy as np

    import suite_digests
    from eatkit.run import runner
    from eatkit.stimuli import loader

    load = loader.load_suite
    monkeypatch.setattr(loader, "load_suite", lambda name, *a, **k: dataclasses.replace(
        load(name, *a, **k), alternative=None) if str(name).startswith("mleat-") else load(name, *a, **k))

    def seed_of_64_bits(run_seed: int, test_id: str) -> int:
        state = np.random.SeedSequence([run_seed, zlib.crc32(test_id.encode("utf-8"))]).generate_state(2)
        return int(state[0]) << 32 | int(state[1])

    monkeypatch.setattr(runner, "derived_seed", seed_of_64_bits)
    monkeypatch.setattr(suite_digests, "OPTIONS", {**suite_digests.OPTIONS, "correction_family": "run"})
    assert digests() == BEFORE


@pytest.mark.skipif(platform.machine() != "x86_64" or "OPENBLAS_CORETYPE" in os.environ,
                    reason="OpenBLAS's Sandybridge kernel is an x86-64 one; a machine that sets OPENBLAS_CORETYPE "
                           "needs it as it is")
def test_the_digests_do_not_depend_on_the_blas_kernel():
    """Another OpenBLAS kernel (Sandybridge: no AVX-512 nor FMA) changes the last bits of the matrix products,
    which changed all nine digests of results.json's bytes; the digests to ten digits stay those above."""
    code = "import json, suite_digests; print(json.dumps(suite_digests.digests()))"
    env = {**os.environ, "OPENBLAS_CORETYPE": "Sandybridge", "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).parent), *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == NOW
