"""The report's "how far to trust this" panel: one row per EAT run with ``--validity`` (the record's
``validity`` field, ``docs/validity.md``). Presentation only: every number comes from the record."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from eatkit.report.formatting import fmt_d, fmt_number, fmt_p
from eatkit.report.thumbnails import thumbnail_html

#: most influential stimuli shown per test
SHOWN = 3

_NOTE = (
    "Most influential: the stimuli whose removal changes d most (role, d without it). Flips: removals that move "
    "p across alpha (their p). All sets resampled: the {level} percentile interval of d when X, Y, A and B are "
    "all bootstrapped, and the share of resamples with the sign of d. Subsamples: the share of random "
    "{fraction} subsets of every set whose permutation test keeps the verdict. Reliability: split-half "
    "(Spearman-Brown) of the targets' s(w, A, B) over halves of A and B, and Cronbach's alpha with the "
    "attribute pairs as items (Du et al. 2021). Detectable: the smallest d (eatkit's Caliskan SD; pooled SD "
    "in brackets) that the permutation test at these target sizes detects with {power} power at alpha "
    "{alpha} (simulated). Sets: near-duplicate stimuli (cosine \u2265 0.95) and sets concentrated on one "
    "direction; for image files, near-duplicate images (difference hash) and image properties whose pooled d "
    "between X and Y (A and B) is at least 0.8. See docs/validity.md."
)


def _stimulus(row: Mapping[str, Any], value: str) -> str:
    thumb = thumbnail_html(row["file"]) if isinstance(row.get("file"), str) else ""
    return f"{thumb}{escape(str(row['stimulus']))} ({escape(str(row['role']))}) {value}"


def _influential(panel: Mapping[str, Any]) -> str:
    rows = panel["influence"]["most_influential"][:SHOWN]
    return "<br>".join(_stimulus(r, f"{fmt_d(r['effect_size'])}") for r in rows)


def _flips(panel: Mapping[str, Any]) -> str:
    flips = panel["influence"]["flips"]
    if not flips:
        return "none"
    shown = "<br>".join(_stimulus(r, f"p {fmt_p(r['p_value'])}") for r in flips[:SHOWN])
    more = f"<br>and {len(flips) - SHOWN} more" if len(flips) > SHOWN else ""
    return shown + more


def _sets(panel: Mapping[str, Any]) -> str:
    notes = []
    for role, d in panel["sets"].items():
        notes += [f"{escape(role)}: {escape(str(a))} \u2248 {escape(str(b))} ({fmt_number(c)})"
                  for a, b, c in d["near_duplicates"]]
        if d["concentrated"]:
            notes.append(f"{escape(role)}: concentrated (effective size {fmt_number(d['effective_size'], 1)})")
    images = panel.get("images")
    if isinstance(images, Mapping):
        for role, d in images["sets"].items():
            notes += [f"{escape(role)}: image {escape(str(a))} \u2248 {escape(str(b))} ({c} bits)"
                      for a, b, c in d["near_duplicates"]]
        for pair, names in images["unbalanced"].items():
            notes += [f"{escape(pair)}: {escape(name)} d {fmt_d(images['imbalance'][pair][name])}" for name in names]
    return "<br>".join(notes) if notes else "\u2013"


def validity_html(records: Sequence[Any]) -> str:
    """The panel of every record with a ``validity`` field, as one table with its note ("" when none)."""
    rows, first = [], None
    for record in records:
        panel = getattr(record, "validity", None)
        if not isinstance(panel, Mapping):
            continue
        first = first or panel
        st, power = panel["stability"], panel["power"]
        low, high = st["bootstrap_interval"]
        cells = [
            _influential(panel), _flips(panel),
            f"[{fmt_d(low)}, {fmt_d(high)}]<br>sign kept {st['bootstrap_same_sign']:.0%}",
            f"verdict kept {st['verdict_kept']:.0%}",
            f"split-half {fmt_number(st['split_half'])}<br>\u03b1 {fmt_number(st['cronbach_alpha'])}",
            f"{fmt_d(power['effect_size'])} ({fmt_d(power['cohens_d'])})",
            _sets(panel),
        ]
        tds = "".join(f"<td>{c}</td>" for c in cells)
        rows.append(f'<tr><th scope="row">{escape(record.test)} <span class="title">d {fmt_d(record.effect_size)}, '
                    f"p {fmt_p(record.p_value)}</span></th>{tds}</tr>")
    if first is None:
        return ""
    head = "".join(f"<th>{h}</th>" for h in ("Test", "Most influential", "Flips", "All sets resampled", "Subsamples",
                                              "Reliability", "Detectable d", "Sets"))
    note = _NOTE.format(level=f"{first['stability']['confidence_level']:.0%}",
                        fraction=f"{first['stability']['fraction']:.0%}", power=f"{first['power']['power']:.0%}",
                        alpha=f"{first['power']['alpha']:g}")
    return (f'<div class="scroll"><table class="validity"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
            f'</tbody></table></div><p class="note">{escape(note)}</p>')


def validity_console(records: Sequence[Any]) -> str:
    """One line per record with a ``validity`` field: its most influential stimulus, the removals that flip
    significance, the share of subsamples that keep the verdict and the detectable d ("" when none).

    >>> class R: test, validity = "t", {"influence": {"most_influential": [{"stimulus": "w", "role": "A",
    ...     "effect_size": 0.8}], "flips": []}, "stability": {"verdict_kept": 0.9}, "power": {"effect_size": 1.1}}
    >>> print(validity_console([R()]))
    how far to trust (--validity): most influential stimulus (d without it); flips; verdict kept in subsamples; detectable d
      t: w (A, 0.80); flips: none; verdict kept 90%; detectable d 1.10
    """
    lines = []
    for record in records:
        panel = getattr(record, "validity", None)
        if not isinstance(panel, Mapping):
            continue
        top = panel["influence"]["most_influential"][0]
        flips = ", ".join(str(f["stimulus"]) for f in panel["influence"]["flips"]) or "none"
        lines.append(f"  {record.test}: {top['stimulus']} ({top['role']}, {fmt_d(top['effect_size'])}); flips: {flips}; "
                     f"verdict kept {panel['stability']['verdict_kept']:.0%}; detectable d "
                     f"{fmt_d(panel['power']['effect_size'])}")
    if not lines:
        return ""
    return "\n".join(["how far to trust (--validity): most influential stimulus (d without it); flips; verdict kept "
                      "in subsamples; detectable d", *lines])
