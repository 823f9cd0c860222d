"""The block skeleton of a document: what the block parser needs of each line.

CommonMark decides block structure before inline structure, and from the
start of each line: its indentation, container markers (`>`, list markers),
and whether it opens a block (`#`, a fence, `<`, `[`...). A line that holds
a letter after those goes on being prose, whatever its tail says, with a few
exceptions that the skeleton leaves whole. So the block parser is given the
document with the tail of most lines cut off after their first letter, and
finds the same blocks at the same lines, for a fraction of the bytes (rust-
book: 1.22 -> 0.30 MB; the parse is most of the heading index's time).

A line is cut (its tail dropped, its line ending kept) when:
- its head, everything up to and including its first ASCII letter, holds no
  `<` (an HTML block's start depends on the tag name after it), no backtick
  or tilde (a fence's opening line: its info string decides whether it is
  one) and no `[` (a link reference definition's start);
- its tail holds no `|` (table rows: the header's cells decide whether a
  table starts), no `<` or `>` (every end condition of the HTML blocks that
  end inside a line holds `>`: `-->`, `?>`, `]]>`, `</pre>`...) and no tab;
- it is not in a paragraph whose first line starts, after container
  markers, with `[`: a link reference definition's destination and title may
  continue on the next lines, and whether they are valid decides whether
  the paragraph is a definition (or, say, the content of a setext heading).
  From such a line to the next blank line nothing is cut.
What a cut keeps ends in a letter, so no cut line becomes blank, a thematic
break, a setext underline, a fence, a table's delimiter row or an empty list
item: those are letter-free lines, and letter-free lines are never cut. The
skeleton's offsets map back to the document's (`Skeleton.original`); only
line starts and ends are ever mapped (headings and front matter are whole
lines, definition paragraphs are never cut). tests/heading_index/
test_skeleton.py checks that the index over the skeleton equals the index
over the whole text, on the CommonMark examples, the bundled corpora and
generated documents.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

# A cuttable line: (head)(tail), the tail running to the line's end.
# Lines end at \n, \r\n or a lone \r, as for the parser.
_CUT = re.compile(rb"(?:(?<=[\r\n])|\A)[^\r\n<`~\[A-Za-z]*[A-Za-z]([^\r\n|<>\t]+)(?=[\r\n]|\Z)")
# A line starting, after container markers and indentation, with `[`; and the
# lines after it up to the next blank one.
_DEFINITION_PARAGRAPH = re.compile(
    rb"(?:(?<=[\r\n])|\A)[ \t>*+\-0-9.)]*\[[^\r\n]*"
    rb"(?:(?:\r\n|\r|\n)(?![ \t]*(?:[\r\n]|\Z))[^\r\n]*)*"
)


@dataclass(frozen=True, slots=True)
class Skeleton:
    """The skeleton's bytes and where its cuts are."""

    source: bytes
    length: int  # of the document's bytes
    cut_at: tuple[int, ...]  # skeleton offsets where a tail was dropped, ascending
    removed_before: tuple[int, ...]  # bytes dropped up to and including each cut

    def original(self, offset: int) -> int:
        """The document offset of a skeleton offset at a line start or end
        (a position after a cut moves by the bytes dropped before it)."""
        if offset == len(self.source):
            return self.length
        cuts = bisect_left(self.cut_at, offset)  # cuts strictly before `offset`
        return offset + (self.removed_before[cuts - 1] if cuts else 0)


def skeleton(source: bytes) -> Skeleton:
    """`source` with the tails of its cuttable lines dropped (module docstring)."""
    protected = [match.span() for match in _DEFINITION_PARAGRAPH.finditer(source)]
    pieces: list[bytes] = []
    cut_at: list[int] = []
    removed_before: list[int] = []
    taken = removed = 0
    guard = 0  # index into `protected`
    for match in _CUT.finditer(source):
        start, end = match.span(1)
        while guard < len(protected) and protected[guard][1] < start:
            guard += 1
        if guard < len(protected) and protected[guard][0] <= start:
            continue  # inside a paragraph that may be a definition
        pieces.append(source[taken:start])
        taken = end
        removed += end - start
        cut_at.append(start - (removed - (end - start)))
        removed_before.append(removed)
    if not pieces:
        return Skeleton(source, len(source), (), ())
    pieces.append(source[taken:])
    return Skeleton(b"".join(pieces), len(source), tuple(cut_at), tuple(removed_before))
