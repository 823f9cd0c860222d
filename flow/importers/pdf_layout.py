"""Headings of a PDF without an outline, from what its pages show
(docs/importers.md, "PDF headings from the page").

Pure: the text pieces pypdf hands its visitor (text, position, font size,
font style) in, lines and headings out. A line is the pieces on one
baseline in content order. The body text is the font size most characters
have. A line is a heading when it is short, looks it (larger than the body;
or at the body's size, set apart and bold, italic or numbered), stands
alone, and introduces text (the line after it is body text below it, or a
heading that is). A heading that wraps (the next line in the same style,
just below) is one heading. Running headers and footers, lines in a page's
top or bottom band whose text (digits aside) repeats on other pages, are
never headings; those on every page are left out of the text too
(`running`). A cover page gives its title alone.

Levels: the heading sizes ranked from the largest; a numbered heading
(`2.`, `2.3`, `A.`, `IV.`) takes its numbering's depth below the rank of
the first numbered size, so `3.1` nests under `3.` whatever their fonts say.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

# Pieces closer than this (in font sizes) vertically share a line.
_BASELINE = 0.35
# Share of the page's height at the top and bottom where running headers and
# footers live.
_BAND = 0.12
# More characters than this is a paragraph's line, not a heading.
_MAX_HEADING_CHARS = 150
_MAX_HEADING_WORDS = 20
# Fewer characters of body text than this make a page a cover.
_COVER_CHARS = 300
# Larger than the body by this factor is a heading's size (a figure's labels
# and a drop cap are often a little larger: 1.15).
_LARGER = 1.18
_BOLD_NAME = re.compile(
    r"bold|black|heavy|demi|medi|(?<![a-z])(?:cmbx|sfbx|cmb)\d|bd\b|-b$|,b", re.IGNORECASE
)
_ITALIC_NAME = re.compile(r"italic|oblique|-it$|(?<![a-z])(?:cmti|sfti|cmsl)\d", re.IGNORECASE)
_MONO_NAME = re.compile(r"courier|mono|consol|menlo|(?<![a-z])(?:cmtt|sftt)\d", re.IGNORECASE)
_NUMBERED = re.compile(r"^((?:\d{1,2}\.)*\d{1,2}\.?|[A-Z]\.|[IVX]{1,5}\.)\s+\S")
_LETTER = re.compile(r"[^\W\d_]")
_RUNNING_KEY = re.compile(r"[\d\W_]+")
_PAGE_NUMBER = re.compile(r"^(?:page\s*)?(?:\d{1,4}|[ivxlc]{1,7})(?:\s*(?:of|/)\s*\d{1,4})?$", re.I)


@dataclass(frozen=True, slots=True)
class Piece:
    """One text-showing operation as the visitor saw it."""

    text: str
    x: float
    y: float  # baseline, in user space (up is larger)
    size: float  # effective font size (the matrices applied)
    bold: bool
    italic: bool = False
    mono: bool = False  # a fixed-pitch font: code, never a heading


@dataclass(frozen=True, slots=True)
class Line:
    text: str
    y: float
    size: float  # the size of most of its characters
    bold: bool  # every letter bold
    chars: int
    italic: bool = False  # every letter italic
    mono: bool = False  # some letters in a fixed-pitch font
    gap: float = 0.0  # down from the line before on its page (0: the first)


@dataclass(frozen=True, slots=True)
class Page:
    lines: tuple[Line, ...]
    top: float
    bottom: float


@dataclass(frozen=True, slots=True)
class Found:
    """A heading the page shows: its line's text, page and level."""

    text: str
    page: int
    level: int


@dataclass(frozen=True, slots=True)
class Style:
    bold: bool = False
    italic: bool = False
    mono: bool = False


def style_of(name: str, weight: float = 0.0, flags: int = 0, angle: float = 0.0) -> Style:
    """A font's style from its name and its descriptor (`/FontWeight`,
    `/Flags`: FixedPitch 1, Italic 64, ForceBold 1<<18; `/ItalicAngle`)."""
    return Style(
        bold=bool(_BOLD_NAME.search(name)) or weight >= 600 or bool(flags & (1 << 18)),
        italic=bool(_ITALIC_NAME.search(name)) or bool(flags & 64) or angle != 0,
        mono=bool(_MONO_NAME.search(name)) or bool(flags & 1),
    )


def lines_of(pieces: list[Piece]) -> tuple[Line, ...]:
    """The pieces grouped into lines: consecutive pieces on one baseline."""
    lines: list[Line] = []
    group: list[Piece] = []

    def close() -> None:
        if group:
            lines.append(_line(group))
            group.clear()

    for piece in pieces:
        if not piece.text.strip():
            continue
        if group:
            last = group[-1]
            height = max(piece.size, last.size, 1)
            # A new line: another baseline (not x: right-to-left text runs back).
            if abs(piece.y - last.y) > _BASELINE * height:
                close()
        group.append(piece)
    close()
    kept = [line for line in lines if line.text]
    return tuple(
        replace(line, gap=kept[i - 1].y - line.y if i else 0.0) for i, line in enumerate(kept)
    )


def _line(pieces: list[Piece]) -> Line:
    text = " ".join("".join(p.text for p in pieces).split())
    sizes: Counter[float] = Counter()
    bold = italic = True
    mono = False
    for piece in pieces:
        letters = len(_LETTER.findall(piece.text))
        sizes[round(piece.size, 1)] += len(piece.text.strip())
        bold = bold and (piece.bold or not letters)
        italic = italic and (piece.italic or not letters)
        mono = mono or (piece.mono and letters > 0)
    size = sizes.most_common(1)[0][0] if sizes else 0.0
    return Line(text, pieces[0].y, size, bold, len(text), italic, mono)


def body_size(pages: list[Page]) -> float:
    sizes: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            sizes[line.size] += line.chars
    return sizes.most_common(1)[0][0] if sizes else 0.0


def running_key(text: str) -> str:
    """A line's text as running headers repeat it: digits (page numbers) aside;
    a page number alone is the empty key."""
    if _PAGE_NUMBER.match(text.strip()):
        return ""
    return _RUNNING_KEY.sub(" ", text.lower()).strip()


def running(pages: list[Page]) -> tuple[frozenset[str], frozenset[str]]:
    """Keys of the running lines (top or bottom band, repeated on other
    pages, or a bare page number there), and of those on every page."""
    seen: Counter[str] = Counter()
    for page in pages:
        seen.update({running_key(line.text) for line in page.lines if _in_band(line, page)})
    many = len(pages) >= 2
    repeated = frozenset(key for key, n in seen.items() if many and n >= 2)
    every = frozenset(key for key in repeated if seen[key] == len(pages))
    return repeated | frozenset({""}), every


def _in_band(line: Line, page: Page) -> bool:
    band = (page.top - page.bottom) * _BAND
    return line.y >= page.top - band or line.y <= page.bottom + band


def is_running(line: Line, page: Page, keys: frozenset[str]) -> bool:
    return _in_band(line, page) and running_key(line.text) in keys


def shows_title(pages: list[Page], number: int, title: str) -> bool:
    """Whether a page shows a title as a line of its own: outside its top and
    bottom bands, at the body's size or larger."""
    body = body_size(pages)
    page = pages[number]
    wanted = "".join(title.split()).lower()
    return any(
        wanted
        and wanted in "".join(line.text.split()).lower()
        and not _in_band(line, page)
        and line.size >= body * 0.95
        for line in page.lines
    )


def headings(pages: list[Page]) -> list[Found]:
    """The headings the pages show, in reading order (module docstring)."""
    body = body_size(pages)
    if not body:
        return []
    keys, _ = running(pages)
    spacing = line_spacing(pages, body)
    # (page, text, size, bold) of each heading line, wrapped lines joined.
    found: list[tuple[int, str, float, bool]] = []
    several = len(pages) > 1
    for number, page in enumerate(pages):
        lines = page.lines
        candidates: list[tuple[int, int, tuple[int, str, float, bool]]] = []
        index = 0
        while index < len(lines):
            line = lines[index]
            if not _heading_style(line, body, spacing) or is_running(line, page, keys):
                index += 1
                continue
            parts = [line.text]
            below = index + 1
            while (
                below < len(lines)
                and lines[below].size == line.size
                and lines[below].bold == line.bold
                and lines[below].italic == line.italic
                and len(_LETTER.findall(lines[below].text)) > 1
                and 0 < lines[below - 1].y - lines[below].y <= 1.6 * line.size
                and len(parts) < 3
                and not _NUMBERED.match(lines[below].text)
            ):
                parts.append(lines[below].text)
                below += 1
            text = " ".join(parts)
            if _heading_text(text) and _alone(lines, index, below, line, body):
                candidates.append((index, below, (number, text, line.size, line.bold)))
            index = below
        on_page = _introducing(candidates, lines, body, page, keys)
        if several and _cover(page, body):
            # A cover (front or back) or a full-page figure: set in display
            # type all over; only its largest line, the title, is a heading.
            largest = max((size for _, _, size, _ in on_page), default=0.0)
            on_page = [item for item in on_page if item[2] == largest][:1]
        found.extend(on_page)
    return _levels(found)


def _introducing(
    candidates: list[tuple[int, int, tuple[int, str, float, bool]]],
    lines: tuple[Line, ...],
    body: float,
    page: Page,
    keys: frozenset[str],
) -> list[tuple[int, str, float, bool]]:
    """The candidates that introduce text: the line after one is body text
    (or code) below it, or a heading that does, or the page ends (a title over a
    figure's labels, a cover's display lines introduce none)."""
    valid: dict[int, bool] = {}
    kept: list[tuple[int, str, float, bool]] = []
    for start, end, item in reversed(candidates):
        if end >= len(lines) or is_running(lines[end], page, keys):
            ok = True
        elif end in valid:
            ok = valid[end]
        else:
            after = lines[end]
            # Body text, or code (set smaller, often) below it.
            size_ok = abs(after.size - body) <= 0.06 * body or (
                after.mono and after.size <= body * 1.06
            )
            ok = size_ok and after.y < lines[end - 1].y
        valid[start] = ok
        if ok:
            kept.append(item)
    return kept[::-1]


def _cover(page: Page, body: float) -> bool:
    """A page with next to no running text: fewer than `_COVER_CHARS`
    characters in the body's size and not bold."""
    chars = sum(line.chars for line in page.lines if line.size == body and not line.bold)
    return chars < _COVER_CHARS


def line_spacing(pages: list[Page], body: float) -> float:
    """The distance most often between two lines of body text, one below the other."""
    gaps: Counter[float] = Counter(
        round(line.gap, 1)
        for page in pages
        for line in page.lines
        if line.size == body and 0 < line.gap < 3 * body
    )
    return gaps.most_common(1)[0][0] if gaps else body * 1.2


def _heading_style(line: Line, body: float, spacing: float) -> bool:
    if not _LETTER.search(line.text) or line.mono:
        return False
    if line.size >= body * _LARGER:
        return True
    if line.size < body * 0.95:
        return False
    # At the body's size a heading is set apart: above it more room than
    # between a paragraph's lines (or it starts the page).
    apart = line.gap <= 0 or line.gap >= 1.5 * spacing
    if line.bold:
        return apart or line.gap >= 1.2 * spacing
    if line.italic or _NUMBERED.match(line.text):
        return apart and len(line.text.split()) <= 10 and not line.text.endswith(".")
    return False


def _heading_text(text: str) -> bool:
    words = text.split()
    if len(_LETTER.findall(text)) < 2:
        return False  # a variable, a drop cap
    if len(text) > _MAX_HEADING_CHARS or len(words) > _MAX_HEADING_WORDS:
        return False
    # A sentence's end or a run-on (",", ";") is body text set in bold.
    return not text.endswith((",", ";", ":")) or len(words) <= 4


def _alone(lines: tuple[Line, ...], start: int, end: int, first: Line, body: float) -> bool:
    """Nothing in body style continues the heading's block on its baseline or
    right below it as part of the same sentence."""
    if end < len(lines):
        after = lines[end]
        same_block = 0 < first.y - after.y < 0.5 * first.size
        if same_block:
            return False
    return True


def _levels(found: list[tuple[int, str, float, bool]]) -> list[Found]:
    # By size alone: weight sets a run-in heading apart from the body, not
    # one heading's rank from another's.
    sizes = sorted({round(size * 2) / 2 for _, _, size, _ in found}, reverse=True)
    rank = {(size, bold): sizes.index(round(size * 2) / 2) for _, _, size, bold in found}
    numbered_ranks = [
        rank[(size, bold)]
        for _, text, size, bold in found
        if (m := _NUMBERED.match(text)) and _depth(m.group(1)) == 1
    ]
    base = min(numbered_ranks) if numbered_ranks else None
    result: list[Found] = []
    for page, text, size, bold in found:
        level = rank[(size, bold)] + 1
        numbered = _NUMBERED.match(text)
        if numbered and base is not None:
            level = base + _depth(numbered.group(1))
        result.append(Found(text, page, max(1, min(level, 6))))
    return result


def _depth(numbering: str) -> int:
    return len([part for part in numbering.split(".") if part])
