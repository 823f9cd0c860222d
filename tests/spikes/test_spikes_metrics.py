"""The metrics of DESIGN section 7 on hand-built documents and hand-chosen spans.

Every expected number is worked out by hand in the comments next to it. The
heading indexes are built by hand too (offsets checked against the text), so
these tests depend on nothing but `spikes.metrics` and the dataclasses.
"""

from __future__ import annotations

import pytest
from mdchunks.heading_index import Heading, HeadingIndex

from spikes.metrics import (
    EMPTY_SCORES,
    ROOT,
    Ratio,
    Scores,
    Span,
    aligned,
    body_starts,
    governing,
    pure,
    score,
    total,
    truthful,
    truthful_nested,
)


def spans(*pairs: tuple[int, int]) -> list[Span]:
    return [Span(start, end) for start, end in pairs]


# A preamble, two H1 sections, an H2 nested in the first.
#
#   offset  line
#    0- 6   "intro\n"     preamble
#    6-10   "# A\n"       H1 A   section [6, 25)   own text [6, 15)
#   10-15   "aaaa\n"
#   15-20   "## B\n"      H2 B   section [15, 25)  own text [15, 25)
#   20-25   "bbbb\n"
#   25-29   "# C\n"       H1 C   section [25, 32)  own text [25, 32)
#   29-32   "cc\n"
DOC = "intro\n# A\naaaa\n## B\nbbbb\n# C\ncc\n"
A = Heading(level=1, text="A", start=6, end=10, section_end=25, path=("A",))
B = Heading(level=2, text="B", start=15, end=20, section_end=25, path=("A", "B"))
C = Heading(level=1, text="C", start=25, end=29, section_end=32, path=("C",))
INDEX = HeadingIndex(headings=(A, B, C), length=32)


def test_the_hand_built_index_matches_its_text() -> None:
    assert len(DOC) == INDEX.length == 32
    assert DOC[A.start : A.end] == "# A\n"
    assert DOC[B.start : B.end] == "## B\n"
    assert DOC[C.start : C.end] == "# C\n"


# --- a budget split blind to sections: [0, 8), [8, 18), [18, 32) -------------
BLIND = spans((0, 8), (8, 18), (18, 32))


def test_aligned_blind_split() -> None:
    # chunk starts {0, 8, 18}; heading starts 6, 15, 25: none equal -> 0/3
    assert aligned(INDEX, BLIND) == Ratio(0, 3)


def test_pure_blind_split() -> None:
    # [0, 8)   holds A at 6   (0 < 6 < 8)    -> not pure
    # [8, 18)  holds B at 15  (8 < 15 < 18)  -> not pure
    # [18, 32) holds C at 25  (18 < 25 < 32) -> not pure
    assert pure(INDEX, BLIND) == Ratio(0, 3)


def test_truthful_blind_split() -> None:
    # [0, 8):   no heading starts at or before 0: preamble, counts [0, 6)  -> 6 of 8
    # [8, 18):  governed by A (6 <= 8), own text up to B at 15: 15 - 8     -> 7 of 10
    # [18, 32): governed by B (15 <= 18), own text up to C at 25: 25 - 18  -> 7 of 14
    # (6 + 7 + 7) / (8 + 10 + 14) = 20 / 32
    assert truthful(INDEX, BLIND) == Ratio(20, 32)
    assert truthful(INDEX, BLIND).value == 0.625


def test_truthful_nested_blind_split() -> None:
    # [0, 8):   preamble names the document root: all                   -> 8 of 8
    # [8, 18):  A's section [6, 25) holds all of it                      -> 10 of 10
    # [18, 32): B's section [15, 25): 25 - 18                            -> 7 of 14
    # (8 + 10 + 7) / 32 = 25 / 32
    assert truthful_nested(INDEX, BLIND) == Ratio(25, 32)


# --- a split at H1 boundaries: [0, 6), [6, 25), [25, 32) ---------------------
BY_H1 = spans((0, 6), (6, 25), (25, 32))


def test_split_at_top_level_sections() -> None:
    # aligned: chunk starts {0, 6, 25} hit A (6) and C (25), miss B (15) -> 2/3
    assert aligned(INDEX, BY_H1) == Ratio(2, 3)
    # pure: [0, 6) has nothing strictly inside (6 is not < 6)      -> pure
    #       [6, 25) holds B at 15                                  -> not pure
    #       [25, 32) has nothing after 25                          -> pure   => 2/3
    assert pure(INDEX, BY_H1) == Ratio(2, 3)
    # truthful: [0, 6) preamble [0, 6)             -> 6 of 6
    #           [6, 25) A's own text [6, 15)       -> 9 of 19
    #           [25, 32) C's own text to the end   -> 7 of 7   => 22/32
    assert truthful(INDEX, BY_H1) == Ratio(22, 32)
    # truthful-nested: 6 + 19 (A's section is [6, 25)) + 7 = 32 of 32
    assert truthful_nested(INDEX, BY_H1) == Ratio(32, 32)


# --- a split at every heading: everything is 100% ----------------------------
def test_split_at_every_heading() -> None:
    exact = spans((0, 6), (6, 15), (15, 25), (25, 32))
    assert score(INDEX, exact) == Scores(
        chars=32,
        headings=3,
        chunks=4,
        aligned=Ratio(3, 3),
        pure=Ratio(4, 4),
        truthful=Ratio(32, 32),
        truthful_nested=Ratio(32, 32),
    )


def test_chunks_trimmed_like_the_splitter_trims_them() -> None:
    # The splitter drops the whitespace between chunks: [0, 5) "intro",
    # [6, 14) "# A\naaaa", [15, 24) "## B\nbbbb", [25, 31) "# C\ncc".
    trimmed = spans((0, 5), (6, 14), (15, 24), (25, 31))
    s = score(INDEX, trimmed)
    assert s.aligned == Ratio(3, 3)  # starts 6, 15, 25 all hit
    assert s.pure == Ratio(4, 4)
    assert s.truthful == Ratio(5 + 8 + 9 + 6, 28)  # every chunk inside its own text
    assert s.truthful_nested == Ratio(28, 28)


def test_a_shallow_breadcrumb_is_imprecise_not_a_lie() -> None:
    # One chunk [6, 25) under A swallows B: truthful counts A's own text only,
    # [6, 15) -> 9 of 19; truthful-nested counts A's section [6, 25) -> 19 of 19.
    one = spans((6, 25))
    assert truthful(INDEX, one) == Ratio(9, 19)
    assert truthful_nested(INDEX, one) == Ratio(19, 19)


def test_a_chunk_starting_on_a_heading_is_governed_by_it() -> None:
    # [15, 29) starts exactly at B (B.start <= 15): governed by B, not A.
    # truthful: B's own text [15, 25) -> 10 of 14; nested: B's section [15, 25) -> 10 of 14
    # pure: C at 25 is strictly inside (15 < 25 < 29) -> 0/1; aligned: B -> 1/3
    one = spans((15, 29))
    assert truthful(INDEX, one) == Ratio(10, 14)
    assert truthful_nested(INDEX, one) == Ratio(10, 14)
    assert pure(INDEX, one) == Ratio(0, 1)
    assert aligned(INDEX, one) == Ratio(1, 3)


# --- named headings: what a breadcrumb claims, scored ------------------------
# Body starts in DOC (first non-blank line after the heading line, before the
# next heading): A 10 ("aaaa"), B 20 ("bbbb"), C 29 ("cc").


def test_body_starts_of_the_sections_doc() -> None:
    assert body_starts(DOC, INDEX) == [10, 20, 29]


def test_a_chunker_that_leaves_heading_lines_out_is_aligned_at_body_starts() -> None:
    # What the structure-first chunker makes of DOC with a small min size but
    # A's text merged with B's: [0, 5) "intro" (root), [10, 24) "aaaa\n## B\nbbbb"
    # naming A, [29, 31) "cc" naming C.
    chunks = [Span(0, 5, ROOT), Span(10, 24, 0), Span(29, 31, 2)]
    # aligned: starts {0, 10, 29} hit A's body (10) and C's (29), not B
    # (start 15, body 20) -> 2/3. A budget splitter's chunks at the same
    # starts would have left "# A" and "# C" at the ends of the chunks before
    # them: only heading starts count (6, 15, 25: none) -> 0/3.
    assert aligned(INDEX, chunks, DOC, leaves_heading_lines_out=True) == Ratio(2, 3)
    assert aligned(INDEX, chunks, DOC) == Ratio(0, 3)
    assert aligned(INDEX, chunks) == Ratio(0, 3)
    with pytest.raises(ValueError, match="document text"):
        aligned(INDEX, chunks, leaves_heading_lines_out=True)
    # truthful: root names [0, 6): 5 of 5; A's own text [6, 15) holds [10, 15)
    #           of [10, 24): 5 of 14; C's [25, 32) holds all of [29, 31): 2 of 2
    #           -> (5 + 5 + 2) / (5 + 14 + 2) = 12/21
    assert truthful(INDEX, chunks) == Ratio(12, 21)
    # nested: 5 + A's section [6, 25) holds all 14 + 2 -> 21/21
    assert truthful_nested(INDEX, chunks) == Ratio(21, 21)
    # pure: B at 15 lies strictly inside [10, 24) -> 2/3
    assert pure(INDEX, chunks) == Ratio(2, 3)
    assert [h.text if h else None for h in governing(INDEX, chunks)] == [None, "A", "C"]


def test_a_named_root_is_imprecise_never_a_lie() -> None:
    # One chunk [10, 31) "aaaa ... cc" spanning A's and C's sections. Named by
    # position (the governing heading is A, 6 <= 10):
    #   truthful: A's own text [6, 15) -> 5 of 21; nested: A's section [6, 25) -> 15 of 21
    # Named the document root (the deepest common ancestor of A and C):
    #   truthful: the root's own text [0, 6) -> 0 of 21; nested: the root holds all -> 21 of 21
    positional = [Span(10, 31)]
    assert truthful(INDEX, positional) == Ratio(5, 21)
    assert truthful_nested(INDEX, positional) == Ratio(15, 21)
    rooted = [Span(10, 31, ROOT)]
    assert truthful(INDEX, rooted) == Ratio(0, 21)
    assert truthful_nested(INDEX, rooted) == Ratio(21, 21)
    assert governing(INDEX, rooted) == [None]


def test_only_the_overlap_with_the_named_span_counts() -> None:
    # [10, 24) named B, a heading that starts inside it (at 15): B's own text
    # and section are both [15, 25), which hold [15, 24) -> 9 of 14 each; the
    # 5 characters before B are not B's. By position (A): 5/14 and 14/14.
    named_b = [Span(10, 24, 1)]
    assert truthful(INDEX, named_b) == Ratio(9, 14)
    assert truthful_nested(INDEX, named_b) == Ratio(9, 14)
    assert truthful(INDEX, [Span(10, 24)]) == Ratio(5, 14)
    assert truthful_nested(INDEX, [Span(10, 24)]) == Ratio(14, 14)
    # Naming the governing heading explicitly changes nothing.
    assert score(INDEX, [Span(10, 24, 0)], DOC) == score(INDEX, [Span(10, 24)], DOC)


#   0- 4  "# T\n"           H1 T, section [0, 34)
#   4- 5  "\n"              blank
#   5- 8  " \t\n"           blank (whitespace only)
#   8-21  "    indented\n"  T's body starts here, indentation included
#  21-26  "## U\n"          H2 U: directly followed by V, so no body start
#  26-31  "## V\n"          H2 V
#  31-32  "\n"
#  32-34  "v\n"             V's body start
BODY_DOC = "# T\n\n \t\n    indented\n## U\n## V\n\nv\n"
T = Heading(level=1, text="T", start=0, end=4, section_end=34, path=("T",))
U = Heading(level=2, text="U", start=21, end=26, section_end=26, path=("T", "U"), parent=0)
V = Heading(level=2, text="V", start=26, end=31, section_end=34, path=("T", "V"), parent=0)
BODY_INDEX = HeadingIndex(headings=(T, U, V), length=34)


def test_body_starts_skip_blank_lines_and_stop_at_the_next_heading() -> None:
    assert len(BODY_DOC) == 34
    assert BODY_DOC[T.start : T.end] == "# T\n"
    assert BODY_DOC[U.start : U.end] == "## U\n"
    assert BODY_DOC[V.start : V.end] == "## V\n"
    assert body_starts(BODY_DOC, BODY_INDEX) == [8, None, 32]
    # For a chunker that leaves heading lines out: a chunk at T's body start
    # (8) aligns T; a chunk at V's start aligns V only: U, with no body,
    # needs a chunk at 21.
    out = {"leaves_heading_lines_out": True}
    assert aligned(BODY_INDEX, [Span(8, 20), Span(26, 33)], BODY_DOC, **out) == Ratio(2, 3)
    assert aligned(BODY_INDEX, [Span(21, 33)], BODY_DOC, **out) == Ratio(1, 3)
    # For a budget splitter a chunk at 8 left "# T" behind: T is not aligned.
    assert aligned(BODY_INDEX, [Span(8, 20), Span(26, 33)], BODY_DOC) == Ratio(1, 3)
    # A heading on the last line, without a line ending, has no body either.
    last = Heading(level=1, text="Z", start=0, end=3, section_end=3, path=("Z",))
    assert body_starts("# Z", HeadingIndex(headings=(last,), length=3)) == [None]


def test_named_headings_are_checked() -> None:
    with pytest.raises(ValueError, match="named heading"):
        Span(0, 4, -2)
    with pytest.raises(ValueError, match="names heading 3"):
        truthful(INDEX, [Span(0, 4, 3)])
    with pytest.raises(ValueError, match="code points"):
        body_starts(DOC + "x", INDEX)


# --- preamble-only documents -------------------------------------------------
#   0-11  "Some intro\n"   preamble
#  11-17  "# End\n"        H1 End, section [11, 17)
PREAMBLE_DOC = "Some intro\n# End\n"
END = Heading(level=1, text="End", start=11, end=17, section_end=17, path=("End",))
PREAMBLE_INDEX = HeadingIndex(headings=(END,), length=17)


def test_preamble_only_chunks() -> None:
    assert PREAMBLE_DOC[END.start : END.end] == "# End\n"
    # One chunk [0, 10) "Some intro" lies wholly in the preamble [0, 11).
    only = spans((0, 10))
    # aligned: 0 is not End's start (11) -> 0/1; pure: nothing in (0, 10) -> 1/1
    # truthful: 10 of 10 in [0, 11); nested: preamble names the root -> 10 of 10
    assert score(PREAMBLE_INDEX, only) == Scores(
        17, 1, 1, Ratio(0, 1), Ratio(1, 1), Ratio(10, 10), Ratio(10, 10)
    )


def test_a_preamble_chunk_that_runs_into_the_first_heading() -> None:
    # One chunk [0, 16) "Some intro\n# End": governed by nothing (End starts at 11 > 0).
    # truthful: inside [0, 11) -> 11 of 16 (the "# End" part is a section the
    #           empty breadcrumb does not name precisely)
    # nested:   the empty path is the document root -> 16 of 16
    # pure: End at 11 is strictly inside (0 < 11 < 16) -> 0/1
    whole = spans((0, 16))
    assert truthful(PREAMBLE_INDEX, whole) == Ratio(11, 16)
    assert truthful_nested(PREAMBLE_INDEX, whole) == Ratio(16, 16)
    assert pure(PREAMBLE_INDEX, whole) == Ratio(0, 1)
    assert aligned(PREAMBLE_INDEX, whole) == Ratio(0, 1)


# --- front matter before the first heading -----------------------------------
#   0-14  "---\nt: x\n---\n\n"  front matter and a blank line: lead-in of H
#  14-18  "# H\n"                 H1 H, section [14, 25)
#  18-25  "hhhhhh\n"
FRONT_DOC = "---\nt: x\n---\n\n# H\nhhhhhh\n"
H = Heading(level=1, text="H", start=14, end=18, section_end=25, path=("H",), lead_in=14)
FRONT_INDEX = HeadingIndex(headings=(H,), length=25)


def test_a_chunk_opening_with_front_matter_is_governed_by_its_first_heading() -> None:
    assert FRONT_DOC[H.start : H.end] == "# H\n" and len(FRONT_DOC) == 25
    # [0, 24) holds front matter, a blank line, then H: governed by H, as
    # heading_index.assign stores it. truthful: H's text [14, 25) holds
    # [14, 24) -> 10 of 24; nested the same. Not aligned: 0 is not H's start.
    whole = spans((0, 24))
    assert governing(FRONT_INDEX, whole) == [H]
    assert truthful(FRONT_INDEX, whole) == Ratio(10, 24)
    assert truthful_nested(FRONT_INDEX, whole) == Ratio(10, 24)
    assert aligned(FRONT_INDEX, whole, FRONT_DOC) == Ratio(0, 1)
    # A chunk of the front matter alone holds no heading: it names the root.
    assert governing(FRONT_INDEX, spans((0, 14))) == [None]


# --- documents with no headings ----------------------------------------------
def test_no_headings() -> None:
    # "plain\ntext\n": chunks [0, 5) "plain" and [6, 10) "text".
    index = HeadingIndex(headings=(), length=11)
    s = score(index, spans((0, 5), (6, 10)))
    # aligned: 0 of 0 headings -> undefined (n/a), not 0% and not 100%
    assert s.aligned == Ratio(0, 0)
    assert s.aligned.value is None
    # every chunk is pure and lies in the (whole-document) preamble [0, 11):
    # pure 2/2, truthful (5 + 4) / 9, nested 9/9
    assert s.pure == Ratio(2, 2)
    assert s.truthful == Ratio(9, 9)
    assert s.truthful_nested == Ratio(9, 9)


def test_zero_chunks() -> None:
    # An empty document: nothing to measure, every fraction undefined.
    empty = score(HeadingIndex(headings=(), length=0), [])
    assert empty == EMPTY_SCORES
    assert [r.value for r in (empty.aligned, empty.pure, empty.truthful)] == [None] * 3
    # Headings but no chunks (a chunker that emits nothing): aligned 0 of 3,
    # the chunk-based fractions undefined.
    s = score(INDEX, [])
    assert s.aligned == Ratio(0, 3)
    assert s.aligned.value == 0.0
    assert (s.pure, s.truthful, s.truthful_nested) == (Ratio(0, 0),) * 3


# --- a single huge section ---------------------------------------------------
def test_a_single_huge_section() -> None:
    # "# Big\n" (0-6) then 5000 characters: one H1 whose section is the whole
    # document [0, 5006). A budget split with overlap: [0, 2000), [1800, 3800),
    # [3600, 5006): 2000 + 2000 + 1406 = 5406 chunk characters (overlaps count
    # once per chunk that holds them).
    text = "# Big\n" + "word " * 1000
    big = Heading(level=1, text="Big", start=0, end=6, section_end=5006, path=("Big",))
    index = HeadingIndex(headings=(big,), length=len(text))
    assert index.length == 5006
    s = score(index, spans((0, 2000), (1800, 3800), (3600, 5006)))
    # aligned: the first chunk starts at 0 = Big.start -> 1/1
    # pure: no heading start after 0 -> 3/3
    # truthful: Big's own text runs to the end -> 5406 of 5406; nested the same
    assert s == Scores(5006, 1, 3, Ratio(1, 1), Ratio(3, 3), Ratio(5406, 5406), Ratio(5406, 5406))


# --- totals ------------------------------------------------------------------
def test_totals_are_summed_counts_and_character_weighted_fractions() -> None:
    blind = score(INDEX, BLIND)  # truthful 20/32, nested 25/32, aligned 0/3, pure 0/3
    plain = score(HeadingIndex((), 11), spans((0, 5), (6, 10)))  # 9/9, 9/9, 0/0, 2/2
    both = total([blind, plain])
    # chars 32 + 11; headings 3 + 0; chunks 3 + 2
    assert (both.chars, both.headings, both.chunks) == (43, 3, 5)
    assert both.aligned == Ratio(0, 3)
    assert both.pure == Ratio(2, 5)
    # character-weighted: (20 + 9) / (32 + 9) = 29/41, not the mean of 62.5% and 100%
    assert both.truthful == Ratio(29, 41)
    assert both.truthful_nested == Ratio(34, 41)  # (25 + 9) / 41
    assert total([]) == EMPTY_SCORES


# --- input checks ------------------------------------------------------------
def test_spans_are_checked() -> None:
    with pytest.raises(ValueError):
        Span(5, 4)
    with pytest.raises(ValueError):
        Span(-1, 4)
    with pytest.raises(ValueError, match="past the document"):
        truthful(INDEX, spans((30, 33)))


def test_headings_must_be_in_document_order() -> None:
    shuffled = HeadingIndex(headings=(B, A, C), length=32)
    with pytest.raises(ValueError, match="document order"):
        pure(shuffled, BLIND)
