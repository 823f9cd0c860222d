"""The importers against docling's own conversions of docling's public test
files (tests/importers/docling, README there; issue 39): the headings a
reader sees, every word kept, and markdown every CommonMark reader reads
with our index's headings."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from mdchunks.heading_index import build_index
from mdchunks.importers import docx, html, pdf
from mdchunks.importers.registry import importer_for
from mdchunks.plugin.documents import NO_TEXT, DocumentProblem, read_document

from spikes.docling_yardstick import headings_of, match, score

DATA = Path(__file__).resolve().parent / "docling"


def _convert(name: str) -> str:
    importer = importer_for(name)
    assert importer is not None
    return importer.convert((DATA / name).read_bytes()).text


def _truth(name: str) -> str:
    stem = name if not name.endswith(".pdf") else name.removesuffix(".pdf")
    return (DATA / "groundtruth" / f"{stem}.md").read_text(encoding="utf-8")


def _texts(markdown: str) -> list[str]:
    return [text for _, text in headings_of(markdown)]


def test_a_pdf_without_outline_has_the_section_titles_its_pages_show() -> None:
    ours, truth = _convert("multi_page.pdf"), _truth("multi_page.pdf")
    assert len(_texts(truth)) == 11
    assert _texts(ours) == _texts(truth)
    found = score(ours, truth, 0.0)
    assert found.words_kept / found.gt_words >= 0.99


def test_a_title_only_outline_keeps_its_h1_off_the_running_header() -> None:
    """The one bookmark is the paper's title, which the page shows only in its
    running header: the H1 is a line of its own before the page's text, and
    the numbered sections the page shows are headings below it."""
    ours = _convert("2305.03393v1-pg9.pdf")
    index = build_index(ours)
    assert [(h.level, h.text) for h in index.headings] == [
        (1, "Optimized Table Tokenization for Table Structure Recognition"),
        (2, "5.1 Hyper Parameter Optimization"),
        (2, "5.2 Quantitative Results"),
    ]
    # The running header stays text, whole, under the title.
    assert "\n\nOptimized Table Tokenization for Table Structure Recognition 9\n" in ours


def test_bookmarks_still_win() -> None:
    ours = _convert("bookmark_sample.pdf")
    assert [(h.level, h.text) for h in build_index(ours).headings] == [
        (1, "PART I - DEFINITIONS"),
        (2, "1. Interpretation"),
        (2, "2. Construction of Terms"),
        (1, "PART II - OBLIGATIONS"),
        (2, "3. Payment Terms"),
        (3, "3.1 Payment Schedule"),
        (2, "4. Termination"),
        (1, "PART III - MISCELLANEOUS"),
    ]


@pytest.mark.parametrize(
    "name",
    [
        "textbox.docx",
        "Strict.docx",
        "drawingml.docx",
        "docx_checkboxes.docx",
        "unit_test_headers_numbered.docx",
        "table_with_equations.docx",
        "tablecell.docx",
        "equations.docx",
        "table_06.html",
        "example_04.html",
        "example_07.html",
    ],
)
def test_every_word_docling_keeps_is_kept(name: str) -> None:
    ours, truth = _convert(name), _truth(name)
    found = score(ours, truth, 0.0)
    assert found.words_kept / found.gt_words >= 0.9, (name, found)
    gt = headings_of(truth)
    assert len(match(headings_of(ours), gt)) == len(gt)


def test_text_boxes_are_read_once_not_with_their_fallback_too() -> None:
    ours = _convert("textbox.docx")
    assert ours.count("Suggested Reportable Symptoms") == 1
    assert "Health Bureau" in ours


def test_equations_are_latex_and_table_cells_keep_them() -> None:
    ours = _convert("table_with_equations.docx")
    assert "\\frac{-b" in ours and "\\sqrt{" in ours
    assert "| The next cell has an equation |" in ours


def test_nested_tables_and_cell_lines_are_kept_apart() -> None:
    ours = _convert("table_06.html")
    for run_together in ("A1B1", "IIIIV", "E1E2"):
        assert run_together not in ours
    for word in ("A1 B1 C1", "E1 E2 E3 E4"):
        assert word in ours


def test_spanned_cells_fill_every_cell_they_cover() -> None:
    rows = html._table_rows(
        _soup(
            '<table><tr><td rowspan="2">a</td><td colspan="2">b</td></tr>'
            "<tr><td>c</td><td>d</td></tr></table>"
        )
    )
    assert rows == [["a", "b", "b"], ["a", "c", "d"]]


def _soup(markup: str):  # type: ignore[no-untyped-def]
    from bs4 import BeautifulSoup

    return BeautifulSoup(markup, "html.parser").find("table")


def test_an_ordered_list_keeps_its_start() -> None:
    text = html.convert(b"<ol start='42'><li>first</li><li>second</li></ol>").text
    assert text == "42. first\n43. second\n"


@pytest.mark.parametrize(
    "name",
    ["example_07.html", "example_04.html", "table_06.html", "textbox.docx", "equations.docx"],
)
def test_every_commonmark_reader_sees_our_headings(name: str) -> None:
    """markdown-it-py (CommonMark, tables) finds the headings our index finds:
    no empty list item right under a line to make it a setext heading."""
    ours = _convert(name)
    tokens = MarkdownIt("commonmark").enable("table").parse(ours)
    theirs = [int(token.tag[1]) for token in tokens if token.type == "heading_open"]
    assert theirs == [h.level for h in build_index(ours).headings]


def test_a_docx_without_a_word_is_refused_in_one_line() -> None:
    import docx as python_docx

    document = python_docx.Document()
    document.add_paragraph("")
    out = io.BytesIO()
    document.save(out)
    with pytest.raises(DocumentProblem, match=f"^docx: {re.escape(NO_TEXT)}$"):
        read_document(out.getvalue(), "empty.docx")


def test_a_table_inside_a_content_control_keeps_its_words() -> None:
    import docx as python_docx
    from docx.oxml import parse_xml

    document = python_docx.Document()
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "guarded", "cell"
    body = document.element.body
    sdt = parse_xml(
        '<w:sdt xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        "<w:sdtPr/><w:sdtContent/></w:sdt>"
    )
    body.replace(table._tbl, sdt)
    sdt[1].append(table._tbl)
    out = io.BytesIO()
    document.save(out)
    text = docx.convert(out.getvalue()).text
    assert "| guarded | cell |" in text


def surrogate_pdf() -> bytes:
    """One page whose ToUnicode map gives the character B as half a UTF-16
    pair (a lone surrogate), as docling's skipped_1page.pdf does."""
    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
        b"/CMapName /X def 1 begincodespacerange <00> <FF> endcodespacerange\n"
        b"2 beginbfchar <41> <0041> <42> <DB62> endbfchar\n"
        b"endcmap CMapName currentdict /CMap defineresource pop end end\n"
    )
    content = b"BT /F1 12 Tf 72 720 Td (AAB A) Tj ET\n"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"endstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"endstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def test_a_lone_surrogate_is_mended_at_conversion_and_said() -> None:
    assert "\udb62" in pdf.convert(surrogate_pdf()).text  # what pypdf gives
    content = read_document(surrogate_pdf(), "broken-map.pdf")
    assert "AA\ufffd A" in content.text
    content.text.encode("utf-8")  # every character UTF-8 holds
    assert content.note is not None and "lone surrogates" in content.note


def test_a_numbered_heading_keeps_the_number_word_shows() -> None:
    ours = _convert("unit_test_headers_numbered.docx")
    assert [h.text for h in build_index(ours).headings][:6] == [
        "Test Document",
        "1. Section 1",
        "1.1. Section 1.1",
        "1.2. Section 1.2",
        "1.2.1. Section 1.2.3",
        "2. Section 2",
    ]
    # A multi-level list label no markdown number can show is kept as text.
    assert "- 2.3.8.1. First sub-item at this level" in ours


def test_a_document_of_text_boxes_and_a_chart_keeps_their_words() -> None:
    """drawingml.docx was stored empty: its words are in text boxes and a
    chart's data."""
    ours = _convert("drawingml.docx")
    assert ours.startswith("Text 2\n\nText 1\n\n")
    assert "| Category 2 | 2.5 | 4.4 | 2 |" in ours
    assert "Fig – Torque v/s Speed characteristics" in ours


def test_a_check_box_is_its_state_not_its_glyph() -> None:
    ours = _convert("docx_checkboxes.docx")
    assert "\\[x] Design" in ours and "\\[ ] Documentation" in ours
    assert "☒" not in ours


def _with_footnote() -> bytes:
    """A DOCX whose second paragraph refers to footnote 1 (python-docx writes
    no notes: the part, its relationship and content type are added here)."""
    import zipfile

    import docx as python_docx

    document = python_docx.Document()
    document.add_heading("Terms", level=1)
    document.add_paragraph("The price is fixed.")
    document.add_heading("Delivery", level=1)
    document.add_paragraph("Goods arrive in May.")
    out = io.BytesIO()
    document.save(out)
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    notes = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:footnotes {w}>'
        '<w:footnote w:id="1"><w:p><w:r><w:t>Excluding VAT.</w:t></w:r></w:p></w:footnote>'
        "</w:footnotes>"
    )
    kind = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes"
    source = zipfile.ZipFile(io.BytesIO(out.getvalue()))
    patched = io.BytesIO()
    with zipfile.ZipFile(patched, "w") as target:
        for member in source.infolist():
            content = source.read(member)
            if member.filename == "word/document.xml":
                content = content.replace(
                    b"<w:t>The price is fixed.</w:t></w:r>",
                    b"<w:t>The price is fixed.</w:t></w:r>"
                    b'<w:r><w:footnoteReference w:id="1"/></w:r>',
                )
            elif member.filename == "word/_rels/document.xml.rels":
                content = content.replace(
                    b"</Relationships>",
                    f'<Relationship Id="rIdNotes" Type="{kind}" Target="footnotes.xml"/>'
                    "</Relationships>".encode(),
                )
            elif member.filename == "[Content_Types].xml":
                content = content.replace(
                    b"</Types>",
                    b'<Override PartName="/word/footnotes.xml" ContentType="application/'
                    b'vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/></Types>',
                )
            target.writestr(member, content)
        target.writestr("word/footnotes.xml", notes)
    return patched.getvalue()


def test_a_footnote_follows_the_paragraph_that_refers_to_it() -> None:
    text = docx.convert(_with_footnote()).text
    assert "The price is fixed.\\[1]\n\n\\[1] Excluding VAT.\n\n# Delivery" in text
