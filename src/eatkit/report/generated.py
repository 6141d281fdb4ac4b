"""The report of depiction tests (who gets generated): a table of each prompt group's perceived classes,
DALL-Eval's MAD and the KL divergence from the reference with their bootstrap CIs, and a contact sheet of
each group's generated images (from the run folder's ``generated/``) with every image's class."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from eatkit.kinds import Plot
from eatkit.report.formatting import fmt_ci, fmt_number
from eatkit.report.kinds import FieldTable, Table


class DepictionRenderer(Table):
    heading = "Who gets generated"
    columns = (
        ("test", lambda r: r.test), ("group", lambda r: r.group), ("attribute", lambda r: r.attribute),
        ("images", lambda r: str(r.n_images)),
        ("shares", lambda r: ", ".join(f"{c} {fmt_number(s, 2)}" for c, s in r.shares.items())),
        ("MAD", lambda r: fmt_number(r.mad, 3)), ("MAD CI", lambda r: fmt_ci(r.mad_ci, ".3f")),
        ("KL", lambda r: fmt_number(r.kl, 3)), ("KL CI", lambda r: fmt_ci(r.kl_ci, ".3f")),
        ("reference", lambda r: r.reference_source),
    )
    legend = ("shares: perceived classes of the group's generated images by the zero-shot classifier (its prompts "
              "in results.json); MAD: DALL-Eval's mean absolute deviation of the shares from uniform; KL: "
              "divergence of the shares from the reference (nats); CI: percentile bootstrap over the images")

    plots = (Plot("mad", ("mad_ci",), label=("test", "group", "attribute"), reference=None,
                  axis="MAD from uniform"),)

    def html_section(self, run: Any, records: Sequence[Any], label: str) -> str:
        sheets: dict[tuple[str, str], list[Any]] = {}
        for record in records:
            sheets.setdefault((record.test, record.group), []).append(record)
        return super().html_section(run, records, label) + "".join(contact_sheet(run, group) for group in sheets.values())


def image_labels(records: Sequence[Any]) -> dict[str, list[str]]:
    """Each image of a prompt group once, in order, with its class for each attribute (``attribute: class``).

    >>> from types import SimpleNamespace as R
    >>> image_labels([R(attribute="gender", images=["a.png", "b.png"], labels=["man", "woman"]),
    ...               R(attribute="age", images=["a.png", "b.png"], labels=["old", "young"])])
    {'a.png': ['gender: man', 'age: old'], 'b.png': ['gender: woman', 'age: young']}
    """
    out: dict[str, list[str]] = {}
    for record in records:
        for name, label in zip(record.images, record.labels):
            out.setdefault(name, []).append(f"{record.attribute}: {label}")
    return out


def contact_sheet(run: Any, records: Sequence[Any], side: int = 96) -> str:
    """A prompt group's generated images as a grid (the records of its attributes), each image once with its
    perceived classes under it (its name where the run folder lacks the file)."""
    from eatkit.report.thumbnails import thumbnail_html

    cells = "".join(f"<figure class=\"sheet\">{thumbnail_html(run.path / name, side=side) or escape(name)}"
                    f"<figcaption>{'<br>'.join(map(escape, labels))}</figcaption></figure>"
                    for name, labels in image_labels(records).items())
    first = records[0]
    return (f"<h4>{escape(first.test)} / {escape(first.group)}: perceived "
            f"{escape(', '.join(r.attribute for r in records))} ({escape('; '.join(first.prompts))})</h4>"
            f"<div class=\"contact-sheet\">{cells}</div>")


class T2IATRenderer(FieldTable):
    """T2IAT: the table and figures its presentation declares (d with its CI, s(c) of every concept), and a
    sample of each concept's generated images: the first image of its neutral, A and B prompts."""

    def __init__(self) -> None:
        from eatkit.kinds import get_kind

        super().__init__(get_kind("t2iat"))

    def html_section(self, run: Any, records: Sequence[Any], label: str) -> str:
        return super().html_section(run, records, label) + "".join(t2iat_samples(run, r) for r in records)


def t2iat_samples(run: Any, record: Any, side: int = 96) -> str:
    """One row per concept: the first generated image of each of its prompt sets (``<concept>/<N|A|B>``)."""
    from eatkit.report.thumbnails import thumbnail_html

    concepts = list(dict.fromkeys(key.rsplit("/", 1)[0] for key in record.images))
    rows = []
    for concept in concepts:
        cells = "".join(f"<figure class=\"sheet\">{thumbnail_html(run.path / names[0], side=side) or escape(names[0])}"
                        f"<figcaption>{escape(group)}</figcaption></figure>"
                        for group in ("N", "A", "B") if (names := record.images.get(f"{concept}/{group}")))
        rows.append(f"<div class=\"contact-sheet\"><figure class=\"sheet\"><figcaption>{escape(concept)}"
                    f"</figcaption></figure>{cells}</div>")
    return (f"<h4>{escape(record.test)}: a generated image of each concept's neutral (N), A and B prompts</h4>"
            + "".join(rows)) if rows else ""
