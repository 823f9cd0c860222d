"""Property tests over generated markdown (see markdown_strategies) and arbitrary text."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from index_invariants import check_assignment, check_index_invariants
from markdown_strategies import ANY_TEXT, markdown_documents, table_family_documents
from mdchunks.heading_index import assign, build_index
from mdchunks.heading_index.parse import heading_prefix_length, parse, structural_headings

from spikes.commonmark_reference import ReferenceHeading, line_of, reference_headings
from spikes.heading_scan import expected_headings, found_headings

SETTINGS = settings(
    max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def documents_with_spans(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    """A document and chunk spans in document order: contiguous, overlapping,
    or with gaps (as a chunker that leaves headings out of its chunks has)."""
    text = draw(markdown_documents())
    if not text:
        return text, []
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=12))))
    bounds = sorted({0, *cuts, len(text)})
    spans: list[tuple[int, int]] = []
    for left, right in itertools.pairwise(bounds):
        start = max(spans[-1][0] if spans else 0, left - draw(st.integers(0, 8)))
        spans.append((start, right))
    if draw(st.booleans()):
        keep = draw(st.lists(st.booleans(), min_size=len(spans), max_size=len(spans)))
        spans = [span for span, kept in zip(spans, keep, strict=True) if kept]
    return text, spans


@SETTINGS
@given(markdown_documents())
def test_generated_documents_give_well_formed_indexes(text: str) -> None:
    check_index_invariants(text, build_index(text))


@SETTINGS
@given(markdown_documents())
def test_generated_documents_agree_with_commonmark(text: str) -> None:
    # A document opening with `---` or `+++` may have front matter, which
    # CommonMark does not know (see the conformance deviations).
    assume(not text.startswith(("---", "+++")))
    found = [
        ReferenceHeading(line_of(text, h.start), h.level, h.text)
        for h in build_index(text).headings
    ]
    assert found == reference_headings(text)


@SETTINGS
@given(markdown_documents())
def test_parsing_the_heading_prefix_finds_the_same_headings(text: str) -> None:
    source = text.encode()
    prefix = heading_prefix_length(source)
    full = structural_headings(parse(source), source)
    assert structural_headings(parse(source[:prefix]), source) == full if prefix else full == []


@SETTINGS
@given(documents_with_spans())
def test_assign_follows_design_section_3(case: tuple[str, list[tuple[int, int]]]) -> None:
    text, spans = case
    check_assignment(text, build_index(text), spans)


@SETTINGS
@given(ANY_TEXT)
def test_any_text_never_raises(text: str) -> None:
    index = build_index(text)
    check_index_invariants(text, index)
    spans = [(i, min(i + 7, len(text))) for i in range(0, len(text), 5)]
    check_assignment(text, index, spans)


@SETTINGS
@given(ANY_TEXT, st.lists(st.tuples(st.integers(-5, 300), st.integers(-5, 300)), max_size=8))
def test_assign_never_raises_on_odd_spans(text: str, spans: list[tuple[int, int]]) -> None:
    assert len(assign(build_index(text), spans)) == len(spans)


@SETTINGS
@given(table_family_documents())
def test_pipe_tables_hide_no_heading_commonmark_with_tables_sees(text: str) -> None:
    # The reference is CommonMark with GFM tables; front matter, which it does
    # not know, is blanked in its copy (spikes.heading_scan).
    assert found_headings(text) == expected_headings(text)
