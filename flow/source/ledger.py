"""What happened in one run, as the flow saw it (plain Python, no engine).

The per-document function records each document it actually processes (a
memo hit records nothing: that is how "unchanged" is known); the app's
exception handler records documents whose processing raised. After the
engine is done, the reconciliation writes each processed document's row from
it (flow/source/reconcile.py), and the report reads it. It also holds the
chunk and section rows of processed documents until they are written
(flow/source/writes.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from mdchunks.source.bounded import DocumentLimits
from mdchunks.source.listing import Listing
from mdchunks.source.quarantine import Quarantine
from mdchunks.source.writes import Encoded


@dataclass(frozen=True, slots=True)
class Processed:
    rel_path: str
    size_bytes: int
    chunks: int
    error: str | None  # a document problem (kept on its document row)
    content_hash: str  # sha256 of the file's bytes, hex
    merges: int = 0  # structure chunker: sections merged into an earlier section's chunk
    breadcrumb_truncations: int = 0  # chunks whose breadcrumb was cut to the budget
    sections: int = 0  # its content_sections rows
    # What the file was ("markdown", "text", or the importer's name) and what its
    # importer noted (a PDF without outline); kept on its document row.
    source_format: str = "markdown"
    import_note: str | None = None
    title: str | None = None  # from its front matter, kept on its document row

    def refused(self, cause: str) -> Processed:
        """This outcome when the database refused the document's rows: a
        failure on its document row, with no rows (flow/source/writes.py)."""
        return dataclasses.replace(
            self, error=cause, chunks=0, sections=0, merges=0, breadcrumb_truncations=0
        )


@dataclass(slots=True)
class RunLedger:
    listing: Listing
    max_doc_bytes: int
    live: bool = False  # a watch: cocoindex's live walk finds the documents, not the listing
    verify: bool = False  # `ingest --verify`: every document's content is hashed, not its stat
    # Time and memory of one large document's chunking (flow/source/bounded.py).
    limits: DocumentLimits = field(default_factory=DocumentLimits)
    processed: dict[str, Processed] = field(default_factory=dict)
    raised: dict[str, str] = field(default_factory=dict)  # rel_path -> cause
    # Documents in flight, and those that killed an earlier run (flow/source/quarantine.py).
    quarantine: Quarantine = field(default_factory=Quarantine)
    # The sum of the processed documents' sizes, kept as they are recorded: the
    # progress line reads it while the engine runs, and never iterates the dict.
    processed_bytes: int = 0
    # Rows not written yet: rel_path -> its chunk and section rows, encoded (a
    # document processed again replaces its earlier rows), and how many rows
    # that is in all.
    pending: dict[str, Encoded] = field(default_factory=dict)
    pending_rows: int = 0
    writing: bool = False  # a batch write is in flight (one at a time)
    # Large documents being chunked in a child process now: rel_path -> bytes
    # (for the progress line; written and read on the engine's event loop).
    in_flight: dict[str, int] = field(default_factory=dict)
    # BM25's statistics follow the run's writes (docs/search.md): the source
    # whose statistics each write moves by its documents' share (None: they
    # are recounted at the end), and how many more rows may be moved before a
    # recount costs less; `stats_behind`: the run stopped moving them.
    stats_of: str | None = None
    stats_rows_left: int = 0
    stats_behind: bool = False

    def stats_for(self, batch: Mapping[str, Encoded]) -> str | None:
        """The source whose statistics the write of `batch` moves, or None
        (the run recounts them): past the budget, moving stops for the run."""
        rows = sum(document.chunk_rows for document in batch.values())
        if self.stats_of is not None and rows > self.stats_rows_left:
            self.stats_of, self.stats_behind = None, True
        self.stats_rows_left -= rows
        return self.stats_of

    def largest_in_flight(self) -> tuple[str, int] | None:
        """The largest document being chunked in a child now, or None."""
        if not self.in_flight:
            return None
        return max(self.in_flight.items(), key=lambda item: (item[1], item[0]))

    def record(self, outcome: Processed, rows: Encoded | None = None) -> None:
        """`outcome`, and its document's rows to write (None: none to write, as
        for an outcome copied from a run that wrote them)."""
        earlier = self.processed.get(outcome.rel_path)
        self.processed_bytes += outcome.size_bytes - (earlier.size_bytes if earlier else 0)
        self.processed[outcome.rel_path] = outcome
        self._drop_rows(outcome.rel_path)
        if rows is None:
            return
        self.pending[outcome.rel_path] = rows
        self.pending_rows += rows.rows

    def record_raised(self, rel_path: str, cause: str) -> None:
        self.raised[rel_path] = cause
        self._drop_rows(rel_path)
        earlier = self.processed.pop(rel_path, None)
        if earlier is not None:
            self.processed_bytes -= earlier.size_bytes

    def take_rows(self) -> dict[str, Encoded]:
        """The rows waiting to be written (rel_path -> rows), now the caller's."""
        taken = self.pending
        self.pending = {}
        self.pending_rows = 0
        return taken

    def refused(self, causes: dict[str, str]) -> None:
        """The database refused these documents' rows (rel_path -> cause): each
        fails as a document whose bytes are the problem does, on its document
        row, with no rows, reported again until its file or the recipe changes."""
        for rel_path, cause in causes.items():
            self._drop_rows(rel_path)
            outcome = self.processed.get(rel_path)
            if outcome is not None:
                self.processed[rel_path] = outcome.refused(cause)

    def batch(self) -> dict[str, Encoded]:
        """The rows waiting now, still pending until `written`."""
        return dict(self.pending)

    def written(self, batch: dict[str, Encoded]) -> None:
        """`batch` (from `batch`) is in the tables: its rows are no longer
        pending, but for documents recorded again meanwhile (their newer rows are)."""
        for rel_path, rows in batch.items():
            if self.pending.get(rel_path) is rows:
                self._drop_rows(rel_path)

    def _drop_rows(self, rel_path: str) -> None:
        dropped = self.pending.pop(rel_path, None)
        if dropped is not None:
            self.pending_rows -= dropped.rows

    @property
    def merges(self) -> int:
        return sum(outcome.merges for outcome in self.processed.values())

    @property
    def breadcrumb_truncations(self) -> int:
        return sum(outcome.breadcrumb_truncations for outcome in self.processed.values())
