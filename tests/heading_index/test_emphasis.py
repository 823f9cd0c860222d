"""Delimiter runs and their pairing, on their own."""

from __future__ import annotations

import pytest
from mdchunks.heading_index.emphasis import Delimiter, balance, scan_delimiter_run


@pytest.mark.parametrize(
    ("source", "start", "expected"),
    [
        ("*a*", 0, (1, True, False)),
        ("*a*", 2, (1, False, True)),
        ("a**b", 1, (2, True, True)),  # `*` may open and close inside a word
        ("a__b", 1, (2, False, False)),  # `_` may not
        ("** a", 0, (2, False, False)),  # followed by whitespace: not left-flanking
        ('"*a*"', 1, (1, True, False)),  # punctuation around
    ],
)
def test_scan_delimiter_run(source: str, start: int, expected: tuple[int, bool, bool]) -> None:
    assert scan_delimiter_run(source, start, len(source)) == expected


def _delimiters(source: str) -> list[Delimiter]:
    """Delimiters of `source`, one piece per character (as the reducer makes them)."""
    found: list[Delimiter] = []
    pos = 0
    while pos < len(source):
        if source[pos] in "*_":
            length, can_open, can_close = scan_delimiter_run(source, pos, len(source))
            for offset in range(length):
                found.append(Delimiter(source[pos], length, pos + offset, can_open, can_close))
            pos += length
        else:
            pos += 1
    return found


@pytest.mark.parametrize(
    ("source", "unpaired"),
    [
        ("*a*", ""),
        ("**a**", ""),
        ("*a**", "*"),
        ("*a _b* c_", "__"),  # crossing runs: the first closer wins
        ("*foo**bar**baz*", ""),
        ("*foo**bar*", "**"),  # the rule of 3: <em>foo**bar</em>
        ("_a*", "_*"),
    ],
)
def test_balance_leaves_unpaired_markers(source: str, unpaired: str) -> None:
    delimiters = _delimiters(source)
    balance(delimiters)
    paired = {d.piece for d in delimiters if d.end >= 0}
    paired |= {delimiters[d.end].piece for d in delimiters if d.end >= 0}
    assert "".join(d.marker for d in delimiters if d.piece not in paired) == unpaired
