"""Rows of scores -> a fixed-width table and JSON. Pure formatting, no I/O.

The table is fixed-width and, since its rule line carries alignment colons,
also a valid Markdown table (it pastes into a README as it is):

    | doc | mode | chars | hdgs | chunks | hdg-aligned | pure | truthful | truthful-nested |

`fixed_width_table` is the one renderer of such tables in the harness
(`spikes.retrieval_eval` prints its recall table with it too).

Fractions are shown as percentages with one decimal; an undefined one
(0/0: no headings for hdg-aligned, no chunks for the others) as `n/a`.

The JSON is `{"totals": [...], "documents": [...]}` (with `"provenance"`, the
dated header line, first when asked for); each entry has `path`
(the corpus root, or the document), `mode`, `chars` (document characters),
`headings`, `chunks`, `aligned` and `pure` (counts, over headings and over
chunks) and `truthful`, `truthful_nested` (fractions 0..1, character-weighted
over chunk characters in totals; null when undefined).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from spikes.metrics import Ratio, Scores


@dataclass(frozen=True, slots=True)
class Row:
    path: str  # the corpus root (totals) or the document
    mode: str
    scores: Scores


HEADER: tuple[str, ...] = (
    "doc",
    "mode",
    "chars",
    "hdgs",
    "chunks",
    "hdg-aligned",
    "pure",
    "truthful",
    "truthful-nested",
)
_LEFT_ALIGNED = frozenset({"doc", "mode"})


def percent(ratio: Ratio) -> str:
    value = ratio.value
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _cells(row: Row) -> tuple[str, ...]:
    s = row.scores
    return (
        row.path,
        row.mode,
        str(s.chars),
        str(s.headings),
        str(s.chunks),
        percent(s.aligned),
        percent(s.pure),
        percent(s.truthful),
        percent(s.truthful_nested),
    )


def fixed_width_table(
    header: Sequence[str], body: Sequence[Sequence[str]], left_aligned: Collection[str]
) -> str:
    """A fixed-width table that is also a Markdown table, one line per row, each
    line ending in a newline: every column as wide as its widest cell; the
    columns named in `left_aligned` are padded on the right (rule `:---`), the
    others on the left (rule `---:`)."""
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = (
            cell.ljust(width) if name in left_aligned else cell.rjust(width)
            for name, cell, width in zip(header, cells, widths, strict=True)
        )
        return "| " + " | ".join(padded) + " |\n"

    rule = (
        "|"
        + "|".join(
            ":" + "-" * (width + 1) if name in left_aligned else "-" * (width + 1) + ":"
            for name, width in zip(header, widths, strict=True)
        )
        + "|\n"
    )
    return line(header) + rule + "".join(line(cells) for cells in body)


def format_table(rows: Sequence[Row]) -> str:
    """The scores as a fixed-width table, one line per row."""
    return fixed_width_table(HEADER, [_cells(row) for row in rows], _LEFT_ALIGNED)


def row_json(row: Row) -> dict[str, Any]:
    s = row.scores
    return {
        "path": row.path,
        "mode": row.mode,
        "chars": s.chars,
        "headings": s.headings,
        "chunks": s.chunks,
        "aligned": s.aligned.hits,
        "pure": s.pure.hits,
        "truthful": s.truthful.value,
        "truthful_nested": s.truthful_nested.value,
    }


def to_json(totals: Sequence[Row], documents: Sequence[Row], provenance: str | None = None) -> str:
    """The JSON document, indented, with a trailing newline (`provenance`, the
    harness's dated header line, only when given)."""
    payload: dict[str, Any] = {}
    if provenance is not None:
        payload["provenance"] = provenance
    payload["totals"] = [row_json(row) for row in totals]
    payload["documents"] = [row_json(row) for row in documents]
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
