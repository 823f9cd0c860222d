"""The commands about the database and its sources rather than their
documents: `status`, `migrate`, `drop` and `stop` (the embedded PostgreSQL)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from mdchunks import api
from mdchunks.cli.group import cli, database_options, lock_wait_option
from mdchunks.cli.output import out
from mdchunks.db import database
from mdchunks.errors import UsageError
from mdchunks.names import shown
from mdchunks.source import reports
from rich.markup import escape


@cli.command()
@database_options
def status(database_url: str | None, data_dir: Path | None) -> None:
    """Show each source: documents, chunks, the share of chunks with headings,
    rows per recipe (rows of a recipe other than the source's current one are
    stale: `backfill` replaces them), whether the source's last run did not
    finish (its rows may be incomplete), and the database in use. Creates no
    database: on a data dir without an embedded PostgreSQL it says so (exit 2)."""
    report = api.status(database_url=database_url, data_dir=data_dir)
    kind = "embedded PostgreSQL" if report.embedded else "PostgreSQL"
    out.print(f"database: {kind} {escape(report.database)}")
    out.print(f"inspect:  {escape(report.psql)}")
    if report.migrations_pending:
        out.print(
            f"schema:   not migrated ({len(report.migrations_pending)} pending); "
            "run `mdchunks migrate` or `mdchunks ingest PATH`"
        )
        return
    if not report.sources:
        out.print("no sources yet: `mdchunks ingest PATH` adds one")
        return
    for source in report.sources:
        root = escape(shown(source.root or "(root unknown)"))
        out.print(f"[bold]{escape(shown(source.source))}[/bold]  {root}")
        converted = reports.describe_formats(source.formats)
        converted = f"; converted: {converted}" if converted else ""
        out.print(
            f"  documents {source.documents} ({source.failed} failed{converted}), "
            f"chunks {source.chunks}, {source.heading_share:.0%} with headings"
        )
        if source.languages and any(name for name, _ in source.languages):
            described = reports.describe_languages(source.languages)
            out.print(f"  languages: {escape(shown(described))}")
        if source.unfinished:
            out.print(
                "  [yellow]last run did not finish[/yellow]: its rows may be incomplete "
                f"or stale; run `{escape(shown(source.resume or 'mdchunks ingest'))}` again"
            )
        elif source.watching:
            out.print("  a live watch (`ingest --live`) keeps it current")
        elif source.running:
            out.print("  a run is ingesting it now")
        if source.skipped_suffixes:
            skipped = reports.describe_skipped(source.skipped_suffixes)
            out.print(f"  other files the last walk left out: {escape(shown(skipped))}")
        for model, n in source.vectors:
            out.print(f"  vectors {n} of {escape(shown(model))} (semantic and hybrid search)")
        for r in source.recipes:
            state = "current" if r.current else "[yellow]stale[/yellow] (run `mdchunks backfill`)"
            rows = f"{r.rows} row{'' if r.rows == 1 else 's'}"
            out.print(f"  recipe {r.recipe} {state}: {rows}; {escape(r.description)}")


@cli.command("migrate")
@database_options
def migrate_command(database_url: str | None, data_dir: Path | None) -> None:
    """Create or update the schema (content_chunks, content_sections and the
    mdchunks_* tables) with the numbered SQL files shipped in the package.
    Idempotent, and safe
    to run twice at once. Needs the right to create tables; ingest afterwards
    needs only INSERT, UPDATE, DELETE and SELECT."""
    result, where = api.migrate_database(database_url=database_url, data_dir=data_dir)
    if result.applied:
        out.print(
            f"applied {len(result.applied)} migrations to {escape(where)}: "
            f"{', '.join(result.applied)}"
        )
    else:
        out.print(
            f"schema up to date in {escape(where)} ({len(result.already)} migrations applied)"
        )


@cli.command()
@click.option("--source", metavar="NAME", required=True, help="The source whose rows to delete.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@lock_wait_option
@database_options
def drop(
    source: str, yes: bool, lock_wait: float, database_url: str | None, data_dir: Path | None
) -> None:
    """Delete every row of a source (chunks, sections, documents, BM25
    statistics, vectors, its record) and its engine state. The tables stay.
    Asks first unless --yes."""
    api.require_source(
        source, database_url=database_url, data_dir=data_dir, doing="nothing to drop"
    )
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("drop deletes rows: confirm with --yes when not on a terminal")
        if not click.confirm(f"Delete every row of source {source!r}?"):
            # Exit 0: the user's answer, not a failure (1 is for failed documents).
            out.print("nothing dropped")
            return
    report = api.drop(source, database_url=database_url, data_dir=data_dir, lock_wait=lock_wait)
    counts = ", ".join(
        f"{n} {what} row{'' if n == 1 else 's'}"
        for n, what in (
            (report.chunks_deleted, "chunk"),
            (report.sections_deleted, "section"),
            (report.documents_deleted, "document"),
        )
    )
    out.print(
        f"dropped source {escape(shown(source))}: {counts} deleted"
        + ("; engine state removed" if report.state_removed else "")
    )


@cli.command()
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder of the embedded PostgreSQL [default: ./.mdchunks].",
)
def stop(data_dir: Path | None) -> None:
    """Stop the embedded PostgreSQL of the data dir, which every other command
    leaves running (the next command starts it again)."""
    folder = escape(shown(str((data_dir or database.default_data_dir()).resolve())))
    if database.stop_embedded(data_dir):
        out.print(f"embedded PostgreSQL of {folder} stopped")
    else:
        out.print(f"no embedded PostgreSQL running in {folder}")
