"""Recall arithmetic (`spikes.recall`) on a toy corpus and golden set worked
out by hand, and the order reciprocal-rank fusion produces.

Every expected number is derived in the comments next to it.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from spikes.recall import (
    QueryOutcome,
    collapse_whitespace,
    evaluate,
    first_hit_rank,
    first_labelled_rank,
    found_not_labelled,
    is_hit,
    recall_at_k,
    rrf,
    rrf_scores,
)

# ----------------------------------------------------------------- toy corpus
#
# One document, cut by hand into chunks the way a small-budget chunker might
# (C2/C3 split a sentence; C4/C5 overlap on "Overlapping text is stored
# twice."), plus C6, a whole-section chunk of another chunker whose text
# wraps the sentence over a line break and an indent.

C1 = "# Guide\n\nInstall the tool with pip.\n"
C2 = "## Usage\n\nRun the tool on a folder of\n"
C3 = "markdown files to index them.\n"
C4 = "## Limits\n\nLarge tables are split. Overlapping text is stored twice.\n"
C5 = "Overlapping text is stored twice. Each piece keeps\n"
C6 = "## Tables\n\nPieces keep their\n    header rows when split.\n"
CHUNKS = {"c1": C1, "c2": C2, "c3": C3, "c4": C4, "c5": C5, "c6": C6}

# The golden set: (id, query, fact).
GOLDEN = [
    ("q1", "how do I install it", "Install the tool with pip."),
    ("q2", "what does it run on", "Run the tool on a folder of markdown files"),
    ("q3", "what about table headers", "Pieces keep their header rows when split."),
    ("q4", "is anything stored twice", "Overlapping text is stored twice."),
    ("q5", "how is it installed, lowercase", "install the tool with pip."),
    ("q6", "what happens to large tables", "Large tables are split."),
]

# What a retrieval method returned for each query, best first (chunk ids).
RANKINGS = {
    "q1": ["c2", "c1", "c3"],  # the fact is in c1, at rank 2
    "q2": ["c2", "c3", "c1"],  # split across c2 and c3: no chunk holds it -> miss
    "q3": ["c6", "c1"],  # c6 holds it once whitespace is collapsed -> rank 1
    "q4": ["c1", "c5", "c4"],  # in c5 (rank 2) and c4 (rank 3): the first counts -> 2
    "q5": ["c1", "c2", "c3"],  # c1 has "Install", capital I: case counts -> miss
    "q6": ["c1", "c2", "c3", "c4"],  # c4 holds it, at rank 4: beyond max k = 3 -> miss
}


def retrieve(query: str) -> list[str]:
    query_id = next(query_id for query_id, text, _ in GOLDEN if text == query)
    return [CHUNKS[chunk_id] for chunk_id in RANKINGS[query_id]]


def test_hit_rule_collapses_whitespace_on_both_sides_and_is_otherwise_exact() -> None:
    assert collapse_whitespace("  a\n\tb  c \n") == "a b c"
    assert is_hit("Pieces keep their header rows when split.", C6)
    assert is_hit("Pieces   keep their\nheader rows", C6)  # the fact's side collapses too
    assert not is_hit("pieces keep their header rows", C6)  # case counts
    assert not is_hit("Run the tool on a folder of markdown files", C2)  # half in C2 ...
    assert not is_hit("Run the tool on a folder of markdown files", C3)  # ... half in C3
    with pytest.raises(ValueError, match="empty fact"):
        is_hit(" \n", C1)


def test_first_hit_rank_is_one_based_and_none_when_absent() -> None:
    texts = [CHUNKS[chunk_id] for chunk_id in RANKINGS["q4"]]
    assert first_hit_rank("Overlapping text is stored twice.", texts) == 2
    assert first_hit_rank("Install the tool with pip.", texts) == 1
    assert first_hit_rank("not anywhere at all", texts) is None
    assert first_hit_rank("Install the tool with pip.", []) is None


def test_recall_on_the_toy_golden_set() -> None:
    result = evaluate(GOLDEN, retrieve, ks=[3, 1, 2, 2])
    # First-hit ranks, from the comments on RANKINGS: q1 2, q2 -, q3 1, q4 2,
    # q5 -, q6 - (rank 4 exists, but only the top max(ks) = 3 are looked at).
    assert result.outcomes == (
        QueryOutcome("q1", 2),
        QueryOutcome("q2", None),
        QueryOutcome("q3", 1),
        QueryOutcome("q4", 2),
        QueryOutcome("q5", None),
        QueryOutcome("q6", None),
    )
    # recall@1: only q3 -> 1/6; recall@2: q1, q3, q4 -> 3/6; recall@3: the same
    # three (nothing was found at rank 3) -> 3/6. The ks come back sorted, once.
    assert list(result.recall) == [1, 2, 3]
    assert result.recall == {1: 1 / 6, 2: 3 / 6, 3: 3 / 6}


def test_recall_at_k_by_itself() -> None:
    ranks = [2, None, 1, 2, None, 4]
    # k=1: {1} -> 1/6; k=2: {2, 1, 2} -> 3/6; k=4: {2, 1, 2, 4} -> 4/6; k=10 the same.
    assert recall_at_k(ranks, 1) == 1 / 6
    assert recall_at_k(ranks, 2) == 3 / 6
    assert recall_at_k(ranks, 4) == 4 / 6
    assert recall_at_k(ranks, 10) == 4 / 6
    assert recall_at_k([], 5) is None  # undefined, not 0 or 1
    with pytest.raises(ValueError):
        recall_at_k(ranks, 0)
    with pytest.raises(ValueError):
        evaluate(GOLDEN, retrieve, ks=[])


# ------------------------------------------------------------------- fusion


def test_rrf_orders_by_summed_reciprocal_ranks() -> None:
    bm25 = ["a", "b", "c"]
    semantic = ["c", "a", "d"]
    # k = 60: a = 1/61 + 1/62, c = 1/63 + 1/61, b = 1/62, d = 1/63.
    # a > c (1/62 > 1/63), c > b (1/61 + 1/63 > 1/62), b > d.
    assert rrf([bm25, semantic]) == ["a", "c", "b", "d"]
    scores = dict(rrf_scores([bm25, semantic]))
    assert scores["a"] == Fraction(1, 61) + Fraction(1, 62)
    assert scores["d"] == Fraction(1, 63)


def test_rrf_constant_changes_the_order() -> None:
    # x is first in one list only; y is second in both.
    # k = 60: y = 1/62 + 1/62 = 1/31 ~ 0.0323 beats x = z = 1/61 ~ 0.0164;
    #         x and z tie, both best at rank 1, x in the earlier list: y, x, z.
    # k = 0:  x = 1/1 = 1, y = 1/2 + 1/2 = 1, z = 1: a three-way tie, broken
    #         by best rank (x 1, z 1, y 2), then list order (x before z): x, z, y.
    first = ["x", "y"]
    second = ["z", "y"]
    assert rrf([first, second]) == ["y", "x", "z"]
    assert rrf([first, second], k=0) == ["x", "z", "y"]


def test_rrf_tie_break_is_deterministic_and_follows_argument_order() -> None:
    # p and q swap places: both score 1/61 + 1/62 and both have best rank 1;
    # the earlier ranking holds p at rank 1, so p comes first ...
    assert rrf([["p", "q"], ["q", "p"]]) == ["p", "q"]
    # ... and swapping the arguments swaps them.
    assert rrf([["q", "p"], ["p", "q"]]) == ["q", "p"]
    # Same input, same output, whatever the hash seed (no set order leaks).
    assert all(rrf([["m", "n", "o"], ["o", "n", "m"]]) == ["m", "o", "n"] for _ in range(5))


def test_rrf_edge_cases() -> None:
    assert rrf([]) == []
    assert rrf([[], []]) == []
    assert rrf([["only"]]) == ["only"]
    # A repeated item counts once per ranking, at its first position:
    # r = 1/61 (not 1/61 + 1/63), s = 1/62 -> r, s.
    assert rrf_scores([["r", "s", "r"]]) == [("r", Fraction(1, 61)), ("s", Fraction(1, 62))]
    with pytest.raises(ValueError):
        rrf([["a"]], k=-1)


def test_hybrid_is_fusion_then_the_same_hit_rule() -> None:
    # bm25 returned [c2, c1], semantic [c1, c3] for q1.
    # c1 = 1/62 + 1/61, c2 = 1/61, c3 = 1/62 -> [c1, c2, c3]: q1's fact (in c1)
    # is found at rank 1, where bm25 alone had it at rank 2.
    fused = rrf([["c2", "c1"], ["c1", "c3"]])
    assert fused == ["c1", "c2", "c3"]
    assert first_hit_rank("Install the tool with pip.", [CHUNKS[c] for c in fused]) == 1


# ------------------------------------------------------------- the label rule
#
# Hits as (chunk text, the heading path shown with it). C4 and C5 both hold
# "Overlapping text is stored twice." (their overlap); the answer's section is
# Guide > Limits.

LIMITS = ("Guide", "Limits")
OVERLAP = "Overlapping text is stored twice."


def test_a_hit_is_labelled_only_with_the_fact_and_exactly_the_answer_path() -> None:
    # Rank 1 shows the right path but lacks the fact; rank 2 holds it under a
    # parent path (too shallow is not the answer's); rank 3 holds it, named right.
    ranked = [(C1, LIMITS), (C4, ("Guide",)), (C5, LIMITS)]
    assert first_hit_rank(OVERLAP, [text for text, _ in ranked]) == 2
    assert first_labelled_rank(OVERLAP, LIMITS, ranked) == 3
    # A deeper path is no more the answer's than a shallower one.
    assert first_labelled_rank(OVERLAP, LIMITS, [(C4, (*LIMITS, "Tables"))]) is None
    assert first_labelled_rank(OVERLAP, list(LIMITS), [(C4, list(LIMITS))]) == 1
    assert first_labelled_rank(OVERLAP, LIMITS, []) is None


def test_a_preamble_answer_is_labelled_by_the_empty_path() -> None:
    assert first_labelled_rank("Install the tool", (), [(C1, ())]) == 1
    assert first_labelled_rank("Install the tool", (), [(C1, ("Guide",))]) is None


def test_found_not_labelled_lists_the_queries_found_within_k_but_not_named_there() -> None:
    found = [1, 2, None, 4, 6, 1]
    labelled = [1, None, None, 7, None, 3]
    # q0 labelled at 1; q1 found, never labelled; q2 never found; q3 labelled only
    # after k; q4 found after k (not listed); q5 labelled within k at a later rank.
    assert found_not_labelled(found, labelled, 5) == [1, 3]
    assert found_not_labelled(found, labelled, 1) == [5]  # named only at rank 3
    assert found_not_labelled(found, labelled, 10) == [1, 4]
    with pytest.raises(ValueError):
        found_not_labelled([1], [], 5)
