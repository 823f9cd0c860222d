"""HTML (`.html`, `.htm`) -> markdown: `h1`-`h6` are the headings.

Parsed by Beautiful Soup over the standard library's `html.parser`: pure
Python (no native parser to crash on a hostile page), no DTD, no external
entity, no network. The page's own encoding (BOM, `<meta charset>`) is
found by Beautiful Soup's detector.

What is kept: the `<main>` element when there is one (else the body), with
navigation chrome, scripts, styles, forms and hidden parts dropped; headings;
paragraphs with line breaks; lists, nested; tables as pipe tables; `<pre>` as
fenced code (its language from a `language-*` class); inline code as code
spans; images by their alt text. Links keep their text.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mdchunks.importers import markdown as md
from mdchunks.importers.base import ConversionFailed, Converted, Importer, library_missing

if TYPE_CHECKING:
    from bs4 import BeautifulSoup
    from bs4.element import Tag

VERSION = "2"

_HEADINGS = {f"h{level}": level for level in range(1, 7)}
# Never content: code, styles, page chrome, forms, embedded objects.
_DROPPED = frozenset(
    [
        "script",
        "style",
        "noscript",
        "template",
        "head",
        "nav",
        "aside",
        "footer",
        "form",
        "button",
        "input",
        "select",
        "textarea",
        "iframe",
        "object",
        "embed",
        "svg",
        "canvas",
        "audio",
        "video",
        "map",
        "dialog",
    ]
)
_CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "search", "complementary"})
# Permalink markers beside headings (Sphinx, MkDocs, GitHub's rendered pages).
_ANCHOR_CLASSES = frozenset({"headerlink", "anchor", "anchorjs-link", "heading-anchor"})
_BLOCKS = frozenset(
    [
        "html",
        "body",
        "main",
        "article",
        "section",
        "div",
        "header",
        "address",
        "figure",
        "figcaption",
        "details",
        "summary",
        "fieldset",
        "center",
        "dl",
        "dt",
        "dd",
        "p",
        "hgroup",
    ]
)
_LANGUAGE = re.compile(r"^(?:language|lang|highlight-source)-([\w+#.-]+)$")


def convert(data: bytes) -> Converted:
    try:
        from bs4 import BeautifulSoup
    except ImportError:
        raise library_missing("html") from None
    try:
        soup = BeautifulSoup(data, "html.parser")
    except Exception as exc:  # the parser's own errors: this file's alone
        raise ConversionFailed(f"cannot parse this HTML: {md.one_line(str(exc))}") from None
    try:
        root = soup.find("main") or soup.find(role="main") or soup.body or soup
        writer = _Writer()
        writer.walk(root)
        return Converted(md.document(writer.finish()), writer.headings)
    finally:
        _free(soup)


def _free(soup: BeautifulSoup) -> None:
    """Break the tree up now: its parent, sibling and next-element links are
    cycles, freed only when the cyclic collector next runs, so the tree (12
    bytes a byte of HTML) was alive while the chunker parsed and split the
    text (issue 42: memory per document; 40 ms a MB)."""
    from bs4.element import Tag

    for child in list(soup.contents):
        if isinstance(child, Tag):
            child.decompose()


class _Writer:
    """Blocks in document order; inline text gathered until a block ends."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.headings = 0
        self._inline: list[str] = []

    def finish(self) -> list[str]:
        self._flush()
        return self.blocks

    def walk(self, node: Tag) -> None:
        from bs4.element import NavigableString, Tag

        for child in node.children:
            if isinstance(child, Tag):
                self._element(child)
            elif type(child) is NavigableString:  # not a comment, doctype or CDATA
                self._inline.append(md.escape_inline(_spaces(str(child))))

    def _element(self, tag: Tag) -> None:
        name = tag.name
        if _dropped(tag):
            return
        if name in _HEADINGS:
            self._flush()
            title = inline_text(tag)
            if md.one_line(title):
                self.blocks.append(md.heading(_HEADINGS[name], title))
                self.headings += 1
        elif name == "pre":
            self._flush()
            self.blocks.append(md.fenced(tag.get_text(), _language(tag)))
        elif name in ("ul", "ol"):
            self._flush()
            self.blocks.append(md.render_list(_list_items(tag, 0)))
        elif name == "table":
            self._flush()
            self.blocks.append(md.pipe_table(_table_rows(tag)))
        elif name == "blockquote":
            self._flush()
            inner = _Writer()
            inner.walk(tag)
            self.blocks.append(md.quoted(inner.finish()))
            self.headings += inner.headings
        elif name == "hr":
            self._flush()
            self.blocks.append("---")
        elif name == "br":
            self._inline.append("\n")
        elif name == "code":
            self._inline.append(md.code_span(tag.get_text()))
        elif name == "img":
            self._inline.append(md.escape_inline(_spaces(str(tag.get("alt") or ""))))
        elif name in _BLOCKS or name in ("li",):
            self._flush()
            self.walk(tag)
            self._flush()
        else:
            self.walk(tag)

    def _flush(self) -> None:
        text = md.inline_block("".join(self._inline))
        self._inline.clear()
        if text:
            self.blocks.append(text)


def inline_text(tag: Tag) -> str:
    """A heading's or a cell's text: what a reader sees of it, on one line."""
    from bs4.element import NavigableString, Tag

    # One walk that skips dropped subtrees: asking each string for all its
    # parents was quadratic in the nesting (issue 42: nested `<span>`s in
    # one `<h1>`, 168 KB took 64 s).
    if _dropped(tag) or any(isinstance(p, Tag) and _dropped(p) for p in tag.parents):
        return ""
    parts: list[str] = []
    stack = list(reversed(tag.contents))
    while stack:
        piece = stack.pop()
        if isinstance(piece, Tag):
            if not _dropped(piece):
                stack.extend(reversed(piece.contents))
        elif type(piece) is NavigableString:
            parts.append(str(piece))
    return md.one_line("".join(parts))


def _dropped(tag: Tag) -> bool:
    if tag.name in _DROPPED or tag.has_attr("hidden"):
        return True
    if str(tag.get("role") or "") in _CHROME_ROLES:
        return True
    classes: list[str] | str = tag.get("class") or []
    return tag.name == "a" and any(str(c) in _ANCHOR_CLASSES for c in classes)


def _spaces(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _language(pre: Tag) -> str:
    from bs4.element import Tag

    code = pre.find("code")
    for tag in (code, pre):
        if isinstance(tag, Tag):
            for cls in tag.get("class") or []:
                found = _LANGUAGE.match(str(cls))
                if found:
                    return found.group(1)
    return ""


def _list_items(tag: Tag, depth: int) -> list[md.ListItem]:
    """The items of a list and of the lists nested in them, in order."""
    from bs4.element import NavigableString, Tag

    ordered = tag.name == "ol"
    start_at = str(tag.get("start") or "").strip()
    start = int(start_at) if ordered and start_at.isdigit() and len(start_at) < 10 else None
    items: list[md.ListItem] = []
    for li in tag.find_all("li", recursive=False):
        nested: list[md.ListItem] = []
        writer = _Writer()
        for child in li.children:
            if isinstance(child, Tag) and child.name in ("ul", "ol"):
                nested.extend(_list_items(child, depth + 1))
            elif isinstance(child, Tag):
                writer._element(child)
            elif type(child) is NavigableString:
                writer._inline.append(md.escape_inline(_spaces(str(child))))
        text = "\n".join(writer.finish())
        items.append(md.ListItem(depth, ordered, text, start if not items else None))
        items.extend(nested)
    return items


def _table_rows(table: Tag) -> list[list[str]]:
    """The rows of a table, one cell per column: a cell spanning columns or
    rows has its text in each grid cell it covers (each row reads whole)."""
    from bs4.element import Tag

    rows: list[list[str]] = []
    below: dict[int, tuple[int, str]] = {}  # column -> (rows still spanned, text)

    def spanned(cells: list[str]) -> None:
        while len(cells) in below:
            left, text = below.pop(len(cells))
            if left > 1:
                below[len(cells)] = (left - 1, text)
            cells.append(text)

    for tr in table.find_all("tr"):
        if tr.find_parent("table") is not table:
            continue  # a nested table's row: its text is its cell's
        cells: list[str] = []
        for cell in tr.find_all(["th", "td"], recursive=False):
            assert isinstance(cell, Tag)
            spanned(cells)
            text = cell_text(cell)
            across = _span(cell.get("colspan"), _MAX_COLUMNS)
            down = _span(cell.get("rowspan"), _MAX_ROWS)
            for _ in range(across):
                if down > 1:
                    below[len(cells)] = (down - 1, text)
                cells.append(text)
        spanned(cells)
        if cells:
            rows.append(cells)
    return rows


_MAX_COLUMNS = 50
_MAX_ROWS = 1000


def _span(value: object, bound: int) -> int:
    text = str(value or "1").strip()
    return min(int(text), bound) if text.isdigit() and int(text[:6]) > 0 else 1


# Elements that end a line of a cell's text: its paragraphs, line breaks,
# list items, a nested table's cells and rows.
_CELL_BREAKS = (
    _BLOCKS
    | frozenset({"br", "li", "ul", "ol", "tr", "td", "th", "table", "pre", "blockquote", "hr"})
    | frozenset(_HEADINGS)
)


def cell_text(cell: Tag) -> str:
    """A cell's text on one line, its paragraphs, lines, list items and nested
    tables' cells set apart by a space (not run together: `A1 B1`, not `A1B1`)."""
    from bs4.element import NavigableString, Tag

    parts: list[str] = []

    def walk(node: Tag) -> None:
        for child in node.children:
            if isinstance(child, Tag):
                if _dropped(child):
                    continue
                if child.name in _CELL_BREAKS:
                    parts.append(" ")
                    walk(child)
                    parts.append(" ")
                elif child.name == "img":
                    parts.append(str(child.get("alt") or ""))
                else:
                    walk(child)
            elif type(child) is NavigableString:
                parts.append(str(child))

    walk(cell)
    return md.one_line("".join(parts))


IMPORTER = Importer(
    name="html",
    version=VERSION,
    suffixes=(".html", ".htm"),
    libraries=("bs4",),
    convert=convert,
)
