"""mdchunks: markdown into PostgreSQL chunks that know their headings.

Two faces over one chunker:

- the plugin face, for a cocoindex app of your own (docs/plugin.md):
  `ChunkOptions`, `HeadingChunk`, `split_markdown`, `ChunkRow`, `chunk_rows`,
  `mount_chunk_table`, `chunk_table_sql`, `chunk_table_upgrade_sql`,
  `process_markdown_file`; the sections: `SectionRow`, `section_rows`, `SectionIds`,
  `mount_section_table`, `section_table_sql`, `section_table_upgrade_sql`; `document_text` and
  `document_markdown` (HTML, DOCX and PDF through the importers)
  (examples/chunks_with_word_count.py is a whole app);
- the managed face, what the `mdchunks` command runs (docs/cli.md):

      import mdchunks
      report = mdchunks.ingest("docs/", source="docs")       # -> IngestReport
      mdchunks.status(); mdchunks.search("ownership rules", k=5); mdchunks.drop("docs")
      mdchunks.outline("guide/install.md", source="docs")     # -> [DocumentOutline]

Importing mdchunks (or any module of it) changes nothing in the host process:
no environment variable, no logging setup. The names below are loaded on
first use, so `import mdchunks.heading_index` loads no cocoindex.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    # the plugin face
    "ChunkOptions": "mdchunks.heading_index.options",
    "HeadingChunk": "mdchunks.heading_index.chunk",
    "Chunking": "mdchunks.heading_index.chunk",
    "CHUNKERS": "mdchunks.heading_index.chunkers",
    "split_markdown": "mdchunks.plugin.chunking",
    "chunk_markdown": "mdchunks.plugin.chunking",
    "chunk_rows": "mdchunks.plugin.rows",
    "section_rows": "mdchunks.plugin.rows",
    "decode_document": "mdchunks.heading_index.decode",
    "document_text": "mdchunks.plugin.documents",
    "document_markdown": "mdchunks.plugin.documents",
    "DocumentProblem": "mdchunks.plugin.documents",
    "mount_chunk_table": "mdchunks.plugin.target",
    "chunk_table_sql": "mdchunks.plugin.target",
    "chunk_table_upgrade_sql": "mdchunks.plugin.target",
    "mount_section_table": "mdchunks.plugin.target",
    "section_table_sql": "mdchunks.plugin.target",
    "section_table_upgrade_sql": "mdchunks.plugin.target",
    "process_markdown_file": "mdchunks.plugin.target",
    "recipe_of": "mdchunks.plugin.target",
    # the managed face
    "DropReport": "mdchunks.api",
    "Failure": "mdchunks.api",
    "IngestReport": "mdchunks.api",
    "Progress": "mdchunks.api",
    "SearchHit": "mdchunks.api",
    "SourceStatus": "mdchunks.api",
    "StatusReport": "mdchunks.api",
    "backfill": "mdchunks.api",
    "drop": "mdchunks.api",
    "ingest": "mdchunks.api",
    "migrate_database": "mdchunks.api",
    "search": "mdchunks.api",
    "list_sources": "mdchunks.api",
    "outline": "mdchunks.api",
    "read_chunk": "mdchunks.api",
    "read_section": "mdchunks.api",
    "status": "mdchunks.api",
    "MdchunksError": "mdchunks.errors",
    "Recipe": "mdchunks.plugin.recipe",
    "NAMESPACE": "mdchunks.plugin.rows",
    "ChunkRow": "mdchunks.plugin.rows",
    "DocumentRow": "mdchunks.plugin.rows",
    "chunk_id": "mdchunks.plugin.rows",
    "SectionRow": "mdchunks.plugin.rows",
    "SectionIds": "mdchunks.plugin.rows",
    "section_id": "mdchunks.plugin.rows",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mdchunks' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # what a type checker sees of the lazy names above
    from mdchunks.api import DropReport as DropReport
    from mdchunks.api import Failure as Failure
    from mdchunks.api import IngestReport as IngestReport
    from mdchunks.api import Progress as Progress
    from mdchunks.api import SearchHit as SearchHit
    from mdchunks.api import SourceStatus as SourceStatus
    from mdchunks.api import StatusReport as StatusReport
    from mdchunks.api import backfill as backfill
    from mdchunks.api import drop as drop
    from mdchunks.api import ingest as ingest
    from mdchunks.api import list_sources as list_sources
    from mdchunks.api import migrate_database as migrate_database
    from mdchunks.api import outline as outline
    from mdchunks.api import read_chunk as read_chunk
    from mdchunks.api import read_section as read_section
    from mdchunks.api import search as search
    from mdchunks.api import status as status
    from mdchunks.errors import MdchunksError as MdchunksError
    from mdchunks.heading_index.chunk import Chunking as Chunking
    from mdchunks.heading_index.chunk import HeadingChunk as HeadingChunk
    from mdchunks.heading_index.chunkers import CHUNKERS as CHUNKERS
    from mdchunks.heading_index.decode import decode_document as decode_document
    from mdchunks.heading_index.options import ChunkOptions as ChunkOptions
    from mdchunks.plugin.chunking import chunk_markdown as chunk_markdown
    from mdchunks.plugin.chunking import split_markdown as split_markdown
    from mdchunks.plugin.documents import DocumentProblem as DocumentProblem
    from mdchunks.plugin.documents import document_markdown as document_markdown
    from mdchunks.plugin.documents import document_text as document_text
    from mdchunks.plugin.recipe import Recipe as Recipe
    from mdchunks.plugin.rows import NAMESPACE as NAMESPACE
    from mdchunks.plugin.rows import ChunkRow as ChunkRow
    from mdchunks.plugin.rows import DocumentRow as DocumentRow
    from mdchunks.plugin.rows import SectionIds as SectionIds
    from mdchunks.plugin.rows import SectionRow as SectionRow
    from mdchunks.plugin.rows import chunk_id as chunk_id
    from mdchunks.plugin.rows import chunk_rows as chunk_rows
    from mdchunks.plugin.rows import section_id as section_id
    from mdchunks.plugin.rows import section_rows as section_rows
    from mdchunks.plugin.target import chunk_table_sql as chunk_table_sql
    from mdchunks.plugin.target import chunk_table_upgrade_sql as chunk_table_upgrade_sql
    from mdchunks.plugin.target import mount_chunk_table as mount_chunk_table
    from mdchunks.plugin.target import mount_section_table as mount_section_table
    from mdchunks.plugin.target import process_markdown_file as process_markdown_file
    from mdchunks.plugin.target import recipe_of as recipe_of
    from mdchunks.plugin.target import section_table_sql as section_table_sql
    from mdchunks.plugin.target import section_table_upgrade_sql as section_table_upgrade_sql
