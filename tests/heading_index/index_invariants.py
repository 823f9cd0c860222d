"""Invariants every index and every assignment must satisfy (shared by the
property tests and the golden files, which check them before comparing)."""

from __future__ import annotations

from mdchunks.heading_index import ChunkHeadings, HeadingIndex, assign
from mdchunks.heading_index.blocks import front_matter_end


def _nearest_shallower(index: HeadingIndex, i: int) -> int | None:
    """The parent as DESIGN states it, without a stack: the closest earlier
    heading of a smaller level (everything in between was popped)."""
    level = index.headings[i].level
    for j in range(i - 1, -1, -1):
        if index.headings[j].level < level:
            return j
    return None


def check_index_invariants(text: str, index: HeadingIndex) -> None:
    headings = index.headings
    assert index.length == len(text)
    assert [h.start for h in headings] == sorted(h.start for h in headings)
    for i, h in enumerate(headings):
        assert 1 <= h.level <= 6
        assert 0 <= h.start < h.end <= h.section_end <= len(text)
        # text[start:end] is exactly the heading's lines.
        assert h.start == 0 or text[h.start - 1] in "\r\n"
        assert h.end == len(text) or text[h.end - 1] in "\r\n"
        lines = text[h.start : h.end].splitlines()
        last = lines[-1].strip(" \t")
        if len(lines) == 1 and last.startswith("#"):
            assert len(last) - len(last.lstrip("#")) == h.level
        else:
            assert set(last) == {"=" if h.level == 1 else "-"}
        # Paths: strictly increasing levels, root first, self last.
        parent = _nearest_shallower(index, i)
        assert h.parent == parent
        if parent is None:
            assert h.path == (h.text,)
        else:
            assert h.path == (*headings[parent].path, h.text)
            assert headings[parent].level < h.level
        # section_end: the next heading of a level <= own, else the end.
        later = [g.start for g in headings[i + 1 :] if g.level <= h.level]
        assert h.section_end == (later[0] if later else len(text))
        assert "\n" not in h.text and h.text == " ".join(h.text.split())


def _effective_start(text: str, index: HeadingIndex, span: tuple[int, int]) -> int:
    """Where DESIGN section 3 counts a chunk as starting: at its first heading
    if the text before that is only front matter and blank lines."""
    start, end = span
    inside = [h.start for h in index.headings if start < h.start < end]
    if not inside:
        return start
    front_matter = front_matter_end(text, index.headings[0].start)
    before = text[max(start, front_matter) : inside[0]]
    return inside[0] if before.strip(" \t\r\n") == "" else start


def expected_assignment(
    text: str, index: HeadingIndex, spans: list[tuple[int, int]]
) -> list[ChunkHeadings]:
    """DESIGN section 3 read literally: a scan per chunk (fine for a test oracle)."""
    result = []
    for position, span in enumerate(spans):
        start = _effective_start(text, index, span)
        governing = [i for i, h in enumerate(index.headings) if h.start <= start]
        if not governing:
            result.append(ChunkHeadings(None, None, (), None))
            continue
        g = index.headings[governing[-1]]
        ancestor = _nearest_shallower(index, governing[-1])
        parent = None
        if ancestor is not None:
            a = index.headings[ancestor]
            overlapping = [q for q, (s, e) in enumerate(spans) if s < a.section_end and e > a.start]
            if overlapping and overlapping[0] != position:
                parent = overlapping[0]
        result.append(ChunkHeadings(g.text, g.level, g.path, parent))
    return result


def check_assignment(text: str, index: HeadingIndex, spans: list[tuple[int, int]]) -> None:
    assigned = assign(index, spans)
    assert len(assigned) == len(spans)
    first_start = index.headings[0].start if index.headings else None
    for position, (span, chunk) in enumerate(zip(spans, assigned, strict=True)):
        nulls = (chunk.heading_text is None, chunk.heading_level is None, chunk.heading_path == ())
        assert len(set(nulls)) == 1, "the heading columns are NULL together"
        preamble = first_start is None or _effective_start(text, index, span) < first_start
        assert nulls[0] == preamble
        if chunk.parent_position is not None:
            assert chunk.parent_position < position  # never self, never later
        if preamble:
            assert chunk.parent_position is None
    assert assigned == expected_assignment(text, index, spans)
