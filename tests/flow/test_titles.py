"""A document's title from its front matter (flow/plugin/titles.py)."""

from __future__ import annotations

import pytest
from mdchunks.plugin.titles import document_title


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("---\ntitle: Middleware\n---\n## Basic usage\n", "Middleware"),
        ('---\ntitle: "Quoted: with a colon"\n---\n', "Quoted: with a colon"),
        ("---\ntitle: 'Single quoted'\ndescription: x\n---\n", "Single quoted"),
        ("---\ndescription: x\ntitle: >-\n  Folded\n  over lines\n---\n", "Folded over lines"),
        ('+++\ntitle = "TOML page"\ndraft = false\n+++\n', "TOML page"),
        ("+++\ntitle = 'Literal'\n+++\n", "Literal"),
        ("\ufeff---\ntitle: After a BOM\n---\n", "After a BOM"),
        ("---\ntitle: 2024\n---\n", "2024"),  # a number is what the page shows
        ("---\r\ntitle: CRLF\r\n---\r\nbody", "CRLF"),
    ],
)
def test_the_title_of_yaml_and_toml_front_matter(text: str, title: str) -> None:
    assert document_title(text) == title


@pytest.mark.parametrize(
    ("text", "title"),
    [
        # Malformed YAML (a tab indent, an unclosed bracket): the title line alone.
        ("---\ntitle: Still here\ntags: [a, b\n---\n", "Still here"),
        ('---\ntitle: "Quoted"\n\tbad: indent\n---\n', "Quoted"),
        # Malformed TOML (an unquoted value): the title line alone, as written.
        ("+++\ntitle = Bare words\n+++\n", "Bare words"),
    ],
)
def test_malformed_front_matter_still_gives_its_title_line(text: str, title: str) -> None:
    assert document_title(text) == title


@pytest.mark.parametrize(
    "text",
    [
        "# Middleware\n\nNo front matter.\n",
        "---\ndescription: no title\n---\n",
        "---\ntitle:\n---\n",  # empty
        "---\ntitle: '   '\n---\n",  # blank
        "---\ntitle: [a, list]\n---\n",  # not text
        "---\ntitle: {a: 1}\n---\n",
        "---\ntitle: true\n---\n",
        "---\ntitle: Never closed\n",  # no front matter at all
        "---\n- a\n- list\n---\n",  # YAML that is no mapping
        "---\n: : :\n\x00\n---\n",  # what no parser takes, and no title line
        "text\n---\ntitle: Not at the top\n---\n",
    ],
)
def test_no_title(text: str) -> None:
    assert document_title(text) is None


def test_a_title_is_one_line() -> None:
    assert document_title('---\ntitle: "Two\\nlines\\tand\\u0007 a bell"\n---\n') == (
        "Two lines and a bell"
    )
