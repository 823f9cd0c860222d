"""A throwaway PostgreSQL for one benchmark run, and a database per trial.

The server is the embedded one the flow uses (the `pgserver` package) in a
folder of the run's work dir, stopped at the end; or any server given by an
admin URL (a role that may CREATE DATABASE). Ours and the bare app run on the
same server, each trial in a database of its own.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from mdchunks.db import database
from mdchunks.db.embedded import start_server
from mdchunks.plugin.rows import TRIGGER_COLUMNS
from psycopg import sql

_XID_MODULUS = 2**32
BARE_COLUMNS = ("id", "source", "rel_path", "position", "char_start", "char_end", "text", "recipe")


@dataclass(frozen=True, slots=True)
class Server:
    admin_url: str  # a database we may connect to and CREATE DATABASE from
    kind: str  # "embedded" or "given"

    def url_for(self, name: str) -> str:
        parts = urlsplit(self.admin_url)
        return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))

    def create(self, name: str) -> str:
        """A new empty database (an old one of that name is dropped first)."""
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url_for(name)

    def drop(self, name: str) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )

    def version(self) -> str:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            row = conn.execute("SHOW server_version").fetchone()
        return str(row[0]) if row else "unknown"


@contextlib.contextmanager
def server(folder: Path, admin_url: str | None = None) -> Iterator[Server]:
    """The given server, or an embedded one in `folder` (stopped and removed after)."""
    if admin_url:
        yield Server(admin_url=admin_url, kind="given")
        return
    folder.mkdir(parents=True, exist_ok=True)
    embedded = start_server(folder / "pg")
    try:
        yield Server(admin_url=embedded.get_uri("postgres"), kind="embedded")
    finally:
        database.stop_embedded(folder)
        shutil.rmtree(folder, ignore_errors=True)


def next_xid(url: str) -> int:
    """The id the next transaction of the cluster will get (64-bit)."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint"
        ).fetchone()
    assert row is not None
    return int(row[0])


def rows_written_since(url: str, table: str, start_xid: int) -> dict[str, int]:
    """rel_path -> rows of `table` inserted or updated since `start_xid`."""
    span = next_xid(url) - start_xid
    query = sql.SQL(
        "SELECT rel_path, count(*) FROM {} "
        "WHERE ((xmin::text::bigint - %(start)s + 4294967296) %% 4294967296) < %(span)s "
        "GROUP BY rel_path"
    ).format(sql.Identifier(table))
    with psycopg.connect(url, autocommit=True) as conn:
        found = conn.execute(query, {"start": start_xid % _XID_MODULUS, "span": span}).fetchall()
    return {str(rel_path): int(count) for rel_path, count in found}


def row_count(url: str, table: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))
        ).fetchone()
    return int(row[0]) if row else 0


def write_cost(url: str) -> tuple[float, float]:
    """Seconds PostgreSQL takes to insert the rows of `content_chunks` again:
    every column into a copy of the table (its indexes, checks and the trigger
    that computes the full-text search columns included), and
    only the bare app's columns into a table with just a primary key. What
    the server itself pays for our rows versus the bare app's, same rows."""
    with psycopg.connect(url, autocommit=True) as conn:
        columns = [
            str(row[0])
            for row in conn.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'content_chunks' AND is_generated = 'NEVER' "
                "ORDER BY ordinal_position"
            )
            if str(row[0]) not in TRIGGER_COLUMNS  # the trigger's, computed again
        ]
        ours = sql.SQL(", ").join(map(sql.Identifier, columns))
        bare = sql.SQL(", ").join(map(sql.Identifier, BARE_COLUMNS))
        conn.execute("CREATE TEMP TABLE bench_copy_ours (LIKE content_chunks INCLUDING ALL)")
        conn.execute(  # LIKE copies no trigger
            "CREATE TRIGGER bench_copy_ours_columns BEFORE INSERT OR UPDATE ON bench_copy_ours "
            "FOR EACH ROW EXECUTE FUNCTION mdchunks_content_chunks_columns()"
        )
        conn.execute(
            sql.SQL(
                "CREATE TEMP TABLE bench_copy_bare AS SELECT {} FROM content_chunks LIMIT 0"
            ).format(bare)
        )
        conn.execute("ALTER TABLE bench_copy_bare ADD PRIMARY KEY (id)")
        timings = []
        for target, listed in (("bench_copy_ours", ours), ("bench_copy_bare", bare)):
            started = time.perf_counter()
            conn.execute(
                sql.SQL("INSERT INTO {} ({}) SELECT {} FROM content_chunks").format(
                    sql.Identifier(target), listed, listed
                )
            )
            timings.append(time.perf_counter() - started)
        conn.execute("DROP TABLE bench_copy_ours, bench_copy_bare")
    return timings[0], timings[1]
