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


def test_every_bundled_suite_gives_the_same_bytes_as_before_the_refactor():
    assert digests() == BEFORE
