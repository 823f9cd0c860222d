"""Retrieval recall (issue #8): pure functions, no I/O, no database, no model.

A retrieval method answers a query with chunks in rank order; this module
only ever sees the chunks' stored texts (or, for fusion, their ids).

- The **hit rule**: a chunk hits a query when its stored text contains the
  query's fact, after whitespace is collapsed on both sides
  (`collapse_whitespace`: every run of Unicode whitespace becomes one space,
  leading and trailing whitespace is dropped). Matching is otherwise exact:
  case, punctuation and curly quotes count. A fact split across two chunks
  is in neither, so it is a miss; a fact inside an overlap is in both, and
  the first of them counts.
- `first_hit_rank`: the 1-based rank of the first hit in a ranking, None
  when no chunk of the ranking hits (the ranking is whatever the method
  returned: callers cut it at the largest k they report).
- `recall_at_k`: share of queries whose first hit is at rank <= k. A query
  with no hit counts as a miss at every k; zero queries is undefined (None),
  not 0 or 1.
- The **label rule** (issue "Every hit names the section that answers"): a
  hit is *labelled* when it holds the fact and the heading path shown with it
  is the answer's (the golden `heading_path`, compared exactly).
  `first_labelled_rank` is the 1-based rank of the first labelled hit, so
  `recall_at_k` over those ranks is labelled@k; a labelled rank is never
  better than the found rank, and a query can be labelled at a later rank than
  it is found (an overlapping chunk that holds the fact under the right name).
  `found_not_labelled` lists the queries found within k but not labelled there.
- `rrf`, `rrf_scores`: reciprocal-rank fusion, re-exported from
  `flow.fusion` (the product's `search --method hybrid` uses the same one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from mdchunks.retrieval.fusion import RRF_K, rrf, rrf_scores

__all__ = [
    "RRF_K",
    "QueryOutcome",
    "RecallResult",
    "collapse_whitespace",
    "evaluate",
    "first_hit_rank",
    "first_labelled_rank",
    "found_not_labelled",
    "is_hit",
    "recall_at_k",
    "rrf",
    "rrf_scores",
]


def collapse_whitespace(text: str) -> str:
    """Every run of whitespace -> one space; no leading or trailing whitespace."""
    return " ".join(text.split())


def is_hit(fact: str, chunk_text: str) -> bool:
    """The hit rule: the chunk's stored text contains the fact (whitespace collapsed)."""
    needle = collapse_whitespace(fact)
    if not needle:
        raise ValueError("an empty fact would hit every chunk")
    return needle in collapse_whitespace(chunk_text)


def first_hit_rank(fact: str, ranked_texts: Iterable[str]) -> int | None:
    """1-based rank of the first chunk text that holds `fact`, None if none does."""
    for rank, text in enumerate(ranked_texts, start=1):
        if is_hit(fact, text):
            return rank
    return None


def first_labelled_rank(
    fact: str, heading_path: Sequence[str], ranked: Iterable[tuple[str, Sequence[str]]]
) -> int | None:
    """1-based rank of the first (chunk text, shown heading path) that holds
    `fact` under exactly `heading_path`; None if none does."""
    wanted = tuple(heading_path)
    for rank, (text, shown) in enumerate(ranked, start=1):
        if tuple(shown) == wanted and is_hit(fact, text):
            return rank
    return None


def found_not_labelled(
    found: Sequence[int | None], labelled: Sequence[int | None], k: int
) -> list[int]:
    """Indexes of the queries whose fact is within the top k but not labelled there."""
    if len(found) != len(labelled):
        raise ValueError(f"{len(found)} found ranks but {len(labelled)} labelled ranks")
    return [
        index
        for index, (hit, named) in enumerate(zip(found, labelled, strict=True))
        if hit is not None and hit <= k and (named is None or named > k)
    ]


def recall_at_k(ranks: Sequence[int | None], k: int) -> float | None:
    """Share of queries found at rank <= k; None (undefined) for zero queries."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if not ranks:
        return None
    found = sum(1 for rank in ranks if rank is not None and rank <= k)
    return found / len(ranks)


@dataclass(frozen=True, slots=True)
class QueryOutcome:
    """Where one golden query's fact was found (None: not in the ranking)."""

    id: str
    rank: int | None


@dataclass(frozen=True, slots=True)
class RecallResult:
    """recall@k for each requested k, and each query's first-hit rank."""

    recall: Mapping[int, float | None]  # k -> recall@k, ks in ascending order
    outcomes: tuple[QueryOutcome, ...]  # in golden-set order


def evaluate(
    queries: Iterable[tuple[str, str, str]],
    retrieve: Callable[[str], Sequence[str]],
    ks: Sequence[int],
) -> RecallResult:
    """Run `retrieve(query)` for each `(id, query, fact)` and score the rankings.

    `retrieve` returns stored chunk texts best first; only its first `max(ks)`
    are looked at, so a method may return more.
    """
    wanted = sorted(set(ks))
    if not wanted or wanted[0] < 1:
        raise ValueError(f"ks must be non-empty and >= 1, got {list(ks)}")
    depth = wanted[-1]
    outcomes = tuple(
        QueryOutcome(query_id, first_hit_rank(fact, list(retrieve(query))[:depth]))
        for query_id, query, fact in queries
    )
    ranks = [outcome.rank for outcome in outcomes]
    return RecallResult({k: recall_at_k(ranks, k) for k in wanted}, outcomes)
