"""The record of applied migrations keeps the format of yoyo-migrations, which
the previous release applied them with: a database that yoyo migrated is
recognised as it is, and the rows written now are the ones yoyo writes, so an
older mdchunks (still on yoyo) finds the same database migrated too.

yoyo itself is not needed: its tables and rows are made here by the SQL that
yoyo 9 sends on PostgreSQL (yoyo/internalmigrations/v2.py, yoyo/backends/base.py).
"""

from __future__ import annotations

import getpass
import hashlib
import json
import socket
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from mdchunks.db import migrate

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = migrate.BOOKKEEPING_SCHEMA

# What yoyo 9 creates (its connection's search_path is the bookkeeping schema).
YOYO_DDL = [
    'CREATE TABLE "yoyo_lock" ("locked" INT DEFAULT 1, "ctime" TIMESTAMP,"pid" INT NOT NULL,'
    'PRIMARY KEY ("locked"))',
    """
    CREATE TABLE "_yoyo_log" (
        "id" VARCHAR(36),
        "migration_hash" VARCHAR(64),
        "migration_id" VARCHAR(255),
        "operation" VARCHAR(10),
        "username" VARCHAR(255),
        "hostname" VARCHAR(255),
        "comment" VARCHAR(255),
        "created_at_utc" TIMESTAMP,
        PRIMARY KEY ("id")
    )
    """,
    """
    CREATE TABLE "_yoyo_version" (
        "version" INT NOT NULL PRIMARY KEY,
        "installed_at_utc" TIMESTAMP
    )
    """,
    """
    CREATE TABLE "_yoyo_migration" (
        "migration_hash" VARCHAR(64),
        "migration_id" VARCHAR(255),
        "applied_at_utc" TIMESTAMP,
        PRIMARY KEY ("migration_hash")
    )
    """,
]
YOYO_VERSION = 'INSERT INTO "_yoyo_version" VALUES (%s, %s)'
YOYO_LOG = (
    'INSERT INTO "_yoyo_log" ("id", "migration_hash", "migration_id", "operation", "username", '
    '"hostname", "created_at_utc") VALUES (%s, %s, %s, %s, %s, %s, %s)'
)
YOYO_MARK = (
    'INSERT INTO "_yoyo_migration" ("migration_hash", "migration_id", "applied_at_utc") '
    "VALUES (%s, %s, %s)"
)
# yoyo's key of a migration is the sha256 of its id; these two were computed
# by yoyo 9.0's own get_migration_hash.
PINNED_HASHES = {
    "0001_content_chunks": "fa1b5889070175ec689660efe7fb73f79918bca0164776d488cbdcadbe473d32",
    "0010_embed_text_in_the_database": (
        "ed7b1925ecf101b7f5ce8f26d902e7c99727c7cca92627b15526412b37d51917"
    ),
}


def _yoyo_hash(migration_id: str) -> str:
    return hashlib.sha256(migration_id.encode("utf-8")).hexdigest()


def _utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)  # as yoyo stores it


def _rows(url: str, statement: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(statement).fetchall()


def _record(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """The four tables' rows, in a stable order."""
    return {
        name: _rows(url, f"SELECT * FROM {SCHEMA}.{name} ORDER BY 1")
        for name in migrate.YOYO_TABLES
    }


def _migrate_with_yoyos_record(url: str, ids: list[str]) -> None:
    """A database as yoyo (the previous release) left it: the migrations `ids`
    applied with the database's search_path, yoyo's tables and rows in the
    bookkeeping schema, exactly as yoyo writes them."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {SCHEMA}")
        with conn.transaction():
            conn.execute(f"SET LOCAL search_path TO {SCHEMA}")
            for statement in YOYO_DDL:
                conn.execute(statement)
            conn.execute(YOYO_VERSION, [2, _utcnow()])
        with migrate._migrations_dir() as folder:
            for mid in ids:
                conn.execute((folder / f"{mid}.sql").read_text())
                with conn.transaction():
                    conn.execute(f"SET LOCAL search_path TO {SCHEMA}")
                    log = [str(uuid.uuid1()), _yoyo_hash(mid), mid, "apply", "someone", "host"]
                    conn.execute(YOYO_LOG, [*log, _utcnow()])
                    conn.execute(YOYO_MARK, [_yoyo_hash(mid), mid, _utcnow()])


def _shape(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """The four tables' columns, constraints and indexes."""
    tables = list(migrate.YOYO_TABLES)
    with psycopg.connect(url) as conn:
        columns = conn.execute(
            "SELECT table_name, ordinal_position, column_name, data_type, "
            "       character_maximum_length, is_nullable, column_default "
            "FROM information_schema.columns WHERE table_schema = %s AND table_name = ANY(%s) "
            "ORDER BY 1, 2",
            [SCHEMA, tables],
        ).fetchall()
        constraints = conn.execute(
            "SELECT c.relname, k.conname, pg_get_constraintdef(k.oid) "
            "FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid "
            "WHERE c.relnamespace = to_regnamespace(%s) AND c.relname = ANY(%s) ORDER BY 1, 2",
            [SCHEMA, tables],
        ).fetchall()
        indexes = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND tablename = ANY(%s) "
            "ORDER BY 1",
            [SCHEMA, tables],
        ).fetchall()
    return {"columns": columns, "constraints": constraints, "indexes": indexes}


def test_the_hash_is_yoyos() -> None:
    for mid, pinned in PINNED_HASHES.items():
        assert migrate.migration_hash(mid) == _yoyo_hash(mid) == pinned
    assert set(PINNED_HASHES) <= set(migrate.migration_ids())


def test_the_bookkeeping_tables_are_the_ones_yoyo_creates(new_database) -> None:  # type: ignore[no-untyped-def]
    by_yoyo, here = new_database(), new_database()
    _migrate_with_yoyos_record(by_yoyo, [])

    migrate.apply(here)

    assert _shape(here) == _shape(by_yoyo)
    assert len(_shape(here)["columns"]) == 16  # not vacuous
    record = _record(here)
    assert [version for version, _ in record["_yoyo_version"]] == [2]
    assert record["yoyo_lock"] == []  # yoyo's lock: created, never taken


def test_a_database_that_yoyo_migrated_is_recognised_as_it_is(database_url: str) -> None:
    _migrate_with_yoyos_record(database_url, list(migrate.migration_ids()))
    before = _record(database_url)

    assert migrate.pending(database_url) == ()
    result = migrate.apply(database_url)

    assert result.applied == () and result.already == migrate.migration_ids()
    assert migrate.ensure(database_url).applied == ()
    assert _record(database_url) == before  # nothing written


def test_the_migrations_applied_after_yoyos_are_recorded_as_yoyo_records_them(
    database_url: str,
) -> None:
    ids = migrate.migration_ids()
    old = [mid for mid in ids if mid < "0006"]
    _migrate_with_yoyos_record(database_url, old)
    (yoyo_version,) = _record(database_url)["_yoyo_version"]
    started = _utcnow()

    assert migrate.apply(database_url).applied == ids[len(old) :]

    record = _record(database_url)
    assert record["_yoyo_version"] == [yoyo_version]  # yoyo's own row, kept as it was
    assert record["yoyo_lock"] == []
    applied = {row[1]: row for row in record["_yoyo_migration"]}
    logged = {row[2]: row for row in record["_yoyo_log"]}
    assert sorted(applied) == sorted(logged) == list(ids)
    for mid in ids[len(old) :]:
        migration_hash, migration_id, applied_at = applied[mid]
        assert (migration_hash, migration_id) == (_yoyo_hash(mid), mid)
        log_id, log_hash, log_mid, operation, username, hostname, comment, created_at = logged[mid]
        assert uuid.UUID(log_id).version == 4 and len(log_id) == 36
        assert (log_hash, log_mid, operation, comment) == (_yoyo_hash(mid), mid, "apply", None)
        assert (username, hostname) == (getpass.getuser(), socket.gethostname())
        assert created_at == applied_at
        assert started - timedelta(seconds=5) <= applied_at <= _utcnow() + timedelta(seconds=5)
    last = "0010_embed_text_in_the_database"
    assert applied[last][0] == PINNED_HASHES[last]

    # What an older mdchunks (yoyo 9) reads: its tables in its schema, schema
    # version 2, and every migration's hash, in the order they were applied.
    with psycopg.connect(database_url) as conn:
        conn.execute(f"SET search_path TO {SCHEMA}")
        tables = {
            name
            for (name,) in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                [SCHEMA],
            )
        }
        assert {"_yoyo_migration", "_yoyo_version"} <= tables
        assert conn.execute('SELECT max("version") FROM "_yoyo_version"').fetchone() == (2,)
        hashes = conn.execute(
            'SELECT "migration_hash" FROM "_yoyo_migration" ORDER by "applied_at_utc"'
        ).fetchall()
    assert [h for (h,) in hashes] == [_yoyo_hash(mid) for mid in ids]


_DRIVERS_SEEN = """
import json, sys
from mdchunks.db import migrate
migrate.apply(sys.argv[1])
migrate.pending(sys.argv[1])
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & {"psycopg", "yoyo"})))
"""


def test_migrating_loads_neither_psycopg_nor_yoyo(database_url: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _DRIVERS_SEEN, database_url],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []
    assert migrate.pending(database_url) == ()
