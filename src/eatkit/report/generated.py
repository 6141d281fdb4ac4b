"""The report of depiction tests (who gets generated): a table of each prompt group's perceived classes,
DALL-Eval's MAD and the KL divergence from the reference with their bootstrap CIs, and a contact sheet of
each group's generated images (from the run folder's ``generated/``) with every image's class."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from eatkit.report.formatting import fmt_number
from eatkit.report.kinds import Table


def _ci(values: Sequence[float]) -> str:
    return f"[{fmt_number(values[0], 3)}, {fmt_number(values[1], 3)}]" if values else "–"


class DepictionRenderer(Table):
    heading = "Who gets generated"
    columns = (
        ("test", lambda r: r.test), ("group", lambda r: r.group), ("attribute", lambda r: r.attribute),
        ("images", lambda r: str(r.n_images)),
        ("shares", lambda r: ", ".join(f"{c} {fmt_number(s, 2)}" for c, s in r.shares.items())),
        ("MAD", lambda r: fmt_number(r.mad, 3)), ("MAD CI", lambda r: _ci(r.mad_ci)),
        ("KL", lambda r: fmt_number(r.kl, 3)), ("KL CI", lambda r: _ci(r.kl_ci)),
        ("reference", lambda r: r.reference_source),
    )
    legend = ("shares: perceived classes of the group's generated images by the zero-shot classifier (its prompts "
              "in results.json); MAD: DALL-Eval's mean absolute deviation of the shares from uniform; KL: "
              "divergence of the shares from the reference (nats); CI: percentile bootstrap over the images")

    def html_section(self, run: Any, records: Sequence[Any], label: str) -> str:
        return super().html_section(run, records, label) + "".join(contact_sheet(run, r) for r in records)


def contact_sheet(run: Any, record: Any, side: int = 96) -> str:
    """The group's generated images, each with its class for the record's attribute (its name where the
    run folder lacks the file)."""
    from eatkit.report.thumbnails import thumbnail_html

    cells = "".join(f"<figure class=\"sheet\">{thumbnail_html(run.path / name, side=side) or escape(name)}"
                    f"<figcaption>{escape(label)}</figcaption></figure>"
                    for name, label in zip(record.images, record.labels))
    return (f"<h4>{escape(record.test)} / {escape(record.group)}: perceived {escape(record.attribute)} "
            f"({escape('; '.join(record.prompts))})</h4><div class=\"contact-sheet\">{cells}</div>")
