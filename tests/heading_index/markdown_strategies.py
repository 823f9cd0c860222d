"""Hypothesis strategies: markdown documents built from the blocks that trap heading finders."""

from __future__ import annotations

from hypothesis import strategies as st

# Words with the characters whose UTF-8 length differs from 1: é (2 bytes),
# CJK (3), emoji and other astral characters (4, and 2 UTF-16 units).
WORDS = st.sampled_from(
    ["alpha", "Beta", "naïve", "é", "日本語", "中文", "😀", "𝔸𝔹", "🦀rust", "x1", "Ünïcødé"]
)
# Inline markup a heading may hold; each reduces to known plain text.
MARKUP = st.sampled_from(
    [
        "*em*",
        "**strong**",
        "_under_",
        "`code`",
        "`` a`b ``",
        "[link](/url)",
        "[ref]",
        "![alt *x*](/i.png)",
        "<b>bold</b>",
        "&amp;",
        "&copy;",
        "&#35;",
        "\\#",
        "\\*",
        "#tag",
        "<https://example.com/é>",
        "*unclosed",
        "a_b_c",
        "~~",
    ]
)


@st.composite
def inline_text(draw: st.DrawFn, min_parts: int = 1) -> str:
    parts = draw(st.lists(st.one_of(WORDS, MARKUP), min_size=min_parts, max_size=5))
    separators = draw(st.lists(st.sampled_from([" ", "  ", "\t"]), min_size=len(parts)))
    return "".join(part + sep for part, sep in zip(parts, separators, strict=False)).strip()


@st.composite
def atx_heading(draw: st.DrawFn) -> str:
    indent = draw(st.sampled_from(["", " ", "   "]))
    level = draw(st.integers(1, 7))  # 7: `#######` is no heading
    gap = draw(st.sampled_from([" ", "\t", "  "]))
    text = draw(st.one_of(st.just(""), inline_text()))
    closing = draw(st.sampled_from(["", " #", " ##", " ######", "#"]))
    attributes = draw(st.sampled_from(["", "", " {#anchor}", " {#id .class}"]))
    return f"{indent}{'#' * level}{gap}{text}{attributes}{closing}"


@st.composite
def setext_heading(draw: st.DrawFn) -> str:
    lines = draw(st.lists(inline_text(), min_size=1, max_size=2))
    underline = draw(st.sampled_from(["=", "-"])) * draw(st.integers(1, 5))
    indent = draw(st.sampled_from(["", " ", "   "]))
    return "\n".join([*lines, indent + underline])


@st.composite
def fenced_code(draw: st.DrawFn) -> str:
    fence = draw(st.sampled_from(["```", "~~~", "````", "```python"]))
    body = ["# not a heading", "Not either", "===", "## still code"]
    if fence == "````":
        body.insert(1, "```")  # a shorter fence inside does not close it
    closing = fence.rstrip("python")
    return "\n".join([fence, *draw(st.permutations(body)), closing])


BLOCKS = st.one_of(
    atx_heading(),
    atx_heading(),
    setext_heading(),
    fenced_code(),
    inline_text(),  # a paragraph
    st.builds(lambda t: f"> # {t}\n> more", inline_text()),
    st.builds(lambda t: f"- # {t}\n- item", inline_text()),
    st.builds(lambda t: f"1. {t}\n\n   # inside item", inline_text()),
    # A pipe table (a GFM extension tree-sitter-markdown knows and CommonMark
    # does not) always ends with a blank line here: a line right after it is a
    # table row to one and paragraph text to the other (see test_traps).
    st.just("| a | b |\n| --- | --- |\n| # c | d |\n"),
    st.just("***"),
    st.just("---"),
    st.just("    # indented code"),
    st.just("\t# tab-indented code"),
    st.just("<div>\n# html block\n</div>"),
    st.just("[ref]: /target"),
    st.just("\\# escaped"),
)


@st.composite
def markdown_documents(draw: st.DrawFn) -> str:
    """A document of random blocks; sometimes adjacent, sometimes CRLF."""
    blocks = draw(st.lists(BLOCKS, max_size=10))
    separators = draw(st.lists(st.sampled_from(["\n\n", "\n\n", "\n"]), min_size=len(blocks)))
    text = "".join(block + sep for block, sep in zip(blocks, separators, strict=False))
    if draw(st.booleans()):
        text = text.rstrip("\n")
    if draw(st.integers(0, 3)) == 0:
        text = text.replace("\n", "\r\n")
    return text


# Any string at all: NUL, lone surrogates, line-ending soup, markdown punctuation.
ANY_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(),
        st.sampled_from(["\0", "\ud800", "\udfff", "#", "\n", "\r", "=", "-", "`", "[", "]"]),
    ),
    max_size=200,
)


# -- the pipe-table family: tables that tree-sitter-markdown's error recovery
# breaks (heading_index/recovery.py), among the blocks around them ---------------

# A cell: text, empty, whitespace only, escaped pipes, code holding a pipe.
TABLE_CELLS = st.sampled_from(["a", "b c", "", " ", "   ", "\\|", "x \\| y", "`|`", "**b**"])
# A header's cells: no code holding a pipe, which GFM splits (`| a | `|` |` has
# three cells): such a header with more cells than its delimiter row is no
# table, and its "rows" then meet a known divergence of tree-sitter-markdown's
# error recovery (test_traps.py, the strict xfail of a pipe line after prose).
HEADER_CELLS = st.sampled_from(["a", "b c", "", " ", "   ", "\\|", "x \\| y", "**b**"])


@st.composite
def table_row(draw: st.DrawFn, columns: int) -> str:
    """A row: `columns` cells give or take one (ragged), or a `|||` row, or a
    pipe-less one; always holding a pipe (a pipe-less line after a table is
    another trap, test_traps.py)."""
    shape = draw(st.sampled_from(["cells", "cells", "cells", "empty", "bare"]))
    if shape == "empty":
        return "|" * draw(st.integers(2, columns + 2))
    cells = draw(st.lists(TABLE_CELLS, min_size=1, max_size=columns + 1))
    if shape == "bare" and len(cells) > 1:
        return " | ".join(cells)
    return "| " + " | ".join(cells) + " |"


@st.composite
def pipe_table(draw: st.DrawFn) -> str:
    columns = draw(st.integers(1, 3))
    header = "| " + " | ".join(draw(st.lists(HEADER_CELLS, min_size=columns, max_size=columns)))
    delimiter = "|".join(draw(st.sampled_from(["---", ":-:", "-", "--:"])) for _ in range(columns))
    rows = draw(st.lists(table_row(columns), max_size=6))
    return "\n".join([header + " |", f"|{delimiter}|", *rows])


TABLE_FAMILY_BLOCKS = st.one_of(
    pipe_table(),
    pipe_table(),
    pipe_table(),
    atx_heading(),
    setext_heading(),
    fenced_code(),
    inline_text(),
    st.just("- item\n- | a | b |"),
    st.just("> | a |\n> |---|\n> |||"),
    st.just("<div>\n# html block\n</div>"),
    st.just("***"),
)


@st.composite
def table_family_documents(draw: st.DrawFn) -> str:
    """Pipe tables among other blocks, each block after a blank line or right
    after the one before; sometimes front matter first."""
    blocks = draw(st.lists(TABLE_FAMILY_BLOCKS, min_size=1, max_size=8))
    separators = draw(st.lists(st.sampled_from(["\n\n", "\n\n", "\n"]), min_size=len(blocks)))
    text = "".join(block + sep for block, sep in zip(blocks, separators, strict=False))
    if draw(st.booleans()):
        text = "---\ntitle: x\n---\n" + text
    return text
