"""DOCX -> markdown: what paragraph styles and numbering say (flow/importers/docx.py).

A style resolved once with the styles it is based on (`Styles`): its heading
level (an outline level, or the names Title and Heading 1-9), whether it is
a code style, the numbering it sets. A paragraph's heading level and list
item (depth, ordered) from its own properties and its style's; the numbering
definitions' formats, and the numbers Word shows before numbered paragraphs
(`Counters`: decimal, letters, roman numerals).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from mdchunks.importers.docx_text import W

if TYPE_CHECKING:
    from docx.document import Document
    from docx.styles.style import ParagraphStyle

_HEADING_NAME = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_CODE_STYLES = frozenset({"code", "html preformatted", "source code", "macro text"})


@dataclass(frozen=True, slots=True)
class Style:
    """What a paragraph style (with the styles it is based on) says."""

    name: str = ""
    level: int | None = None  # heading level
    code: bool = False
    num_id: str | None = None
    num_level: int | None = None


class Styles:
    """Paragraph styles by id, each resolved once: python-docx's `paragraph.style`
    looks the default style up by scanning every style, for every paragraph
    (quadratic: 7 s for a 50 KB file)."""

    def __init__(self, document: Document) -> None:
        from docx.enum.style import WD_STYLE_TYPE

        self._by_id: dict[str, Style] = {}
        self._default = Style()
        for style in document.styles:
            if style.type != WD_STYLE_TYPE.PARAGRAPH:
                continue
            resolved = _resolve(cast("ParagraphStyle", style))
            self._by_id[style.style_id or ""] = resolved
            if style.element.get(f"{W}default") in ("1", "true"):
                self._default = resolved

    def of(self, paragraph: Any) -> Style:
        ids = paragraph.xpath("./w:pPr/w:pStyle/@w:val")
        return self._by_id.get(str(ids[0]), self._default) if ids else self._default


def _resolve(style: ParagraphStyle) -> Style:
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
        own_id, own_level = numbering_of(current.element)
        num_id = num_id if num_id is not None else own_id
        num_level = num_level if num_level is not None else own_level
        current = cast("ParagraphStyle | None", current.base_style)
        seen += 1
    lower = name.lower()
    return Style(name, level, lower in _CODE_STYLES or "code" in lower, num_id, num_level)


def heading_level(paragraph: Any, style: Style) -> int | None:
    """The paragraph's heading level (1-9), or None for body text: its own
    outline level, else its style's (flow/importers/docx.py's docstring)."""
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


def list_item(
    paragraph: Any, style: Style, numbering: dict[tuple[str, int], Level]
) -> tuple[int, bool] | None:
    """(depth, ordered) of a list paragraph, else None."""
    own_id, own_level = numbering_of(paragraph)
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


def numbering_of(element: Any) -> tuple[str | None, int | None]:
    """The numbering id and level an element (paragraph or style) sets itself."""
    ids = element.xpath("./w:pPr/w:numPr/w:numId/@w:val")
    levels = element.xpath("./w:pPr/w:numPr/w:ilvl/@w:val")
    level = int(levels[0]) if levels and str(levels[0]).isdigit() else None
    return (str(ids[0]) if ids else None), level


@dataclass(frozen=True, slots=True)
class Level:
    """One level of a numbering definition."""

    fmt: str  # `decimal`, `bullet`, `lowerLetter`, ...
    text: str  # the label's pattern: "%1.%2."
    start: int


def numbering_formats(document: Document) -> dict[tuple[str, int], Level]:
    """(numId, level) -> that level's format, label pattern and start."""
    try:
        numbering = document.part.numbering_part.element
    except (KeyError, NotImplementedError, AttributeError):
        return {}
    abstract: dict[str, dict[int, Level]] = {}
    for node in numbering.iterchildren(f"{W}abstractNum"):
        levels: dict[int, Level] = {}
        for lvl in node.iterchildren(f"{W}lvl"):
            ilvl = lvl.get(f"{W}ilvl") or "0"
            if not ilvl.isdigit():
                continue
            fmt, text, start = (lvl.find(f"{W}{tag}") for tag in ("numFmt", "lvlText", "start"))
            begin = start.get(f"{W}val") if start is not None else "1"
            levels[int(ilvl)] = Level(
                (fmt.get(f"{W}val") or "") if fmt is not None else "",
                (text.get(f"{W}val") or "") if text is not None else "",
                int(begin) if begin and begin.isdigit() else 1,
            )
        abstract[node.get(f"{W}abstractNumId") or ""] = levels
    formats: dict[tuple[str, int], Level] = {}
    for num in numbering.iterchildren(f"{W}num"):
        ref = num.find(f"{W}abstractNumId")
        if ref is None:
            continue
        for ilvl, level in abstract.get(ref.get(f"{W}val") or "", {}).items():
            formats[(num.get(f"{W}numId") or "", ilvl)] = level
    return formats


class Counters:
    """The numbers Word shows before numbered paragraphs: one counter per list
    (numId) and level, a level's counting restarting under a new item above."""

    def __init__(self, formats: dict[tuple[str, int], Level]) -> None:
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
