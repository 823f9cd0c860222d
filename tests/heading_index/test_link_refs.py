"""Link reference definitions at the start of a paragraph."""

from __future__ import annotations

import pytest
from mdchunks.heading_index.link_refs import parse_definitions


@pytest.mark.parametrize(
    ("lines", "labels", "used"),
    [
        (["[foo]: /url"], ["FOO"], 1),
        (["[foo]: /url 'title'", "Heading"], ["FOO"], 1),
        (["[foo]:", "/url", "'title'", "rest"], ["FOO"], 3),
        (["[a]: /a", "[B  c]: <b c>", "rest"], ["A", "B C"], 2),
        (["[foo]: /url 'title' junk"], [], 0),
        (["[foo]: /url", "'title' junk"], ["FOO"], 1),  # the title line is not part of it
        (["[foo]: /url", "'' junk"], [], 0),  # markdown-it's rule for an empty title
        (["[foo]:"], [], 0),
        (["[ ]: /url"], [], 0),
        (["[fo[o]: /url"], [], 0),
        (["[foo]: javascript:alert(1)"], [], 0),
        (["[foo] : /url"], [], 0),
        (["[\\]]: /url"], ["\\]"], 1),
        (["not a definition", "[foo]: /url"], [], 0),
    ],
)
def test_parse_definitions(lines: list[str], labels: list[str], used: int) -> None:
    assert parse_definitions(lines) == (labels, used)
