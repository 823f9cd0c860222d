"""`mdchunks outline`: a document's heading tree from the stored sections, as
text or as JSON Lines."""

from __future__ import annotations

import json
from pathlib import Path

import click
from mdchunks import api
from mdchunks.cli.group import cli, database_options, table_options
from mdchunks.cli.output import OUTLINE_LINES_WIDTH, out, outline_json
from mdchunks.names import shown
from rich.markup import escape


@cli.command("outline")
@click.argument("rel_path", required=False, metavar="[REL_PATH]")
@click.option(
    "--source", help="The source (a name `ingest --source` gave) [default: every source]."
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="One JSON object per document (JSON Lines): source, rel_path, title (from its "
    "front matter, else null), error (why a "
    "document that failed has no rows; else null) and its sections, "
    "each with id, heading_text, heading_level, heading_path, breadcrumb, char_start, "
    "char_end, start_line, end_line, parent_id and chunks.",
)
@table_options
@database_options
def outline(
    rel_path: str | None,
    source: str | None,
    as_json: bool,
    table: str | None,
    pg_schema: str | None,
    database_url: str | None,
    data_dir: Path | None,
) -> None:
    """A document's heading tree, from the stored sections (no file read): each
    section with its lines (`L12-40`, the whole section) and how many chunks
    hold it; `(preamble)` is what comes before the first heading. A document
    whose front matter has a title shows it first (`title: ...`): it is the
    root of its breadcrumbs. REL_PATH is
    a document's path in its source (as `search` prints it); without it, every
    document of the source. With --table (a host's table made by chunk_table_sql,
    which has no sections table), the outline of REL_PATH in --source is rebuilt
    from its chunks."""
    found = api.outline(
        rel_path,
        source=source,
        table=table,
        pg_schema=pg_schema,
        database_url=database_url,
        data_dir=data_dir,
    )
    for document in found:
        if as_json:
            click.echo(json.dumps(outline_json(document), ensure_ascii=False))
            continue
        out.print(f"[bold]{escape(shown(f'{document.source}:{document.rel_path}'))}[/bold]")
        if document.title is not None:  # from its front matter: every breadcrumb's root
            out.print(f"  title: {escape(shown(document.title))}")
        if document.error is not None:
            failed = f"(failed on its last run, so it has no rows: {document.error})"
            out.print(f"  [dim]{escape(shown(failed))}[/dim]")
        elif not document.sections:
            out.print("  [dim](no sections: no headings and no text before them)[/dim]")
        if document.note is not None:  # what its importer said (a PDF without bookmarks)
            out.print(f"  [dim]({escape(shown(document.note))})[/dim]")
        top = min((e.section.heading_level or 1 for e in document.sections), default=1)
        spans = [f"L{e.section.start_line}-{e.section.end_line}" for e in document.sections]
        width = max([OUTLINE_LINES_WIDTH, *(len(span) for span in spans)])
        for entry, lines in zip(document.sections, spans, strict=True):
            section = entry.section
            level = section.heading_level or 0
            title = "(preamble)" if section.heading_text is None else section.heading_text
            marker = "#" * level + " " if level else ""
            chunks = f"{entry.chunks} chunk{'' if entry.chunks == 1 else 's'}"
            indent = "  " * max(level - top, 0)
            heading = escape(shown(marker + title))
            out.print(f"  {lines:>{width}}  {indent}{heading}  [dim]({chunks})[/dim]")
