"""DOCX -> markdown: paragraph styles and outline levels are the headings.

Read by python-docx (lxml underneath, with its parser's external entities
off and no network). Before python-docx opens the package, the zip's
directory is checked: more than `MAX_MEMBERS` members, or members that
would expand past `MAX_UNPACKED_BYTES` in all, refuse the file (a zip bomb
is refused before anything is inflated; Python's zipfile never inflates a
member past the size its directory declares).

A paragraph is a heading when (first that applies):
1. it has an outline level of its own (`w:outlineLvl` 0-8: level 1-9; 9 is
   body text);
2. its style, or a style it is based on, has an outline level, or is named
   Title (level 1) or Heading 1-9 (built-in style ids `Title`, `HeadingN`);
levels past 6 are kept as 6, in document order. Empty headings are dropped.
Lists (numbered or bulleted, by the numbering definitions, else by style
name) keep their nesting; tables become pipe tables (the first row the
header); paragraphs in a code style (`Code`, `HTML Preformatted`, `Source
Code`, `Macro Text`, any style whose name holds "code") become fenced code.
The body is walked as XML: content controls, tracked insertions, text
boxes (once: the AlternateContent choice, not its fallback), nested tables,
equations (as LaTeX, `omml`) and footnotes and endnotes (after the paragraph
that refers to them) are part of the text; headers, footers and comments
are not. A numbered heading keeps the number Word shows before it.

Here: the package's checks, Strict OOXML read as transitional, and the walk
of the body into markdown blocks (`_Body`). What a paragraph's XML holds as
text (runs, equations, charts, notes, table cells): docx_text.py; what its
style and numbering say (heading level, code, list item, its number):
docx_styles.py.
"""

from __future__ import annotations

import io
import re
import zipfile
from typing import TYPE_CHECKING, Any

from mdchunks.importers import markdown as md
from mdchunks.importers import omml
from mdchunks.importers.base import ConversionFailed, Converted, Importer, library_missing
from mdchunks.importers.docx_styles import (
    Counters,
    Level,
    Styles,
    heading_level,
    list_item,
    numbering_formats,
    numbering_of,
)
from mdchunks.importers.docx_text import (
    MAX_NESTING,
    MC,
    WRAPPERS,
    W,
    alternative,
    chart_blocks,
    inline_of,
    math_block,
    notes_of,
    table_rows,
)

if TYPE_CHECKING:
    from docx.document import Document

VERSION = "2"

MAX_MEMBERS = 10_000
MAX_UNPACKED_BYTES = 256 * 1024 * 1024


def check_package(data: bytes, max_unpacked_bytes: int = MAX_UNPACKED_BYTES) -> None:
    """Refuse a file that is not a zip, or whose members would expand too far."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            members = package.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ConversionFailed(f"not a DOCX (zip) package: {md.one_line(str(exc))}") from None
    if len(members) > MAX_MEMBERS:
        raise ConversionFailed(
            f"refused: the package holds {len(members):,} parts (more than {MAX_MEMBERS:,})"
        )
    unpacked = sum(member.file_size for member in members)
    if unpacked > max_unpacked_bytes:
        raise ConversionFailed(
            f"refused: the package would expand to {unpacked:,} bytes, over the bound of "
            f"{max_unpacked_bytes:,} (a zip bomb?)"
        )


# Strict OOXML (ISO/IEC 29500 strict) names the same parts and elements in
# other namespaces; python-docx knows the transitional ones only.
_STRICT = b"http://purl.oclc.org/ooxml/"
_STRICT_NAMESPACES = {
    b"http://purl.oclc.org/ooxml/wordprocessingml/main": (
        b"http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    ),
    b"http://purl.oclc.org/ooxml/officeDocument/relationships/extendedProperties": (
        b"http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties"
    ),
    b"http://purl.oclc.org/ooxml/officeDocument/relationships": (
        b"http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    ),
    b"http://purl.oclc.org/ooxml/officeDocument/math": (
        b"http://schemas.openxmlformats.org/officeDocument/2006/math"
    ),
    b"http://purl.oclc.org/ooxml/officeDocument/extendedProperties": (
        b"http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"
    ),
    b"http://purl.oclc.org/ooxml/officeDocument/": b"http://schemas.openxmlformats.org/officeDocument/2006/",
    b"http://purl.oclc.org/ooxml/drawingml/": b"http://schemas.openxmlformats.org/drawingml/2006/",
}


def _transitional(data: bytes) -> bytes:
    """A Strict OOXML package rewritten in the transitional namespaces (the
    package is checked already: its members are bounded); others as they are."""
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        try:
            rels = package.read("_rels/.rels")
        except KeyError:
            return data
        if _STRICT not in rels:
            return data
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as rewritten:
            for member in package.infolist():
                content = package.read(member)
                if _STRICT in content and member.filename.endswith((".xml", ".rels")):
                    for strict, transitional in _STRICT_NAMESPACES.items():
                        content = content.replace(strict, transitional)
                rewritten.writestr(member, content)
    return out.getvalue()


def convert(data: bytes) -> Converted:
    try:
        import docx
    except ImportError:
        raise library_missing("docx") from None
    check_package(data)
    try:
        document = docx.Document(io.BytesIO(_transitional(data)))
        return _convert(document)
    except ConversionFailed:
        raise
    except Exception as exc:  # python-docx's and lxml's errors: this file's alone
        cause = md.one_line(str(exc)) or type(exc).__name__
        raise ConversionFailed(f"cannot read this DOCX: {cause}") from None


def _convert(document: Document) -> Converted:
    body = _Body(numbering_formats(document), Styles(document), notes_of(document))
    body.part = document.part
    body.walk(document.element.body, 0)
    body.flush()
    return Converted(md.document(body.blocks), body.headings)


class _Body:
    """Blocks of a body in document order: every child element the text is in,
    content controls (`w:sdt`), tracked insertions, custom XML and text boxes
    included, not only the paragraphs and tables python-docx lists."""

    def __init__(
        self, numbering: dict[tuple[str, int], Level], styles: Styles, notes: dict[str, str]
    ) -> None:
        self.numbering = numbering
        self.counters = Counters(numbering)
        self.styles = styles
        self.notes = notes
        self.blocks: list[str] = []
        self.headings = 0
        self.items: list[md.ListItem] = []
        self.code: list[str] = []
        self.pending_notes: list[str] = []
        self.part: Any = None  # the document part: the charts' parts are its relations

    def flush(self) -> None:
        if self.items:
            self.blocks.append(md.render_list(self.items))
            self.items.clear()
        if self.code:
            self.blocks.append(md.fenced("\n".join(self.code)))
            self.code.clear()
        self._notes()

    def _notes(self) -> None:
        """Notes after the block that refers to them: where a reader turns to
        them, and in that block's section."""
        for key in self.pending_notes:
            text = self.notes.get(key, "")
            if md.one_line(text):
                self.blocks.append(md.paragraph(f"[{key[1:]}] {text}"))
        self.pending_notes.clear()

    def walk(self, container: Any, depth: int) -> None:
        if depth > MAX_NESTING:
            return  # a hostile file nests without end; lxml stops at 256 anyway
        for child in container.iterchildren():
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag == f"{W}p":
                self._paragraph(child, depth)
            elif tag == f"{W}tbl":
                self.flush()
                self.blocks.append(md.pipe_table(table_rows(child, depth)))
            elif tag == f"{omml.M}oMathPara":
                self.flush()
                self.blocks.extend(math_block(m) for m in child.iter(f"{omml.M}oMath"))
            elif tag == f"{MC}AlternateContent":
                chosen = alternative(child)
                if chosen is not None:
                    self.walk(chosen, depth + 1)
            elif tag in WRAPPERS:
                self.walk(child, depth + 1)

    def _paragraph(self, p: Any, depth: int) -> None:
        inline = inline_of(p)
        style = self.styles.of(p)
        level = heading_level(p, style)
        text = md.clean(inline.plain)
        own_id, own_level = numbering_of(p)
        num_id = own_id if own_id is not None else style.num_id
        label = ""
        if num_id is not None and num_id != "0" and md.one_line(text):
            label = self.counters.label(num_id, min(own_level or style.num_level or 0, 8))
        if level is not None and md.one_line(text):
            self.flush()
            # The number Word shows before a numbered heading is part of it.
            self.blocks.append(md.heading(level, f"{label} {text}" if label else text))
            self.headings += 1
        elif level is not None:
            pass  # an empty heading: dropped
        elif style.code and not inline.display:
            if self.items:
                self.flush()
            self.code.append(text)
        elif (listed := list_item(p, style, self.numbering)) is not None and md.one_line(text):
            if self.code:
                self.flush()
            depth_in_list, ordered = listed
            item = " ".join(inline.markdown.split())
            if _MULTILEVEL.search(label):
                # "2.3.1." is no number a markdown list can show: kept as the
                # item's first words, in a bulleted item.
                ordered, item = False, f"{md.escape_inline(label)} {item}"
            self.items.append(md.ListItem(depth_in_list, ordered, item))
        else:
            self.flush()
            paragraph = md.inline_block(inline.markdown)
            if paragraph:
                self.blocks.append(paragraph)
        if inline.display:
            self.flush()
            self.blocks.extend(inline.display)
        self.pending_notes.extend(inline.notes)
        if not self.items:
            self._notes()
        for chart in inline.charts:  # a chart's data as a table after its paragraph
            self.flush()
            self.blocks.extend(chart_blocks(self.part, chart))
        for box in inline.boxes:  # a text box's paragraphs after its anchor's
            self.flush()
            self.walk(box, depth + 1)


# A list label of several numbers (multi-level numbering: "1.2.", "2.3.1").
_MULTILEVEL = re.compile(r"\d[.)-]\s*\d")


IMPORTER = Importer(
    name="docx",
    version=VERSION,
    suffixes=(".docx",),
    libraries=("docx",),
    convert=convert,
)
