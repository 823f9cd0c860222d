"""What the Python API returns: plain frozen reports of runs, status and drops."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mdchunks.importers.base import INSTALL_HINT
from mdchunks.importers.registry import installable_suffixes
from mdchunks.source import engine, listing
from mdchunks.source.ledger import RunLedger

# (suffix, count) pairs, most first: files a walk did not take; or (format,
# count) pairs: documents by what their files were.
Counts = tuple[tuple[str, int], ...]


def counted(counts: dict[str, int]) -> Counts:
    return tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def describe_skipped(skipped: Counts) -> str:
    """`3 .rst, 1 .png, 2 with no suffix (no importer reads them)`, or with the
    extra to install when an importer of it would take some of them; "" when
    the walk left no file out."""
    if not skipped:
        return ""
    shown = ", ".join(f"{n} {suffix or 'with no suffix'}" for suffix, n in skipped)
    installable = [suffix for suffix, _ in skipped if suffix in installable_suffixes()]
    if not installable:
        return f"{shown} (no importer reads them)"
    others = "; no importer reads the others" if len(installable) < len(skipped) else ""
    return f"{shown} ({INSTALL_HINT} reads {', '.join(installable)}{others})"


def describe_languages(languages: Counts) -> str:
    """`12 zh-cn, 10 ja, 40 not stated (English)`: documents by language."""
    return ", ".join(f"{n} {name or 'not stated (English)'}" for name, n in languages)


def describe_formats(formats: Counts) -> str:
    """`2 html, 1 pdf`: documents by the importer that converted them."""
    return ", ".join(f"{n} {name}" for name, n in formats if name not in ("markdown", "text"))


@dataclass(frozen=True, slots=True)
class Failure:
    rel_path: str
    cause: str
    # Skipped by the walk, never read (a link out of the root, a broken or
    # looping link, an unreadable entry): no document row, so `status`, which
    # counts document rows, does not count it among the failed.
    skipped: bool = False


@dataclass(frozen=True, slots=True)
class IngestReport:
    source: str
    root: Path
    database: str  # redacted
    recipe: str  # fingerprint
    recipe_description: str
    documents: int  # documents the walk found (including skipped ones)
    processed: int  # documents (re)chunked by this run
    unchanged: int  # documents skipped as unchanged
    removed: int  # documents gone since the last run
    failures: tuple[Failure, ...]
    rows_written: int  # rows inserted or updated
    rows_deleted: int
    rows_total: int  # rows of the source after the run
    bytes_processed: int
    seconds: float
    healed: bool = False  # the state disagreed with the database: all re-processed
    state_reset: bool = False  # the engine state had not made these rows: started afresh
    # The engine state made them, in an older release's layout: started afresh.
    state_upgraded: bool = False
    after_unfinished: bool = False  # the source's last run did not finish (flow/source/state.py)
    # What the run did to BM25's statistics (docs/search.md): "moved by ..."
    # (each write moved them by its documents' share), "recounted (why)", or
    # "" (no row changed: left as they were).
    stats_update: str = ""
    # The source's last recipe, described, when this run's is another (so every
    # document was chunked anew); None when the recipe stayed or the source is new.
    previous_recipe: str | None = None
    # The run took the source's last settings (flow/source/settings.py), and
    # what it changed of them ("chunk_size 2000 -> 1000").
    remembered: bool = False
    settings_changed: tuple[str, ...] = ()
    # What the walk takes beyond the defaults (catalog.Walk.describe), "" if nothing.
    walk_description: str = ""
    state_dir: Path | None = None
    engine_stats: engine.EngineStats = field(default_factory=engine.EngineStats)
    # Chunker counts (kept per document on mdchunks_documents): of the documents
    # this run processed, and of every document of the source after the run
    # (unchanged ones keep the counts of the run that processed them).
    chunker: str = "recursive"
    merges: int = 0  # structure chunker: sections merged into an earlier section's chunk
    breadcrumb_truncations: int = 0  # chunks whose breadcrumb was cut to the budget
    merges_total: int = 0
    breadcrumb_truncations_total: int = 0
    # Embeddings (flow/retrieval/embedding.py): the model (None: embeddings off), vectors
    # written and deleted by this run, vectors of the source after it.
    embed_model: str | None = None
    vectors_written: int = 0
    vectors_deleted: int = 0
    vectors_total: int = 0
    embed_seconds: float = 0.0
    # Of the chunks this run embedded, those longer than the model reads
    # (`vectors_max_tokens` word pieces), embedded by `vectors_long_input`
    # (flow/retrieval/embedder.py); whether the model's HNSW index exists.
    vectors_long: int = 0
    vectors_long_input: str = ""
    vectors_max_tokens: int = 0
    vectors_indexed: bool = True
    # Files the walk did not take, by suffix (docs/importers.md); documents this
    # run converted, by importer; importers' notes on them (note, count).
    skipped_suffixes: Counts = ()
    converted: Counts = ()
    import_notes: Counts = ()

    @property
    def failed(self) -> int:
        """Documents the run found and could not ingest, the `skipped` apart."""
        return sum(1 for failure in self.failures if not failure.skipped)

    @property
    def skipped(self) -> int:
        """Entries the walk did not read (`Failure.skipped`)."""
        return sum(1 for failure in self.failures if failure.skipped)

    @property
    def mb_per_s(self) -> float:
        return self.bytes_processed / 1e6 / self.seconds if self.seconds > 0 else 0.0

    @property
    def ok(self) -> bool:
        return not self.failures


@dataclass(frozen=True, slots=True)
class RecipeRows:
    recipe: str
    rows: int
    description: str
    current: bool


@dataclass(frozen=True, slots=True)
class SourceStatus:
    source: str
    root: str | None
    documents: int
    failed: int
    chunks: int
    with_headings: int
    recipes: tuple[RecipeRows, ...]
    formats: Counts = ()  # documents by what their files were
    skipped_suffixes: Counts = ()  # files the last walk did not take
    # The last run marked the source in progress and did not finish
    # (flow/source/state.py); `running`: a run holds its lock now, `watching`:
    # that run is a live watch (caught up, following each change).
    unfinished: bool = False
    running: bool = False
    watching: bool = False
    # The command that completes an unfinished run (None when it finished).
    resume: str | None = None
    vectors: Counts = ()  # stored vectors by embedding model
    # Documents by language tag ("" for none stated: analysed as English),
    # as BM25 parses them (docs/search.md, "Languages").
    languages: Counts = ()

    @property
    def heading_share(self) -> float:
        return self.with_headings / self.chunks if self.chunks else 0.0

    @property
    def stale_rows(self) -> int:
        return sum(r.rows for r in self.recipes if not r.current)


@dataclass(frozen=True, slots=True)
class StatusReport:
    database: str
    psql: str
    embedded: bool
    migrations_pending: tuple[str, ...]
    sources: tuple[SourceStatus, ...]


@dataclass(frozen=True, slots=True)
class DropReport:
    source: str
    chunks_deleted: int
    documents_deleted: int
    state_removed: bool
    sections_deleted: int = 0


def failures_of(
    found: listing.Listing, ledger: RunLedger, recorded: dict[str, str]
) -> tuple[Failure, ...]:
    failures: dict[str, str] = {skipped.rel_path: skipped.cause for skipped in found.skipped}
    not_read = set(failures)
    mounted = set(found.rel_paths)
    for rel_path, error in recorded.items():
        if rel_path not in mounted or rel_path in ledger.raised:
            continue
        if rel_path in ledger.processed:
            failures[rel_path] = error
        else:
            failures[rel_path] = f"{error} (unchanged since an earlier run)"
    failures.update(ledger.raised)
    not_read -= set(ledger.raised) | set(ledger.processed)
    return tuple(
        Failure(rel_path, cause, skipped=rel_path in not_read)
        for rel_path, cause in sorted(failures.items())
    )


def converted_of(ledger: RunLedger) -> tuple[Counts, Counts]:
    """Of the documents this run processed without error: those converted, by
    importer, and the importers' notes, by note (`2 pdf: no outline ...`)."""
    formats: dict[str, int] = {}
    notes: dict[str, int] = {}
    for outcome in ledger.processed.values():
        if outcome.error is not None or outcome.source_format in ("markdown", "text"):
            continue
        formats[outcome.source_format] = formats.get(outcome.source_format, 0) + 1
        if outcome.import_note:
            note = f"{outcome.source_format}: {outcome.import_note}"
            notes[note] = notes.get(note, 0) + 1
    return counted(formats), counted(notes)
