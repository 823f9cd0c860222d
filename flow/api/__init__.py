"""The Python API: what the CLI, the tests, the harness and the benchmarks call.

Every function resolves the database the same way (flow/db/database.py):
`database_url=` or `DATABASE_URL`, else the embedded server in `data_dir`
(default `./.mdchunks`). They are synchronous; each ingest runs its own event
loop, so do not call them from inside a running one.

Sources: one source is one root folder. Its name defaults to the folder's
name; `rel_path` is relative to the root, so moving the folder changes
nothing. `ingest` remembers the root and recipe of each source in
`mdchunks_sources`; `backfill` re-runs a source from there.

This package is the one place the rest of the system (and a user's script)
imports the managed face from; its modules part by concern:

- searching.py: `search` (its arguments; the steps are
  flow/retrieval/pipeline.py), why a search found nothing, `warm_up`;
- reading.py: what an agent reads: sources, a chunk, an outline, a section;
- sources.py: status, migrations, drop, whether a source is known.

A source run, phase by phase, is flow/source/run.py; the reports are
flow/source/reports.py.

May use: the managed source, search (`retrieval`), the plugin face (a
section's id, a recipe's description), the database room and the leaves;
never the faces above it, the CLI and the MCP server (docs/layout.md).
"""

from __future__ import annotations

from mdchunks.api.reading import MAX_NEIGHBOURS as MAX_NEIGHBOURS
from mdchunks.api.reading import (
    ChunkRead,
    SourceSummary,
    StoredChunk,
    list_sources,
    outline,
    read_chunk,
    read_section,
)
from mdchunks.api.searching import MAX_QUERY_CHARACTERS as MAX_QUERY_CHARACTERS
from mdchunks.api.searching import MAX_QUERY_WORDS as MAX_QUERY_WORDS
from mdchunks.api.searching import NoteFn as NoteFn
from mdchunks.api.searching import (
    no_match_reason,
    search,
    warm_up,
    words_without_terms,
)
from mdchunks.api.sources import (
    drop,
    migrate_database,
    require_source,
    source_exists,
    status,
)
from mdchunks.api.sources import version as version
from mdchunks.retrieval import hits, snippets
from mdchunks.retrieval.hits import SearchHit
from mdchunks.retrieval.section_source import SectionRead
from mdchunks.source import engine
from mdchunks.source.backfill import backfill
from mdchunks.source.catalog import check_source_name, default_source_name
from mdchunks.source.reports import (
    DropReport,
    Failure,
    IngestReport,
    RecipeRows,
    SourceStatus,
    StatusReport,
)
from mdchunks.source.run import ingest
from mdchunks.source.watch import watch

__all__ = [
    "ChunkRead",
    "DropReport",
    "Failure",
    "IngestReport",
    "Progress",
    "ProgressFn",
    "RecipeRows",
    "SearchHit",
    "SectionRead",
    "SourceStatus",
    "SourceSummary",
    "StatusReport",
    "StoredChunk",
    "backfill",
    "check_source_name",
    "default_source_name",
    "drop",
    "ingest",
    "list_sources",
    "migrate_database",
    "no_match_reason",
    "outline",
    "read_chunk",
    "read_section",
    "require_source",
    "search",
    "source_exists",
    "status",
    "warm_up",
    "watch",
    "words_without_terms",
]

Progress = engine.Progress
ProgressFn = engine.ProgressFn

# What the faces print by (the snippet's highlighting, a section's shown length).
HIGHLIGHT_START = snippets.HIGHLIGHT_START
HIGHLIGHT_STOP = snippets.HIGHLIGHT_STOP
SECTION_SHOWN_CHARS = hits.SECTION_SHOWN_CHARS
