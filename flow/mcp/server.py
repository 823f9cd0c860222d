"""The MCP server's tools over the Python API (docs/mcp.md).

Each tool is a thin call of an API function (flow/api/) that turns its frozen
dataclasses into JSON objects; the API's one-line errors (`MdchunksError`:
unknown source, k out of range, an oversized query, no such document) become
tool errors, which the client reads as `isError` results: the server keeps
serving. The SDK runs these synchronous tools in worker threads, so two
clients' calls proceed side by side; each call opens its own session.

Read-only by construction: the tools call only the API's reading functions
(search, list_sources, read_chunk, outline, read_section), which send SELECT
statements alone; `warm_up` loads the embedding models of the stored vectors
once, at start, and the embedder keeps them (flow/retrieval/embedder.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from mdchunks import api
from mdchunks.errors import MdchunksError
from pydantic import Field, ValidationError

MAX_K = 50
DEFAULT_K = 8
MAX_QUERY_CHARS = 2000  # a question, not a document: longer is a mistake of the caller
MAX_SECTION_CHARS = 200_000
DEFAULT_SECTION_CHARS = api.SECTION_SHOWN_CHARS  # about 5,000 tokens: context is precious
READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

INSTRUCTIONS = (
    "A markdown documentation index in PostgreSQL, chunked by heading. Start with "
    "`search` (every hit has a breadcrumb, a citation rel_path:Lstart-Lend and a chunk "
    "id); read more around a hit with `read_chunk` (neighbours) or `read_section` (the "
    "whole section by its heading path); see a document's structure with `outline`; "
    "`list_sources` names what is indexed. Cite hits by their citation."
)


@dataclass(frozen=True, slots=True)
class Settings:
    """Where the server reads: the API's database arguments and the chunk table."""

    database_url: str | None = None
    data_dir: Path | None = None
    table: str | None = None
    pg_schema: str | None = None

    def where(self) -> dict[str, Any]:
        return {
            "database_url": self.database_url,
            "data_dir": self.data_dir,
            "table": self.table,
            "pg_schema": self.pg_schema,
        }


def _range(low: int, high: int) -> dict[str, Any]:
    # In the schema for the agent; checked by the tool itself, so that a value out
    # of range is one line (pydantic's own message is several).
    return {"minimum": low, "maximum": high}


def citation(rel_path: str, start_line: int | None, end_line: int | None) -> str:
    """`rel_path:L12-L40`, the hit's lines (just the path for a row without lines)."""
    if start_line is None or end_line is None:
        return rel_path
    if start_line == end_line:
        return f"{rel_path}:L{start_line}"
    return f"{rel_path}:L{start_line}-L{end_line}"


def hit_json(hit: api.SearchHit) -> dict[str, Any]:
    return {
        "id": str(hit.id),
        "source": hit.source,
        "rel_path": hit.rel_path,
        "breadcrumb": hit.breadcrumb,  # the matched section's (docs/sections.md)
        "title": hit.title,  # the document's, from its front matter (the breadcrumb's root)
        "heading_path": list(
            hit.matched_section.section.heading_path if hit.matched_section else hit.heading_path
        ),
        "citation": citation(hit.rel_path, hit.start_line, hit.end_line),
        "start_line": hit.start_line,
        "end_line": hit.end_line,
        "score": round(hit.rank, 6),
        "text": hit.text,
    }


def chunk_json(chunk: api.StoredChunk) -> dict[str, Any]:
    return {
        "id": str(chunk.id),
        "source": chunk.source,
        "rel_path": chunk.rel_path,
        "position": chunk.position,
        "breadcrumb": chunk.breadcrumb or "(preamble)",
        "heading_path": list(chunk.heading_path),
        "citation": citation(chunk.rel_path, chunk.start_line, chunk.end_line),
        "parent_chunk_id": None if chunk.parent_chunk_id is None else str(chunk.parent_chunk_id),
        "text": chunk.text,
    }


def section_json(section: api.SectionRead) -> dict[str, Any]:
    record: dict[str, Any] = {
        "section_id": str(section.section_id),
        "source": section.source,
        "rel_path": section.rel_path,
        "heading_path": list(section.heading_path),
        "breadcrumb": section.breadcrumb or "(preamble)",
        "citation": citation(section.rel_path, section.start_line, section.end_line),
        "text": section.text,
        "omitted_chars": section.omitted_chars,
    }
    if section.omitted_chars:
        record["note"] = (
            f"cut at {len(section.text):,} characters: {section.omitted_chars:,} more "
            f"(to line {section.end_line}) not shown; call read_section with a larger "
            "max_chars, or outline and read a subsection"
        )
    return record


# The API's errors name the CLI's options and commands; an agent has these
# tools' arguments instead. (Advice to ingest stays: the agent's user runs it.)
_FOR_AGENTS = (
    ("--method ", "method "),
    ("choose one with --embed-model, or search one --source", "search one source"),
    ("search with --embed-model naming one of those, or re-embed", "re-embed"),
    (
        "(`mdchunks outline --source NAME` lists a source's documents)",
        "(search hits name documents by their rel_path)",
    ),
    ("(`mdchunks status` lists the sources)", "(list_sources lists them)"),
)


def for_agents(message: str) -> str:
    """An API error as an agent reads it: this server's arguments and tools."""
    for cli, tool in _FOR_AGENTS:
        message = message.replace(cli, tool)
    return message


def _check_range(name: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise ToolError(f"{name} must be {low} to {high} (got {value})")


def _texts(value: Any) -> list[str]:
    """The strings of an argument's value (a heading path is a list of them)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [each for each in value if isinstance(each, str)]
    return []


class _OneLineErrors(MCPServer[Any]):
    """Arguments the tools' schemas refuse answer in one line too, naming each
    argument and what it must be, not pydantic's report of several lines."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        # PostgreSQL text cannot hold NUL: sent on, it failed in the driver
        # with an error of no message (issue 42). No query, path or source
        # holds one, so the argument is named here instead.
        for argument, value in (arguments or {}).items():
            if any("\x00" in each for each in _texts(value)):
                raise ToolError(
                    f"bad arguments to {name}: {argument} holds a NUL character (U+0000), "
                    "which no query, source, path or heading can hold"
                )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            # Only the arguments' validation: a tool that crashed is no caller's fault.
            if type(exc) is not ToolError or not isinstance(exc.__cause__, ValidationError):
                raise
            problems = "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: "
                f"{error['msg'].lower()}"
                for error in exc.__cause__.errors()
            )
            raise ToolError(f"bad arguments to {name}: {problems}") from None


def build(settings: Settings) -> MCPServer[Any]:
    """The server with its five tools, reading where `settings` say."""
    server: MCPServer[Any] = _OneLineErrors(
        "mdchunks", instructions=INSTRUCTIONS, version=api.version()
    )
    where = settings.where()

    def call(function: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs, **where)
        except MdchunksError as exc:
            raise ToolError(for_agents(" ".join(str(exc).split()))) from None

    @server.tool(annotations=READ_ONLY)
    def search(
        query: Annotated[str, Field(description="What to look for, in words.")],
        k: Annotated[
            int, Field(description="How many hits.", json_schema_extra=_range(1, MAX_K))
        ] = DEFAULT_K,
        method: Annotated[
            Literal["auto", "bm25", "semantic", "hybrid"],
            Field(
                description="bm25: words (English stemming, headings weigh more); "
                "semantic: meaning (sentence vectors); hybrid: both fused; auto: hybrid "
                "when the chunks have vectors, else bm25."
            ),
        ] = "auto",
        source: Annotated[
            str | None, Field(description="Only this source (list_sources names them).")
        ] = None,
        path_prefix: Annotated[
            str | None,
            Field(description="Only documents whose rel_path starts with this, e.g. `guide/`."),
        ] = None,
    ) -> dict[str, Any]:
        """Search the indexed markdown. Each hit: breadcrumb (its section's heading
        path under the page's title), title (the page's front-matter title, or
        null), citation (rel_path:Lstart-Lend), score, text and id (for read_chunk).
        `note`, when there is one: the query kept no word to search (stop
        words, punctuation or symbols only; no hits), none of its words stands
        in the searched documents (no hits), or a searched source's
        last run did not finish (its rows may be incomplete or stale)."""
        _check_range("k", k, 1, MAX_K)
        if len(query) > MAX_QUERY_CHARS:
            raise ToolError(
                f"the query is {len(query):,} characters; at most {MAX_QUERY_CHARS:,} "
                "(search with a question or a few words)"
            )
        chosen = None if method == "auto" else method
        # What the CLI prints on stderr beside its hits (a source whose last
        # run did not finish: its rows may be stale) is the agent's to read too.
        notes: list[str] = []
        hits = call(
            api.search,
            query,
            k=k,
            method=chosen,
            source=source,
            path_prefix=path_prefix,
            on_note=notes.append,
        )
        if not hits and (reason := call(api.no_match_reason, query, method=chosen, source=source)):
            # An agent tells "nothing relevant" from "nothing searched".
            notes.append(f"no match: {reason}")
        found: dict[str, Any] = {"hits": [hit_json(hit) for hit in hits]}
        if notes:
            found["note"] = "; ".join(notes)
        return found

    @server.tool(annotations=READ_ONLY)
    def outline(
        source: Annotated[str, Field(description="The source (list_sources).")],
        rel_path: Annotated[str, Field(description="The document's path, as hits name it.")],
    ) -> dict[str, Any]:
        """A document's heading tree: every heading with its level, heading path,
        lines (its whole section: start_line to end_line) and section_id (for
        read_section); first, the text before the first heading when there is
        any (level null, heading_path [], breadcrumb the document's title, else
        "(preamble)"). `title`: the document's title from its front matter (the
        root of every breadcrumb), else null. `error`: why
        the document has no rows (its last run failed it); `note`: what its
        importer said of a converted one (a PDF without bookmarks has no
        headings: its text is all preamble)."""
        (found,) = call(api.outline, rel_path, source=source)
        return {
            "source": found.source,
            "rel_path": found.rel_path,
            "title": found.title,
            "error": found.error,
            "note": found.note,
            "headings": [
                {
                    "section_id": str(entry.section.id),
                    "level": entry.section.heading_level,
                    "text": entry.section.heading_text,
                    "heading_path": list(entry.section.heading_path),
                    "breadcrumb": entry.section.shown,
                    "start_line": entry.section.start_line,
                    "end_line": entry.section.end_line,
                    "chunks": entry.chunks,
                }
                for entry in found.sections
            ],
        }

    @server.tool(annotations=READ_ONLY)
    def read_section(
        source: Annotated[str, Field(description="The source (list_sources).")],
        rel_path: Annotated[str, Field(description="The document's path, as hits name it.")],
        heading_path: Annotated[
            list[str] | None,
            Field(
                description="The section's heading path, root first, as a hit's heading_path "
                "or outline gives it; [] is the text before the first heading."
            ),
        ] = None,
        section_id: Annotated[
            str | None, Field(description="Or the section's id, from outline.")
        ] = None,
        max_chars: Annotated[
            int,
            Field(
                description="Cut the text here (a note says what was left out).",
                json_schema_extra=_range(1, MAX_SECTION_CHARS),
            ),
        ] = DEFAULT_SECTION_CHARS,
    ) -> dict[str, Any]:
        """The whole text of one section (its subsections included), by heading path
        or section id."""
        _check_range("max_chars", max_chars, 1, MAX_SECTION_CHARS)
        found = call(
            api.read_section,
            source,
            rel_path,
            heading_path=heading_path,
            section_id=section_id,
            max_chars=max_chars,
        )
        return section_json(found)

    @server.tool(annotations=READ_ONLY)
    def read_chunk(
        id: Annotated[str, Field(description="A chunk id (a search hit's id).")],
        neighbours: Annotated[
            int,
            Field(
                description="Also this many chunks before and after it in its document.",
                json_schema_extra=_range(0, api.MAX_NEIGHBOURS),
            ),
        ] = 0,
    ) -> dict[str, Any]:
        """One chunk by id, with its neighbours in the document when asked."""
        _check_range("neighbours", neighbours, 0, api.MAX_NEIGHBOURS)
        found = call(api.read_chunk, id, neighbours=neighbours)
        return {
            "chunk": chunk_json(found.chunk),
            "before": [chunk_json(chunk) for chunk in found.before],
            "after": [chunk_json(chunk) for chunk in found.after],
        }

    @server.tool(annotations=READ_ONLY)
    def list_sources() -> dict[str, Any]:
        """The indexed sources, with how many documents hold chunks (an empty or
        failed document holds none), their chunks, and how many of those sit
        under a heading."""
        return {
            "sources": [
                {
                    "source": s.source,
                    "documents": s.documents,
                    "chunks": s.chunks,
                    "with_headings": s.with_headings,
                }
                for s in call(api.list_sources)
            ]
        }

    return server
