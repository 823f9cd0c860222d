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
Headers, footers, footnotes and comments are not part of the text.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from mdchunks.importers import markdown as md
from mdchunks.importers.base import ConversionFailed, Converted, Importer, library_missing

if TYPE_CHECKING:
    from docx.document import Document
    from docx.styles.style import ParagraphStyle
    from docx.text.paragraph import Paragraph

VERSION = "1"

MAX_MEMBERS = 10_000
MAX_UNPACKED_BYTES = 256 * 1024 * 1024

_HEADING_NAME = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_CODE_STYLES = frozenset({"code", "html preformatted", "source code", "macro text"})
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


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


def convert(data: bytes) -> Converted:
    try:
        import docx
    except ImportError:
        raise library_missing("docx") from None
    check_package(data)
    try:
        document = docx.Document(io.BytesIO(data))
        return _convert(document)
    except ConversionFailed:
        raise
    except Exception as exc:  # python-docx's and lxml's errors: this file's alone
        cause = md.one_line(str(exc)) or type(exc).__name__
        raise ConversionFailed(f"cannot read this DOCX: {cause}") from None


def _convert(document: Document) -> Converted:
    from docx.table import Table

    numbering = _numbering_formats(document)
    styles = _Styles(document)
    blocks: list[str] = []
    headings = 0
    items: list[md.ListItem] = []
    code: list[str] = []

    def flush() -> None:
        if items:
            blocks.append(md.render_list(items))
            items.clear()
        if code:
            blocks.append(md.fenced("\n".join(code)))
            code.clear()

    for block in document.iter_inner_content():
        if isinstance(block, Table):
            flush()
            blocks.append(md.pipe_table(_table_rows(block)))
            continue
        text = md.clean(block.text)
        style = styles.of(block)
        level = heading_level(block._p, style)
        if level is not None:
            flush()
            if md.one_line(text):
                blocks.append(md.heading(level, text))
                headings += 1
            continue
        if style.code:
            if items:
                flush()
            code.append(text)
            continue
        listed = _list_item(block._p, style, numbering)
        if listed is not None:
            if code:
                flush()
            depth, ordered = listed
            items.append(md.ListItem(depth, ordered, md.escape_inline(md.one_line(text))))
            continue
        flush()
        blocks.append(md.paragraph(text))
    flush()
    return Converted(md.document(blocks), headings)


@dataclass(frozen=True, slots=True)
class _Style:
    """What a paragraph style (with the styles it is based on) says."""

    name: str = ""
    level: int | None = None  # heading level
    code: bool = False
    num_id: str | None = None
    num_level: int | None = None


class _Styles:
    """Paragraph styles by id, each resolved once: python-docx's `paragraph.style`
    looks the default style up by scanning every style, for every paragraph
    (quadratic: 7 s for a 50 KB file)."""

    def __init__(self, document: Document) -> None:
        from docx.enum.style import WD_STYLE_TYPE

        self._by_id: dict[str, _Style] = {}
        self._default = _Style()
        for style in document.styles:
            if style.type != WD_STYLE_TYPE.PARAGRAPH:
                continue
            resolved = _resolve(cast("ParagraphStyle", style))
            self._by_id[style.style_id or ""] = resolved
            if style.element.get(f"{_W}default") in ("1", "true"):
                self._default = resolved

    def of(self, paragraph: Paragraph) -> _Style:
        ids = paragraph._p.xpath("./w:pPr/w:pStyle/@w:val")
        return self._by_id.get(str(ids[0]), self._default) if ids else self._default


def _resolve(style: ParagraphStyle) -> _Style:
    name = style.name or ""
    level: int | None = None
    num_id: str | None = None
    num_level: int | None = None
    current: ParagraphStyle | None = style
    seen = 0
    while current is not None and seen < 32:  # a style chain can loop in a hostile file
        if level is None:
            level = _outline_level(current.element)
            for label in (current.style_id or "", current.name or ""):
                if level is None and label.lower() == "title":
                    level = 1
                found = _HEADING_NAME.match(label.replace("Heading", "Heading "))
                if level is None and found:
                    level = int(found.group(1))
        own_id, own_level = _numbering_of(current.element)
        num_id = num_id if num_id is not None else own_id
        num_level = num_level if num_level is not None else own_level
        current = cast("ParagraphStyle | None", current.base_style)
        seen += 1
    lower = name.lower()
    return _Style(name, level, lower in _CODE_STYLES or "code" in lower, num_id, num_level)


def heading_level(paragraph: Any, style: _Style) -> int | None:
    """The paragraph's heading level (1-9), or None for body text: its own
    outline level, else its style's (module docstring)."""
    own = _outline_level(paragraph)
    return own if own is not None else style.level


def _outline_level(element: Any) -> int | None:
    values = element.xpath("./w:pPr/w:outlineLvl/@w:val")
    if not values:
        return None
    try:
        value = int(values[0])
    except ValueError:
        return None
    return value + 1 if 0 <= value <= 8 else None  # 9: body text


def _list_item(
    paragraph: Any, style: _Style, numbering: dict[tuple[str, int], str]
) -> tuple[int, bool] | None:
    """(depth, ordered) of a list paragraph, else None."""
    own_id, own_level = _numbering_of(paragraph)
    num_id = own_id if own_id is not None else style.num_id
    level = own_level if own_level is not None else style.num_level
    depth = min(level or 0, 8)
    name = style.name.lower()
    if (num_id is None and not name.startswith("list")) or num_id == "0":  # "0": removed
        return None
    if num_id is not None:
        fmt = numbering.get((num_id, depth))
        ordered = fmt is not None and fmt not in ("bullet", "none")
    else:
        ordered = "number" in name
    if num_id is None or depth == 0:
        found = re.search(r"\s(\d)$", name)  # "List Bullet 2"
        if found:
            depth = max(depth, int(found.group(1)) - 1)
    return depth, ordered


def _numbering_of(element: Any) -> tuple[str | None, int | None]:
    """The numbering id and level an element (paragraph or style) sets itself."""
    ids = element.xpath("./w:pPr/w:numPr/w:numId/@w:val")
    levels = element.xpath("./w:pPr/w:numPr/w:ilvl/@w:val")
    level = int(levels[0]) if levels and str(levels[0]).isdigit() else None
    return (str(ids[0]) if ids else None), level


def _numbering_formats(document: Document) -> dict[tuple[str, int], str]:
    """(numId, level) -> number format (`bullet`, `decimal`, ...)."""
    try:
        numbering = document.part.numbering_part.element
    except (KeyError, NotImplementedError, AttributeError):
        return {}
    abstract: dict[str, dict[int, str]] = {}
    for node in numbering.iterchildren(f"{_W}abstractNum"):
        levels: dict[int, str] = {}
        for lvl in node.iterchildren(f"{_W}lvl"):
            fmt = lvl.find(f"{_W}numFmt")
            ilvl = lvl.get(f"{_W}ilvl") or "0"
            if fmt is not None and ilvl.isdigit():
                levels[int(ilvl)] = fmt.get(f"{_W}val") or ""
        abstract[node.get(f"{_W}abstractNumId") or ""] = levels
    formats: dict[tuple[str, int], str] = {}
    for num in numbering.iterchildren(f"{_W}num"):
        ref = num.find(f"{_W}abstractNumId")
        if ref is None:
            continue
        for ilvl, fmt in abstract.get(ref.get(f"{_W}val") or "", {}).items():
            formats[(num.get(f"{_W}numId") or "", ilvl)] = fmt
    return formats


def _table_rows(table: Any) -> list[list[str]]:
    rows: list[list[str]] = []
    for row in table.rows:
        cells: list[str] = []
        previous = None
        for cell in row.cells:
            # A merged cell is handed out once per grid column it spans.
            cells.append("" if cell._tc is previous else md.one_line(cell.text))
            previous = cell._tc
        rows.append(cells)
    return rows


IMPORTER = Importer(
    name="docx",
    version=VERSION,
    suffixes=(".docx",),
    libraries=("docx",),
    convert=convert,
)
