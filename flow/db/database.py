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

Passwords never leave this module in clear: everything shown goes through
`redact`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import re
import shlex
import shutil
import subprocess
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import quote, unquote, urlencode

import asyncpg
from mdchunks.db import connection
from mdchunks.db.connection import Connection
from mdchunks.db.queries import QUERIES
from mdchunks.errors import DatabaseUnavailable, UsageError

DEFAULT_DATA_DIR = Path(".mdchunks")
EMBEDDED_DATABASE = "mdchunks"
CONNECT_TIMEOUT_SECONDS = 10


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


def check_url(url: str) -> None:
    if "://" in url and not url.startswith(("postgresql://", "postgres://")):
        raise UsageError(
            f"unsupported database URL {redact(url)}: "
            "use postgresql://user:password@host:port/dbname"
        )
    try:
        if "://" in url:
            _check_uri(url)
        else:
            parse_key_values(url)
    except ValueError as exc:
        raise UsageError(f"invalid database URL {redact(url)}: {scrub(str(exc), url)}") from None
    unsupported = unsupported_parameters(url)
    if unsupported:
        raise UsageError(
            f"unsupported parameter {scrub(', '.join(unsupported), url)} in the database URL "
            f"{redact(url)}: mdchunks connects with asyncpg (the engine's driver), which "
            "knows host, port, dbname, user, password, passfile, service, the ssl* "
            "parameters, target_session_attrs, application_name and options"
        )


def _check_uri(url: str) -> None:
    """What libpq refuses before connecting: a bad percent escape (or one that
    is not UTF-8), an unclosed IPv6 bracket, a port that is no number.
    Whatever else is wrong, connecting says."""
    for escape in re.finditer(r"%(.{0,2})", url):
        if not re.fullmatch(r"[0-9a-fA-F]{2}", escape.group(1)):
            raise ValueError(f"invalid percent-encoded token at offset {escape.start()}")
    try:
        unquote(url, errors="strict")
    except UnicodeDecodeError:
        raise ValueError("a percent escape is not UTF-8") from None
    # The hosts, as libpq finds them: after the user info (which ends at the
    # first `@` before any `/`), up to the path or the query.
    rest = url.split("://", 1)[1]
    end = next((i for i, char in enumerate(rest) if char in "@/"), len(rest))
    hosts = rest[end + 1 :] if end < len(rest) and rest[end] == "@" else rest
    for host in re.split(r"[/?]", hosts, maxsplit=1)[0].split(","):
        if host.startswith("[") and "]" not in host:
            raise ValueError("an IPv6 address is missing its closing bracket")
        port = _port_of(host)
        if port and not port.isdigit():
            raise ValueError("a port is not a number")  # not shown: it may be a password


_KEY_VALUE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*")


def parse_key_values(dsn: str) -> dict[str, str]:
    """A libpq `key=value ...` connection string as a dict (libpq's rules: a
    value is quoted in `'...'` or runs to the next blank; `\\` escapes).
    Raises ValueError where libpq would refuse it."""
    found: dict[str, str] = {}
    at = 0
    while dsn[at:].strip():
        match = _KEY_VALUE.match(dsn, at)
        if match is None:
            raise ValueError(f'missing "=" after "{dsn[at:].split()[0]}" in connection info string')
        at = match.end()
        value: list[str] = []
        quoted = dsn.startswith("'", at)
        at += quoted
        while at < len(dsn):
            char = dsn[at]
            if char == "\\" and at + 1 < len(dsn):
                value.append(dsn[at + 1])
                at += 2
                continue
            if (quoted and char == "'") or (not quoted and char.isspace()):
                break
            value.append(char)
            at += 1
        if quoted:
            if at >= len(dsn):
                raise ValueError("unterminated quoted string in connection info string")
            at += 1
        found[match.group(1)] = "".join(value)
    return found


# The connection parameters asyncpg reads itself (asyncpg/connect_utils.py),
# and the server's own startup parameters: asyncpg sends any other query
# parameter to the server as a setting, which refuses libpq's own
# ("unrecognized configuration parameter"). libpq's TCP tuning has no
# asyncpg counterpart and is left out; connect_timeout is ours to apply.
_ASYNCPG_PARAMETERS = frozenset(
    {
        "host", "port", "dbname", "database", "user", "password", "passfile", "service",
        "sslmode", "sslcert", "sslkey", "sslrootcert", "sslnegotiation", "sslcrl",
        "sslpassword", "ssl_min_protocol_version", "ssl_max_protocol_version",
        "target_session_attrs", "krbsrvname", "gsslib",
        "application_name", "options", "client_encoding",
    }
)  # fmt: skip
_LEFT_OUT = frozenset(
    {
        "connect_timeout", "fallback_application_name", "keepalives", "keepalives_idle",
        "keepalives_interval", "keepalives_count", "tcp_user_timeout",
    }
)  # fmt: skip


def _parameters(dsn: str) -> tuple[str, dict[str, str]]:
    """The URL without its query (or `postgresql://` for a key=value string),
    and its parameters, decoded as libpq decodes them (a `+` is a plus)."""
    if "://" not in dsn:
        params = parse_key_values(dsn)
        dbname = params.pop("dbname", None)
        # No dbname: nothing after the `/`, so PGDATABASE or the user name apply.
        base = "postgresql://" if dbname is None else f"postgresql:///{quote(dbname, safe='')}"
        return base, params
    base, _, query = dsn.partition("?")
    params = {}
    for piece in filter(None, query.split("&")):
        key, _, value = piece.partition("=")
        params[unquote(key)] = unquote(value)
    return base, params


def unsupported_parameters(dsn: str) -> list[str]:
    """The parameters of `dsn` that mdchunks cannot honour (libpq's own)."""
    _, params = _parameters(dsn)
    return sorted(set(params) - _ASYNCPG_PARAMETERS - _LEFT_OUT)


def url_of(dsn: str) -> str:
    """The URL asyncpg is given for `dsn` (a URL or a key=value string): the
    parameters it reads, re-encoded so that it decodes them as libpq does."""
    base, params = _parameters(dsn)
    kept = {key: value for key, value in params.items() if key not in _LEFT_OUT}
    query = urlencode(kept, quote_via=quote)
    return base + (f"?{query}" if query else "")


def connect_timeout(dsn: str) -> float:
    """`connect_timeout` of the URL (libpq's: seconds, 0 or none: the default)."""
    with contextlib.suppress(ValueError):
        seconds = float(_parameters(dsn)[1].get("connect_timeout", "0"))
        if seconds > 0:
            return max(seconds, 2.0)  # libpq's minimum
    return CONNECT_TIMEOUT_SECONDS


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


# A value quoted, or up to a blank or `&`; a backslash escapes the next
# character in both (libpq's rule: `password=a\ b` is "a b").
_PASSWORD_IN_KV = re.compile(
    r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|(?:\\.|[^\s&\\])+)", re.IGNORECASE
)
_PASSWORD_TO_BLANK = re.compile(r"(password\s*=\s*)([^\s&]+)", re.IGNORECASE)
_PORT = re.compile(r"[0-9]*")


def redact(url: str) -> str:
    """`url` with any password replaced by `***` (URL or key=value form).

    Written for broken URLs as much as for good ones (a URL is shown mostly
    when it is wrong): the user info is everything before the LAST `@` after
    the scheme (a password may hold `/`, `@` or `[` unescaped), `password=`
    is masked in the query, and a `host:secret` with no `@` and a port that
    is not a number is masked too. Whatever is left goes through `scrub`."""
    if "://" not in url:
        return scrub(_mask_kv(url), url)
    scheme, rest = url.split("://", 1)
    rest = _mask_kv(rest)  # `?password=` first: its value may hold an `@`
    at = rest.rfind("@")
    if at >= 0:
        userinfo, hostpart = rest[:at], rest[at + 1 :]
        user, colon, password = userinfo.partition(":")
        if colon and password:  # an empty password (`user:@`) hides nothing
            userinfo = f"{user}:***"
        shown = f"{scheme}://{userinfo}@{hostpart}"
    else:
        slash = rest.find("/")
        netloc, tail = (rest, "") if slash < 0 else (rest[:slash], rest[slash:])
        netloc = ",".join(_masked_host(host) for host in netloc.split(","))
        shown = f"{scheme}://{netloc}{tail}"
    return scrub(shown, url)


def _port_of(host: str) -> str | None:
    """What follows the host's `:` (after a bracketed IPv6 address), if any."""
    start = host.find("]") + 1 if host.startswith("[") else 0
    colon = host.find(":", start)
    return None if colon < 0 else host[colon + 1 :]


def _masked_host(host: str) -> str:
    """`host:port`, with a "port" that is no number masked: with no `@`, a
    `user:password` reads as host and port."""
    port = _port_of(host)
    if port is None or _PORT.fullmatch(port):
        return host
    return host[: len(host) - len(port)] + "***"


def _mask_kv(text: str) -> str:
    return _PASSWORD_IN_KV.sub(r"\1***", text)


def scrub(message: str, url: str) -> str:
    """`message` with the password of `url` (if any) masked, wherever it appears:
    as written, percent-decoded and percent-encoded, and however `url` is broken."""
    secrets = sorted(_secrets_of(url), key=len, reverse=True)
    if not secrets:
        return message

    def quoted(found: re.Match[str]) -> str:
        # libpq quotes the token it could not parse: a piece of the URL cut
        # wherever its parser stopped, so possibly a piece of the password.
        fragment = found.group(1)
        if fragment in url and any(_shares(fragment, secret) for secret in secrets):
            return '"***"'
        return found.group(0)

    message = _QUOTED.sub(quoted, message)
    for secret in secrets:
        message = _occurrences(secret).sub("***", message)
    return message


def _occurrences(secret: str) -> re.Pattern[str]:
    """The secret wherever it stands, but not inside a longer run of letters
    and digits: a password that is a word (`postgres`, `a`) would otherwise cut
    up every word that holds it (`***ql://`, `p***ssword`). Only the secret's
    own letters and digits at its ends are so bounded."""
    before = r"(?<![^\W_])" if secret[0].isalnum() else ""
    after = r"(?![^\W_])" if secret[-1].isalnum() else ""
    return re.compile(before + re.escape(secret) + after)


_QUOTED = re.compile(r'"([^"]*)"')
_SHARED_CHARS = 3


def _shares(fragment: str, secret: str) -> bool:
    """Do the two have a common run of a few characters (or is one inside the other)?"""
    if fragment in secret or secret in fragment:
        return True
    match = SequenceMatcher(None, fragment, secret, autojunk=False).find_longest_match()
    return match.size >= min(_SHARED_CHARS, len(secret))


def _secrets_of(url: str) -> set[str]:
    """Every spelling of what could be the password of `url`, parseable or not."""
    found: set[str] = set()
    with contextlib.suppress(ValueError, TypeError):
        if "://" not in url:
            password = parse_key_values(url).get("password")
            if password:
                found.add(password)
    if "://" in url:
        rest = url.split("://", 1)[1]
        at = rest.rfind("@")
        # Where the user info ends is a guess in a broken URL: each `@` may.
        # And where the password starts: after any `:` of the user info (junk
        # before the scheme puts a `://` in it: `://postgresql://u:pw@...`).
        for end in (i for i, char in enumerate(rest) if char == "@"):
            userinfo = rest[:end]
            found.update(userinfo[i + 1 :] for i, char in enumerate(userinfo) if char == ":")
        if at < 0:
            for host in rest.split("/", 1)[0].split(","):
                port = _port_of(host)
                if port is not None and not _PORT.fullmatch(port):
                    found.add(port)
    for match in _PASSWORD_IN_KV.finditer(url):
        found.add(match.group(2))
        found.add(match.group(2).strip("'"))
    # And each value cut at its first blank, escaped or not: what a message
    # that quotes the password as typed may show of it.
    found.update(match.group(2) for match in _PASSWORD_TO_BLANK.finditer(url))
    spellings = set()
    for secret in found:
        spellings.update({secret, unquote(secret), quote(secret, safe="")})
        # libpq quotes a bad token in its message: a part of the secret can be
        # what it echoes (up to the bad escape), so each part is masked too.
        spellings.update(part for part in re.split(r"%(?![0-9a-fA-F]{2})", secret) if part)
    return {secret for secret in spellings if secret}


def first_line(exc: BaseException, url: str) -> str:
    """The cause of a database error in one line, without the password.
    asyncpg puts it first and appends the server's DETAIL and HINT lines."""
    text = str(exc).strip() or type(exc).__name__
    return scrub(text.splitlines()[0].strip(), url)


# -- embedded server ---------------------------------------------------------


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
        server = _start_server(pgdata)
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
            _bound_the_wal(conn)
    from pgserver._commands import POSTGRES_BIN_PATH  # bundled binaries

    return Database(url=url, embedded=True, data_dir=data_dir, psql_bin=POSTGRES_BIN_PATH / "psql")


# The embedded server's WAL (docs/database.md). PostgreSQL's defaults keep up
# to 1 GB of WAL (max_wal_size) before a checkpoint recycles it: a first
# ingest of 20 MB of markdown left 117 MB in pg_wal, six times the markdown
# (benchmarks/disk.py), and 16 MB segments kept as spares (min_wal_size) left
# 34-50 MB after it even when bounded. A new server is made with 1 MB
# segments and the WAL a server without replicas needs (`wal_level =
# minimal`, which requires no WAL senders): set at initdb, they need no
# restart. Every embedded server then checkpoints after EMBEDDED_MAX_WAL_MB
# of WAL (or two segments, on a server made before with 16 MB ones), keeps
# two segments, removes old ones rather than keeping them for reuse, and
# compresses full-page images.
WAL_SEGMENT_MB = 1
EMBEDDED_MAX_WAL_MB = 8


def embedded_wal(segment_mb: int) -> dict[str, str]:
    """The WAL settings of an embedded server whose segments are `segment_mb`
    MB, as pg_settings shows them (MB for the sizes)."""
    return {
        "max_wal_size": str(max(EMBEDDED_MAX_WAL_MB, 2 * segment_mb)),
        "min_wal_size": str(2 * segment_mb),
        "wal_compression": "pglz",
        "wal_recycle": "off",
    }


EMBEDDED_INITDB = (
    f"--wal-segsize={WAL_SEGMENT_MB}",
    "--set=wal_level=minimal",
    "--set=max_wal_senders=0",
    # The bounds are in force for initdb's own checkpoints too: with the
    # defaults (80 MB kept as spares, recycled) a new server started with six
    # 1 MB segments made ahead of need, which stayed until the WAL reached them.
    *(f"--set={name}={value}" for name, value in embedded_wal(WAL_SEGMENT_MB).items()),
)


def compact_catalogs(conn: Connection, db: Database) -> None:
    """After migrations applied to the embedded server: its database's own
    catalogs rewritten without the rows the migrations' DDL left dead (1 MB
    of 8 in a new server, 0.3 s; docs/database.md). A server of your own is
    left alone: VACUUM FULL locks each catalog while it runs."""
    if db.embedded:
        for (name,) in conn.execute(QUERIES["own_catalogs"]).fetchall():
            # Only smaller done: a catalog another session holds (a deadlock
            # with it) is left as it is.
            with contextlib.suppress(asyncpg.exceptions.DeadlockDetectedError):
                conn.execute(f"VACUUM FULL pg_catalog.{connection.quote_ident(str(name))}")


def settle_wal(conn: Connection, db: Database) -> None:
    """After a run that wrote to the embedded server: a checkpoint, so the
    segments the run filled are removed now (wal_recycle = off) rather than
    left in pg_wal until the server next checkpoints on its own (up to
    max_wal_size of them; docs/database.md). A server of your own is left
    to its own checkpoints. Twice: a segment is removed once a checkpoint
    starts past it, and the first one's record may open the next segment
    (1 MB more left half the time, the rust-book x36)."""
    if db.embedded:
        conn.execute("CHECKPOINT")
        conn.execute("CHECKPOINT")


# ALTER SYSTEM takes no parameters: a quoted name and size ('8MB').
_SET_WAL_SIZE = "ALTER SYSTEM SET {name} = {size}"


def wal_settled(current: dict[str, str], wanted: dict[str, str]) -> bool:
    """Whether the settings in force are the wanted ones (`wal_compression =
    on` shows as its method, pglz)."""
    return all(
        current.get(name) == value or (name == "wal_compression" and current.get(name) == "on")
        for name, value in wanted.items()
    )


def _bound_the_wal(conn: Connection) -> None:
    """The embedded server's WAL settings (embedded_wal), set once: ALTER
    SYSTEM writes them to its postgresql.auto.conf, a reload applies them."""
    current = dict(conn.execute(QUERIES["embedded_wal_settings"]).fetchall())
    wanted = embedded_wal(int(current["wal_segment_size"]) // (1024 * 1024))
    if wal_settled(current, wanted):
        return
    for name in ("max_wal_size", "min_wal_size"):
        conn.execute(
            _SET_WAL_SIZE.format(
                name=connection.quote_ident(name),
                size=connection.quote_literal(wanted[name] + "MB"),
            )
        )
    conn.execute(QUERIES["embedded_wal_compression"])
    conn.execute(QUERIES["embedded_wal_recycle"])
    conn.execute(QUERIES["reload_settings"])


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


def _import_pgserver() -> ModuleType:
    with warnings.catch_warnings():
        # platformdirs warns about XDG_RUNTIME_DIR on import; not the user's business.
        warnings.simplefilter("ignore")
        import pgserver
    # pgserver logs failed commands (several lines) at ERROR; we report them
    # ourselves, in one line, with the path of the server log.
    logging.getLogger("pgserver").addHandler(logging.NullHandler())
    logging.getLogger("pgserver").propagate = False
    _initdb_with_small_wal(pgserver.postgres_server)
    _any_folder_name(pgserver.postgres_server)
    return pgserver


def _initdb_with_small_wal(server_module: ModuleType) -> None:
    """pgserver runs initdb with its own options only (as its system user,
    when root): its module's `initdb` is wrapped, once, to add
    EMBEDDED_INITDB. Servers made before keep theirs (a WAL segment's size
    is fixed at initdb)."""
    plain = getattr(server_module, "initdb")  # noqa: B009 (a ModuleType to mypy)
    if getattr(plain, "mdchunks_wal", False):
        return

    def initdb(args: list[str], *rest: Any, **options: Any) -> Any:
        return plain([*args, *EMBEDDED_INITDB], *rest, **options)

    initdb.mdchunks_wal = True  # type: ignore[attr-defined]
    setattr(server_module, "initdb", initdb)  # noqa: B010


# A folder name pgserver's commands pass on as it is: pg_ctl starts the server
# through a shell, its -D and -l paths in double quotes (`$`, `` ` ``, `"`, `\`
# are the shell's there), and postgres splits its `-k` socket folder on spaces
# (`cd "My Docs" && mdchunks ingest notes` could not start: issue 42); the
# socket folder is also a URL's `host=` parameter (`&`, `%`, `#`...).
_PLAIN_PATH = re.compile(r"[A-Za-z0-9/._+,=@-]*")


def plain_path(path: Path | str) -> bool:
    return _PLAIN_PATH.fullmatch(str(path)) is not None


def _any_folder_name(server_module: ModuleType) -> None:
    """pgserver's `pg_ctl` and socket folder, wrapped once, for a data folder
    whose name is not `plain_path`: pg_ctl runs in the folder itself, given
    `-D .` and `-l log` (no path through the shell; postgres makes the data
    folder absolute from its working folder), and the socket goes where
    pgserver puts it when the data folder's path is too long for one (the
    runtime folder, under a hash of the path). Plain names are left as
    pgserver runs them."""
    plain_pg_ctl = getattr(server_module, "pg_ctl")  # noqa: B009 (a ModuleType to mypy)
    if getattr(plain_pg_ctl, "mdchunks_paths", False):
        return
    plain_socket_dir = getattr(server_module, "find_suitable_socket_dir")  # noqa: B009

    def pg_ctl(args: list[str], *rest: Any, pgdata: Path | None = None, **options: Any) -> Any:
        if pgdata is None or plain_path(pgdata):
            return plain_pg_ctl(args, *rest, pgdata=pgdata, **options)
        log = str(Path(pgdata) / "log")
        here = ["log" if arg == log else arg for arg in args]
        return plain_pg_ctl(here, *rest, pgdata=Path("."), cwd=pgdata, **options)

    def find_suitable_socket_dir(pgdata: Path, runtime_path: Path) -> Path:
        if plain_path(pgdata):
            return Path(plain_socket_dir(pgdata, runtime_path))
        base = runtime_path if plain_path(runtime_path) else Path("/tmp")
        digest = hashlib.sha256(f"{pgdata}-{pgdata.stat().st_ino}".encode()).hexdigest()[:10]
        folder = base / f"mdchunks-{digest}"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    pg_ctl.mdchunks_paths = True  # type: ignore[attr-defined]
    setattr(server_module, "pg_ctl", pg_ctl)  # noqa: B010
    setattr(server_module, "find_suitable_socket_dir", find_suitable_socket_dir)  # noqa: B010


START_ATTEMPTS = 3
START_RETRY_SECONDS = 2.0


def _start_server(pgdata: Path) -> Any:  # pgserver.PostgresServer (pgserver is untyped)
    pgserver = _import_pgserver()
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # cleanup_mode=None: keep the server running after this process
                # exits, so later runs (and the printed psql command) find it.
                return pgserver.get_server(pgdata, cleanup_mode=None)
        except Exception as exc:  # pgserver raises plain exceptions from subprocesses
            if attempt == START_ATTEMPTS:
                raise _not_started(pgdata, exc) from None
            # pgserver gives `pg_ctl start` 10 s; a first start on a busy machine
            # can take longer, and the server comes up anyway. pgserver keeps the
            # failed handle (it would be handed back as is): drop it, try again.
            pgserver.PostgresServer._instances.pop(pgdata.resolve(), None)
            time.sleep(START_RETRY_SECONDS)
            # A killed initdb's single-user backend may still be running (and
            # writing): it goes first, then what it and initdb left.
            _lock_file_settled(pgdata)
            if _initdb_failed(exc):
                _clear_half_made(pgdata)
    raise AssertionError("unreachable")  # pragma: no cover


def _initdb_failed(exc: BaseException) -> bool:
    """Whether pgserver's initdb is what failed (killed, or its single-user
    backend was)."""
    command = getattr(exc, "cmd", None)
    return (
        isinstance(exc, subprocess.CalledProcessError)
        and isinstance(command, list | tuple)
        and bool(command)
        and Path(str(command[0])).name == "initdb"
    )


# What initdb writes in a data folder (and a server or a single-user backend
# beside it): the names `_clear_half_made` may remove.
_INITDB_NAMES = re.compile(
    r"PG_VERSION|base|global|pg_[\w.]+|postgresql(\.auto)?\.conf|postmaster\.\w+"
)


def _clear_half_made(pgdata: Path) -> None:
    """The files an initdb that did not finish left in pgdata, removed (the
    folder itself stays: it may be a mount point), so that initdb runs again:
    it refuses a folder that is not empty, and pgserver skips it where
    PG_VERSION was written (then starts a half-made cluster: `"base/1" is not
    a valid data directory`, seen under load). pgserver runs initdb only
    where there is no PG_VERSION, and initdb only in an empty folder: what
    is there is initdb's, and no data is in it yet. A folder holding any
    other name is left alone."""
    entries = list(pgdata.iterdir())
    if not entries or not all(_INITDB_NAMES.fullmatch(entry.name) for entry in entries):
        return
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                entry.unlink()


# How long a retry waits for a postmaster.pid still being written to be done.
LOCK_FILE_SETTLE_SECONDS = 60.0
# postmaster.pid of a running server: pid, folder, start time, port, socket
# folder, listen address, shared memory, status.
LOCK_FILE_LINES = 8


def _lock_file_settled(pgdata: Path) -> None:
    """Wait (up to LOCK_FILE_SETTLE_SECONDS) while pgdata's postmaster.pid is not
    yet a running server's: pgserver reads it before starting a server and
    fails on any other. A server starting writes its lines one by one (on a
    loaded machine, seconds apart); a single-user backend (initdb's, as a
    negative pid) writes no status line. A file whose process is gone is
    stale: PostgreSQL itself would replace it; it is removed."""
    lock_file = pgdata / "postmaster.pid"
    deadline = time.monotonic() + LOCK_FILE_SETTLE_SECONDS
    while time.monotonic() < deadline:
        try:
            lines = lock_file.read_text().splitlines()
            pid = abs(int(lines[0]))
        except (OSError, ValueError, IndexError):
            return  # no file (or not a lock file): pgserver starts the server
        if len(lines) >= LOCK_FILE_LINES:
            return
        if not _process_alive(pid):
            with contextlib.suppress(OSError):
                lock_file.unlink()
            return
        time.sleep(0.5)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's (the server's own user, as root)
        return True
    return True


def _not_started(pgdata: Path, exc: BaseException) -> DatabaseUnavailable:
    log = pgdata / "log"
    return DatabaseUnavailable(
        f"cannot start the embedded PostgreSQL in {pgdata}: "
        f"{str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__}"
        f" (server log: {log})"
    )


def stop_embedded(data_dir: Path | None = None) -> bool:
    """Stop the embedded server of `data_dir` if it runs. True if it was running."""
    data_dir = (data_dir or default_data_dir()).resolve()
    pgdata = data_dir / "pg"
    if not has_embedded(data_dir):
        return False
    pg_ctl = _import_pgserver().postgres_server.pg_ctl  # wrapped: any folder name
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
