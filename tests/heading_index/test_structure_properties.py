"""Properties of the structure-first chunker over generated markdown, with the real splitter.

The library never imports cocoindex; these tests do, to hand the chunker the
splitter the app uses (`RecursiveSplitter`, language="markdown"). Documents
mix headings (ATX and setext, all levels), prose, long paragraphs, pipe
tables, fences holding `#` lines, lists, quotes, optional front matter and
CRLF line endings; budgets are small so that merges, oversized sections and
split tables all happen.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from itertools import pairwise

os.environ.setdefault("COCOINDEX_DISABLE_USAGE_TRACKING", "1")

from cocoindex.ops.text import RecursiveSplitter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from mdchunks.heading_index import assign, build_index
from mdchunks.heading_index.blocks import front_matter_end
from mdchunks.heading_index.breadcrumb import embed_text, render
from mdchunks.heading_index.structure import (
    StructureChunk,
    StructureOptions,
    StructureResult,
    budget_split_from,
    splitting_index,
    structure_chunks,
)

SPLIT = budget_split_from(RecursiveSplitter())
FRONT_MATTER = "---\ntitle: Generated\ntags: [a, b]\n---\n"

word = st.sampled_from(
    ["alpha", "beta", "gamma", "délta", "日本語", "🎉", "`code`", "**bold**", "[link](http://x.y)"]
)


def words(low: int, high: int) -> st.SearchStrategy[str]:
    return st.lists(word, min_size=low, max_size=high).map(" ".join)


atx = st.builds(
    lambda level, text, closed: "#" * level + " " + text + (" " + "#" * level if closed else ""),
    st.one_of(st.integers(1, 3), st.integers(1, 6)),  # splitting levels more often
    words(0, 6),
    st.booleans(),
)
setext = st.builds(lambda text, mark: f"{text}\n{mark * 3}", words(1, 4), st.sampled_from("=-"))
heading = st.one_of(atx, atx, atx, setext)
paragraph = st.lists(words(1, 14), min_size=1, max_size=6).map("\n".join)
long_paragraph = words(80, 250)


@st.composite
def pipe_table(draw: st.DrawFn, min_rows: int = 0) -> str:
    # Rows stay well under the smallest budget: the row-longer-than-the-budget
    # case is a documented exception, tested by hand.
    columns = draw(st.integers(1, 3))
    header = "| " + " | ".join(draw(word) for _ in range(columns)) + " |"
    delimiter = (
        "|"
        + "|".join(draw(st.sampled_from(["---", ":--", "--:", ":-:"])) for _ in range(columns))
        + "|"
    )
    row = st.lists(words(0, 2), min_size=columns, max_size=columns)
    rows = draw(st.lists(row, min_size=min_rows, max_size=min_rows + 30))
    return "\n".join([header, delimiter, *("| " + " | ".join(cells) + " |" for cells in rows)])


fence = st.lists(st.sampled_from(["# not a heading", "code()", "", "## nope ##"]), max_size=4).map(
    lambda lines: "```\n" + "\n".join(lines) + "\n```"
)
bullets = st.lists(words(1, 5), min_size=1, max_size=4).map(
    lambda items: "\n".join("- " + item for item in items)
)
quote = st.just("> # quoted, not a heading\n> text")
content = st.one_of(
    paragraph,
    paragraph,
    long_paragraph,
    pipe_table(),
    pipe_table(min_rows=12),
    fence,
    bullets,
    quote,
)
separator = st.sampled_from(["\n", "\n\n", "\n\n\n", "\n  \n"])


def joined(blocks: list[tuple[str, str]]) -> str:
    return "".join(text + sep for text, sep in blocks)


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, int]:
    """A document and the end of its front matter (0 without).

    A preamble, then sections: a heading and zero or more blocks each.
    """
    blocks = st.lists(st.tuples(content, separator), max_size=3)
    sections = draw(st.lists(st.tuples(heading, separator, blocks), max_size=12))
    body = joined(draw(blocks)) + "".join(h + sep + joined(b) for h, sep, b in sections)
    body += draw(st.sampled_from(["", "\n", "  \n\n"]))
    front = draw(st.sampled_from(["", FRONT_MATTER]))
    doc = front + body
    if draw(st.booleans()):
        return doc.replace("\n", "\r\n"), len(front.replace("\n", "\r\n"))
    return doc, len(front)


@st.composite
def options(draw: st.DrawFn, tiny_min: bool = True) -> StructureOptions:
    """Recipes with small budgets; `tiny_min=False` keeps min_chunk_size >= 30 bytes.

    Below about 10 bytes cocoindex's splitter drops list markers; the chunker
    widens a neighbouring piece over them, which may cross the budget.
    """
    size = draw(st.sampled_from([300, 500, 1000, 2000]))
    smallest = [0, 1] if tiny_min else [size // 10]
    return StructureOptions(
        chunk_size=size,
        min_chunk_size=draw(st.sampled_from([*smallest, size // 4, size // 2, size])),
        chunk_overlap=draw(st.sampled_from([0, size // 10, size // 5])),
        split_levels=draw(st.integers(1, 6)),
        merged_path=draw(st.sampled_from(["first", "common"])),
        breadcrumb_budget=draw(st.sampled_from([16, 64, 256])),
    )


PROPERTY_SETTINGS = settings(
    max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def run(doc: str, opts: StructureOptions) -> StructureResult:
    return structure_chunks(doc, build_index(doc), opts, SPLIT)


def utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


@PROPERTY_SETTINGS
@given(documents(), options(tiny_min=False))
def test_stored_text_is_the_verbatim_slice_and_sizes_fit(
    generated: tuple[str, int], opts: StructureOptions
) -> None:
    doc, _ = generated
    for c in run(doc, opts).chunks:
        assert 0 <= c.start < c.end <= len(doc)
        assert c.text == doc[c.start : c.end]
        assert c.text == c.text.rstrip()
        # No leading blank line; leading spaces only as a line's indentation.
        assert c.text.lstrip(" \t")[:1] not in ("\n", "\r")
        assert c.text[:1] not in (" ", "\t") or c.start == 0 or doc[c.start - 1] in "\r\n"
        assert utf8(c.text) <= opts.chunk_size or is_one_table_row(c.text)


def is_one_table_row(text: str) -> bool:
    """The documented exception: a table row over the budget alone (with the
    header and delimiter rows, for a first row). A paragraph line right after
    a table is one of its rows (GFM), which is how the generator makes them."""
    lines = text.replace("\r\n", "\n").split("\n")
    if len(lines) == 3:
        return set(lines[1]) <= set("|-: ")
    return len(lines) == 1


@PROPERTY_SETTINGS
@given(documents(), options())
def test_spans_are_in_order_and_overlap_only_inside_one_section(
    generated: tuple[str, int], opts: StructureOptions
) -> None:
    doc, _ = generated
    index = build_index(doc)
    section_starts = [h.start for h in splitting_index(index, opts.split_levels).headings]
    chunks = run(doc, opts).chunks
    for a, b in pairwise(chunks):
        assert a.start < b.start and a.end < b.end
        if b.start < a.end:  # the splitter's own overlap: same section, within its budget
            assert bisect_right(section_starts, a.start) == bisect_right(section_starts, b.end - 1)
            assert a.heading == b.heading
            assert utf8(doc[b.start : a.end]) <= opts.chunk_overlap


@PROPERTY_SETTINGS
@given(documents(), options())
def test_every_non_whitespace_character_is_in_a_chunk_or_an_excluded_heading_line(
    generated: tuple[str, int], opts: StructureOptions
) -> None:
    doc, front_matter = generated
    assert front_matter_end(doc, len(doc)) == front_matter
    index = build_index(doc)
    covered = [False] * len(doc)
    covered[:front_matter] = [True] * front_matter
    for heading in splitting_index(index, opts.split_levels).headings:
        covered[heading.start : heading.end] = [True] * (heading.end - heading.start)
    for c in run(doc, opts).chunks:
        covered[c.start : c.end] = [True] * (c.end - c.start)
    missed = [i for i, char in enumerate(doc) if not char.isspace() and not covered[i]]
    assert missed == []


@PROPERTY_SETTINGS
@given(documents(), options())
def test_columns_parents_and_breadcrumbs_are_consistent(
    generated: tuple[str, int], opts: StructureOptions
) -> None:
    doc, _ = generated
    result = run(doc, opts)
    truncated = 0
    for position, c in enumerate(result.chunks):
        null = c.heading is None
        assert (c.heading_text is None, c.heading_level is None, c.heading_path == ()) == (
            null,
            null,
            null,
        )
        assert (c.breadcrumb is None) == null
        assert c.parent_position is None or 0 <= c.parent_position < position
        assert_embed_text(doc, c)
        if c.heading is not None:
            assert (c.heading_text, c.heading_level, c.heading_path) == (
                c.heading.text,
                c.heading.level,
                c.heading.path,
            )
            assert c.heading_level <= opts.split_levels
            assert c.start >= c.heading.end  # the heading line is never in its own chunk
            breadcrumb, cut = render(c.heading_path, opts.breadcrumb_budget)
            assert c.breadcrumb == breadcrumb
            truncated += cut
    assert result.breadcrumb_truncations == truncated


def assert_embed_text(doc: str, c: StructureChunk) -> None:
    # What the chunk table composes from the row's columns (migration 0010).
    assert c.embed_text == embed_text(c.breadcrumb, c.text, c.table_header)
    plain = embed_text(c.breadcrumb, c.text)
    if c.embed_text == plain:
        assert c.table_header is None
        return
    # A table continuation: its header and delimiter rows before a row.
    prefix = f"{c.breadcrumb}\n\n" if c.breadcrumb else ""
    assert c.embed_text.startswith(prefix) and c.embed_text.endswith("\n" + c.text)
    header = c.embed_text[len(prefix) : -len(c.text) - 1]
    header_row, delimiter_row = header.replace("\r\n", "\n").split("\n")
    assert header_row.startswith("|") and set(delimiter_row) <= set("|-: ")
    assert doc[c.start - 1] in "\r\n"  # a row starts a line (GFM rows need no pipes)


@PROPERTY_SETTINGS
@given(documents(), options())
def test_first_rule_columns_equal_assign_over_splitting_headings(
    generated: tuple[str, int], opts: StructureOptions
) -> None:
    doc, _ = generated
    first = StructureOptions(
        opts.chunk_size, opts.min_chunk_size, opts.chunk_overlap, opts.split_levels, "first"
    )
    chunks = run(doc, first).chunks
    index = splitting_index(build_index(doc), opts.split_levels)
    expected = assign(index, [(c.start, c.end) for c in chunks])
    assert [
        (c.heading_text, c.heading_level, c.heading_path, c.parent_position) for c in chunks
    ] == [(e.heading_text, e.heading_level, e.heading_path, e.parent_position) for e in expected]


@PROPERTY_SETTINGS
@given(documents(), options())
def test_common_rule_never_names_a_section_the_text_is_not_in(
    generated: tuple[str, int], opts: StructureOptions
) -> None:
    doc, _ = generated
    common = StructureOptions(
        opts.chunk_size, opts.min_chunk_size, opts.chunk_overlap, opts.split_levels, "common"
    )
    for c in run(doc, common).chunks:
        if c.heading is not None:
            assert c.heading.start <= c.start and c.end <= c.heading.section_end


@settings(max_examples=examples(40), deadline=None)
@given(documents(), options())
def test_merges_only_join_sections_and_the_preamble_stays_alone(
    generated: tuple[str, int], opts: StructureOptions
) -> None:
    doc, _ = generated
    index = build_index(doc)
    structure = splitting_index(index, opts.split_levels)
    result = run(doc, opts)
    starts = [h.start for h in structure.headings]
    inner_headings = sum(
        bisect_right(starts, c.end - 1) - bisect_right(starts, c.start) for c in result.chunks
    )
    # A chunk holds a splitting heading only by merging its section in.
    assert inner_headings == result.merges
    first_section = starts[0] if starts else len(doc)
    for c in result.chunks:
        if c.start < first_section:
            assert c.heading is None and c.end <= first_section
