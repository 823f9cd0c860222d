"""The schema, applied by yoyo-migrations over psycopg 3.

Why yoyo: migrations stay plain numbered `.sql` files (`migrations/`, the only
place the schema is written), it speaks psycopg 3 (`postgresql+psycopg://`),
records what it applied in the database itself, runs each file in a
transaction, and has no ORM to drag in (Alembic needs SQLAlchemy).

Safe twice, and twice at once: a Postgres advisory lock serialises concurrent
`migrate` calls (yoyo's own lock is a row in a table, which a killed process
leaves behind), and what is pending is read only after taking it. When
nothing is pending, `ensure` only reads yoyo's table, so ingest works with DML
rights alone once the schema is in place.
"""

from __future__ import annotations

import contextlib
import logging
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import psycopg

from flow import database
from flow.errors import DatabaseUnavailable, MdchunksError

MIGRATION_LOCK = "mdchunks:migrate"
LOCK_WAIT_SECONDS = 120.0


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
    exists = conn.execute("SELECT to_regclass('_yoyo_migration') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return migration_ids()
    applied = {row[0] for row in conn.execute("SELECT migration_id FROM _yoyo_migration")}
    return tuple(mid for mid in migration_ids() if mid not in applied)


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
        if todo:
            _apply_with_yoyo(url)
        left = _pending(lock_conn)
    if left:
        raise MdchunksError(f"migrations not applied: {', '.join(left)}")
    return MigrationResult(
        applied=todo, already=tuple(mid for mid in migration_ids() if mid not in todo)
    )


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


def _apply_with_yoyo(url: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from yoyo import get_backend, read_migrations
        from yoyo.exceptions import LockTimeout
        from yoyo.migrations import MigrationList
    logging.getLogger("yoyo").addHandler(logging.NullHandler())
    logging.getLogger("yoyo").propagate = False
    try:
        backend = get_backend(yoyo_url(url))
    except Exception as exc:
        raise DatabaseUnavailable(
            f"cannot open {database.redact(url)} for migrations: {database.scrub(str(exc), url)}"
        ) from None
    try:
        with _migrations_dir() as folder:
            found = read_migrations(str(folder))
            # The folder is a Python package too; only the .sql files are migrations.
            migrations = MigrationList(
                [m for m in found if m.path.endswith(".sql")], found.post_apply
            )
            try:
                with backend.lock():
                    backend.apply_migrations(backend.to_apply(migrations))
            except LockTimeout as exc:
                raise MdchunksError(
                    f"{exc}. No mdchunks migration is running (this process holds the "
                    "migration lock), so the lock row is stale: remove it with "
                    "`DELETE FROM yoyo_lock` and run `mdchunks migrate` again"
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


@contextlib.contextmanager
def _migrations_dir() -> Iterator[Path]:
    with resources.as_file(resources.files("migrations")) as folder:
        yield Path(folder)
