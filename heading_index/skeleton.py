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
skeleton keeps every line, in order, with its line ending, so its offsets
map back to the document's by line (`Skeleton.original`); only line starts
are ever mapped (headings and front matter are whole lines), and definition
paragraphs are never cut, so their bytes are the document's. A document with
a lone `\r` line ending is left whole.

One exception to "the same blocks", found by a cold review's fuzzer: on a
malformed document that the grammar parses into error nodes (pipe tables
with a pipe-less delimiter row or empty header cells), tree-sitter's error
recovery weighs the bytes and lines it skips, so shorter lines can tip it to
another recovery and other headings. The caller therefore parses the whole
text whenever the skeleton's parse has an error (index.py, `_parse_blocks`);
in 30,000 table-heavy generated documents the skeleton's parse had an error
exactly when the whole text's did. tests/heading_index/
test_skeleton.py checks that the index over the skeleton equals the index
over the whole text, on the CommonMark examples, the bundled corpora and
generated documents.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate, count
from operator import add, methodcaller

# Each pattern runs over the text with a line ending put in front, so that
# every line starts after a \n: a literal first character lets the regex
# engine skip ahead to line starts instead of trying every byte.
# A cuttable line: (\n and its head) and its tail, up to the line's end.
_CUT = re.compile(rb"(\n[^\r\n<`~\[A-Za-z]*[A-Za-z])[^\r\n|<>\t]+(?=[\r\n]|\Z)")
# A line starting, after container markers and indentation, with `[`; and the
# lines after it up to the next blank one.
_DEFINITION_PARAGRAPH = re.compile(
    rb"\n[ \t>*+\-0-9.)]*\[[^\r\n]*(?:\r?\n(?![ \t]*(?:[\r\n]|\Z))[^\r\n]*)*"
)
# A lone \r ends a line too; a document that has one is left whole (rare, and
# the patterns above then need not know that line ending).
_LONE_CR = re.compile(rb"\r(?!\n)")
# What a cut line keeps; a C callable, so that re.sub runs no Python per line
# (the template r"\1" is expanded by Python code, once a match).
_HEAD = methodcaller("group", 1)


@dataclass(frozen=True)
class Skeleton:
    """The skeleton's bytes, and the document's, to map offsets back."""

    source: bytes
    document: bytes

    def original(self, offset: int) -> int:
        """The document offset of a skeleton offset at a line start, or inside
        the part of a line that the skeleton kept (every line is kept, in order,
        each with its line ending; only tails are dropped)."""
        if self.source is self.document or offset == 0:
            return offset
        if offset >= len(self.source):
            return len(self.document) + offset - len(self.source)
        skeleton_starts, document_starts = self._line_starts
        line = bisect_right(skeleton_starts, offset) - 1
        return document_starts[line] + offset - skeleton_starts[line]

    @cached_property
    def _line_starts(self) -> tuple[list[int], list[int]]:
        def starts(source: bytes) -> list[int]:
            # At C speed: a line starts after the lines before it and their \n.
            lengths = accumulate(map(len, source.split(b"\n")[:-1]))
            return [0, *map(add, lengths, count(1))]

        return starts(self.source), starts(self.document)


def skeleton(source: bytes) -> Skeleton:
    """`source` with the tails of its cuttable lines dropped (module docstring)."""
    if b"\r" in source and _LONE_CR.search(source):
        return Skeleton(source, source)
    text = b"\n" + source
    pieces: list[bytes] = []
    taken = 0
    for paragraph in _DEFINITION_PARAGRAPH.finditer(text):
        pieces.append(_CUT.sub(_HEAD, text[taken : paragraph.start()]))
        pieces.append(paragraph.group())  # may be a definition: left whole
        taken = paragraph.end()
    pieces.append(_CUT.sub(_HEAD, text[taken:]))
    cut = b"".join(pieces)[1:]
    return Skeleton(source if len(cut) == len(source) else cut, source)
