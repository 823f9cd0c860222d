"""The schema: the numbered `.sql` files of `migrations/`, applied in order.

The migrations are plain SQL files (`migrations/`, the only place the schema
is written), their ids are their file names, and the record of what was
applied is kept in the database itself. This module is the whole runner: it
speaks to the database over `mdchunks.db.connection` (asyncpg, which the engine
loads anyway), so a run loads no second driver.

The record keeps the format of yoyo-migrations, which the previous release
used (yoyo speaks psycopg only: a driver an ingest no longer loads). yoyo's
four tables, in schema `mdchunks_migrations`: `_yoyo_migration` (one row per
applied migration: the sha256 of its id, the id, when), `_yoyo_log` (one row
per applied migration too: a uuid, hash, id, 'apply', user, host, when),
`_yoyo_version` (yoyo's own schema version, 2) and `yoyo_lock` (yoyo's lock,
created for completeness and never written: our lock is an advisory lock).
The tables are created as yoyo creates them and the rows written as yoyo
writes them, so a database migrated by the previous release is recognised as
it is, and one migrated here is recognised by an older mdchunks.

Safe twice, and twice at once: a Postgres advisory lock serialises concurrent
`migrate` calls (an older mdchunks takes the same one), and what is pending
is read only after taking it. When nothing is pending, `ensure` only reads
`_yoyo_migration`, so ingest works with DML rights alone once the schema is
in place. No network but the database: the log gets the plain host name (no
DNS lookup) and a random id.

Each migration runs in one transaction together with its record (Postgres
DDL is transactional: a process killed in between leaves neither), its file
sent whole in one round trip, with the database's own search_path, where our
tables go; the record goes into the bookkeeping schema. A database migrated
by an older mdchunks may have yoyo's tables in its own schema: the next
`apply` moves them (one transaction, under the advisory lock), and until
then they are read where they are.
"""

from __future__ import annotations

import contextlib
import getpass
import hashlib
import socket
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import asyncpg
from mdchunks.db import connection, database
from mdchunks.db.connection import Connection
from mdchunks.db.queries import QUERIES
from mdchunks.errors import DatabaseUnavailable, MdchunksError

MIGRATION_LOCK = "mdchunks:migrate"
LOCK_WAIT_SECONDS = 120.0
BOOKKEEPING_SCHEMA = "mdchunks_migrations"
# yoyo's tables: applied migrations (the one `pending` reads), log, version, lock.
MIGRATION_TABLE = "_yoyo_migration"
LOG_TABLE = "_yoyo_log"
VERSION_TABLE = "_yoyo_version"
LOCK_TABLE = "yoyo_lock"
YOYO_TABLES = (MIGRATION_TABLE, LOG_TABLE, VERSION_TABLE, LOCK_TABLE)
# The version of yoyo's own table layout (yoyo/internalmigrations/v2.py):
# yoyo 6 and later read it, and would try to upgrade from anything lower.
YOYO_SCHEMA_VERSION = 2

# yoyo's DDL on PostgreSQL (yoyo/internalmigrations/v2.py; the lock table:
# yoyo/backends/base.py), column for column, keys included.
_CREATE_TABLE = {
    MIGRATION_TABLE: f"""
        CREATE TABLE IF NOT EXISTS {BOOKKEEPING_SCHEMA}.{MIGRATION_TABLE} (
            "migration_hash" VARCHAR(64),
            "migration_id" VARCHAR(255),
            "applied_at_utc" TIMESTAMP,
            PRIMARY KEY ("migration_hash")
        )""",
    LOG_TABLE: f"""
        CREATE TABLE IF NOT EXISTS {BOOKKEEPING_SCHEMA}.{LOG_TABLE} (
            "id" VARCHAR(36),
            "migration_hash" VARCHAR(64),
            "migration_id" VARCHAR(255),
            "operation" VARCHAR(10),
            "username" VARCHAR(255),
            "hostname" VARCHAR(255),
            "comment" VARCHAR(255),
            "created_at_utc" TIMESTAMP,
            PRIMARY KEY ("id")
        )""",
    VERSION_TABLE: f"""
        CREATE TABLE IF NOT EXISTS {BOOKKEEPING_SCHEMA}.{VERSION_TABLE} (
            "version" INT NOT NULL PRIMARY KEY,
            "installed_at_utc" TIMESTAMP
        )""",
    LOCK_TABLE: f"""
        CREATE TABLE IF NOT EXISTS {BOOKKEEPING_SCHEMA}.{LOCK_TABLE} (
            "locked" INT DEFAULT 1,
            "ctime" TIMESTAMP,
            "pid" INT NOT NULL,
            PRIMARY KEY ("locked")
        )""",
}
# yoyo's tables of an older mdchunks, moved from where the search_path finds them.
_MOVE_TABLE = {name: f"ALTER TABLE {name} SET SCHEMA {BOOKKEEPING_SCHEMA}" for name in YOYO_TABLES}


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


def migration_hash(migration_id: str) -> str:
    """yoyo's key for a migration: the sha256 of its id (yoyo/migrations.py)."""
    return hashlib.sha256(migration_id.encode("utf-8")).hexdigest()


def pending(url: str) -> tuple[str, ...]:
    """Migration ids not yet applied (all of them on an empty database)."""
    with database.losing_it_is_unavailable(url), database.connect(url) as conn:
        return _pending(conn)


def _pending(conn: Connection) -> tuple[str, ...]:
    schema = _migration_table_schema(conn)
    if schema is None:
        return migration_ids()
    try:
        if schema == BOOKKEEPING_SCHEMA:
            rows = conn.execute(
                f"SELECT migration_id FROM {BOOKKEEPING_SCHEMA}.{MIGRATION_TABLE}"
            ).fetchall()
        else:  # an older mdchunks' table, where the search_path finds it
            rows = conn.execute(f"SELECT migration_id FROM {MIGRATION_TABLE}").fetchall()
    except asyncpg.exceptions.InsufficientPrivilegeError:
        raise DatabaseUnavailable(
            f"this role may not read {connection.quote_ident(schema, MIGRATION_TABLE)}, the "
            f"record of the migrations applied: grant it USAGE ON SCHEMA {BOOKKEEPING_SCHEMA} "
            f"and SELECT ON {BOOKKEEPING_SCHEMA}.{MIGRATION_TABLE} (docs/rows-and-table.md: "
            "the rights ingest needs)"
        ) from None
    applied = {row[0] for row in rows}
    return tuple(mid for mid in migration_ids() if mid not in applied)


def _migration_table_schema(conn: Connection) -> str | None:
    """The schema of the record of applied migrations (None: nowhere yet)."""
    row = conn.execute(
        QUERIES["migration_table_schema"], {"table": MIGRATION_TABLE, "schema": BOOKKEEPING_SCHEMA}
    ).fetchone()
    return None if row is None else str(row[0])


def ensure(url: str) -> MigrationResult:
    """Apply pending migrations, if any (what `ingest` does first)."""
    todo = pending(url)
    if not todo:
        return MigrationResult(applied=(), already=migration_ids())
    return apply(url)


def apply(url: str, *, through: str | None = None) -> MigrationResult:
    """Apply every pending migration under the migration lock.

    `through`: only the migrations up to this id or id prefix (`"0008"`:
    0008_search_bm25 and all before it), for tests and benchmarks that build
    a database as an earlier release left it."""

    def wanted(ids: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(mid for mid in ids if through is None or mid[: len(through)] <= through)

    with (
        database.losing_it_is_unavailable(url),
        database.connect(url, application_name="mdchunks migrate") as conn,
        _advisory_lock(conn),
    ):
        todo = wanted(_pending(conn))
        if todo or _legacy_tables(conn):
            _check_create_right(conn)
            _prepare_bookkeeping(conn, url)
        if todo:
            _apply_each(conn, todo, _search_path(conn), url)
        left = wanted(_pending(conn))
    if left:
        raise MdchunksError(f"migrations not applied: {', '.join(left)}")
    return MigrationResult(
        applied=todo, already=tuple(mid for mid in wanted(migration_ids()) if mid not in todo)
    )


def _check_create_right(conn: Connection) -> None:
    """Migrations create tables (and, once, the bookkeeping schema): say so
    plainly when the role may not."""
    row = conn.execute(
        "SELECT current_user::text, current_database()::text, "
        "       coalesce(current_schema(), 'public')::text, "
        "       has_schema_privilege(coalesce(current_schema(), 'public'), 'CREATE'), "
        "       to_regnamespace(%(schema)s::text) IS NOT NULL "
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


def _legacy_tables(conn: Connection) -> list[str]:
    """yoyo's tables that an older mdchunks left where the search_path finds them
    (the user's schema), and that the bookkeeping schema does not hold yet."""
    rows = conn.execute(
        QUERIES["legacy_yoyo_tables"],
        {"tables": list(YOYO_TABLES), "schema": BOOKKEEPING_SCHEMA},
    ).fetchall()
    return [str(name) for (name,) in rows]


def _prepare_bookkeeping(conn: Connection, url: str) -> None:
    """The bookkeeping schema and yoyo's four tables, created where missing,
    with those of an older mdchunks moved in (one transaction: all or
    nothing). yoyo reads its schema version before anything else, so the
    version row is written with the tables."""
    refused = f"cannot prepare the record of migrations in schema {BOOKKEEPING_SCHEMA}"
    with _refusals(url, refused), conn.transaction():
        exists = conn.execute("SELECT to_regnamespace(%s::text)", [BOOKKEEPING_SCHEMA])
        if exists.rows[0][0] is None:
            # Not IF NOT EXISTS: that still needs CREATE on the database, and a
            # schema created by an administrator for this role is fine.
            conn.execute(f"CREATE SCHEMA {BOOKKEEPING_SCHEMA}")
            conn.execute(
                f"COMMENT ON SCHEMA {BOOKKEEPING_SCHEMA} IS 'mdchunks: the record of the "
                "migrations applied to this database, its log and a lock table, in the "
                "format of yoyo-migrations (which an older mdchunks used)'"
            )
        for name in _legacy_tables(conn):
            conn.execute(_MOVE_TABLE[name])
        # Only what is missing: CREATE ... IF NOT EXISTS still needs the
        # right to create in the schema.
        missing = conn.execute(
            "SELECT t.name FROM unnest(%(tables)s::text[]) AS t(name) "
            "WHERE to_regclass(quote_ident(%(schema)s::text) || '.' || quote_ident(t.name)) "
            "      IS NULL",
            {"tables": list(YOYO_TABLES), "schema": BOOKKEEPING_SCHEMA},
        )
        for (name,) in missing:
            conn.execute(_CREATE_TABLE[name])
        # yoyo's own lock is a row that a killed yoyo (an older mdchunks) leaves
        # behind, which would stop that release for good. Migrations of
        # mdchunks, old and new, run under the advisory lock this session
        # holds, so a row that is there now is stale.
        conn.execute(f"DELETE FROM {BOOKKEEPING_SCHEMA}.{LOCK_TABLE}")
        conn.execute(
            f"INSERT INTO {BOOKKEEPING_SCHEMA}.{VERSION_TABLE} (version, installed_at_utc) "
            "SELECT %s::int, clock_timestamp() AT TIME ZONE 'UTC' "
            f"WHERE NOT EXISTS (SELECT 1 FROM {BOOKKEEPING_SCHEMA}.{VERSION_TABLE})",
            [YOYO_SCHEMA_VERSION],
        )


# The record of one migration, as yoyo writes it (`log_migration`, then
# `mark_one`): one log row (no comment) and one row of the applied, in UTC
# without a time zone, in one round trip.
_RECORD = f"""
WITH logged AS (
    INSERT INTO {BOOKKEEPING_SCHEMA}.{LOG_TABLE}
        (id, migration_hash, migration_id, operation, username, hostname, created_at_utc)
    VALUES (%(id)s::varchar, %(hash)s::varchar, %(migration_id)s::varchar, 'apply',
            coalesce(%(username)s::varchar, current_user::varchar), %(hostname)s::varchar,
            clock_timestamp() AT TIME ZONE 'UTC')
    RETURNING created_at_utc
)
INSERT INTO {BOOKKEEPING_SCHEMA}.{MIGRATION_TABLE} (migration_hash, migration_id, applied_at_utc)
SELECT %(hash)s::varchar, %(migration_id)s::varchar, created_at_utc FROM logged
"""


def _apply_each(conn: Connection, todo: tuple[str, ...], search_path: str, url: str) -> None:
    """Each pending migration and its record in one transaction, in the order
    of their ids (they declare no dependencies: the numbered file names are
    the order).

    The file is sent whole, in one round trip (`run_script`: the simple query
    protocol runs several statements when there are no parameters), where
    yoyo split it and ran each statement in a savepoint of its own, three
    round trips a statement (docs/benchmarks.md). The search_path is set for
    the transaction only: a migration that changes it leaves the next one
    unaffected."""
    user = _os_user()
    host = socket.gethostname()[:255]  # the plain name: getfqdn would ask DNS
    with _migrations_dir() as folder:
        for mid in todo:
            body = (folder / f"{mid}.sql").read_text(encoding="utf-8")
            with _refusals(url, "a migration failed", f" (migration {mid})"), conn.transaction():
                conn.execute("SELECT set_config('search_path', %s::text, true)", [search_path])
                conn.run_script(body)
                conn.execute(
                    _RECORD,
                    {
                        "id": str(uuid.uuid4()),
                        "hash": migration_hash(mid),
                        "migration_id": mid,
                        "username": user,
                        "hostname": host,
                    },
                )


def _os_user() -> str | None:
    """Who runs the migration, as yoyo logs it (`getpass.getuser()`); None
    where the system knows no name for this uid (the log gets the role)."""
    try:
        return getpass.getuser()[:255]
    except (KeyError, OSError):
        return None


@contextlib.contextmanager
def _refusals(url: str, failed: str, where: str = "") -> Iterator[None]:
    """What the server refuses inside the block, in one line: no right to
    create (exit 3, with the rights to ask for), or `failed: cause{where}`.
    A lost connection passes as it is (the caller's one-line loss)."""
    try:
        yield
    except asyncpg.exceptions.InsufficientPrivilegeError as exc:
        raise DatabaseUnavailable(
            "migrations need the right to create tables in the database: "
            f"{database.first_line(exc, url)}"
        ) from None
    except asyncpg.PostgresError as exc:
        if connection.is_loss(exc):
            raise
        raise MdchunksError(f"{failed}: {database.first_line(exc, url)}{where}") from None


def _search_path(conn: Connection) -> str:
    """The session's search_path as the database and role set it (where our tables go)."""
    row = conn.execute("SELECT current_setting('search_path')::text").fetchone()
    assert row is not None
    return str(row[0])


@contextlib.contextmanager
def _advisory_lock(conn: Connection) -> Iterator[None]:
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        row = conn.execute(
            "SELECT pg_try_advisory_lock(hashtextextended(%s::text, 0))", [MIGRATION_LOCK]
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
        with contextlib.suppress(*connection.Error):
            conn.execute(
                "SELECT pg_advisory_unlock(hashtextextended(%s::text, 0))", [MIGRATION_LOCK]
            )


@contextlib.contextmanager
def _migrations_dir() -> Iterator[Path]:
    with resources.as_file(resources.files("mdchunks.migrations")) as folder:
        yield Path(folder)
