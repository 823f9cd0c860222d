"""Rule 6 of docs/structure-chunker.md: pipe tables are split between rows, never inside one.

Tables are carved out of an oversized section before the budget splitter
sees it (the splitter cuts tables mid-row); later pieces of a split table
carry its header and delimiter rows in their embed text only.
"""

from __future__ import annotations

import pytest
from mdchunks.heading_index import build_index
from mdchunks.heading_index.blocks import front_matter_end, pipe_tables
from mdchunks.heading_index.structure import StructureOptions, StructureResult, structure_chunks

HEADER = "| Name | Value |\n|------|------:|"


def table(rows: int, cell: str = "value") -> str:
    return HEADER + "".join(f"\n| row {i:03} | {cell} {i:03} |" for i in range(rows))


class RecordingSplitter:
    """A fake `BudgetSplit` cutting its text into two halves; it records its inputs."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(
        self, text: str, /, *, chunk_size: int, min_chunk_size: int, chunk_overlap: int
    ) -> list[tuple[int, int]]:
        self.calls.append(text)
        half = len(text) // 2
        return [(0, half), (half, len(text))]


def chunk(doc: str, splitter: RecordingSplitter | None = None, size: int = 200) -> StructureResult:
    options = StructureOptions(chunk_size=size, min_chunk_size=0, chunk_overlap=0)
    return structure_chunks(doc, build_index(doc), options, splitter or RecordingSplitter())


def test_a_section_of_only_a_small_table_is_one_chunk() -> None:
    doc = "## Limits\n\n" + table(3) + "\n"
    (only,) = chunk(doc).chunks
    assert only.text == table(3)
    assert only.embed_text == "Limits\n\n" + table(3)


def test_a_section_of_only_a_long_table_splits_between_rows() -> None:
    doc = "## Limits\n\n" + table(20) + "\n"
    splitter = RecordingSplitter()
    result = chunk(doc, splitter)
    assert splitter.calls == []  # nothing but the table: the splitter is not needed
    assert len(result.chunks) > 2
    first, *rest = result.chunks
    assert first.text.startswith(HEADER + "\n| row 000 |")
    assert first.embed_text == "Limits\n\n" + first.text
    for piece in rest:
        assert piece.text.startswith("| row ")
        assert doc[piece.start - 1] == "\n"  # a row start
        assert piece.text.endswith(" |")  # a row end
        assert piece.embed_text == f"Limits\n\n{HEADER}\n{piece.text}"
        assert piece.table_header == HEADER  # what the chunk table composes it from
    assert first.table_header is None
    for c in result.chunks:
        assert c.text == doc[c.start : c.end]
        assert len(c.text.encode()) <= 200
        assert c.heading_path == ("Limits",)
    # Every row in exactly one piece, in order, no overlap.
    assert "\n".join(c.text for c in result.chunks) == table(20)


def test_text_around_a_long_table_is_packed_with_its_first_and_last_rows() -> None:
    doc = "## Limits\n\nThe limits:\n\n" + table(20) + "\n\nSee above.\n"
    result = chunk(doc)
    assert result.chunks[0].text.startswith("The limits:\n\n" + HEADER)
    assert result.chunks[-1].text.endswith("\n\nSee above.")
    assert result.chunks[-1].embed_text.startswith(f"Limits\n\n{HEADER}\n| row ")


def test_a_table_that_fits_is_never_cut_in_an_oversized_section() -> None:
    prose = "Some prose words here. " * 12
    doc = f"## Mixed\n\n{prose}\n\n{table(4)}\n\n{prose}\n"
    splitter = RecordingSplitter()
    result = chunk(doc, splitter)
    assert all("|" not in call for call in splitter.calls)
    assert table(4) in [c.text for c in result.chunks]
    assert all(c.embed_text == f"Mixed\n\n{c.text}" for c in result.chunks)


def test_a_row_longer_than_the_budget_is_cut_within_it() -> None:
    """No chunk exceeds chunk_size (heading_index/coverage.py), not even a row:
    its pieces, in order, are the row."""
    long_row = "| big | " + "x" * 300 + " |"
    doc = "## Wide\n\n" + table(3) + "\n" + long_row + "\n| after | 1 |\n"
    result = chunk(doc)
    assert all(len(c.text.encode()) <= 200 for c in result.chunks)
    start = doc.index(long_row)
    pieces = [c for c in result.chunks if start <= c.start < start + len(long_row)]
    assert len(pieces) >= 2
    assert "x" * 300 in "".join(c.text for c in pieces)


def test_non_ascii_cells_keep_code_point_offsets() -> None:
    doc = "## Größen\n\n" + table(20, cell="naïve 日本") + "\n"
    result = chunk(doc)
    assert len(result.chunks) > 1
    for c in result.chunks:
        assert c.text == doc[c.start : c.end]
        assert c.text.startswith("| ")
    assert "\n".join(c.text for c in result.chunks) == table(20, cell="naïve 日本")


def test_a_table_inside_a_list_item_is_left_to_the_budget_splitter() -> None:
    nested = "\n".join("  " + line for line in table(20).splitlines())
    doc = "## Nested\n\n- item\n\n" + nested + "\n"
    splitter = RecordingSplitter()
    chunk(doc, splitter)
    assert len(splitter.calls) == 1


def test_pipe_tables_reports_rows_in_document_offsets() -> None:
    doc = "intro\n\n" + table(2) + "\n\nafter | not a table\n"
    (found,) = pipe_tables(doc, 0, len(doc))
    assert doc[found.start : found.header_end] == HEADER
    assert [doc[a:b] for a, b in found.rows] == [
        "| row 000 | value 000 |",
        "| row 001 | value 001 |",
    ]
    assert found.end == found.rows[-1][1]


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ("---\na: 1\n---\nbody\n", len("---\na: 1\n---\n")),
        ("+++\na = 1\n+++\nbody\n", len("+++\na = 1\n+++\n")),
        ("---\n\nbody\n", 0),  # a thematic break, not front matter
        ("body\n---\n", 0),
        ("", 0),
    ],
)
def test_front_matter_end(doc: str, expected: int) -> None:
    assert front_matter_end(doc, len(doc)) == expected
