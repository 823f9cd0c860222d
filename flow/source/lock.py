"""One run per source at a time: a Postgres advisory lock.

The key is `hashtextextended('mdchunks:source:' || source, 0)` (a bigint
computed by the server, the same for every client). The lock is a session
lock on a connection of its own that lives as long as the run, so a killed
run releases it with its connection.

Policy: a second run on the same source waits up to `wait_seconds` (default
10, `--lock-wait`), saying so once (a warning on the `mdchunks` logger, which
the CLI prints as one line on stderr), then refuses with a message naming the
holder. Runs on different sources never wait for each other.

The lock lives as long as its connection: if the connection drops (the server
stopped or restarted), the lock is gone too, so the run stops at once rather
than write unguarded (flow/source/engine.py watches the connection during the run).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import time
from collections.abc import Iterator

from mdchunks.db import connection, database
from mdchunks.db.connection import Connection
from mdchunks.db.queries import QUERIES
from mdchunks.errors import SourceBusy, UsageError

DEFAULT_WAIT_SECONDS = 10.0

# The connections holding a source's lock now, for `give_back_at_once`.
_HELD: set[Connection] = set()

log = logging.getLogger("mdchunks")


def lock_name(source: str) -> str:
    return f"mdchunks:source:{source}"


def application_name(purpose: str, source: str) -> str:
    """The session name of a run holding a source's lock, as another run's
    message and `pg_stat_activity` show it: what it is and its process id."""
    return f"mdchunks {purpose} pid {os.getpid()} {source}"[:63]


_APPLICATION = re.compile(r"mdchunks (\S+) pid (\d+) ")
# A purpose as the command a user typed (and can look for in `ps`): the
# watch is `ingest --live`; there is no `mdchunks watch`.
COMMANDS = {"watch": "ingest --live"}


def command_of(purpose: str) -> str:
    return f"mdchunks {COMMANDS.get(purpose, purpose)}"


def purpose_of(name: str | None) -> tuple[str, int] | None:
    """(purpose, process id) of a session `application_name` named; None for
    another session's (or one of a release before the process id)."""
    found = _APPLICATION.match(name or "")
    return None if found is None else (found[1], int(found[2]))


@contextlib.contextmanager
def source_lock(
    url: str, source: str, *, wait_seconds: float = DEFAULT_WAIT_SECONDS, purpose: str = "ingest"
) -> Iterator[Connection]:
    """Hold the source's lock; yields the (autocommit) connection holding it."""
    if math.isnan(wait_seconds):  # never past a deadline of nan: a wait without end
        raise UsageError("--lock-wait must be a number of seconds (got nan)")
    conn = database.connect(url, application_name=application_name(purpose, source))
    _HELD.add(conn)
    try:
        key = _key(conn, source)
        deadline = time.monotonic() + max(wait_seconds, 0.0)
        announced = False
        while not _try_lock(conn, key):
            if time.monotonic() >= deadline:
                raise SourceBusy(_busy_message(conn, source, key, wait_seconds))
            if not announced:
                announced = True
                log.warning(
                    "source %r is being ingested by %s; waiting up to %g s for it to end "
                    "(--lock-wait)",
                    source,
                    _holder(conn, key),
                    wait_seconds,
                )
            time.sleep(0.2)
        try:
            yield conn
        finally:
            with contextlib.suppress(*connection.Error):
                conn.execute("SELECT pg_advisory_unlock(%s)", [key])
    finally:
        _HELD.discard(conn)
        conn.close()


def give_back_at_once() -> None:
    """Drop every connection holding a source's lock, from any thread and
    whatever runs on them: the server ends their sessions and the locks go
    with them. For a process that leaves without unwinding (a stopped watch
    whose engine did not wind down, flow/cli/stops.py)."""
    for conn in list(_HELD):
        conn.abandon()


def _key(conn: Connection, source: str) -> int:
    row = conn.execute("SELECT hashtextextended(%s, 0)", [lock_name(source)]).fetchone()
    assert row is not None
    return int(row[0])


def _try_lock(conn: Connection, key: int) -> bool:
    row = conn.execute("SELECT pg_try_advisory_lock(%s)", [key]).fetchone()
    return bool(row and row[0])


def _holder(conn: Connection, key: int) -> str:
    holder = None
    with contextlib.suppress(*connection.Error):
        holder = conn.execute(QUERIES["lock_holder"], {"key": key}).fetchone()
    if holder is not None and holder[0] is not None:
        ours = purpose_of(holder[1])
        if ours is not None:
            return f"another run (`{command_of(ours[0])}`, process {ours[1]})"
        app = f" ({holder[1]})" if holder[1] else ""
        return f"another run (database session pid {holder[0]}{app})"
    return "another run"


def _busy_message(conn: Connection, source: str, key: int, waited: float) -> str:
    who = _holder(conn, key)
    return (
        f"source {source!r} is being ingested by {who}; waited {waited:g} s. "
        "Try again when it ends, or pass --lock-wait SECONDS to wait longer"
    )
