"""Small facts about slices of a document: UTF-8 size, where the content is."""

from __future__ import annotations

Span = tuple[int, int]  # [start, end) in code points


def utf8_len(text: str) -> int:
    """Size in UTF-8 bytes, the unit budgets count in (a lone surrogate: 3 bytes)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def content_span(text: str, start: int, end: int) -> Span | None:
    """`[start, end)` without its leading blank lines and trailing whitespace.

    None when the slice is only whitespace. The start moves to the start of
    the first line with content, not to its first character: the indentation
    of that line may be markup (an indented code block, a nested list). Only
    a slice that starts mid-line (a splitter's cut) loses its leading spaces.
    """
    segment = text[start:end]
    content_end = start + len(segment.rstrip())
    if content_end == start:
        return None
    first_char = start + len(segment) - len(segment.lstrip())
    line_break = max(text.rfind("\n", start, first_char), text.rfind("\r", start, first_char))
    if line_break >= 0:
        return line_break + 1, content_end
    at_line_start = start == 0 or text[start - 1] in "\n\r"
    return (start if at_line_start else first_char), content_end
