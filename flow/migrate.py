"""The schema, applied by yoyo-migrations over psycopg 3.

Why yoyo: migrations stay plain numbered `.sql` files (`migrations/`, the only
place the schema is written), it speaks psycopg 3 (`postgresql+psycopg://`),
records what it applied in the database itself, runs each file in a
transaction, and has no ORM to drag in (Alembic needs SQLAlchemy).

Safe twice, and twice at once: a Postgres advisory lock serialises concurrent
`migrate` calls (yoyo's own lock is a row in a table, which a killed process
leaves behind: under the advisory lock such a row is stale and is removed),
and what is pending is read only after taking it. When nothing is pending,
`ensure` only reads yoyo's table, so ingest works with DML rights alone once
the schema is in place. No network either: yoyo's migration log would look up
the host's DNS name; it gets the plain host name instead.

yoyo's bookkeeping (its record of applied migrations, its log, its schema
version and its lock: four tables) lives in a schema of its own,
`mdchunks_migrations`, out of the way of the user's tables: yoyo's
connection works there (its search_path), and each migration runs with the
database's own search_path, where our tables go. A database migrated before
has those tables in its own schema: the next `apply` moves them (one
transaction, under the advisory lock), and until then they are read where
they are.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import time
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psycopg
from mdchunks import database
from mdchunks.errors import DatabaseUnavailable, MdchunksError
from mdchunks.queries import QUERIES
from psycopg import sql

MIGRATION_LOCK = "mdchunks:migrate"
LOCK_WAIT_SECONDS = 120.0
BOOKKEEPING_SCHEMA = "mdchunks_migrations"
# yoyo's tables: applied migrations (the one `pending` reads), log, version, lock.
MIGRATION_TABLE = "_yoyo_migration"
YOYO_TABLES = (MIGRATION_TABLE, "_yoyo_log", "_yoyo_version", "yoyo_lock")


@dataclass(frozen=True, slots=True)
class MigrationResult:
    applied: tuple[str, ...]  # ids applied by this call, in order
    already: tuple[str, ...]  # ids that were applied before


def migration_ids() -> tuple[str, ...]:
    with _migrations_dir() as folder:
        return tuple(
            sorted(
                path.stem for path in folder.glob("*.sql") if not path.stem.endswith(".rollback")
            )
        )


def pending(url: str) -> tuple[str, ...]:
    """Migration ids not yet applied (all of them on an empty database)."""
    with database.connect(url) as conn:
        return _pending(conn)


def _pending(conn: psycopg.Connection) -> tuple[str, ...]:
    table = _migration_table(conn)
    if table is None:
        return migration_ids()
    try:
        rows = conn.execute(sql.SQL("SELECT migration_id FROM {}").format(table)).fetchall()
    except psycopg.errors.InsufficientPrivilege:
        conn.rollback()
        raise DatabaseUnavailable(
            f"this role may not read {table.as_string(conn)}, the record of the migrations "
            f"applied: grant it USAGE ON SCHEMA {BOOKKEEPING_SCHEMA} and SELECT ON "
            f"{BOOKKEEPING_SCHEMA}.{MIGRATION_TABLE} (README: the rights ingest needs)"
        ) from None
    applied = {row[0] for row in rows}
    return tuple(mid for mid in migration_ids() if mid not in applied)


def _migration_table(conn: psycopg.Connection) -> sql.Identifier | None:
    """Where yoyo's record of applied migrations is (None: nowhere yet)."""
    row = conn.execute(
        QUERIES["migration_table_schema"], {"table": MIGRATION_TABLE, "schema": BOOKKEEPING_SCHEMA}
    ).fetchone()
    return None if row is None else sql.Identifier(str(row[0]), MIGRATION_TABLE)


def ensure(url: str) -> MigrationResult:
    """Apply pending migrations, if any (what `ingest` does first)."""
    todo = pending(url)
    if not todo:
        return MigrationResult(applied=(), already=migration_ids())
    return apply(url)


def apply(url: str) -> MigrationResult:
    """Apply every pending migration under the migration lock."""
    with (
        database.connect(url, application_name="mdchunks migrate") as lock_conn,
        _advisory_lock(lock_conn),
    ):
        todo = _pending(lock_conn)
        if todo or _legacy_tables(lock_conn):
            _check_create_right(lock_conn)
            _prepare_bookkeeping(lock_conn)
        if todo:
            _apply_with_yoyo(url, _search_path(lock_conn))
        left = _pending(lock_conn)
    if left:
        raise MdchunksError(f"migrations not applied: {', '.join(left)}")
    return MigrationResult(
        applied=todo, already=tuple(mid for mid in migration_ids() if mid not in todo)
    )


def _check_create_right(conn: psycopg.Connection) -> None:
    """Migrations create tables (and, once, the bookkeeping schema): say so
    plainly when the role may not."""
    row = conn.execute(
        "SELECT current_user, current_database(), coalesce(current_schema(), 'public'), "
        "       has_schema_privilege(coalesce(current_schema(), 'public'), 'CREATE'), "
        "       to_regnamespace(%(schema)s) IS NOT NULL "
        "       OR has_database_privilege(current_database(), 'CREATE')",
        {"schema": BOOKKEEPING_SCHEMA},
    ).fetchone()
    assert row is not None
    user, dbname, schema, allowed, schema_allowed = row
    if not allowed:
        raise DatabaseUnavailable(
            f"migrations need the right to create tables in the database: role {user!r} "
            f"may not create in schema {schema!r} of database {dbname!r}. Run `mdchunks "
            "migrate` once as a role that may (ingest then needs only SELECT, INSERT, "
            "UPDATE and DELETE on the tables)"
        )
    if not schema_allowed:
        raise DatabaseUnavailable(
            f"migrations need the right to create tables in the database: role {user!r} "
            f"may not create the schema {BOOKKEEPING_SCHEMA!r} (where the record of applied "
            f"migrations is kept) in database {dbname!r}. Run `mdchunks migrate` once as a "
            f"role that may, or have `CREATE SCHEMA {BOOKKEEPING_SCHEMA} AUTHORIZATION "
            f"{user}` run for this one"
        )


def _legacy_tables(conn: psycopg.Connection) -> list[str]:
    """yoyo's tables that an older mdchunks left where the search_path finds them
    (the user's schema), and that the bookkeeping schema does not hold yet."""
    rows = conn.execute(
        QUERIES["legacy_yoyo_tables"],
        {"tables": list(YOYO_TABLES), "schema": BOOKKEEPING_SCHEMA},
    ).fetchall()
    return [str(name) for (name,) in rows]


def _prepare_bookkeeping(conn: psycopg.Connection) -> None:
    """The bookkeeping schema, created if missing, with yoyo's tables of an
    older mdchunks moved into it (one transaction: all or nothing)."""
    with conn.transaction():
        exists = conn.execute("SELECT to_regnamespace(%s)", [BOOKKEEPING_SCHEMA]).fetchone()
        if exists is None or exists[0] is None:
            # Not IF NOT EXISTS: that still needs CREATE on the database, and a
            # schema created by an administrator for this role is fine.
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(BOOKKEEPING_SCHEMA)))
            conn.execute(
                sql.SQL("COMMENT ON SCHEMA {} IS {}").format(
                    sql.Identifier(BOOKKEEPING_SCHEMA),
                    sql.Literal(
                        "mdchunks: the migration tool's (yoyo's) record of the migrations "
                        "applied to this database, its log and its lock"
                    ),
                )
            )
        for name in _legacy_tables(conn):
            conn.execute(
                sql.SQL("ALTER TABLE {} SET SCHEMA {}").format(
                    sql.Identifier(name), sql.Identifier(BOOKKEEPING_SCHEMA)
                )
            )


def _search_path(conn: psycopg.Connection) -> str:
    """The session's search_path as the database and role set it (where our tables go)."""
    row = conn.execute("SELECT current_setting('search_path')").fetchone()
    assert row is not None
    return str(row[0])


@contextlib.contextmanager
def _advisory_lock(conn: psycopg.Connection) -> Iterator[None]:
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        row = conn.execute(
            "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", [MIGRATION_LOCK]
        ).fetchone()
        if row and row[0]:
            break
        if time.monotonic() > deadline:
            raise MdchunksError(
                "another process has been migrating this database for over "
                f"{LOCK_WAIT_SECONDS:.0f} s"
            )
        time.sleep(0.2)
    try:
        yield
    finally:
        with contextlib.suppress(psycopg.Error):
            conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", [MIGRATION_LOCK])


def yoyo_url(url: str) -> str:
    """The same database as a yoyo URI (`postgresql+psycopg://...`)."""
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    # A key=value DSN: hand every parameter to yoyo as a query argument.
    params = psycopg.conninfo.conninfo_to_dict(url)
    dbname = params.pop("dbname", "")
    from urllib.parse import quote, urlencode

    return f"postgresql+psycopg:///{quote(str(dbname))}?" + urlencode(
        {key: str(value) for key, value in params.items()}
    )


def _apply_with_yoyo(url: str, search_path: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from yoyo import get_backend, read_migrations
        from yoyo.exceptions import LockTimeout
        from yoyo.migrations import MigrationList
    logging.getLogger("yoyo").addHandler(logging.NullHandler())
    logging.getLogger("yoyo").propagate = False
    try:
        # yoyo's connection works in the bookkeeping schema (its search_path).
        backend = get_backend(_with_schema(yoyo_url(url), BOOKKEEPING_SCHEMA))
    except Exception as exc:
        raise DatabaseUnavailable(
            f"cannot open {database.redact(url)} for migrations: {database.scrub(str(exc), url)}"
        ) from None
    _no_network_in_log(backend)
    try:
        with _migrations_dir() as folder:
            found = read_migrations(str(folder))
            # The folder is a Python package too; only the .sql files are migrations.
            migrations = MigrationList(
                [m for m in found if m.path.endswith(".sql")], found.post_apply
            )
            try:
                # yoyo's own lock is a row that a killed process leaves behind,
                # which would stop every later run. Migrations of mdchunks only
                # run under the advisory lock this process holds, so a row
                # that is there now is stale: remove it.
                backend.break_lock()
                with backend.lock():
                    _apply_each_atomically(backend, migrations, search_path)
            except LockTimeout as exc:
                raise MdchunksError(
                    f"{exc}. Another tool is migrating this database with yoyo; "
                    "run `mdchunks migrate` again when it is done"
                ) from None
            except psycopg.errors.InsufficientPrivilege as exc:
                raise DatabaseUnavailable(
                    "migrations need the right to create tables in the database: "
                    f"{database.scrub(str(exc).splitlines()[0], url)}"
                ) from None
            except psycopg.Error as exc:
                raise MdchunksError(
                    f"a migration failed: {database.scrub(str(exc).splitlines()[0], url)}"
                ) from None
    finally:
        with contextlib.suppress(Exception):
            backend.connection.close()


def _apply_each_atomically(backend: Any, migrations: Any, search_path: str) -> None:
    """Each pending migration and the record that it was applied, in one
    transaction, in the order of their ids.

    yoyo's own `apply_migrations` runs a migration on a connection of its own
    and commits it, then records it in another transaction: a process killed
    in between leaves a schema change that yoyo does not know about, and every
    later run fails trying to apply it again. Postgres DDL is transactional,
    so here the migration and its record commit together or not at all. The
    migration runs with the database's `search_path` (our tables go where the
    user's go), the record in the bookkeeping schema; both settings last only
    as long as the transaction.

    A migration's file is sent whole, in one round trip (psycopg runs several
    statements in one `execute` when it passes no parameters). yoyo would
    split it with sqlparse and run each statement in a savepoint of its own,
    three round trips a statement: that was most of a first ingest's
    migration time (docs/benchmarks.md). Our migrations declare no
    `depends`: their ids (numbered file names) are their order."""
    backend.ensure_internal_schema_updated()
    applied = backend.get_applied_migration_hashes()
    todo = sorted((m for m in migrations if m.hash not in applied), key=lambda m: m.id)
    set_path = "SELECT set_config('search_path', :path, true)"
    for migration in todo:
        body = Path(migration.path).read_text(encoding="utf-8")
        with backend.transaction():
            backend.execute(set_path, {"path": search_path})
            with backend.connection.cursor() as cursor:
                cursor.execute(body)
            backend.execute(set_path, {"path": BOOKKEEPING_SCHEMA})
            backend.log_migration(migration, "apply")
            backend.mark_one(migration, log=False)
    for hook in migrations.post_apply:
        backend.apply_one(hook, mark=False)


def _no_network_in_log(backend: Any) -> None:
    """yoyo logs each migration with `socket.getfqdn()` (a DNS lookup, which can
    also hang where DNS is slow) and a `uuid1` id (the machine's MAC address,
    read with an AF_INET socket). mdchunks touches no network but the database:
    the log gets the plain host name and a random id instead."""
    log_data = backend.get_log_data

    def get_log_data(migration: Any = None, operation: str = "apply") -> Any:
        with _no_host_lookups():
            return log_data(migration, operation)

    backend.get_log_data = get_log_data


@contextlib.contextmanager
def _no_host_lookups() -> Iterator[None]:
    import yoyo.backends.base as yoyo_base

    real_socket, real_uuid = yoyo_base.socket, yoyo_base.uuid
    yoyo_base.socket = SimpleNamespace(getfqdn=socket.gethostname)
    yoyo_base.uuid = SimpleNamespace(uuid1=uuid.uuid4)
    try:
        yield
    finally:
        yoyo_base.socket, yoyo_base.uuid = real_socket, real_uuid


def _with_schema(yoyo_uri: str, schema: str) -> str:
    """The yoyo URI with `schema=` (yoyo's postgres backend sets it as the search_path)."""
    from urllib.parse import urlencode

    return f"{yoyo_uri}{'&' if '?' in yoyo_uri else '?'}{urlencode({'schema': schema})}"


@contextlib.contextmanager
def _migrations_dir() -> Iterator[Path]:
    with resources.as_file(resources.files("mdchunks.migrations")) as folder:
        yield Path(folder)
