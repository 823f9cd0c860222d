"""A mixed folder ingested end to end (docs/importers.md): HTML, DOCX and
PDF become rows whose offsets count in the converted markdown and whose
headings are the documents' own; a file that cannot be converted fails
alone; files no importer reads are counted by suffix in the summary and in
`status`; a new importer version re-processes the files of its format only."""

from __future__ import annotations

from pathlib import Path

from conftest import Ingest, RunCli
from flow_checks import fetch
from mdchunks.importers import pdf
from mdchunks.plugin.documents import read_document
from mdchunks.plugin.recipe import Recipe

from spikes import format_documents as documents


def _mixed(root: Path) -> Path:
    spec = documents.tender()
    root.mkdir()
    (root / "guide.md").write_text("# Guide\n\nSome text.\n\n## Install\n\nSteps.\n")
    (root / "notes.txt").write_text("plain notes\n")
    (root / "tender.html").write_bytes(documents.html_of(spec))
    (root / "tender.docx").write_bytes(documents.docx_of(spec))
    (root / "tender.pdf").write_bytes(documents.pdf_of(spec))
    (root / "scan.pdf").write_bytes(documents.pdf_of(spec, outline=False, styled=False))
    (root / "broken.docx").write_bytes(b"not a zip")
    (root / "index.rst").write_text("Title\n=====\n")
    (root / "api.rst").write_text("API\n===\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n")
    return root


def test_a_mixed_folder_converts_counts_and_fails_alone(
    ingest: Ingest, tmp_path: Path, database_url: str
) -> None:
    root = _mixed(tmp_path / "mixed")
    # One chunk per section: every heading names a chunk.
    small = {"chunker": "structure", "split_levels": 6, "min_chunk_size": 1}
    report = ingest(root, recipe=Recipe(**small))

    assert [(f.rel_path, f.cause.split(":")[0]) for f in report.failures] == [
        ("broken.docx", "docx")
    ]
    assert report.processed == 6
    assert report.skipped_suffixes == ((".rst", 2), (".png", 1))
    assert report.converted == (("pdf", 2), ("docx", 1), ("html", 1))
    assert report.import_notes == ((f"pdf: {pdf.NO_HEADINGS}", 1),)

    formats = {
        d["rel_path"]: d["source_format"]
        for d in fetch(database_url, "SELECT rel_path, source_format FROM mdchunks_documents")
    }
    assert formats == {
        "guide.md": "markdown",
        "notes.txt": "text",
        "tender.html": "html",
        "tender.docx": "docx",
        "tender.pdf": "pdf",
        "scan.pdf": "pdf",
        "broken.docx": "docx",
    }
    rows = fetch(
        database_url,
        "SELECT rel_path, char_start, char_end, text, heading_path FROM content_chunks "
        "ORDER BY rel_path, position",
    )
    expected_paths = [h.text for h in documents.tender().headings()]
    for name in ("tender.html", "tender.docx", "tender.pdf", "scan.pdf"):
        converted = read_document((root / name).read_bytes(), name).text
        mine = [row for row in rows if row["rel_path"] == name]
        assert mine, name
        for row in mine:  # the converted markdown is the document
            assert row["text"] == converted[row["char_start"] : row["char_end"]]
        seen = {part for row in mine for part in row["heading_path"]}
        if name == "scan.pdf":
            assert seen == set()
        else:
            assert seen == set(expected_paths), name

    # A new version of one importer re-processes that format's files alone.
    again = ingest(root, recipe=Recipe(**small, importer_versions=(("pdf", "test-2"),)))
    assert again.processed == 2 and again.converted == (("pdf", 2),)
    assert again.unchanged == 4 and again.recipe == report.recipe
    assert again.rows_deleted == 0


def test_the_summary_and_status_name_what_was_skipped(run_cli: RunCli, tmp_path: Path) -> None:
    root = _mixed(tmp_path / "mixed")
    result = run_cli("ingest", str(root), "--source", "mixed")
    assert result.code == 1  # broken.docx
    assert "  converted: 2 pdf, 1 docx, 1 html; 1 pdf: no outline (bookmarks)" in result.out
    assert "  other files, not ingested: 2 .rst, 1 .png (no importer reads them)" in result.out
    assert "broken.docx: docx: not a DOCX (zip) package" in result.err
    status = run_cli("status")
    assert "converted: 2 pdf, 1 docx, 1 html" in status.out
    assert "other files the last walk left out: 2 .rst, 1 .png (no importer" in status.out


def test_a_broken_pdf_is_named_once_with_its_cause(run_cli: RunCli, tmp_path: Path) -> None:
    # pypdf logs what it finds wrong ("invalid pdf header", "EOF marker not
    # found") without the file's name: the summary's line names it instead.
    root = tmp_path / "pdfs"
    root.mkdir()
    (root / "guide.md").write_text("# Guide\n\nSome text.\n")
    (root / "broken.pdf").write_bytes(b"%PDF-1.4 garbage")
    (root / "notes.pdf").write_bytes(b"not a pdf at all")  # a text file, misnamed
    result = run_cli("ingest", str(root), "--source", "pdfs", "-q")
    assert result.code == 1
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert not [line for line in lines if line.startswith("warning:")], result.err
    assert [line for line in lines if ".pdf" in line] == [
        "  broken.pdf: pdf: cannot read this PDF: Stream has ended unexpectedly",
        "  notes.pdf: pdf: not a PDF: no %PDF- header in its first 1,024 bytes",
    ], result.err


def test_deeply_nested_html_fails_in_one_line_and_is_not_converted_again(
    ingest: Ingest, tmp_path: Path, database_url: str
) -> None:
    """Issue 42: a thousand nested `<div>`s failed with a raw RecursionError,
    and as a bug (not memoized) were converted again on every run."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "page.md").write_text("# Page\n\nFine.\n")
    depth = 5000
    (root / "deep.html").write_text(
        "<html><body>" + "<div>" * depth + "text" + "</div>" * depth + "</body></html>"
    )
    first = ingest(root)
    failures = {f.rel_path: f.cause for f in first.failures}
    assert list(failures) == ["deep.html"], failures
    assert failures["deep.html"].startswith("html: nested too deeply to convert"), failures
    assert "RecursionError" not in failures["deep.html"]
    again = ingest(root)
    assert again.processed == 0 and again.unchanged == 1, again
    # Memoized as the document's own failure: kept on its document row.
    rows = fetch(
        database_url,
        "SELECT error FROM mdchunks_documents WHERE source = 'docs' AND rel_path = 'deep.html'",
    )
    assert rows == [{"error": failures["deep.html"]}]
    assert {f.rel_path: f.cause for f in again.failures} == {
        "deep.html": f"{failures['deep.html']} (unchanged since an earlier run)"
    }


def test_a_mended_text_and_an_empty_document_count_alike_in_summary_and_status(
    run_cli: RunCli, tmp_path: Path
) -> None:
    """A PDF whose text holds a lone surrogate is mended at conversion (its
    note says so), not failed later at ingest; a DOCX without a word fails in
    one line naming it; the run's summary and `status` count the same
    failures (issue 39)."""
    import io

    import docx as python_docx
    from mdchunks.plugin.documents import MENDED, NO_TEXT

    from tests.importers.test_docling_yardstick import surrogate_pdf

    root = tmp_path / "odd"
    root.mkdir()
    (root / "broken-map.pdf").write_bytes(surrogate_pdf())
    empty = python_docx.Document()
    out = io.BytesIO()
    empty.save(out)
    (root / "empty.docx").write_bytes(out.getvalue())
    (root / "fine.md").write_text("# Fine\n\nWords.\n")

    result = run_cli("ingest", str(root), "--source", "odd")
    assert result.code == 1
    assert "  documents: 2 processed, 0 unchanged, 1 failed" in result.out
    assert f"1 pdf: {pdf.NO_HEADINGS}; {MENDED}" in result.out
    assert f"empty.docx: docx: {NO_TEXT}" in result.err
    assert "TypeError" not in result.out + result.err
    status = run_cli("status")
    assert "1 failed" in status.out, status.out
