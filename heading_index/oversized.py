"""An oversized section -> pieces within the budget (docs/structure-chunker.md, rules 4 and 6).

Text goes to the injected budget splitter (cocoindex's
`RecursiveSplitter(language="markdown")` in the app), over that slice alone,
with its own overlap. Top-level pipe tables are carved out first, because
the splitter cuts tables mid-row: a table that fits the budget stays whole;
a longer one is cut between rows, and each piece after its first remembers
the table's header and delimiter rows for its embed text. Table pieces
carry no overlap: the repeated header rows are their context.

Neighbouring pieces that do not overlap are then packed together while the
result fits `chunk_size`, so a short paragraph before a table is not left
as a chunk of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from mdchunks.heading_index.blocks import PipeTable, pipe_tables
from mdchunks.heading_index.coverage import fit_span
from mdchunks.heading_index.text_spans import Span, content_span, utf8_len


class BudgetSplit(Protocol):
    """Splits text within byte budgets; returns `[start, end)` code-point spans of it."""

    def __call__(
        self, text: str, /, *, chunk_size: int, min_chunk_size: int, chunk_overlap: int
    ) -> Sequence[Span]: ...


@dataclass(frozen=True, slots=True)
class Budgets:
    chunk_size: int
    min_chunk_size: int
    chunk_overlap: int


@dataclass(frozen=True, slots=True)
class Piece:
    start: int
    end: int
    table_header: str | None = None  # header + delimiter rows, for a table continuation


@dataclass(frozen=True, slots=True)
class _Atom:
    """The smallest span packing moves around: a text piece, a whole table, a table row."""

    start: int
    end: int
    continues: PipeTable | None = None  # set on a row that may open a continuation piece


def split_oversized(
    text: str, span: Span, budgets: Budgets, budget_split: BudgetSplit
) -> list[Piece]:
    """Pieces of `text[span[0]:span[1]]` (a section body that starts at a line start)."""
    start, end = span
    tables = pipe_tables(text, start, end) if "|" in text[start:end] else []
    if not tables:
        return [Piece(a, b) for a, b in _budget_pieces(text, span, budgets, budget_split)]
    return _pack(text, _atoms(text, span, tables, budgets, budget_split), budgets.chunk_size)


def _budget_pieces(
    text: str, span: Span, budgets: Budgets, budget_split: BudgetSplit
) -> list[Span]:
    """The splitter's spans over the slice alone, shifted back to document offsets."""
    start, end = span
    if utf8_len(text[start:end]) <= budgets.chunk_size:
        return [span]
    pieces: list[Span] = []
    for a, b in budget_split(
        text[start:end],
        chunk_size=budgets.chunk_size,
        min_chunk_size=budgets.min_chunk_size,
        chunk_overlap=budgets.chunk_overlap,
    ):
        if not 0 <= a <= b <= end - start:
            raise ValueError(f"budget splitter returned [{a}, {b}) outside its text")
        trimmed = content_span(text, start + a, start + b)
        if trimmed is not None:
            pieces.append(trimmed)
    return _close_gaps(text, span, pieces)


def _close_gaps(text: str, span: Span, pieces: list[Span]) -> list[Span]:
    """Pieces widened over any content the splitter left out between or around them.

    cocoindex's splitter can drop a list marker when min_chunk_size is tiny;
    every non-whitespace character must still land in a chunk, so the next
    piece (the last one, for a tail) is widened to hold it.
    """
    closed: list[Span] = []
    covered = span[0]
    for start, end in pieces:
        gap = content_span(text, covered, start) if start > covered else None
        closed.append((gap[0] if gap else start, end))
        covered = max(covered, end)
    tail = content_span(text, covered, span[1])
    if tail is not None:
        if closed:
            closed[-1] = (closed[-1][0], tail[1])
        else:
            closed.append(tail)
    return closed


def _atoms(
    text: str, span: Span, tables: list[PipeTable], budgets: Budgets, budget_split: BudgetSplit
) -> list[_Atom]:
    atoms: list[_Atom] = []
    cursor = span[0]
    for table in tables:
        atoms.extend(_text_atoms(text, (cursor, table.start), budgets, budget_split))
        atoms.extend(_table_atoms(text, table, budgets.chunk_size))
        cursor = table.end
    atoms.extend(_text_atoms(text, (cursor, span[1]), budgets, budget_split))
    return atoms


def _text_atoms(text: str, span: Span, budgets: Budgets, budget_split: BudgetSplit) -> list[_Atom]:
    content = content_span(text, *span)
    if content is None:
        return []
    return [_Atom(a, b) for a, b in _budget_pieces(text, content, budgets, budget_split)]


def _table_atoms(text: str, table: PipeTable, chunk_size: int) -> list[_Atom]:
    """A table that fits is one atom; else its head (bound to its first row) and each row."""
    if utf8_len(text[table.start : table.end]) <= chunk_size or not table.rows:
        return [_Atom(table.start, table.end)]
    head = _Atom(table.start, table.rows[0][1])
    atoms = [head, *(_Atom(a, b, continues=table) for a, b in table.rows[1:])]
    # A row (or the head) over the budget on its own is cut within the budget
    # too (heading_index/coverage.py). Its first piece continues the table as
    # the row would; the later ones start inside the row, so they are text
    # (no header rows before them in the embed text).
    return [
        _Atom(a, b, atom.continues if a == atom.start else None)
        for atom in atoms
        for a, b in fit_span(text, (atom.start, atom.end), chunk_size)
    ]


def _pack(text: str, atoms: list[_Atom], chunk_size: int) -> list[Piece]:
    """Greedy: extend the current piece by the next atom while it fits and does not overlap."""
    pieces: list[Piece] = []
    current: _Atom | None = None
    size = 0
    for atom in atoms:
        if current is not None and atom.start >= current.end:
            grown = size + utf8_len(text[current.end : atom.end])
            if grown <= chunk_size:
                current = _Atom(current.start, atom.end, current.continues)
                size = grown
                continue
        if current is not None:
            pieces.append(_piece(text, current))
        current, size = atom, utf8_len(text[atom.start : atom.end])
    if current is not None:
        pieces.append(_piece(text, current))
    return pieces


def _piece(text: str, atom: _Atom) -> Piece:
    table = atom.continues
    header = None if table is None else text[table.start : table.header_end]
    return Piece(atom.start, atom.end, header)
