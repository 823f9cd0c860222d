"""Where Postgres comes from, and how it is shown to a user.

1. `--database-url` (or `database_url=`), else the `DATABASE_URL` variable;
2. otherwise an embedded PostgreSQL that the tool starts itself from the
   `pgserver` package (it bundles the server binaries) in `<data dir>/pg`.
   The data dir defaults to `./.mdchunks` under the current folder. The server
   listens on a unix socket only, is reused by every later run, and is left
   running so the printed `psql` command works; `mdchunks stop` stops it.
   The tool's database in it is `mdchunks`.

Passwords never leave this module in clear: everything shown goes through
`redact`.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import shlex
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from mdchunks.errors import DatabaseUnavailable, UsageError
from psycopg import sql

DEFAULT_DATA_DIR = Path(".mdchunks")
EMBEDDED_DATABASE = "mdchunks"
CONNECT_TIMEOUT_SECONDS = 10


@dataclass(frozen=True, slots=True)
class Database:
    """A resolved database: `url` may hold a password, `display` never does."""

    url: str
    embedded: bool
    data_dir: Path
    psql_bin: Path | None = None  # the bundled psql, for an embedded server

    @property
    def display(self) -> str:
        return redact(self.url)

    def psql_command(self) -> str:
        """A shell command that opens psql on this database (password left out)."""
        psql = str(self.psql_bin) if self.psql_bin else "psql"
        return f"{shlex.quote(psql)} {shlex.quote(self.display)}"


def default_data_dir() -> Path:
    return Path.cwd() / DEFAULT_DATA_DIR


def resolve(database_url: str | None = None, data_dir: Path | None = None) -> Database:
    """The database to use, starting the embedded server when no URL is given."""
    data_dir = (data_dir or default_data_dir()).resolve()
    url = database_url or os.environ.get("DATABASE_URL") or None
    if url:
        check_url(url)
        return Database(url=url, embedded=False, data_dir=data_dir)
    return _embedded(data_dir)


def check_url(url: str) -> None:
    if "://" in url and not url.startswith(("postgresql://", "postgres://")):
        raise UsageError(
            f"unsupported database URL {redact(url)}: "
            "use postgresql://user:password@host:port/dbname"
        )
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise UsageError(f"invalid database URL {redact(url)}: {_first_line(exc, url)}") from None


def connect(
    url: str, *, autocommit: bool = True, application_name: str = "mdchunks"
) -> psycopg.Connection:
    """A psycopg connection, or a one-line `DatabaseUnavailable`."""
    try:
        return psycopg.connect(
            url,
            autocommit=autocommit,
            connect_timeout=CONNECT_TIMEOUT_SECONDS,
            application_name=application_name,
        )
    except psycopg.Error as exc:
        raise DatabaseUnavailable(
            f"cannot connect to the database at {redact(url)}: {_first_line(exc, url)}"
        ) from None


def is_connection_loss(exc: BaseException) -> bool:
    """Did this error end the session (server stopped, restarted, unreachable)?

    Client-side errors carry no SQLSTATE ("server closed the connection
    unexpectedly", "connection is bad"); the server's own are class 08
    (connection exception) and 57P0x (shutdown, crash, not accepting)."""
    if isinstance(exc, psycopg.InterfaceError):
        return True
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate or ""
    return not state or state.startswith(("08", "57P"))


def lost(url: str, exc: BaseException) -> DatabaseUnavailable:
    """The one-line error of a run whose database went away in the middle."""
    return DatabaseUnavailable(
        f"lost the connection to the database at {redact(url)} during the run: "
        f"{_first_line(exc, url)}. The run stopped; what it wrote is consistent. "
        "Run it again when the database is back: it picks up where this one stopped"
    )


@contextlib.contextmanager
def losing_it_is_unavailable(url: str) -> Iterator[None]:
    """Turn a connection lost inside the block into a one-line `DatabaseUnavailable`."""
    try:
        yield
    except psycopg.Error as exc:
        if is_connection_loss(exc):
            raise lost(url, exc) from None
        raise


def identity(conn: psycopg.Connection) -> str:
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
    with contextlib.suppress(psycopg.Error):
        # pg_control_system() needs superuser or pg_monitor-ish rights; the
        # host and port stand in for the cluster when it is not allowed.
        found = conn.execute("SELECT system_identifier::text FROM pg_control_system()").fetchone()
        if found:
            system_id = found[0]
    if system_id == "-":
        info = conn.info
        system_id = f"{info.host}:{info.port}"
    return f"{system_id}/{row[1]}#{row[0]}/content_chunks#{row[2]}"


def identity_hash(identity_text: str) -> str:
    return hashlib.sha256(identity_text.encode()).hexdigest()[:16]


_PASSWORD_IN_KV = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


def redact(url: str) -> str:
    """`url` with any password replaced by `***` (URL or key=value form)."""
    if "://" in url:
        try:
            parts = urlsplit(url)
        except ValueError:
            return "<unparseable database URL>"
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            if ":" in userinfo:
                user, password = userinfo.split(":", 1)
                if password:
                    userinfo = f"{user}:***"
            netloc = f"{userinfo}@{host}"
        query = _PASSWORD_IN_KV.sub(r"\1***", parts.query.replace("&", " & ")).replace(" & ", "&")
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    return _PASSWORD_IN_KV.sub(r"\1***", url)


def scrub(message: str, url: str) -> str:
    """`message` with the password of `url` (if any) masked, wherever it appears."""
    password = _password_of(url)
    if password:
        message = message.replace(password, "***")
    return message


def _password_of(url: str) -> str | None:
    try:
        return psycopg.conninfo.conninfo_to_dict(url).get("password") or None  # type: ignore[return-value]
    except psycopg.Error:
        return None


def _first_line(exc: BaseException, url: str) -> str:
    text = str(exc).strip() or type(exc).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # libpq puts the useful cause last ("connection refused", "password
    # authentication failed ..."); keep it short.
    message = lines[-1] if lines else text
    if message.startswith("Is the server running"):
        message = "; ".join(lines[-2:])
    return scrub(message, url)


# -- embedded server ---------------------------------------------------------


def _embedded(data_dir: Path) -> Database:
    pgdata = data_dir / "pg"
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create the data directory {data_dir}: {exc.strerror}") from None
    server = _start_server(pgdata)
    url = server.get_uri(EMBEDDED_DATABASE)
    admin_url = server.get_uri("postgres")
    with connect(admin_url) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [EMBEDDED_DATABASE]
        ).fetchone()
        if not exists:
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                create = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(EMBEDDED_DATABASE))
                conn.execute(create)
    from pgserver._commands import POSTGRES_BIN_PATH  # bundled binaries

    return Database(url=url, embedded=True, data_dir=data_dir, psql_bin=POSTGRES_BIN_PATH / "psql")


def _import_pgserver() -> ModuleType:
    with warnings.catch_warnings():
        # platformdirs warns about XDG_RUNTIME_DIR on import; not the user's business.
        warnings.simplefilter("ignore")
        import pgserver
    # pgserver logs failed commands (several lines) at ERROR; we report them
    # ourselves, in one line, with the path of the server log.
    logging.getLogger("pgserver").addHandler(logging.NullHandler())
    logging.getLogger("pgserver").propagate = False
    return pgserver


def _start_server(pgdata: Path) -> Any:  # pgserver.PostgresServer (pgserver is untyped)
    pgserver = _import_pgserver()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # cleanup_mode=None: keep the server running after this process
            # exits, so later runs (and the printed psql command) find it.
            return pgserver.get_server(pgdata, cleanup_mode=None)
    except Exception as exc:  # pgserver raises plain exceptions from subprocesses
        log = pgdata / "log"
        raise DatabaseUnavailable(
            f"cannot start the embedded PostgreSQL in {pgdata}: "
            f"{str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__}"
            f" (server log: {log})"
        ) from None


def stop_embedded(data_dir: Path | None = None) -> bool:
    """Stop the embedded server of `data_dir` if it runs. True if it was running."""
    data_dir = (data_dir or default_data_dir()).resolve()
    pgdata = data_dir / "pg"
    if not (pgdata / "PG_VERSION").exists():
        return False
    _import_pgserver()
    from pgserver._commands import pg_ctl  # type: ignore[attr-defined]
    from pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    if info is None or not info.is_running():
        return False
    # As root, pgserver runs the server as its own system user "pgserver".
    user = "pgserver" if hasattr(os, "geteuid") and os.geteuid() == 0 else None
    try:
        pg_ctl(["-w", "stop"], pgdata=pgdata, user=user)
    except Exception as exc:
        raise DatabaseUnavailable(
            f"cannot stop the embedded PostgreSQL in {pgdata}: {exc}"
        ) from None
    return True
