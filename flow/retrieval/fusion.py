"""Reciprocal-rank fusion (Cormack, Clarke & Büttcher 2009), the one implementation.

`mdchunks search --method hybrid` fuses the full-text and the semantic
rankings with it; the retrieval evaluation (`spikes.recall`,
`spikes.retrieval_eval`) imports it from here, so the product and the figures
that justify it rank the same way.

An item's score is the sum over the rankings holding it of `1 / (k + rank)`,
rank 1-based, k = 60 by default (hybrid search uses its own k and weights:
flow/retrieval/rankings.py). Scores are exact fractions, so the order does
not depend on the order of float additions. Ties (equal scores) go to the
item with the better (smaller) best rank, then to the one that the earlier
ranking (in argument order) holds at that best rank. No two items can tie on
all three, so the order is total and deterministic. A ranking that repeats an
item counts only its first occurrence.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from fractions import Fraction
from typing import TypeVar

RRF_K = 60

T = TypeVar("T", bound=Hashable)


def rrf_scores(
    rankings: Sequence[Sequence[T]], k: int = RRF_K, weights: Sequence[int] | None = None
) -> list[tuple[T, Fraction]]:
    """Fused `(item, score)` pairs, best first (see the module docstring).
    `weights` (one integer per ranking, default all 1) multiply each ranking's
    `1 / (k + rank)` (weighted RRF)."""
    if k < 0:
        raise ValueError(f"the RRF constant k must be >= 0, got {k}")
    if weights is None:
        weights = [1] * len(rankings)
    if len(weights) != len(rankings) or any(w < 0 for w in weights):
        raise ValueError(f"one weight >= 0 per ranking, got {list(weights)}")
    scores: dict[T, Fraction] = {}
    best: dict[T, tuple[int, int]] = {}  # item -> (best rank, index of the ranking)
    for ranking_index, ranking in enumerate(rankings):
        seen: set[T] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, Fraction(0)) + Fraction(
                weights[ranking_index], k + rank
            )
            if item not in best or (rank, ranking_index) < best[item]:
                best[item] = (rank, ranking_index)
    order = sorted(scores, key=lambda item: (-scores[item], *best[item]))
    return [(item, scores[item]) for item in order]


def rrf(
    rankings: Sequence[Sequence[T]], k: int = RRF_K, weights: Sequence[int] | None = None
) -> list[T]:
    """Reciprocal-rank fusion of `rankings` (each best first): items, best first."""
    return [item for item, _ in rrf_scores(rankings, k, weights)]
