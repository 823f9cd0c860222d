"""Autolink text: percent-escapes and punycode hosts decoded as markdown-it shows them."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt
from mdchunks.heading_index.autolink_text import autolink_text

_MD = MarkdownIt("commonmark")


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com",
        "HTTP://EXAMPLE.COM/%41%2F%e9%C3%A9",
        "http://xn--bcher-kva.example/a%20b",
        "http://a.b/%zz%C3",
        "xy:%80%bf%f0%9f%98%80%f0%9f%98",
        "xy:%c0%80%ed%a0%80%e9%41",
        "mailto:someone@example.com",
    ],
)
def test_matches_markdown_it(url: str) -> None:
    (inline,) = _MD.parseInline(f"<{url}>")
    shown = "".join(t.content for t in inline.children or [] if t.type == "text")
    assert autolink_text(url) == shown
