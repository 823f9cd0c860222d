"""A converted document is bounded by what it becomes, not by its size on
disk (issue 42; flow/source/app.py, flow/source/bounded.py): every file an
importer reads is converted and chunked in the bounded child, whatever its
size, and the markdown it converts to is held to `--max-doc-bytes`. A small
DOCX that inflates fails alone, in one line naming it, and the other
documents are ingested. The importers' quadratic shapes (nested inline
elements in an HTML heading; PDF bookmark titles not on their pages) are
linear: checked by counting their work, never by a time bound."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from bs4.element import Tag
from conftest import RunCli
from flow_checks import rows_by_document
from mdchunks.importers import html, pdf

from benchmarks.memory_shapes import repeated_docx
from spikes import format_documents as documents

_HEADING = '<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>a</w:t></w:r></w:p>'
_PARAGRAPH = "<w:p><w:r><w:t>" + "lorem ipsum " * 20 + "</w:t></w:r></w:p>"


def _folder(root: Path, bomb: bytes) -> Path:
    spec = documents.tender()
    root.mkdir()
    (root / "guide.md").write_text("# Guide\n\nSome text.\n\n## Install\n\nSteps.\n")
    (root / "good.docx").write_bytes(documents.docx_of(spec))
    (root / "good.html").write_bytes(documents.html_of(spec))
    (root / "good.pdf").write_bytes(documents.pdf_of(spec))
    (root / "bomb.docx").write_bytes(bomb)
    return root


def test_a_small_docx_past_the_time_limit_fails_alone(
    run_cli: RunCli, tmp_path: Path, database_url: str
) -> None:
    # 60,000 headings in about 50 KB: minutes to convert and chunk in the
    # run's process before (the limits applied from 1 MiB on disk only).
    bomb = repeated_docx(_HEADING, 60_000)
    assert len(bomb) < 200_000
    root = _folder(tmp_path / "docs", bomb)
    started = time.monotonic()
    result = run_cli(
        "ingest",
        str(root),
        "--source",
        "docs",
        "--doc-time-limit",
        "5",
        "--doc-memory-limit",
        "300",
    )
    assert time.monotonic() - started < 90
    assert result.code == 1, result
    lines = [line for line in result.err.splitlines() if "bomb.docx" in line]
    assert lines == ["  bomb.docx: took more than 5 s of CPU time to chunk (--doc-time-limit)"], (
        result.err
    )
    assert "Traceback" not in result.err + result.out
    assert set(rows_by_document(database_url)) == {"guide.md", "good.docx", "good.html", "good.pdf"}


def test_the_markdown_a_file_becomes_is_held_to_max_doc_bytes(
    run_cli: RunCli, tmp_path: Path, database_url: str
) -> None:
    bomb = repeated_docx(_PARAGRAPH, 5_000)  # about 1.2 MB of text
    root = _folder(tmp_path / "docs", bomb)
    result = run_cli("ingest", str(root), "--source", "docs", "--max-doc-bytes", "1000000")
    assert result.code == 1, result
    lines = [line for line in result.err.splitlines() if "bomb.docx" in line]
    assert len(lines) == 1, result.err
    assert lines[0].startswith(
        f"  bomb.docx: too large once converted: {len(bomb):,} bytes on disk became "
    ), lines
    assert lines[0].endswith(" bytes of markdown, over the limit of 1,000,000 (--max-doc-bytes)")
    assert set(rows_by_document(database_url)) == {"guide.md", "good.docx", "good.html", "good.pdf"}
    # The limit is the run's option, not the document's failure: with room,
    # the next run ingests it.
    again = run_cli("ingest", str(root), "--source", "docs", "--max-doc-bytes", "4000000")
    assert again.code == 0, again
    assert "bomb.docx" in rows_by_document(database_url)


def test_nested_inline_elements_in_a_heading_convert_in_linear_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each element of a heading is asked once whether it is dropped: asking
    each string about all its parents was quadratic in the nesting (2,000
    spans: two million questions)."""
    asked = 0
    dropped = html._dropped

    def counted(tag: Tag) -> bool:
        nonlocal asked
        asked += 1
        return dropped(tag)

    monkeypatch.setattr(html, "_dropped", counted)
    depth = 2_000
    page = "<h1>" + "<span>a" * depth + "</span>" * depth + "</h1><p>text</p>"
    converted = html.convert(page.encode())
    assert converted.text.startswith("# " + "a" * depth)
    assert asked < 3 * depth, asked


class _CountingRe:
    """The `re` module, counting the characters its compiled patterns'
    searches are given to scan."""

    def __init__(self) -> None:
        self.scanned = 0

    def compile(self, pattern: str, flags: int = 0) -> _CountingRe:
        self._pattern = re.compile(pattern, flags)
        return self

    def search(self, text: str, start: int = 0) -> re.Match[str] | None:
        self.scanned += len(text) - start
        return self._pattern.search(text, start)

    def __getattr__(self, name: str) -> object:
        return getattr(re, name)


def test_bookmark_titles_not_on_their_pages_are_placed_in_linear_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each title was searched for through its page and the next one: 1,000
    titles on a 5 KB page scanned 20 MB; a title not made of its page's
    pieces of words is now known absent without a search."""
    counting = _CountingRe()
    monkeypatch.setattr(pdf, "re", counting)
    page = "Body text of the page, nothing of the outline's.\n" * 100
    entries = [pdf.OutlineEntry(f"Missing title {i}", 1, 0) for i in range(1_000)]
    blocks, placed = pdf.place_headings([page, page], entries)
    assert placed == 1_000 and blocks[0] == "# Missing title 0"
    assert counting.scanned <= 2 * len(page), counting.scanned
    # A title that is on its page is still found by the search, and placed there.
    blocks, _ = pdf.place_headings(
        [page + "Found Title\nmore\n"], [pdf.OutlineEntry("found title", 2, 0)]
    )
    assert "## found title" in blocks and blocks[-1] == "more"
