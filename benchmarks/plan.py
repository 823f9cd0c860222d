"""How big and how often: the full plan and the quick one (a smoke test)."""

from __future__ import annotations

from dataclasses import dataclass

STAGES: tuple[str, ...] = (
    "index",
    "ingest",
    "noop",
    "edit",
    "growth",
    "memory",
    "peer",
    "breakdown",
)


@dataclass(frozen=True, slots=True)
class Plan:
    name: str
    repeats: int  # runs per median of the in-process timings (stage 1)
    big_repeats: int  # runs per median on the big document (stage 1)
    trials: int  # fresh-database ingests per app and corpus (stages 2, 5)
    reruns: int  # no-op re-runs and single-file edits per app on tldr (stages 3, 4)
    generated_reruns: int  # the same on the many-files corpus (a no-op there takes ~1 min)
    tldr_files: int | None  # None: the whole tldr corpus
    generated_files: int  # the generated many-files corpus
    big_doc_mb: int  # the generated single document (stage 6)
    index_doc_mb: int  # the generated single document of stage 1 (timed several times)
    growth_factors: tuple[int, ...]  # copies of the rust-book
    growth_files: int | None  # rust-book files per copy (None: all 112)
    long_mb: float  # the corpus of long documents (stages 7, 8)


FULL = Plan(
    name="full",
    repeats=5,
    big_repeats=3,
    trials=3,
    reruns=3,
    generated_reruns=2,
    tldr_files=None,
    generated_files=50_000,
    big_doc_mb=50,
    index_doc_mb=10,
    growth_factors=(1, 4, 16),
    growth_files=None,
    long_mb=12,
)

QUICK = Plan(
    name="quick",
    repeats=1,
    big_repeats=1,
    trials=1,
    reruns=1,
    generated_reruns=1,
    tldr_files=300,
    generated_files=600,
    big_doc_mb=1,
    index_doc_mb=1,
    growth_factors=(1, 2, 4),
    growth_files=8,
    long_mb=0.3,
)
