"""Heading paths -> breadcrumbs (`A > B > C`) and embed texts: one place for both chunkers.

docs/structure-chunker.md, rule 7: each part is sanitised (control characters
removed, whitespace runs collapsed to one space, trimmed); a rendering over
the byte budget is truncated from the LEFT and marked with `…`, so the
deepest, most specific headings survive. Parts that sanitise to nothing are
left out rather than rendered as `A >  > C`.

A document's title (its front matter's `title`, docs/heading-index.md
"The page title") is the root of every breadcrumb: `Title > A > B`, unless
the path already starts with it (a body `# Title`), and the whole breadcrumb
of a chunk before the first heading. It is the first part truncation drops.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from mdchunks.heading_index.text_spans import utf8_len

SEPARATOR = " > "
ELLIPSIS = "…"
DEFAULT_BREADCRUMB_BUDGET = 256  # UTF-8 bytes
# The smallest budget that still holds the ellipsis and a few characters of
# the deepest heading: below it a truncated breadcrumb would say nothing.
MIN_BREADCRUMB_BUDGET = 8

_ELLIPSIS_BYTES = len(ELLIPSIS.encode())


def sanitize_part(part: str) -> str:
    """One heading text made safe for a one-line breadcrumb.

    Whitespace controls (tab, newline, ...) count as whitespace and become
    one space; the other control characters are dropped.
    """
    if not part.isprintable():  # only then can it hold a control character
        part = "".join(
            char for char in part if char.isspace() or unicodedata.category(char) != "Cc"
        )
    return " ".join(part.split())


def _tail_within(text: str, budget_bytes: int) -> str:
    """The longest suffix of `text` fitting in `budget_bytes`, on a clean boundary.

    A suffix never starts with a combining mark (that would strip it from its
    base character) nor with a space.
    """
    used = 0
    cut = len(text)
    while cut > 0:
        size = utf8_len(text[cut - 1])
        if used + size > budget_bytes:
            break
        used += size
        cut -= 1
    tail = text[cut:]
    while tail and (unicodedata.category(tail[0]).startswith("M") or tail[0].isspace()):
        tail = tail[1:]
    return tail


def rooted(path: Sequence[str], title: str | None) -> Sequence[str]:
    """The parts a breadcrumb renders: `title` first, unless it is None or the
    path's root already names it (sanitised, case aside: a body `# Title`)."""
    if not title:
        return path
    clean = sanitize_part(title).casefold()
    if not clean or (path and sanitize_part(path[0]).casefold() == clean):
        return path
    return (title, *path)


def render(
    path: Sequence[str],
    budget_bytes: int = DEFAULT_BREADCRUMB_BUDGET,
    *,
    title: str | None = None,
) -> tuple[str, bool]:
    """`(breadcrumb, truncated)` for a heading path, root first, under the
    document's `title` (`rooted`).

    Over `budget_bytes` (UTF-8), whole leading parts are dropped first
    (`… > C > D`); if even the deepest part alone does not fit, its own
    beginning is cut (`…end of D`). An empty path without a title renders as `""`.
    """
    if budget_bytes < MIN_BREADCRUMB_BUDGET:
        raise ValueError(f"breadcrumb budget must be at least {MIN_BREADCRUMB_BUDGET} bytes")
    parts = [clean for clean in map(sanitize_part, rooted(path, title)) if clean]
    full = SEPARATOR.join(parts)
    if utf8_len(full) <= budget_bytes:
        return full, False
    marked_prefix = ELLIPSIS + SEPARATOR
    for first_kept in range(1, len(parts)):
        candidate = marked_prefix + SEPARATOR.join(parts[first_kept:])
        if utf8_len(candidate) <= budget_bytes:
            return candidate, True
    return ELLIPSIS + _tail_within(parts[-1], budget_bytes - _ELLIPSIS_BYTES), True


def embed_text(breadcrumb: str | None, text: str, table_header: str | None = None) -> str:
    """What gets embedded: breadcrumb, a blank line, then the chunk text.

    `table_header` (a table's header and delimiter rows) goes right before the
    text of a piece that continues a table split between rows (rule 6), so the
    rows keep their column names. Stored text never includes either.
    """
    body = f"{table_header}\n{text}" if table_header else text
    return f"{breadcrumb}\n\n{body}" if breadcrumb else body
