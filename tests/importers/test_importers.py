"""The importers: HTML, DOCX and PDF documents of known structure (written
by the tests through spikes/format_documents.py, and the stored samples of
tests/importers/data) come out as markdown whose headings are the
document's own, each at its level and in its place; tables, lists and code
are kept; hostile files fail alone, in one line."""

from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path

import pytest
from mdchunks.heading_index import build_index
from mdchunks.importers import base, docx, html, pdf
from mdchunks.importers.registry import IMPORTERS, available_suffixes, importer_for
from mdchunks.plugin.documents import DocumentProblem, read_document
from mdchunks.plugin.recipe import Recipe
from mdchunks.source.reports import describe_skipped

from spikes import format_documents as documents

DATA = Path(__file__).resolve().parent / "data"
CHAPTER = Path(__file__).resolve().parents[2] / "corpora" / "rust-book" / "ch03-02-data-types.md"

SPEC = documents.tender(deep=True)
WRITTEN = {
    "html": (documents.html_of(SPEC), documents.expected_headings(SPEC, "html")),
    "docx": (documents.docx_of(SPEC), documents.expected_headings(SPEC, "docx")),
    "pdf": (documents.pdf_of(SPEC), documents.pdf_levels(SPEC)),
}


def _headings(text: str) -> list[tuple[int, str]]:
    return [(h.level, h.text) for h in build_index(text).headings]


@pytest.mark.parametrize("fmt", sorted(WRITTEN))
def test_every_heading_is_recovered_at_its_level_and_in_its_place(fmt: str) -> None:
    data, expected = WRITTEN[fmt]
    converted = IMPORTERS[fmt].convert(data)
    assert _headings(converted.text) == expected
    assert converted.headings == len(expected)
    # Each paragraph lies in the section of the heading written before it.
    index = build_index(converted.text)
    governing = None
    for block in SPEC.blocks:
        if isinstance(block, documents.Heading):
            governing = block.text
        elif isinstance(block, documents.Paragraph):
            at = converted.text.index(block.text)
            before = [h for h in index.headings if h.start <= at]
            assert before and before[-1].text == governing, (fmt, block.text)


def test_docx_levels_past_six_are_kept_as_six_in_order() -> None:
    converted = docx.convert(WRITTEN["docx"][0])
    deep = [(level, text) for level, text in _headings(converted.text) if "Clause" in text]
    assert deep == [(4, "Clause 1 at level 4"), (5, "Clause 2 at level 5")] + [
        (6, f"Clause {n} at level {n + 3}") for n in range(3, 7)
    ]


@pytest.mark.parametrize("fmt", ["html", "docx"])
def test_tables_lists_and_code_are_kept(fmt: str) -> None:
    text = IMPORTERS[fmt].convert(WRITTEN[fmt][0]).text
    assert (
        "| Item | Unit | Quantity |\n| --- | --- | --- |\n| Partition removal | m2 | 420 |"
    ) in text
    assert "- Demolition of partitions\n  - Asbestos survey first\n- New electrical" in text
    assert "1. Register on the portal\n2. Upload the signed forms\n3. Confirm" in text
    assert '\n{"bid": "signed.pdf", "schedule": "prices.xlsx"}\n```' in text


def test_html_drops_scripts_styles_and_navigation_chrome() -> None:
    text = html.convert(WRITTEN["html"][0]).text
    for chrome in ("tracking", "color:red", "Home", "Tenders", "Copyright", "cookie"):
        assert chrome not in text
    assert "```json\n" in text  # the code's language, from its class


def test_html_without_main_keeps_the_body_and_drops_permalinks() -> None:
    page = (
        b"<html><body><h2>Install <a class='headerlink' href='#i'>\xc2\xb6</a></h2>"
        b"<p>Run <code>pip *x*</code> then <em>wait</em>.</p><ol><li>one<ol><li>deep</li>"
        b"</ol></li></ol></body></html>"
    )
    text = html.convert(page).text
    assert _headings(text) == [(2, "Install")]
    assert "Run `pip *x*` then wait." in text
    assert "1. one\n   1. deep" in text


def test_text_that_looks_like_markdown_stays_text() -> None:
    page = b"<p># of bidders</p><p>1. not a list</p><p>a *star* and <b>x</b>_y_</p>"
    text = html.convert(page).text
    assert _headings(text) == []
    assert "\\# of bidders" in text and "1\\. not a list" in text
    assert "a \\*star\\*" in text


def test_docx_outline_levels_and_the_title_style_are_headings() -> None:
    import docx as python_docx
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = python_docx.Document()
    document.add_heading("The tender", 0)  # the Title style
    body = document.add_paragraph("An outlined paragraph")
    level = OxmlElement("w:outlineLvl")
    level.set(qn("w:val"), "2")
    body._p.get_or_add_pPr().append(level)
    document.add_paragraph("# plain text")
    out = io.BytesIO()
    document.save(out)
    text = docx.convert(out.getvalue()).text
    assert _headings(text) == [(1, "The tender"), (3, "An outlined paragraph")]
    assert "\\# plain text" in text


def test_a_pdf_with_an_outline_gets_its_titles_as_headings_where_they_start() -> None:
    text = pdf.convert(WRITTEN["pdf"][0]).text
    # The title line itself became the heading: it is not repeated as text.
    assert text.count("Invitation to tender") == 1
    assert "## 2. Pricing schedule\n\nBidders fill in" in text


def test_a_pdf_without_an_outline_gets_the_headings_its_pages_show() -> None:
    converted = pdf.convert(documents.pdf_of(SPEC, outline=False))
    # Sizes and weights tell the levels down to 4; the deeper clauses are set
    # like the body and stay text.
    shown = [(level, text) for level, text in documents.pdf_levels(SPEC) if level < 5]
    assert _headings(converted.text) == shown
    assert converted.headings == len(shown) and converted.note is None
    assert "The works cover the renovation" in converted.text


def test_a_pdf_with_no_outline_and_no_heading_on_its_pages_says_so() -> None:
    converted = pdf.convert(documents.pdf_of(SPEC, outline=False, styled=False))
    assert converted.headings == 0 and _headings(converted.text) == []
    assert converted.note == pdf.NO_HEADINGS
    assert "The works cover the renovation" in converted.text


def test_titles_not_found_are_placed_after_the_heading_before() -> None:
    entries = [
        pdf.OutlineEntry("Part A", 1, 0),
        pdf.OutlineEntry("Missing", 2, 0),
        pdf.OutlineEntry("Part B", 1, None),
    ]
    blocks, n = pdf.place_headings(["intro\nPart A\nalpha\nPart B\nbeta"], entries)
    assert n == 3
    assert blocks == ["intro", "# Part A", "## Missing", "alpha", "# Part B", "beta"]


def test_a_pdf_heading_carried_to_the_next_page_is_placed_there() -> None:
    entries = [pdf.OutlineEntry("One", 1, 0), pdf.OutlineEntry("Two", 1, 0)]
    blocks, _ = pdf.place_headings(["One\nfirst page", "Two\nsecond page"], entries)
    assert blocks == ["# One", "first page", "# Two", "second page"]


@pytest.mark.parametrize("name", ["data-types.html", "data-types.docx", "data-types.pdf"])
def test_the_stored_samples_recover_the_chapters_headings(name: str) -> None:
    spec = documents.spec_from_markdown("Data Types", CHAPTER.read_text())
    expected = (
        documents.pdf_levels(spec)
        if name.endswith(".pdf")
        else documents.expected_headings(spec, name.rsplit(".", 1)[1])
    )
    content = read_document((DATA / name).read_bytes(), name)
    assert _headings(content.text) == expected
    assert content.source_format == name.rsplit(".", 1)[1]
    if not name.endswith(".pdf"):
        assert content.text.count("| --- |") >= 2  # the chapter's tables


# -- hostile files -------------------------------------------------------------------------


def test_a_zip_bomb_docx_is_refused_before_anything_is_inflated() -> None:
    package = io.BytesIO()
    with zipfile.ZipFile(package, "w", zipfile.ZIP_DEFLATED) as bomb:
        bomb.writestr("word/document.xml", b"\0" * (8 * 1024 * 1024))
    data = package.getvalue()
    assert len(data) < 64 * 1024
    with pytest.raises(base.ConversionFailed, match=r"refused: .* expand to 8,388,608 bytes"):
        docx.check_package(data, max_unpacked_bytes=1024 * 1024)
    too_many = io.BytesIO()
    with zipfile.ZipFile(too_many, "w") as parts:
        for n in range(docx.MAX_MEMBERS + 1):
            parts.writestr(f"p{n}", b"")
    with pytest.raises(base.ConversionFailed, match="parts"):
        docx.convert(too_many.getvalue())


def test_a_docx_entity_never_reads_a_local_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-MARKER")
    package = io.BytesIO(WRITTEN["docx"][0])
    out = io.BytesIO()
    with zipfile.ZipFile(package) as source, zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "word/document.xml":
                data = data.replace(
                    b"<w:document ",
                    f'<!DOCTYPE w:document [<!ENTITY xxe SYSTEM "file://{secret}">]>'
                    "<w:document ".encode(),
                    1,
                ).replace(b"Invitation to tender", b"Invitation &xxe;", 1)
            target.writestr(item, data)
    try:
        text = docx.convert(out.getvalue()).text
    except base.ConversionFailed as exc:
        text = str(exc)
    assert "TOP-SECRET-MARKER" not in text


@pytest.mark.parametrize(
    ("name", "data", "cause"),
    [
        ("a.docx", b"not a zip at all", "docx: not a DOCX (zip) package"),
        ("a.pdf", b"%PDF-1.4 garbage", "pdf: cannot read this PDF"),
        ("a.pdf", b"# Notes, misnamed\n", "pdf: not a PDF: no %PDF- header in its first 1,024"),
        ("a.pdf", b"\n" * 1024 + b"%PDF-1.4", "pdf: not a PDF: no %PDF- header"),
        ("a.docx", b"PK\x05\x06" + b"\0" * 18, "docx: cannot read this DOCX"),
    ],
)
def test_a_file_that_cannot_be_converted_is_one_line_naming_the_format(
    name: str, data: bytes, cause: str
) -> None:
    with pytest.raises(DocumentProblem) as problem:
        read_document(data, name)
    assert str(problem.value).startswith(cause)
    assert "\n" not in str(problem.value)


def test_an_encrypted_pdf_says_it_needs_a_password() -> None:
    from fpdf import FPDF

    locked = FPDF()
    locked.set_encryption(owner_password="owner", user_password="secret")
    locked.add_page()
    locked.set_font("helvetica")
    locked.cell(text="hidden")
    with pytest.raises(base.ConversionFailed, match="encrypted PDF"):
        pdf.convert(bytes(locked.output()))


# -- the registry and the walk's suffixes ----------------------------------------------------


def test_the_registry_finds_importers_by_suffix_in_any_case() -> None:
    assert importer_for("Report.PDF") is IMPORTERS["pdf"]
    assert importer_for(".htm") is IMPORTERS["html"]
    assert importer_for("notes.md") is None
    assert set(available_suffixes()) == {".html", ".htm", ".docx", ".pdf"}
    assert set(Recipe().suffixes) >= {".md", ".txt", ".html", ".docx", ".pdf"}


def test_without_the_extra_the_suffix_is_skipped_with_the_install_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = base.importlib.util.find_spec
    monkeypatch.setattr(
        base.importlib.util, "find_spec", lambda name: None if name == "pypdf" else real(name)
    )
    assert ".pdf" not in Recipe().suffixes
    shown = describe_skipped(((".pdf", 2), (".rst", 1), ("", 1)))
    assert shown == (
        "2 .pdf, 1 .rst, 1 with no suffix (pip install 'mdchunks[formats]' reads .pdf; "
        "no importer reads the others)"
    )
    only = describe_skipped(((".pdf", 2),))
    assert only == "2 .pdf (pip install 'mdchunks[formats]' reads .pdf)"
    monkeypatch.setitem(sys.modules, "pypdf", None)  # `import pypdf` fails
    with pytest.raises(DocumentProblem, match=r"^pdf: the pdf importer needs the formats extra"):
        read_document(WRITTEN["pdf"][0], "a.pdf")


@pytest.mark.parametrize("fmt", sorted(WRITTEN))
def test_the_plugin_faces_document_markdown_is_what_the_cli_chunks(fmt: str) -> None:
    # A host app's call outside any cocoindex app, and the managed source's read.
    import mdchunks

    data, expected = WRITTEN[fmt]
    text = mdchunks.document_markdown(data, f".{fmt}")
    assert text == read_document(data, f"report.{fmt}").text
    assert _headings(text) == expected
    if fmt != "html":  # any bytes are some HTML; a package or a PDF has a shape
        with pytest.raises(DocumentProblem, match=f"^{fmt}: "):
            mdchunks.document_markdown(b"\x00not a document at all", f".{fmt}")
        # Named, when the host says which file it is (cocoindex reports a
        # failed component by its message alone).
        with pytest.raises(DocumentProblem, match=f"^docs/a.{fmt}: {fmt}: "):
            mdchunks.document_markdown(b"\x00nothing", f".{fmt}", rel_path=f"docs/a.{fmt}")
