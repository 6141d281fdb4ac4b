"""Results of every bundled suite (grounded ones aside: they need a joint model) are byte-identical to those
of eatkit at commit fa3c7e6, before the families refactor: results.json on a deterministic stand-in source,
the metrics on each suite's smallest EAT tests (tests/suite_digests.py; rerun it there to record digests)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from suite_digests import digests  # noqa: E402

#: SHA-256 of results.json at commit fa3c7e6 (``python tests/suite_digests.py`` on that commit)
BEFORE = {
    "american-white": "791f2b02fb7f175837c0d5ee67b4f26b5a6782322ef85a0401b44bced541064f",
    "ieat": "21fefa37e34854710ab1b8a2ebc132346890d95f9c9c627666cd65b456e6614d",
    "ieat-intersectional": "f6b593b2a360327f7f23096df004df703ca04e20641785e0e54715c941b6af1d",
    "mleat-clip": "8d8162834cdf060b25605da2f2e781fa03a72d2b0a0414048b39a2758b1218a6",
    "mleat-gpt2": "deb90b89dd18f40ed9fac34252a1343c8303555f016f9a53bde059a6ea7cc64b",
    "mleat-histwords": "adc70c6bcdc6fc832068243313417dfe59860b703b773bf298ecf1cb046acd50",
    "seat": "c1f86aeaaf241f84979ad17adcb6dad08c9bb7287e0ad84cf248f1efdf213ac2",
    "weat": "e5d9e10194ced60e89360c1fcd308e8ab9e80a5bdc1bd764c7c8515284e039d8",
    "weat-w2v": "a510c49fafc461bf7b00ba3dc924e018948ffdc5d10eb12fabd299bdaa0ecc3a",
}


#: the same since issue 34's statistics defaults: per-test seeds below 2**53 (read exactly by every tool) and
#: Benjamini-Hochberg over each kind's tests (``correction_family="kind"``), and issue 35's two-sided default
#: of the ML-EAT suites (their study stars effects of both signs); the test below shows that these three are
#: all that changed
NOW = {
    "american-white": "d4a339bbd7e1b35478d8e9dd2a465195d91b00540eb0d888e4e13aa218c3b20b",
    "ieat": "06eca3198468d98961ebe3b5714610fb83e25a028444650d5fcb09c0bdc01aa3",
    "ieat-intersectional": "ccd5b13620d1545796291b6ae5e6387373b15d49e03198e967e3e893cd3b58c0",
    "mleat-clip": "1789d9da98f39438d2c849c4084128574f553dc609403f1bc14a021f0eefa9e7",
    "mleat-gpt2": "6e15c1ccfebfc3d74003e3a72d83c3c1a0de35136766aa81ca9afcf7ae6d85a8",
    "mleat-histwords": "bb0cfbcfaa7d15ff4909a436b82991ee26e0009835ca654f15a0bcc486356e85",
    "seat": "4f0e4ce8093364a961981ecad7b73b9cc7ee08c497fbd83ff10459b2c40aa9ef",
    "weat": "600408d491fc0f7cd1f88c23330fc596075bd94846336649e8512b81ebaebf43",
    "weat-w2v": "a739451189bed3035fed20e0b7d9b479b40990aeea4c27ea67e22de9306c49a5",
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
