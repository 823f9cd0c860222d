"""DOCX -> markdown: a body's XML read as text (flow/importers/docx.py walks it).

What a paragraph holds, as plain text and as markdown (`inline_of`): its
runs, tabs and breaks, equations (LaTeX, `omml`), check boxes, footnote and
endnote references; and what it holds besides, which the walk puts after it:
text boxes, charts (their cached data as a pipe table, `chart_blocks`),
display equations, the notes it refers to (`notes_of`). A table's rows of
cell texts (`table_rows`), merged cells repeated in every grid cell they
cover. The namespaces and the elements the walk goes into or skips.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mdchunks.importers import markdown as md
from mdchunks.importers import omml

if TYPE_CHECKING:
    from docx.document import Document

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


@dataclass(frozen=True, slots=True)
class Inline:
    """A paragraph's content: its text plain (headings, code, cells) and as
    markdown (equations as code spans), what it holds besides (text boxes,
    notes it refers to) and its display equations."""

    plain: str
    markdown: str
    boxes: tuple[Any, ...]  # w:txbxContent elements, in order
    charts: tuple[str, ...]  # relationship ids of the charts drawn in it
    notes: tuple[str, ...]  # note ids ("f3": footnote 3, "e1": endnote 1)
    display: tuple[str, ...]  # LaTeX of its display equations (m:oMathPara)


# Elements whose children are body content: a content control, its content,
# custom XML, tracked insertions and moves.
WRAPPERS = frozenset(
    f"{W}{name}" for name in ("sdt", "sdtContent", "customXml", "ins", "moveTo", "smartTag")
)
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
MAX_NESTING = 64
# Never the text: deleted runs, field instructions, properties.
_SKIPPED = frozenset(
    f"{W}{name}"
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
    properties = sdt.find(f"{W}sdtPr")
    box = properties.find(f"{_W14}checkbox") if properties is not None else None
    if box is None:
        return None
    checked = box.find(f"{_W14}checked")
    on = checked is not None and (checked.get(f"{_W14}val") or "1") in ("1", "true", "on")
    return "[x]" if on else "[ ]"


def alternative(element: Any) -> Any:
    """Of an `mc:AlternateContent`, the part a reader shows: its first choice
    (the fallback repeats it for older readers), else the fallback."""
    for child in element.iterchildren():
        if child.tag in (f"{MC}Choice", f"{MC}Fallback"):
            return child
    return None


def math_block(math: Any) -> str:
    return md.fenced(omml.latex(math), "math")


def inline_of(p: Any) -> Inline:
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
            if tag == f"{W}t":
                text(child.text or "")
            elif tag in (f"{W}tab", f"{W}ptab"):
                text(" ")
            elif tag in (f"{W}br", f"{W}cr"):
                text("\n")
            elif tag == f"{W}noBreakHyphen":
                text("-")
            elif tag == f"{omml.M}oMath":
                equation = omml.latex(child)
                plain.append(f"${equation}$")
                markdown.append(md.code_span(f"${equation}$"))
            elif tag == f"{omml.M}oMathPara":
                display.extend(math_block(m) for m in child.iter(f"{omml.M}oMath"))
            elif tag == f"{W}txbxContent":
                boxes.append(child)
            elif tag == f"{W}sdt" and (box := _checkbox(child)) is not None:
                text(box)  # the state, not the glyph (☒) a font draws it with
            elif tag == f"{_C}chart":
                charts.append(child.get(f"{_R}id") or "")
            elif tag in (f"{W}footnoteReference", f"{W}endnoteReference"):
                key = ("f" if tag == f"{W}footnoteReference" else "e") + (child.get(f"{W}id") or "")
                notes.append(key)
                text(f"[{key[1:]}]")
            elif tag == f"{MC}AlternateContent":
                chosen = alternative(child)
                if chosen is not None and depth < MAX_NESTING:
                    visit(chosen, depth + 1)
            elif tag and tag not in _SKIPPED and depth < MAX_NESTING:
                visit(child, depth + 1)

    visit(p, 0)
    return Inline(
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


def chart_blocks(part: Any, rel_id: str) -> list[str]:
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
        if tag == f"{W}p":
            inline = inline_of(child)
            parts.append(inline.plain)
            parts.extend(f"${omml.latex(m)}$" for m in child.iter(f"{omml.M}oMath") if _in_para(m))
            parts.extend(_plain(box, depth + 1) for box in inline.boxes if depth < MAX_NESTING)
        elif tag == f"{W}tbl" and depth < MAX_NESTING:
            parts.extend(" ".join(row) for row in table_rows(child, depth + 1))
        elif tag == f"{omml.M}oMathPara":
            parts.extend(f"${omml.latex(m)}$" for m in child.iter(f"{omml.M}oMath"))
        elif tag == f"{MC}AlternateContent":
            chosen = alternative(child)
            if chosen is not None and depth < MAX_NESTING:
                parts.append(_plain(chosen, depth + 1))
        elif tag in WRAPPERS and depth < MAX_NESTING:
            parts.append(_plain(child, depth + 1))
    return md.one_line(" ".join(parts))


def _in_para(math: Any) -> bool:
    """An equation of a display block (`m:oMathPara`), which `inline_of` sets apart."""
    parent = math.getparent()
    return parent is not None and parent.tag == f"{omml.M}oMathPara"


def notes_of(document: Document) -> dict[str, str]:
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
        for note in root.iterchildren(f"{W}{kind[:-1]}"):
            key = kind[0] + (note.get(f"{W}id") or "")
            found[key] = _plain(note, 0)
    return found


def table_rows(table: Any, depth: int) -> list[list[str]]:
    """A table's rows of cell texts, one per grid column: a merged cell's text
    is in every grid cell it covers (across, and down a vertical merge), so
    each row reads whole, as python-docx and docling give it."""
    rows: list[list[str]] = []
    above: dict[int, str] = {}  # grid column -> the text of the cell there in the row above
    for row in _children(table, "tr"):
        cells: list[str] = []
        for cell in _children(row, "tc"):
            properties = cell.find(f"{W}tcPr")
            span = properties.find(f"{W}gridSpan") if properties is not None else None
            merge = properties.find(f"{W}vMerge") if properties is not None else None
            continued = merge is not None and (merge.get(f"{W}val") or "continue") == "continue"
            text = above.get(len(cells), "") if continued else _plain(cell, depth + 1)
            count = span.get(f"{W}val") if span is not None else "1"
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
        if child.tag == f"{W}{name}":
            found.append(child)
        elif child.tag in WRAPPERS:
            found.extend(_children(child, name))
    return found
