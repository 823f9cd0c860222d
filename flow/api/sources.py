"""The managed sources as the API shows and changes them: the version, the
status of every source, the schema's migrations, dropping a source, and
whether a source is known. (Ingesting one is flow/source/run.py.)"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import asyncpg
from mdchunks.db import database, migrate
from mdchunks.db.queries import QUERIES
from mdchunks.errors import DatabaseUnavailable, UsageError
from mdchunks.plugin.recipe import Recipe
from mdchunks.retrieval import embedding
from mdchunks.retrieval.session import require_schema
from mdchunks.retrieval.session import require_source as require_known_source
from mdchunks.source import lock, quarantine, state
from mdchunks.source.reports import DropReport, RecipeRows, SourceStatus, StatusReport, counted


def version() -> str:
    """The installed mdchunks' version, as `mdchunks --version` and the MCP
    server's handshake give it."""
    # Imported here: importlib.metadata costs a run 20-40 ms of start-up.
    from importlib import metadata

    try:
        return metadata.version("mdchunks")
    except metadata.PackageNotFoundError:  # run from a checkout that is not installed
        return "(not installed)"


def status(*, database_url: str | None = None, data_dir: Path | None = None) -> StatusReport:
    db = database.resolve(database_url, data_dir, create=False)
    todo = migrate.pending(db.url)
    sources: list[SourceStatus] = []
    if not todo:
        with database.connect(db.url) as conn:
            recipes: dict[str, list[RecipeRows]] = {}
            current: dict[str, str] = dict(
                conn.execute("SELECT source, recipe FROM mdchunks_sources").fetchall()
            )
            for source, fingerprint, rows, spec in conn.execute(QUERIES["status_recipes"]):
                description = Recipe.describe_json(json.loads(spec)) if spec else "unknown recipe"
                recipes.setdefault(source, []).append(
                    RecipeRows(
                        fingerprint, int(rows), description, current.get(source) == fingerprint
                    )
                )
            formats: dict[str, dict[str, int]] = {}
            for name, source_format, n in conn.execute(QUERIES["status_formats"]):
                formats.setdefault(name, {})[str(source_format)] = int(n)
            languages: dict[str, dict[str, int]] = {}
            for name, language, n in conn.execute(QUERIES["status_languages"]):
                languages.setdefault(name, {})[str(language)] = int(n)
            skipped = {
                str(name): {str(suffix): int(n) for suffix, n in json.loads(found).items()}
                for name, found in conn.execute(QUERIES["status_skipped"])
            }
            unfinished = state.unfinished(conn)
            vectors = embedding.counts(conn)
            in_progress = {"in_progress": state.RUN_IN_PROGRESS}
            for row in conn.execute(QUERIES["status_sources"], in_progress):
                name, root, _recipe, _updated, documents, failed, chunks, with_headings = row
                sources.append(
                    SourceStatus(
                        source=name,
                        root=root,
                        documents=int(documents),
                        failed=int(failed),
                        chunks=int(chunks),
                        with_headings=int(with_headings),
                        recipes=tuple(recipes.get(name, [])),
                        formats=counted(formats.get(name, {})),
                        languages=tuple(languages.get(name, {}).items()),
                        skipped_suffixes=counted(skipped.get(name, {})),
                        unfinished=unfinished.get(name) == state.STOPPED,
                        running=unfinished.get(name, state.STOPPED) != state.STOPPED,
                        watching=unfinished.get(name) == state.WATCHING,
                        vectors=vectors.get(name, ()),
                        resume=(
                            resume_command(name, root, db)
                            if unfinished.get(name) == state.STOPPED
                            else None
                        ),
                    )
                )
    return StatusReport(
        database=db.display,
        psql=db.psql_command(),
        embedded=db.embedded,
        migrations_pending=todo,
        sources=tuple(sources),
    )


def resume_command(source: str, root: str | None, db: database.Database) -> str:
    """The command that completes a source's unfinished run: its ingest again
    (the source keeps its settings) against the same database, the folder and
    names quoted for a shell. A server given by URL is named as such: the
    URL may hold a password."""
    folder = shlex.quote(root) if root else "PATH"
    where = ""
    if not db.embedded:
        where = " --database-url URL"
    elif db.data_dir != database.default_data_dir().resolve():
        where = f" --data-dir {shlex.quote(str(db.data_dir))}"
    return f"mdchunks ingest {folder} --source {shlex.quote(source)}{where}"


def migrate_database(
    *, database_url: str | None = None, data_dir: Path | None = None
) -> tuple[migrate.MigrationResult, str]:
    db = database.resolve(database_url, data_dir)
    return migrate.apply(db.url), db.display


def drop(
    source: str,
    *,
    database_url: str | None = None,
    data_dir: Path | None = None,
    lock_wait: float = lock.DEFAULT_WAIT_SECONDS,
) -> DropReport:
    """Delete every row of a source and its engine state (the table stays)."""
    db = database.resolve(database_url, data_dir, create=False)
    require_schema(db)
    with lock.source_lock(db.url, source, wait_seconds=lock_wait, purpose="drop") as conn:
        state_dir = state.state_dir_for(db, conn, source)
        try:
            with conn.transaction():
                row = conn.execute(QUERIES["drop_source"], {"source": source}).fetchone()
        except asyncpg.exceptions.InsufficientPrivilegeError as exc:
            raise DatabaseUnavailable(
                f"cannot drop source {source!r}, nothing was deleted: "
                f"{database.first_line(exc, db.url)} (drop needs DELETE on content_chunks, "
                "content_sections, mdchunks_documents, mdchunks_sources, mdchunks_search_stats, "
                "mdchunks_search_terms and mdchunks_search_top)"
            ) from None
        removed = state_dir.exists()
        if removed:
            shutil.rmtree(state_dir)
        quarantine.forget(state_dir)  # its journal and quarantine list go with it
    chunks, documents, sources, sections = row if row else (0, 0, 0, 0)
    if not (chunks or documents or sources or removed):
        with database.connect(db.url) as conn:
            require_known_source(conn, source, doing="nothing to drop")
    return DropReport(source, int(chunks), int(documents), removed, int(sections))


def source_exists(
    source: str, *, database_url: str | None = None, data_dir: Path | None = None
) -> bool:
    """Whether the database knows `source` (its record, or rows of it)."""
    db = database.resolve(database_url, data_dir, create=False)
    require_schema(db)
    with database.connect(db.url) as conn:
        try:
            require_known_source(conn, source)
        except UsageError:
            return False
    return True


def require_source(
    source: str, *, database_url: str | None = None, data_dir: Path | None = None, doing: str = ""
) -> None:
    """One line (a `UsageError`) naming the known sources when `source` is not one."""
    db = database.resolve(database_url, data_dir, create=False)
    require_schema(db)
    with database.connect(db.url) as conn:
        require_known_source(conn, source, doing=doing)
