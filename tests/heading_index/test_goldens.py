"""Golden files: every rust-book chapter's headings, and the assignment over the
real cocoindex splitter's chunks (chunk_size=2000, chunk_overlap=200,
min_chunk_size=1000, language="markdown").

Invariants are checked first (a golden file can only freeze a correct answer),
then the result is compared with tests/heading_index/golden/rust-book/<chapter>.json.
Regenerate after an intended change with:

    UPDATE_GOLDENS=1 .venv/bin/python -m pytest tests/heading_index/test_goldens.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from index_invariants import check_assignment, check_index_invariants
from mdchunks.heading_index import assign, build_index, decode_document

from spikes.commonmark_reference import RUST_BOOK, ReferenceHeading, line_of, reference_headings

# Set before cocoindex is imported, which reads it.
os.environ.setdefault("COCOINDEX_DISABLE_USAGE_TRACKING", "1")
from cocoindex.ops.text import RecursiveSplitter

GOLDEN_DIR = Path(__file__).resolve().parent / "golden" / "rust-book"
UPDATE = os.environ.get("UPDATE_GOLDENS") == "1"
# Every chapter of the bundled corpus and every golden file: a chapter without
# its golden file, or a golden file without its chapter, fails (never skips).
CHAPTERS = sorted(
    {path.stem for path in RUST_BOOK.glob("*.md")}
    | {path.stem for path in GOLDEN_DIR.glob("*.json")}
)
SPLITTER = RecursiveSplitter()


def _chunk_spans(text: str) -> list[tuple[int, int]]:
    chunks = SPLITTER.split(
        text, chunk_size=2000, min_chunk_size=1000, chunk_overlap=200, language="markdown"
    )
    for chunk in chunks:
        assert chunk.text == text[chunk.start.char_offset : chunk.end.char_offset]
    return [(chunk.start.char_offset, chunk.end.char_offset) for chunk in chunks]


def _record(text: str) -> dict[str, list[list[object]]]:
    index = build_index(text)
    check_index_invariants(text, index)
    spans = _chunk_spans(text)
    check_assignment(text, index, spans)
    return {
        # [level, text, start, end, section_end, path]
        "headings": [
            [h.level, h.text, h.start, h.end, h.section_end, list(h.path)] for h in index.headings
        ],
        # [start, end, heading_level, heading_path, parent_position]; heading_text is path[-1]
        "chunks": [
            [start, end, c.heading_level, list(c.heading_path), c.parent_position]
            for (start, end), c in zip(spans, assign(index, spans), strict=True)
        ],
    }


def _dump(record: dict[str, list[list[object]]]) -> str:
    """One heading or chunk per line: small, and diffs read well."""
    parts = []
    for key, rows in record.items():
        lines = ",\n".join("  " + json.dumps(row, ensure_ascii=False) for row in rows)
        parts.append(f'"{key}": [\n{lines}\n]' if rows else f'"{key}": []')
    return "{\n" + ",\n".join(parts) + "\n}\n"


def test_the_corpus_is_there() -> None:
    assert len(list(RUST_BOOK.glob("*.md"))) == 112
    assert len(CHAPTERS) == 112


@pytest.mark.parametrize("name", CHAPTERS)
def test_rust_book_chapter(name: str) -> None:
    chapter = RUST_BOOK / f"{name}.md"
    assert chapter.is_file(), f"golden file {name}.json has no chapter {chapter}"
    text = decode_document(chapter.read_bytes())
    record = _record(text)
    assert [
        ReferenceHeading(line_of(text, start), level, heading_text)
        for level, heading_text, start, *_ in record["headings"]
    ] == reference_headings(text), "real documents agree with CommonMark too"
    golden = GOLDEN_DIR / f"{name}.json"
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(_dump(record), encoding="utf-8")
    assert golden.exists(), f"no golden file: run with UPDATE_GOLDENS=1 to create {golden}"
    assert json.loads(golden.read_text(encoding="utf-8")) == record
