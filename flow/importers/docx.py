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
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from mdchunks.importers import markdown as md
from mdchunks.importers import omml
from mdchunks.importers.base import ConversionFailed, Converted, Importer, library_missing

if TYPE_CHECKING:
    from docx.document import Document
    from docx.styles.style import ParagraphStyle

VERSION = "2"

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
    body = _Body(_numbering_formats(document), _Styles(document), _notes(document))
    body.part = document.part
    body.walk(document.element.body, 0)
    body.flush()
    return Converted(md.document(body.blocks), body.headings)


@dataclass(frozen=True, slots=True)
class _Inline:
    """A paragraph's content: its text plain (headings, code, cells) and as
    markdown (equations as code spans), what it holds besides (text boxes,
    notes it refers to) and its display equations."""

    plain: str
    markdown: str
    boxes: tuple[Any, ...]  # w:txbxContent elements, in order
    charts: tuple[str, ...]  # relationship ids of the charts drawn in it
    notes: tuple[str, ...]  # note ids ("f3": footnote 3, "e1": endnote 1)
    display: tuple[str, ...]  # LaTeX of its display equations (m:oMathPara)


class _Body:
    """Blocks of a body in document order: every child element the text is in,
    content controls (`w:sdt`), tracked insertions, custom XML and text boxes
    included, not only the paragraphs and tables python-docx lists."""

    def __init__(
        self, numbering: dict[tuple[str, int], _Level], styles: _Styles, notes: dict[str, str]
    ) -> None:
        self.numbering = numbering
        self.counters = _Counters(numbering)
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
        if depth > _MAX_NESTING:
            return  # a hostile file nests without end; lxml stops at 256 anyway
        for child in container.iterchildren():
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag == f"{_W}p":
                self._paragraph(child, depth)
            elif tag == f"{_W}tbl":
                self.flush()
                self.blocks.append(md.pipe_table(_table_rows(child, depth)))
            elif tag == f"{omml.M}oMathPara":
                self.flush()
                self.blocks.extend(_math_block(m) for m in child.iter(f"{omml.M}oMath"))
            elif tag == f"{_MC}AlternateContent":
                chosen = _alternative(child)
                if chosen is not None:
                    self.walk(chosen, depth + 1)
            elif tag in _WRAPPERS:
                self.walk(child, depth + 1)

    def _paragraph(self, p: Any, depth: int) -> None:
        inline = _inline(p)
        style = self.styles.of(p)
        level = heading_level(p, style)
        text = md.clean(inline.plain)
        own_id, own_level = _numbering_of(p)
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
        elif (listed := _list_item(p, style, self.numbering)) is not None and md.one_line(text):
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
            self.blocks.extend(_chart(self.part, chart))
        for box in inline.boxes:  # a text box's paragraphs after its anchor's
            self.flush()
            self.walk(box, depth + 1)


# A list label of several numbers (multi-level numbering: "1.2.", "2.3.1").
_MULTILEVEL = re.compile(r"\d[.)-]\s*\d")

# Elements whose children are body content: a content control, its content,
# custom XML, tracked insertions and moves.
_WRAPPERS = frozenset(
    f"{_W}{name}" for name in ("sdt", "sdtContent", "customXml", "ins", "moveTo", "smartTag")
)
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_MAX_NESTING = 64
# Never the text: deleted runs, field instructions, properties.
_SKIPPED = frozenset(
    f"{_W}{name}"
    for name in (
        "del",
        "delText",
        "instrText",
        "pPr",
        "rPr",
        "sdtPr",
        "moveFrom",
        "tblPr",
        "trPr",
        "tcPr",
    )
)


_W14 = "{http://schemas.microsoft.com/office/word/2010/wordml}"


def _checkbox(sdt: Any) -> str | None:
    """A check box content control's state as text (`[x]`, `[ ]`), else None."""
    properties = sdt.find(f"{_W}sdtPr")
    box = properties.find(f"{_W14}checkbox") if properties is not None else None
    if box is None:
        return None
    checked = box.find(f"{_W14}checked")
    on = checked is not None and (checked.get(f"{_W14}val") or "1") in ("1", "true", "on")
    return "[x]" if on else "[ ]"


def _alternative(element: Any) -> Any:
    """Of an `mc:AlternateContent`, the part a reader shows: its first choice
    (the fallback repeats it for older readers), else the fallback."""
    for child in element.iterchildren():
        if child.tag in (f"{_MC}Choice", f"{_MC}Fallback"):
            return child
    return None


def _math_block(math: Any) -> str:
    return md.fenced(omml.latex(math), "math")


def _inline(p: Any) -> _Inline:
    plain: list[str] = []
    markdown: list[str] = []
    boxes: list[Any] = []
    charts: list[str] = []
    notes: list[str] = []
    display: list[str] = []

    def text(value: str) -> None:
        plain.append(value)
        markdown.append(md.escape_inline(value))

    def visit(element: Any, depth: int) -> None:
        for child in element.iterchildren():
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag == f"{_W}t":
                text(child.text or "")
            elif tag in (f"{_W}tab", f"{_W}ptab"):
                text(" ")
            elif tag in (f"{_W}br", f"{_W}cr"):
                text("\n")
            elif tag == f"{_W}noBreakHyphen":
                text("-")
            elif tag == f"{omml.M}oMath":
                equation = omml.latex(child)
                plain.append(f"${equation}$")
                markdown.append(md.code_span(f"${equation}$"))
            elif tag == f"{omml.M}oMathPara":
                display.extend(_math_block(m) for m in child.iter(f"{omml.M}oMath"))
            elif tag == f"{_W}txbxContent":
                boxes.append(child)
            elif tag == f"{_W}sdt" and (box := _checkbox(child)) is not None:
                text(box)  # the state, not the glyph (☒) a font draws it with
            elif tag == f"{_C}chart":
                charts.append(child.get(f"{_R}id") or "")
            elif tag in (f"{_W}footnoteReference", f"{_W}endnoteReference"):
                key = ("f" if tag == f"{_W}footnoteReference" else "e") + (
                    child.get(f"{_W}id") or ""
                )
                notes.append(key)
                text(f"[{key[1:]}]")
            elif tag == f"{_MC}AlternateContent":
                chosen = _alternative(child)
                if chosen is not None and depth < _MAX_NESTING:
                    visit(chosen, depth + 1)
            elif tag and tag not in _SKIPPED and depth < _MAX_NESTING:
                visit(child, depth + 1)

    visit(p, 0)
    return _Inline(
        "".join(plain), "".join(markdown), tuple(boxes), tuple(charts), tuple(notes), tuple(display)
    )


def _number(text: str) -> str:
    """A cached value as Word shows it: 4.4, not 4.4000000000000004."""
    try:
        return format(float(text), ".15g") if text.strip() else text
    except ValueError:
        return text


_C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


def _chart(part: Any, rel_id: str) -> list[str]:
    """A chart's title and its data as a pipe table: a row per category, a
    column per series (the values Word keeps in the chart's cache)."""
    from docx.oxml import parse_xml

    try:
        root = parse_xml(part.related_parts[rel_id].blob)
    except Exception:  # no such part, or a damaged one: the chart is an image
        return []
    blocks: list[str] = []
    title = root.find(f".//{_C}title")
    if title is not None:
        blocks.append(md.paragraph(" ".join(t.text or "" for t in title.iter(f"{_A}t"))))
    series = root.findall(f".//{_C}ser")

    def points(element: Any) -> dict[int, str]:
        found: dict[int, str] = {}
        for point in element.iter(f"{_C}pt") if element is not None else ():
            index, value = point.get("idx") or "", point.find(f"{_C}v")
            if index.isdigit() and value is not None:
                found[int(index)] = _number(value.text or "")
        return found

    categories = points(series[0].find(f"{_C}cat")) if series else {}
    columns = [points(ser.find(f"{_C}val")) for ser in series]
    names = [" ".join(points(ser.find(f"{_C}tx")).values()) for ser in series]
    if not columns:
        return [block for block in blocks if block]
    count = max([len(categories), *(len(column) for column in columns)])
    rows = [["", *names]] + [
        [categories.get(i, ""), *(column.get(i, "") for column in columns)]
        for i in range(min(count, 10_000))
    ]
    blocks.append(md.pipe_table(rows))
    return [block for block in blocks if block]


def _plain(container: Any, depth: int) -> str:
    """All the text of a cell (its paragraphs, nested tables, text boxes), as
    one line's words."""
    parts: list[str] = []
    for child in container.iterchildren():
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag == f"{_W}p":
            inline = _inline(child)
            parts.append(inline.plain)
            parts.extend(f"${omml.latex(m)}$" for m in child.iter(f"{omml.M}oMath") if _in_para(m))
            parts.extend(_plain(box, depth + 1) for box in inline.boxes if depth < _MAX_NESTING)
        elif tag == f"{_W}tbl" and depth < _MAX_NESTING:
            parts.extend(" ".join(row) for row in _table_rows(child, depth + 1))
        elif tag == f"{omml.M}oMathPara":
            parts.extend(f"${omml.latex(m)}$" for m in child.iter(f"{omml.M}oMath"))
        elif tag == f"{_MC}AlternateContent":
            chosen = _alternative(child)
            if chosen is not None and depth < _MAX_NESTING:
                parts.append(_plain(chosen, depth + 1))
        elif tag in _WRAPPERS and depth < _MAX_NESTING:
            parts.append(_plain(child, depth + 1))
    return md.one_line(" ".join(parts))


def _in_para(math: Any) -> bool:
    """An equation of a display block (`m:oMathPara`), which `_inline` sets apart."""
    parent = math.getparent()
    return parent is not None and parent.tag == f"{omml.M}oMathPara"


def _notes(document: Document) -> dict[str, str]:
    """Footnotes and endnotes by key ("f2", "e1"): their text, one line each."""
    from docx.oxml import parse_xml

    found: dict[str, str] = {}
    for rel in document.part.rels.values():
        kind = rel.reltype.rsplit("/", 1)[-1]
        if kind not in ("footnotes", "endnotes") or rel.is_external:
            continue
        try:
            root = parse_xml(rel.target_part.blob)
        except Exception:  # a damaged notes part: the body is still read
            continue
        for note in root.iterchildren(f"{_W}{kind[:-1]}"):
            key = kind[0] + (note.get(f"{_W}id") or "")
            found[key] = _plain(note, 0)
    return found


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

    def of(self, paragraph: Any) -> _Style:
        ids = paragraph.xpath("./w:pPr/w:pStyle/@w:val")
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
    paragraph: Any, style: _Style, numbering: dict[tuple[str, int], _Level]
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
        ordered = fmt is not None and fmt.fmt not in ("bullet", "none")
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


@dataclass(frozen=True, slots=True)
class _Level:
    """One level of a numbering definition."""

    fmt: str  # `decimal`, `bullet`, `lowerLetter`, ...
    text: str  # the label's pattern: "%1.%2."
    start: int


def _numbering_formats(document: Document) -> dict[tuple[str, int], _Level]:
    """(numId, level) -> that level's format, label pattern and start."""
    try:
        numbering = document.part.numbering_part.element
    except (KeyError, NotImplementedError, AttributeError):
        return {}
    abstract: dict[str, dict[int, _Level]] = {}
    for node in numbering.iterchildren(f"{_W}abstractNum"):
        levels: dict[int, _Level] = {}
        for lvl in node.iterchildren(f"{_W}lvl"):
            ilvl = lvl.get(f"{_W}ilvl") or "0"
            if not ilvl.isdigit():
                continue
            fmt, text, start = (lvl.find(f"{_W}{tag}") for tag in ("numFmt", "lvlText", "start"))
            begin = start.get(f"{_W}val") if start is not None else "1"
            levels[int(ilvl)] = _Level(
                (fmt.get(f"{_W}val") or "") if fmt is not None else "",
                (text.get(f"{_W}val") or "") if text is not None else "",
                int(begin) if begin and begin.isdigit() else 1,
            )
        abstract[node.get(f"{_W}abstractNumId") or ""] = levels
    formats: dict[tuple[str, int], _Level] = {}
    for num in numbering.iterchildren(f"{_W}num"):
        ref = num.find(f"{_W}abstractNumId")
        if ref is None:
            continue
        for ilvl, level in abstract.get(ref.get(f"{_W}val") or "", {}).items():
            formats[(num.get(f"{_W}numId") or "", ilvl)] = level
    return formats


class _Counters:
    """The numbers Word shows before numbered paragraphs: one counter per list
    (numId) and level, a level's counting restarting under a new item above."""

    def __init__(self, formats: dict[tuple[str, int], _Level]) -> None:
        self._formats = formats
        self._counts: dict[str, list[int | None]] = {}

    def label(self, num_id: str, level: int) -> str:
        """Counts this paragraph and returns its label ("2.1"), or ""."""
        current = self._formats.get((num_id, level))
        if current is None or current.fmt in ("bullet", "none", ""):
            return ""
        counts = self._counts.setdefault(num_id, [None] * 9)
        previous = counts[level]
        counts[level] = current.start if previous is None else previous + 1
        for deeper in range(level + 1, 9):
            counts[deeper] = None

        def number(found: re.Match[str]) -> str:
            at = int(found.group(1)) - 1
            level_format = self._formats.get((num_id, at))
            count = counts[at] if 0 <= at < 9 else None
            if count is None:
                count = level_format.start if level_format is not None else 1
            return _formatted(count, level_format.fmt if level_format else "decimal")

        return re.sub(r"%([1-9])", number, current.text).strip()


def _formatted(count: int, fmt: str) -> str:
    if fmt in ("lowerLetter", "upperLetter"):
        letters = chr(ord("a") + (count - 1) % 26) * ((count - 1) // 26 + 1)
        return letters.upper() if fmt == "upperLetter" else letters
    if fmt in ("lowerRoman", "upperRoman"):
        roman = _roman(count)
        return roman.upper() if fmt == "upperRoman" else roman
    return str(count)


def _roman(count: int) -> str:
    out = ""
    for value, numeral in (
        (1000, "m"),
        (900, "cm"),
        (500, "d"),
        (400, "cd"),
        (100, "c"),
        (90, "xc"),
        (50, "l"),
        (40, "xl"),
        (10, "x"),
        (9, "ix"),
        (5, "v"),
        (4, "iv"),
        (1, "i"),
    ):
        while count >= value:
            out += numeral
            count -= value
    return out


def _table_rows(table: Any, depth: int) -> list[list[str]]:
    """A table's rows of cell texts, one per grid column: a merged cell's text
    is in every grid cell it covers (across, and down a vertical merge), so
    each row reads whole, as python-docx and docling give it."""
    rows: list[list[str]] = []
    above: dict[int, str] = {}  # grid column -> the text of the cell there in the row above
    for row in _children(table, "tr"):
        cells: list[str] = []
        for cell in _children(row, "tc"):
            properties = cell.find(f"{_W}tcPr")
            span = properties.find(f"{_W}gridSpan") if properties is not None else None
            merge = properties.find(f"{_W}vMerge") if properties is not None else None
            continued = merge is not None and (merge.get(f"{_W}val") or "continue") == "continue"
            text = above.get(len(cells), "") if continued else _plain(cell, depth + 1)
            count = span.get(f"{_W}val") if span is not None else "1"
            columns = min(int(count), 64) if count and count.isdigit() and int(count) > 0 else 1
            for _ in range(columns):
                above[len(cells)] = text
                cells.append(text)
        rows.append(cells)
    return rows


def _children(element: Any, name: str) -> list[Any]:
    """The rows of a table or the cells of a row, also those a content
    control or custom XML wraps."""
    found: list[Any] = []
    for child in element.iterchildren():
        if child.tag == f"{_W}{name}":
            found.append(child)
        elif child.tag in _WRAPPERS:
            found.extend(_children(child, name))
    return found


IMPORTER = Importer(
    name="docx",
    version=VERSION,
    suffixes=(".docx",),
    libraries=("docx",),
    convert=convert,
)
