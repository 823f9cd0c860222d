"""Budget-split spans, repaired: no text lost, no chunk over the budget.

cocoindex's `RecursiveSplitter` breaks both promises on some inputs:
- it drops CJK sentence punctuation (`。！？；`, and the like) at a chunk's
  end before a paragraph break: those characters are in no chunk (seen in
  the Japanese and Chinese translations of an RFC);
- a run with no break point (one 1 MB "word", a base64 blob) comes back as
  one chunk of any size, over the budget (and over what PostgreSQL's
  `to_tsvector` takes: "string is too long for tsvector").

`repair_spans` is the one pure function over `(text, spans, chunk_size)`
that both chunkers' budget splitter goes through (`budget_split_from`):
1. every non-whitespace character of `[start, end)` (the whole text by
   default) lands in some span: a character left between two spans widens
   the span before it when that stays within the budget, else the span
   after it, else becomes a span of its own;
2. no span is over `chunk_size` UTF-8 bytes: a longer one is cut into
   consecutive pieces, each as long as fits, ending at its last line break,
   else its last whitespace, else at the last code point that fits (never
   inside a character).
Spans stay in document order (starts non-decreasing); the splitter's
overlaps are kept. Linear in the text, except for the UTF-8 sizes of spans,
measured once each.
"""

from __future__ import annotations

from collections.abc import Sequence

from mdchunks.heading_index.text_spans import Span, content_span, utf8_len


def repair_spans(
    text: str, spans: Sequence[Span], chunk_size: int, within: Span | None = None
) -> list[Span]:
    """`spans` covering every non-whitespace character of `within`, each within
    `chunk_size` UTF-8 bytes (see the module's docstring)."""
    start, end = (0, len(text)) if within is None else within
    covered = _cover(text, sorted(spans), chunk_size, start, end)
    fitted: list[Span] = []
    for span in covered:
        fitted.extend(fit_span(text, span, chunk_size))
    return fitted


def _cover(text: str, spans: list[Span], chunk_size: int, start: int, end: int) -> list[Span]:
    result: list[Span] = []
    reach = start  # everything before it is covered
    for a, b in spans:
        gap = content_span(text, reach, a) if a > reach else None
        if gap is not None:
            if result and utf8_len(text[result[-1][0] : gap[1]]) <= chunk_size:
                result[-1] = (result[-1][0], gap[1])  # the span before takes it
            elif utf8_len(text[gap[0] : b]) <= chunk_size:
                a = gap[0]  # the span after takes it
            else:
                result.append(gap)  # a span of its own (cut to the budget later)
        result.append((a, b))
        reach = max(reach, b)
    tail = content_span(text, reach, end) if end > reach else None
    if tail is not None:
        if result and utf8_len(text[result[-1][0] : tail[1]]) <= chunk_size:
            result[-1] = (result[-1][0], tail[1])
        else:
            result.append(tail)
    return [span for span in result if span[1] > span[0]]


def fit_span(text: str, span: Span, chunk_size: int) -> list[Span]:
    """`span` cut into consecutive pieces of at most `chunk_size` UTF-8 bytes,
    at line breaks, else whitespace, else code-point boundaries."""
    start, end = span
    if utf8_len(text[start:end]) <= chunk_size:
        return [span]
    pieces: list[Span] = []
    while start < end:
        limit = _fitting_end(text, start, end, chunk_size)
        if limit == end:
            pieces.append((start, end))
            break
        cut = _break_point(text, start, limit)
        # Pieces are trimmed like chunks: no trailing whitespace, and the next
        # one starts at text (or at a line's indentation); only whitespace is
        # left out between them.
        stop = cut
        while stop > start and text[stop - 1].isspace():
            stop -= 1
        if stop > start:
            pieces.append((start, stop))
        start = _next_start(text, cut, end)
    return pieces


def _next_start(text: str, cut: int, end: int) -> int:
    at = cut
    while at < end and text[at] in "\r\n":
        at += 1
    if at == cut and cut > 0 and text[cut - 1] not in "\r\n":  # a cut inside a line
        while at < end and text[at].isspace():
            at += 1
    return at


def _fitting_end(text: str, start: int, end: int, chunk_size: int) -> int:
    """The furthest `stop <= end` with `text[start:stop]` within `chunk_size` bytes."""
    # At most chunk_size code points fit; each takes 1 to 4 bytes.
    stop = min(end, start + chunk_size)
    size = utf8_len(text[start:stop])
    while size > chunk_size:
        # Drop the excess bytes' worth of code points (at least one per step),
        # so the loop ends in a few steps however the text mixes widths.
        excess = size - chunk_size
        stop -= max(1, excess // 4)
        size = utf8_len(text[start:stop])
    return max(stop, start + 1)


def _break_point(text: str, start: int, limit: int) -> int:
    """Where a piece `[start, limit)` that must end by `limit` ends: after its last
    line break, else its last whitespace, if that keeps at least half of it."""
    half = start + (limit - start) // 2
    newline = max(text.rfind("\n", half, limit), text.rfind("\r", half, limit))
    if newline >= 0:
        return newline + 1
    for position in range(limit - 1, half - 1, -1):
        if text[position].isspace():
            return position + 1
    return limit
