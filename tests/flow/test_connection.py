"""flow/db/connection.py and the URLs it is given: psycopg's behaviour where
the rest of the code relied on it, on a real PostgreSQL."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from mdchunks.db import connection, database, urls
from mdchunks.db.connection import Connection, ConnectionLost, quote_ident, quote_literal
from mdchunks.errors import UsageError


@pytest.fixture
def conn(database_url: str) -> Iterator[Connection]:
    with database.connect(database_url) as opened:
        yield opened


def test_placeholders_rows_and_counts(conn: Connection) -> None:
    row = conn.execute(
        "SELECT %(a)s::int, %(b)s::text, %(a)s::int + 1, 'x%%'", {"a": 2, "b": "y"}
    ).fetchone()
    assert row == (2, "y", 3, "x%")
    assert conn.execute("SELECT %s::text || %s::text", ["a", "b"]).fetchall() == [("ab",)]
    assert conn.execute("SELECT 'a%'").fetchone() == ("a%",)  # no parameters: text as is
    conn.execute("CREATE TABLE t (x int)")
    assert conn.execute("INSERT INTO t SELECT generate_series(1, 5)").rowcount == 5
    assert conn.execute("UPDATE t SET x = x + 1 WHERE x > 2").rowcount == 3
    assert conn.execute("CREATE INDEX ON t (x)").rowcount == -1
    with pytest.raises(TypeError):
        conn.execute("SELECT %s::int, %s::int", [1])


def test_transactions_nest_and_roll_back(conn: Connection) -> None:
    conn.execute("CREATE TABLE t (x int)")
    with conn.transaction():
        conn.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(ValueError), conn.transaction():  # a savepoint
            conn.execute("INSERT INTO t VALUES (2)")
            raise ValueError
    with pytest.raises(connection.Error), conn.transaction():
        conn.execute("INSERT INTO t VALUES (3)")
        conn.execute("SELECT * FROM no_such_table")
    assert conn.execute("SELECT array_agg(x) FROM t").fetchone() == ([1],)


def test_a_server_error_is_asyncpgs_and_no_loss(conn: Connection) -> None:
    with pytest.raises(connection.Error) as raised:
        conn.execute("SELECT * FROM no_such_table")
    assert getattr(raised.value, "sqlstate", None) == "42P01"
    assert not database.is_connection_loss(raised.value)
    assert conn.execute("SELECT 1").fetchone() == (1,)


def test_a_terminated_session_is_a_loss(conn: Connection, database_url: str) -> None:
    pid = conn.execute("SELECT pg_backend_pid()").fetchone()
    with database.connect(database_url) as other:
        other.execute("SELECT pg_terminate_backend(%s::int)", [pid[0] if pid else 0])
    with pytest.raises(connection.Error) as raised:
        conn.execute("SELECT 1")
    assert database.is_connection_loss(raised.value)
    with pytest.raises(ConnectionLost):
        conn.execute("SELECT 1")
    conn.close()
    conn.close()  # twice: nothing


def test_two_threads_take_turns(conn: Connection) -> None:
    """psycopg serialised the statements of threads sharing a connection; so
    does this one (asyncpg alone would refuse the second: "another operation
    is in progress", which is no loss)."""
    answers: list[object] = []

    def ask(value: int) -> None:
        answers.append(conn.execute("SELECT pg_sleep(0.2), %s::int", [value]).fetchone())

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers, key=str) == [(None, 0), (None, 1), (None, 2)]


def test_an_interrupted_statement_leaves_the_session_usable(conn: Connection) -> None:
    """Ctrl-C during a statement: it is cancelled on the server, the rollback
    runs, and the next statement works (as with psycopg)."""
    conn.execute("CREATE TABLE t (x int)")

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt), conn.transaction():
            conn.execute("INSERT INTO t VALUES (1)")
            conn.execute("SELECT pg_sleep(20)")
        assert time.monotonic() - started < 10
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_a_statement_timeout_is_a_loss(conn: Connection) -> None:
    with pytest.raises(ConnectionLost):
        conn.execute("SELECT pg_sleep(5)", timeout=0.2)


def test_quoting_holds_without_standard_conforming_strings(database_url: str) -> None:
    hostile = "x\\' || current_user || '"
    for setting in ("on", "off"):
        with database.connect(database_url) as conn:
            conn.execute(f"SET standard_conforming_strings = {setting}")
            assert conn.execute(f"SELECT {quote_literal(hostile)}").fetchone() == (hostile,)
            plain = quote_literal("it's")
            assert conn.execute(f"SELECT {plain}").fetchone() == ("it's",)
    with database.connect(database_url) as conn:
        table = quote_ident('a"b')
        conn.execute(f"CREATE TABLE {table} (x int)")
        assert conn.execute('SELECT to_regclass(\'"a""b"\') IS NOT NULL').fetchone() == (True,)


def test_the_address_is_where_the_client_connected(embedded) -> None:  # type: ignore[no-untyped-def]
    """What the engine state's identity falls back to when the role may not
    read the cluster's id: the socket folder (or host) and port, read on the
    client side (the server's own setting needs a superuser)."""
    with database.connect(embedded.url()) as conn:
        host, port = conn.address
        assert host == str(embedded.pgdata)
        assert port.isdigit()


# -- URLs ------------------------------------------------------------------------


def test_a_key_value_string_becomes_a_url() -> None:
    url = urls.url_of("host=/tmp/s dbname='my db' user=u password='p w\\'q' port=5433")
    parts = urlsplit(url)
    assert parts.path == "/my%20db"
    assert {k: v[0] for k, v in parse_qs(parts.query).items()} == {
        "host": "/tmp/s",
        "user": "u",
        "password": "p w'q",
        "port": "5433",
    }
    # No dbname: nothing after the slash, so PGDATABASE (or the user name) applies.
    assert urls.url_of("host=/tmp/s user=u").startswith("postgresql://?")


def test_a_plus_in_a_url_stays_a_plus() -> None:
    """libpq reads `+` in a URL's query as a plus; asyncpg's parser would read
    a blank: the URL it gets says %2B."""
    url = urls.url_of("postgresql://u@h/db?password=a+b&sslmode=require")
    assert parse_qs(urlsplit(url).query)["password"] == ["a+b"]


def test_libpq_parameters_asyncpg_cannot_honour_are_refused_or_left_out() -> None:
    url = "postgresql://u:S3CRET@h/db?connect_timeout=7&keepalives=1&sslmode=require"
    assert urls.unsupported_parameters(url) == []
    given = parse_qs(urlsplit(urls.url_of(url)).query)
    assert set(given) == {"sslmode"}
    assert urls.connect_timeout(url) == 7.0
    assert urls.connect_timeout("postgresql://u@h/db") == urls.CONNECT_TIMEOUT_SECONDS
    for parameter in ("channel_binding=require", "require_auth=scram-sha-256", "hostaddr=1.2.3.4"):
        with pytest.raises(UsageError) as refused:
            urls.check_url(f"postgresql://u:S3CRET@h/db?{parameter}")
        message = str(refused.value)
        assert parameter.split("=")[0] in message and "S3CRET" not in message
        assert "\n" not in message


def test_what_libpq_refuses_before_connecting_is_refused_before_connecting() -> None:
    """A port that is no number and an unclosed IPv6 bracket are errors of
    usage (exit 2), as libpq's parser made them; the cause does not repeat
    the port (in `user:secret` with no `@`, the secret reads as the port)."""
    for url in (
        "postgresql://u:pw@host:notaport/db",
        "postgresql://u:S3CRET",
        "postgresql://u@[::1:1/x",
    ):
        with pytest.raises(UsageError) as refused:
            urls.check_url(url)
        message = str(refused.value)
        assert "S3CRET" not in message and "\n" not in message
        assert "not a number" in message or "bracket" in message
    for url in (
        "postgresql://h1:5432,h2:5433/db",
        "postgresql://u:pw@h/db?password=x:y",
        "postgresql://@/mdchunks?host=/tmp/a:b",
        "postgresql://u:p%2Fw@[::1]:5432/db",
    ):
        urls.check_url(url)
