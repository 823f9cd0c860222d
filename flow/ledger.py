"""What happened in one run, as the flow saw it (plain Python, no engine).

The per-document function records each document it actually processes (a
memo hit records nothing: that is how "unchanged" is known); the app's
exception handler records documents whose processing raised. The
reconciliation and the report read it afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flow.listing import Listing


@dataclass(frozen=True, slots=True)
class Processed:
    rel_path: str
    size_bytes: int
    chunks: int
    error: str | None  # a document problem (declared on its document row)


@dataclass(slots=True)
class RunLedger:
    listing: Listing
    max_doc_bytes: int
    processed: dict[str, Processed] = field(default_factory=dict)
    raised: dict[str, str] = field(default_factory=dict)  # rel_path -> cause

    def record(self, outcome: Processed) -> None:
        self.processed[outcome.rel_path] = outcome

    def record_raised(self, rel_path: str, cause: str) -> None:
        self.raised[rel_path] = cause
        self.processed.pop(rel_path, None)

    @property
    def processed_bytes(self) -> int:
        return sum(outcome.size_bytes for outcome in self.processed.values())
