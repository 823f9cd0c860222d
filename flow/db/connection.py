"""One PostgreSQL session, used from plain synchronous code: asyncpg underneath.

Why asyncpg: cocoindex's engine writes the rows over asyncpg, so a run has
it loaded anyway; a second driver (psycopg, with the libpq, OpenSSL and
Kerberos copies its wheel bundles) cost every ingest 0.12-0.25 s of start-up
and 11 MB of resident memory for the dozen statements a run sends itself
(docs/benchmarks.md). The calls here keep the shape the rest of the code
was written in: `conn.execute(sql, params).fetchone()`, `%(name)s` and `%s`
placeholders (`%%` for a literal `%`), `with conn.transaction():` (nested:
a savepoint), autocommit outside one.

asyncpg is asynchronous; a run's own statements are not (they come before,
between and after the engine's, and one comes from inside the engine's event
loop: the check that the lock is still held). So each `Connection` drives its
asyncpg connection on an event loop of its own, in a thread of its own, and
waits for each statement: callable from any thread, under any running loop.

Errors: what the server reports is raised as asyncpg raised it
(`asyncpg.PostgresError`, with `sqlstate`); a session that ended (socket
closed, server gone, the connection closed) raises `ConnectionLost`.
`Error` catches both.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

import asyncpg

T = TypeVar("T")
Params = Sequence[Any] | Mapping[str, Any] | None


class ConnectionLost(Exception):
    """The session ended under a statement: the server went away, the socket
    closed, or the connection was closed. `cause` is what asyncpg raised."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause) or type(cause).__name__)
        self.cause = cause


Error = (asyncpg.PostgresError, ConnectionLost)

# What ends a session, as asyncpg reports it (server errors of class 08 and
# 57P0x are PostgresErrors; `is_loss` below tells them apart). asyncpg's
# InterfaceError is also a misuse ("another operation is in progress"): a loss
# only when the connection is closed after it.
_LOSSES = (OSError, asyncio.TimeoutError, asyncpg.ConnectionDoesNotExistError)
_MAYBE_LOSSES = (asyncpg.InterfaceError, asyncpg.InternalClientError)
# How long an interrupted statement (Ctrl-C) gets to be cancelled on the server.
CANCEL_WAIT_SECONDS = 5.0


def is_lost_on_connect(exc: BaseException) -> bool:
    """Did opening a connection (asyncpg's own, unwrapped: a pool's) fail
    because the server went away, rather than refuse us?"""
    return isinstance(exc, _LOSSES) or is_loss(exc)


def is_loss(exc: BaseException) -> bool:
    """Did this error end the session (server stopped, restarted, unreachable)?"""
    if isinstance(exc, ConnectionLost):
        return True
    if isinstance(exc, asyncpg.PostgresError):
        state = str(getattr(exc, "sqlstate", "") or "")
        return state.startswith(("08", "57P"))
    return False


@dataclass(frozen=True, slots=True)
class Result:
    """What a statement returned: its rows (tuples) and the rows it touched."""

    rows: list[tuple[Any, ...]]
    rowcount: int

    def fetchone(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.rows)


_PLACEHOLDER = re.compile(r"%\(([A-Za-z_][A-Za-z0-9_]*)\)s|%s|%%")


@lru_cache(maxsize=256)
def _numbered(query: str, named: bool) -> tuple[str, tuple[str, ...]]:
    """`query` with `%(name)s` / `%s` as `$1`, `$2`, ... and `%%` as `%`; the
    parameter names in order (named), or as many empty names (positional)."""
    names: list[str] = []

    def number(found: re.Match[str]) -> str:
        text = found.group(0)
        if text == "%%":
            return "%"
        name = found.group(1)
        if named != (name is not None):
            raise TypeError(f"mixed or mismatched placeholders in: {query[:80]}")
        if name is not None and name in names:
            return f"${names.index(name) + 1}"
        names.append(name or "")
        return f"${len(names)}"

    return _PLACEHOLDER.sub(number, query), tuple(names)


def bind(query: str, params: Params) -> tuple[str, list[Any]]:
    """The asyncpg form of a psycopg-style statement and its parameters."""
    if params is None:
        return query, []
    if isinstance(params, Mapping):
        text, names = _numbered(query, True)
        return text, [params[name] for name in names]
    text, names = _numbered(query, False)
    if len(names) != len(params):
        raise TypeError(f"{len(params)} parameters for {len(names)} placeholders")
    return text, list(params)


def _rowcount(status: str | None) -> int:
    """The count at the end of a command tag ("DELETE 3", "INSERT 0 2")."""
    last = (status or "").rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else -1


class Connection:
    """An autocommit session to one database (see the module's docstring).
    One statement at a time, whichever thread sends it (a lock)."""

    def __init__(
        self, raw: asyncpg.Connection, loop: asyncio.AbstractEventLoop, thread: threading.Thread
    ) -> None:
        self._raw = raw
        self._loop = loop
        self._thread = thread
        self._lock = threading.RLock()
        self._closing = False

    # -- statements --------------------------------------------------------

    def execute(self, query: str, params: Params = None, *, timeout: float | None = None) -> Result:
        """One statement, parameters bound by the server. `timeout`: seconds
        until the statement is cancelled and `ConnectionLost` raised."""
        text, args = bind(query, params)
        return self._run(self._execute(text, args, timeout))

    async def _execute(self, text: str, args: list[Any], timeout: float | None) -> Result:
        statement = await self._raw.prepare(text, timeout=timeout)
        records = await statement.fetch(*args, timeout=timeout)
        return Result([tuple(record) for record in records], _rowcount(statement.get_statusmsg()))

    def executemany(self, query: str, params: Sequence[Params]) -> None:
        """One statement for each set of parameters, pipelined."""
        bound = [bind(query, each) for each in params]
        if bound:
            self._run(self._raw.executemany(bound[0][0], [args for _, args in bound]))

    def run_script(self, script: str) -> None:
        """Several statements in one round trip, no parameters (a migration's file)."""
        self._run(self._raw.execute(script))

    @contextlib.contextmanager
    def transaction(self, *, snapshot: bool = False) -> Iterator[None]:
        """A transaction (inside another one: a savepoint), committed when the
        block ends, rolled back when it raises. `snapshot`: a read-only
        REPEATABLE READ one, whose statements all see the rows as they were
        at its first (a reader's several statements, never a half-written
        change of a concurrent run between two of them)."""
        try:
            transaction = (
                self._raw.transaction(isolation="repeatable_read", readonly=True)
                if snapshot
                else self._raw.transaction()
            )
        except _MAYBE_LOSSES as exc:  # asyncpg checks the connection here, unwrapped
            if self.closed:
                raise ConnectionLost(exc) from exc
            raise
        self._run(transaction.start())
        try:
            yield
        except BaseException:
            # What went wrong is the error raised in the block, not a rollback
            # that fails after it (on a connection the server closed).
            with contextlib.suppress(*Error, *_MAYBE_LOSSES):
                self._run(transaction.rollback())
            raise
        self._run(transaction.commit())

    # -- the session -------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closing or bool(self._raw.is_closed())

    @property
    def address(self) -> tuple[str, str]:
        """Where the client connected: (host, port) as the client named them,
        a unix socket's folder as its host (what libpq reports too)."""
        found = getattr(self._raw, "_addr", None)
        if isinstance(found, str):  # "/folder/.s.PGSQL.5432"
            folder, _, name = found.rpartition("/")
            return folder, name.rpartition(".")[2]
        if isinstance(found, tuple) and len(found) >= 2:
            return str(found[0]), str(found[1])
        return "-", "-"

    def close(self) -> None:
        """End the session and its thread (safe twice, after a loss, from any thread)."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
            with contextlib.suppress(Exception):
                future = asyncio.run_coroutine_threadsafe(self._raw.close(timeout=2), self._loop)
                future.result(timeout=CANCEL_WAIT_SECONDS)
            if not self._raw.is_closed():
                self._loop.call_soon_threadsafe(self._raw.terminate)
            _stop(self._loop, self._thread)

    def abandon(self) -> None:
        """Drop the session at once, from any thread, whatever runs on it: the
        server ends it, and its locks with it. For a process about to leave
        without waiting for its other threads (flow/cli/stops.py)."""

        async def terminate() -> None:
            self._raw.terminate()

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(terminate(), self._loop).result(timeout=1.0)

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        with self._lock:
            if self._closing:
                coro.close()
                raise ConnectionLost(asyncpg.InterfaceError("the connection is closed"))
            future = asyncio.run_coroutine_threadsafe(coro, self._loop)
            try:
                return future.result()
            except BaseException as exc:
                if not future.done():
                    # Interrupted while waiting (Ctrl-C): cancel the statement
                    # too, so the session is usable again (for a rollback).
                    future.cancel()
                    with contextlib.suppress(BaseException):
                        future.result(timeout=CANCEL_WAIT_SECONDS)
                if isinstance(exc, _LOSSES) or (
                    isinstance(exc, _MAYBE_LOSSES) and self._raw.is_closed()
                ):
                    raise ConnectionLost(exc) from exc
                raise


def connect(dsn: str, *, application_name: str, timeout: float) -> Connection:
    """A session to `dsn` (a postgresql:// URL). Raises what asyncpg raised
    when it cannot connect (`OSError`, `asyncpg.PostgresError`, a timeout...)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="mdchunks-db", daemon=True)
    thread.start()
    try:
        raw = asyncio.run_coroutine_threadsafe(
            asyncpg.connect(
                dsn,
                timeout=timeout,
                server_settings={"application_name": application_name},
                # Our statements are prepared once each per run: no cache to keep.
                statement_cache_size=0,
            ),
            loop,
        ).result()
    except BaseException:
        _stop(loop, thread)
        raise
    return Connection(raw, loop, thread)


def _stop(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    loop.call_soon_threadsafe(loop.stop)
    thread.join()
    loop.close()


def quote_ident(*parts: str) -> str:
    """`"schema"."name"`: identifiers quoted as PostgreSQL quotes them."""
    return ".".join('"' + part.replace('"', '""') + '"' for part in parts)


def quote_literal(value: str | int | float) -> str:
    """A constant in SQL text (for DDL, which takes no parameters). A text
    with a backslash is an escape string (`E'...'`), which means the same
    whatever `standard_conforming_strings` says."""
    if isinstance(value, bool) or not isinstance(value, str):
        return str(value)
    quoted = value.replace("'", "''")
    if "\\" in value:
        return "E'" + quoted.replace("\\", "\\\\") + "'"
    return "'" + quoted + "'"
