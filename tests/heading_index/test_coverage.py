"""heading_index.coverage: repaired spans lose no text and keep to the budget."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from mdchunks.heading_index.coverage import fit_span, repair_spans
from mdchunks.heading_index.text_spans import utf8_len

# Characters the splitter was seen to drop, wide characters, break points.
PIECES = st.sampled_from(
    [
        "。",
        "！",
        "？",
        "；",
        "これは文です",
        "中文句子",
        "word",
        " ",
        "\n",
        "\n\n",
        "é",
        "😀",
        "x" * 50,
    ]
)
TEXTS = st.lists(PIECES, max_size=80).map("".join)


def _uncovered(text: str, spans: list[tuple[int, int]]) -> list[int]:
    covered = bytearray(len(text))
    for start, end in spans:
        covered[start:end] = b"\x01" * (end - start)
    return [i for i, ch in enumerate(text) if not covered[i] and not ch.isspace()]


@st.composite
def text_and_spans(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]], int]:
    text = draw(TEXTS)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    spans = []
    for a, b in itertools.pairwise(cuts):
        # Some spans shrunk at either end: text a splitter left out.
        shrink = draw(st.integers(0, 2))
        spans.append((a, max(a, b - shrink)))
    return text, spans, draw(st.integers(4, 120))


@settings(max_examples=400, deadline=None)
@given(text_and_spans())
def test_every_character_is_covered_and_every_span_fits(
    case: tuple[str, list[tuple[int, int]], int],
) -> None:
    text, spans, chunk_size = case
    repaired = repair_spans(text, spans, chunk_size)
    assert _uncovered(text, repaired) == []
    assert all(0 <= a < b <= len(text) for a, b in repaired)
    assert all(utf8_len(text[a:b]) <= chunk_size for a, b in repaired)
    starts = [a for a, _ in repaired]
    assert starts == sorted(starts)


def test_the_dropped_cjk_full_stop_joins_the_chunk_before() -> None:
    text = "これは文です。\n\n次の文です。"
    # What the splitter returns: the 。 of the first paragraph in no chunk.
    assert repair_spans(text, [(0, 6), (9, 15)], 2000) == [(0, 7), (9, 15)]


def test_a_run_without_break_points_is_cut_at_code_points() -> None:
    text = "é" * 1000  # 2,000 bytes, no break point
    pieces = fit_span(text, (0, 1000), 301)
    assert all(utf8_len(text[a:b]) <= 301 for a, b in pieces)
    assert [a for a, _ in pieces[1:]] == [b for _, b in pieces[:-1]]  # consecutive
    assert pieces[0] == (0, 150) and pieces[-1][1] == 1000


def test_cuts_prefer_line_breaks_then_whitespace() -> None:
    text = "aaaa bbbb\ncccc dddd eeee"
    # After the line break, then after a space; the whitespace at a cut is in
    # no piece (pieces are trimmed like chunks), every other character is.
    assert fit_span(text, (0, len(text)), 12) == [(0, 9), (10, 19), (20, 24)]
