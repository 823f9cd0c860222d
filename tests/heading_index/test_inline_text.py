"""Inline source -> plain text: unit cases, and agreement with markdown-it on
random inline soup (emphasis runs, brackets, code spans, HTML, entities)."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from mdchunks.heading_index import build_index
from mdchunks.heading_index.inline_text import plain_text

from spikes.commonmark_reference import reference_headings


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ("plain", "plain"),
        ("***strong em***", "strong em"),
        ("**a *b* c**", "a b c"),
        ("*a **b*", "*a *b"),  # the closer pairs with the nearer opener
        ("foo*bar*", "foobar"),
        ("foo_bar_", "foo_bar_"),  # underscores do not open inside words
        ("``a ` b``", "a ` b"),
        ("` a `", "a"),
        ("`unclosed", "`unclosed"),
        ("[a *b*](/u) c", "a b c"),
        ("[a](javascript:alert(1))", "[a](javascript:alert(1))"),  # not a link
        ("[outer [inner](/i)](/o)", "[outer inner](/o)"),  # links do not nest
        ("![a ![b](/b)](/a)", "a b"),  # images may
        ("<i>x</i>", "x"),
        ("<not a tag", "<not a tag"),
        ("a <!-- note --> b", "a b"),
        ("&lt;&gt; &#0; &#xD800;", "<> \ufffd \ufffd"),
        ("\\a \\* \\\\", "\\a * \\"),
        ("<mailto:a@b.c> <a@b.c>", "mailto:a@b.c a@b.c"),
        ("line one\nline two", "line one line two"),
        ("hard  \nbreak\\\nhere", "hard break here"),
        ("é 😀\t日本", "é 😀 日本"),
    ],
)
def test_plain_text(source: str, text: str) -> None:
    assert plain_text(source) == text


def test_reference_links_need_a_definition() -> None:
    assert plain_text("[a][r] [r] [r][]") == "[a][r] [r] [r][]"
    assert plain_text("[a][r] [r] [r][]", frozenset({"R"})) == "a r r"
    assert plain_text("[a][R  ]", frozenset({"R"})) == "a"


@pytest.mark.parametrize(
    "source",
    [
        "*_" * 20000,
        "**a" * 20000,
        "[" * 5000 + "a" + "]" * 5000,
        "x[" * 20000,
        "`" * 3000 + "a",
        "<?" * 20000,
        "<!--" * 20000,
        "<![CDATA[" * 5000,
        "<!a" * 20000,
    ],
    ids=[
        "star-under",
        "strong-runs",
        "nested-brackets",
        "unclosed-brackets",
        "backticks",
        "processing",
        "comments",
        "cdata",
        "declarations",
    ],
)
def test_pathological_inline_stays_linear(source: str) -> None:
    # markdown-it's bounds (openers_bottom, jumps, look-ahead caches) keep
    # these linear; a naive matcher takes minutes. Same result as markdown-it.
    started = time.process_time()  # CPU seconds: wall-clock time stretches under load
    text = plain_text(source)
    assert time.process_time() - started < 5
    assert text == reference_headings(f"# {source}\n")[0].text


FRAGMENTS = st.sampled_from(
    [
        *"*_`[]()!<>&#\\\"'",
        "**",
        "__",
        "``",
        "![",
        "](/u)",
        "](<a b>)",
        ' "t")',
        "[ref]",
        "[ref][]",
        "[x][ref]",
        "&amp;",
        "&#35;",
        "&#x1F600;",
        "&bogus;",
        "\\*",
        "\\[",
        "<a href='x'>",
        "</a>",
        "<!-- c -->",
        "<https://x.y/%C3%A9>",
        "a",
        "b c",
        "é",
        "😀",
        " ",
        "\t",
        "  \nz",
    ]
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(FRAGMENTS, max_size=14).map("".join))
def test_agrees_with_markdown_it_on_inline_soup(soup: str) -> None:
    # A letter first keeps the line a paragraph line; `===` makes it a heading.
    text = f"x{soup}\n===\n\n[ref]: /target\n"
    assert [(h.level, h.text) for h in build_index(text).headings] == [
        (r.level, r.text) for r in reference_headings(text)
    ]
