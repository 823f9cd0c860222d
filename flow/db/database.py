"""Where Postgres comes from, and how it is shown to a user.

1. `--database-url` (or `database_url=`), else the `DATABASE_URL` variable;
2. otherwise an embedded PostgreSQL that the tool starts itself from the
   `pgserver` package (it bundles the server binaries) in `<data dir>/pg`.
   The data dir defaults to `./.mdchunks` under the current folder. The server
   listens on a unix socket only, is reused by every later run, and is left
   running so the printed `psql` command works; `mdchunks stop` stops it.
   The tool's database in it is `mdchunks`. Commands that write (`ingest`,
   `backfill`, `migrate`) create the data dir and the server on first use;
   read-only ones (`status`, `search`, and `drop`, which has nothing to delete
   there) resolve with `create=False`: a data dir without a server is an error
   of usage (a new or mistyped `--data-dir`), and nothing is created or started.

Here: the resolved `Database`, connecting to it (a failure, or a connection
lost during a run, as one line), its identity, and an embedded server's first
use (our database made in it, initdb's dropped). The server's process and its
WAL are flow/db/embedded.py's; the URL is checked, converted and masked by
flow/db/urls.py. Passwords never leave these modules in clear: everything
shown goes through `urls.redact`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
from mdchunks.db import connection, embedded
from mdchunks.db.connection import Connection
from mdchunks.db.urls import (
    CONNECT_TIMEOUT_SECONDS,
    check_url,
    connect_timeout,
    redact,
    scrub,
    url_of,
)
from mdchunks.errors import DatabaseUnavailable, UsageError

DEFAULT_DATA_DIR = Path(".mdchunks")
EMBEDDED_DATABASE = "mdchunks"


class NothingThere(UsageError):
    """A read-only command found no database where it was pointed (exit status 2)."""


@dataclass(frozen=True, slots=True)
class Database:
    """A resolved database: `url` may hold a password, `display` never does."""

    url: str
    embedded: bool
    data_dir: Path
    psql_bin: Path | None = None  # the bundled psql, for an embedded server

    @property
    def pgdata(self) -> Path | None:
        """The embedded server's data folder (None: a server given by URL)."""
        return self.data_dir / "pg" if self.embedded else None

    @property
    def display(self) -> str:
        return redact(self.url)

    def psql_command(self) -> str:
        """A shell command that opens psql on this database (password left out)."""
        psql = str(self.psql_bin) if self.psql_bin else "psql"
        return f"{shlex.quote(psql)} {shlex.quote(self.display)}"


def default_data_dir() -> Path:
    return Path.cwd() / DEFAULT_DATA_DIR


def resolve(
    database_url: str | None = None, data_dir: Path | None = None, *, create: bool = True
) -> Database:
    """The database to use, starting the embedded server when no URL is given.

    `create=False` (read-only commands): an embedded server is used (and
    started, if stopped) only where one was made before; else `NothingThere`,
    with the data dir untouched."""
    data_dir = (data_dir or default_data_dir()).resolve()
    url = database_url or os.environ.get("DATABASE_URL") or None
    if url:
        check_url(url)
        return Database(url=url, embedded=False, data_dir=data_dir)
    if not create and not has_embedded(data_dir):
        raise NothingThere(
            f"nothing here: no embedded PostgreSQL in {data_dir} (`mdchunks ingest PATH` "
            "makes one; or give the --data-dir or --database-url of an existing one)"
        )
    return _embedded(data_dir)


def has_embedded(data_dir: Path) -> bool:
    """Was an embedded server made in this data dir (running or not)?"""
    return (data_dir / "pg" / "PG_VERSION").is_file()


def connect(url: str, *, application_name: str = "mdchunks") -> Connection:
    """A connection (autocommit outside `conn.transaction()`), or a one-line
    `DatabaseUnavailable`."""
    try:
        return connection.connect(
            url_of(url), application_name=application_name, timeout=connect_timeout(url)
        )
    except Exception as exc:  # asyncpg: OSError, PostgresError, ValueError, timeouts ...
        raise DatabaseUnavailable(
            f"cannot connect to the database at {redact(url)}: {_connect_cause(exc, url)}"
        ) from None


def _connect_cause(exc: Exception, url: str) -> str:
    """Why connecting failed, in the system's words ("Connection refused"),
    where asyncpg says "[Errno 111] Connect call failed ('127.0.0.1', 1)"."""
    if isinstance(exc, OSError) and exc.errno and exc.errno > 0:
        return os.strerror(exc.errno)
    if isinstance(exc, OSError) and exc.strerror:
        # A failed name lookup (socket.gaierror): a negative number that
        # os.strerror does not know, and words of its own.
        return str(exc.strerror)
    if isinstance(exc, TimeoutError):  # asyncio's is this one too (3.11)
        return f"no answer within {CONNECT_TIMEOUT_SECONDS} s"
    return first_line(exc, url)


def is_connection_loss(exc: BaseException) -> bool:
    """Did this error end the session (server stopped, restarted, unreachable)?"""
    return connection.is_loss(exc)


def lost(url: str, exc: BaseException) -> DatabaseUnavailable:
    """The one-line error of a run whose database went away in the middle."""
    return DatabaseUnavailable(
        f"lost the connection to the database at {redact(url)} during the run: "
        f"{first_line(exc, url)}. The run stopped; what it wrote is consistent. "
        "Run it again when the database is back: it picks up where this one stopped"
    )


@contextlib.contextmanager
def losing_it_is_unavailable(url: str) -> Iterator[None]:
    """Turn a connection lost inside the block into a one-line `DatabaseUnavailable`."""
    try:
        yield
    except connection.Error as exc:
        if is_connection_loss(exc):
            raise lost(url, exc) from None
        raise


def identity(conn: Connection) -> str:
    """What the engine state of a source is bound to: this cluster, this
    database (by oid, so a dropped and re-created database is another one) and
    this `content_chunks` table (by oid, likewise). Never the password, and not
    the host name, so two spellings of one server are one identity."""
    row = conn.execute(
        "SELECT d.oid::text, current_database(), "
        "       coalesce(to_regclass('content_chunks')::oid::text, '-') "
        "FROM pg_database d WHERE d.datname = current_database()"
    ).fetchone()
    assert row is not None
    system_id = "-"
    with contextlib.suppress(*connection.Error):
        # pg_control_system() needs superuser or pg_monitor-ish rights; the
        # server's address and port stand in for the cluster when it is not
        # allowed (a unix socket has no address: its directories do).
        found = conn.execute("SELECT system_identifier::text FROM pg_control_system()").fetchone()
        if found:
            system_id = found[0]
    if system_id == "-":
        host, port = conn.address
        system_id = f"{host}:{port}"
    return f"{system_id}/{row[1]}#{row[0]}/content_chunks#{row[2]}"


def identity_hash(identity_text: str) -> str:
    return hashlib.sha256(identity_text.encode()).hexdigest()[:16]


def first_line(exc: BaseException, url: str) -> str:
    """The cause of a database error in one line, without the password.
    asyncpg puts it first and appends the server's DETAIL and HINT lines."""
    text = str(exc).strip() or type(exc).__name__
    return scrub(text.splitlines()[0].strip(), url)


def _embedded(data_dir: Path) -> Database:
    pgdata = data_dir / "pg"
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the data directory {data_dir}: {exc.strerror}") from None
    # First use is race-free: two first commands at once would both run
    # initdb, start a server, or CREATE DATABASE (one then fails on
    # pg_database's unique index). The one that gets this lock first does it
    # all; the other finds it done. The lock is the OS's: a killed holder
    # releases it.
    with _data_dir_lock(data_dir):
        # A server is new until its databases are ours alone: the marker is
        # written before initdb and removed after the drops, so a first run
        # killed in between has the next one finish them.
        unfinished = data_dir / UNFINISHED_SETUP_FILE
        if not (pgdata / "PG_VERSION").exists():
            unfinished.touch()
        fresh = unfinished.exists()
        server = embedded.start_server(pgdata)
        url = server.get_uri(EMBEDDED_DATABASE)
        # template1 is in every server. Connected to it, the new database is
        # made from template0 (the same at initdb, while it is there): a
        # template in use cannot be copied.
        with connect(server.get_uri("template1")) as conn:
            databases = {
                str(row[0])
                for row in conn.execute(
                    "SELECT datname FROM pg_database WHERE datname IN (%s, 'template0')",
                    [EMBEDDED_DATABASE],
                ).fetchall()
            }
            if EMBEDDED_DATABASE not in databases:
                template = " TEMPLATE template0" if "template0" in databases else ""
                with contextlib.suppress(
                    asyncpg.exceptions.DuplicateDatabaseError,
                    asyncpg.exceptions.UniqueViolationError,
                ):
                    conn.execute(
                        f"CREATE DATABASE {connection.quote_ident(EMBEDDED_DATABASE)}{template}"
                    )
            if fresh:
                # A server made for us holds our database and template1 only:
                # initdb's `postgres` database and template0 (7 MB of catalogs
                # each, together half of the server's files; docs/database.md)
                # go. template1 stays, the template CREATE DATABASE copies.
                conn.execute("DROP DATABASE IF EXISTS postgres")
                if "template0" in databases:
                    conn.execute("ALTER DATABASE template0 IS_TEMPLATE false")
                    conn.execute("DROP DATABASE template0")
                # initdb leaves dead rows in template1's catalogs: 1.2 MB of
                # its 7.4 MB go (0.3 s, once).
                conn.execute("VACUUM FULL")
                unfinished.unlink(missing_ok=True)
            embedded.bound_the_wal(conn)
    return Database(url=url, embedded=True, data_dir=data_dir, psql_bin=embedded.bundled_psql())


EMBEDDED_LOCK_FILE = "embedded.lock"
# Present while a new server still holds initdb's databases (_embedded).
UNFINISHED_SETUP_FILE = "embedded.unfinished"


@contextlib.contextmanager
def _data_dir_lock(data_dir: Path) -> Iterator[None]:
    """An exclusive `flock` on `<data dir>/embedded.lock` while the block runs."""
    descriptor = os.open(data_dir / EMBEDDED_LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # releases the lock


def stop_embedded(data_dir: Path | None = None) -> bool:
    """Stop the embedded server of `data_dir` if it runs. True if it was running."""
    data_dir = (data_dir or default_data_dir()).resolve()
    if not has_embedded(data_dir):
        return False
    return embedded.stop_server(data_dir / "pg")
