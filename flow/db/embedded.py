"""The embedded PostgreSQL server (pgserver's): started, stopped, its WAL bounded.

`start_server` starts (making it first, with initdb, where there is none)
the server of a data folder: pgserver wrapped, once, so that initdb makes
small WAL segments and any folder name works, and a start that fails on a
loaded machine or after a killed initdb tried again. `stop_server` stops it.
Its WAL: the settings every embedded server gets (`bound_the_wal`), and what
a run that wrote to it does after (`settle_wal`, `compact_catalogs`);
docs/database.md.

Which database a command uses, and the server's first use (the data dir's
lock, our database made in it), are flow/db/database.py's: nothing here
knows a URL given by the user.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import shutil
import subprocess
import time
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import asyncpg
from mdchunks.db import connection
from mdchunks.db.connection import Connection
from mdchunks.db.queries import QUERIES
from mdchunks.errors import DatabaseUnavailable

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


def compact_catalogs(conn: Connection) -> None:
    """After migrations applied to the embedded server: its database's own
    catalogs rewritten without the rows the migrations' DDL left dead (1 MB
    of 8 in a new server, 0.3 s; docs/database.md). For the embedded server
    only (the caller's check): a server of your own is left alone, VACUUM
    FULL locks each catalog while it runs."""
    for (name,) in conn.execute(QUERIES["own_catalogs"]).fetchall():
        # Only smaller done: a catalog another session holds (a deadlock
        # with it) is left as it is.
        with contextlib.suppress(asyncpg.exceptions.DeadlockDetectedError):
            conn.execute(f"VACUUM FULL pg_catalog.{connection.quote_ident(str(name))}")


def settle_wal(conn: Connection) -> None:
    """After a run that wrote to the embedded server: a checkpoint, so the
    segments the run filled are removed now (wal_recycle = off) rather than
    left in pg_wal until the server next checkpoints on its own (up to
    max_wal_size of them; docs/database.md). For the embedded server only
    (the caller's check): a server of your own is left to its own
    checkpoints. Twice: a segment is removed once a checkpoint starts past
    it, and the first one's record may open the next segment (1 MB more left
    half the time, the rust-book x36)."""
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


def bound_the_wal(conn: Connection) -> None:
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


def start_server(pgdata: Path) -> Any:  # pgserver.PostgresServer (pgserver is untyped)
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


def bundled_psql() -> Path:
    """The psql that pgserver bundles with the server's binaries."""
    from pgserver._commands import POSTGRES_BIN_PATH

    psql: Path = POSTGRES_BIN_PATH / "psql"
    return psql


def _not_started(pgdata: Path, exc: BaseException) -> DatabaseUnavailable:
    log = pgdata / "log"
    return DatabaseUnavailable(
        f"cannot start the embedded PostgreSQL in {pgdata}: "
        f"{str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__}"
        f" (server log: {log})"
    )


def stop_server(pgdata: Path) -> bool:
    """Stop the server of `pgdata` if it runs (`pg_ctl stop`, fast shutdown).
    True if it was running."""
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
