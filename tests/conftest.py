"""Shared fixtures: a real PostgreSQL for the whole session, a fresh database per test.

Where the server comes from (docs/database.md), first that works:
1. `TEST_DATABASE_URL` (a role that may CREATE DATABASE);
2. testcontainers' PostgreSQL, when a Docker engine answers a ping within a
   couple of seconds;
3. the embedded server of the `pgserver` package, in a temporary folder.
No test is skipped for want of a database, and nothing here is a mock.

Some tests (tests/reliability, docs/reliability.md) need a server of their own:
one they may stop and restart, change the authentication of, or reach over a
unix socket only. `embedded` is that server: the embedded PostgreSQL that
`mdchunks` itself starts in a data dir (pgserver), in a temporary folder, so
the session's server is never touched.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

os.environ.setdefault("COCOINDEX_DISABLE_USAGE_TRACKING", "1")

import pytest


def _unraisable(unraisable: sys.UnraisableHookArgs) -> None:
    # cocoindex 1.0.26's function objects unregister their logic fingerprint in
    # __del__; at interpreter exit its native module is gone first, and the
    # AttributeError it raises would print after pytest's summary line.
    if isinstance(unraisable.exc_value, AttributeError) and "unregister_logic_fingerprint" in str(
        unraisable.exc_value
    ):
        return
    sys.__unraisablehook__(unraisable)


sys.unraisablehook = _unraisable

DOCKER_PING_SECONDS = 2.0
# PostgreSQL 16 with pgvector (the embeddings tests need it, as the embedded
# server provides it); otherwise the official image.
POSTGRES_IMAGE = "pgvector/pgvector:pg16"


@dataclass(frozen=True)
class PostgresServer:
    admin_url: str  # a database of the server we may connect to and CREATE DATABASE from
    kind: str  # "TEST_DATABASE_URL", "testcontainers" or "pgserver"

    def url_for(self, dbname: str) -> str:
        parts = urlsplit(self.admin_url)
        return urlunsplit((parts.scheme, parts.netloc, f"/{dbname}", parts.query, parts.fragment))


def _docker_answers() -> bool:
    """A quick yes/no: is there a Docker engine to start a container in?"""
    host = os.environ.get("DOCKER_HOST", "")
    if not host and not Path("/var/run/docker.sock").exists():
        return False
    try:
        import docker

        client = docker.from_env(timeout=DOCKER_PING_SECONDS)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:
        return False


@contextlib.contextmanager
def _throwaway_data_dir(prefix: str) -> Iterator[Path]:
    """A new folder for an embedded server (its PGDATA is folder/pg); at the end
    the server, if it runs, is stopped and the folder removed.

    Not under pytest's temporary folder: another pytest run on the machine
    prunes old basetemp folders (it would delete a live server's data under our
    feet), and as root the server runs as the user "pgserver", which must
    traverse the path, while every pytest session sets /tmp/pytest-of-<user>
    back to mode 0700.
    """
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        from mdchunks.db import database

        database.stop_embedded(folder)
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def _databases(server: PostgresServer, prefix: str) -> Iterator[Callable[[], str]]:
    """`create()` makes an empty database on `server` and returns its URL; all
    of them are dropped at the end."""
    import psycopg

    created: list[str] = []

    def create() -> str:
        name = f"{prefix}{uuid.uuid4().hex[:12]}"
        with psycopg.connect(server.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        created.append(name)
        return server.url_for(name)

    try:
        yield create
    finally:
        with psycopg.connect(server.admin_url, autocommit=True) as conn:
            for name in created:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    url = os.environ.get("TEST_DATABASE_URL")
    if url:
        yield PostgresServer(admin_url=url, kind="TEST_DATABASE_URL")
        return
    if _docker_answers():
        try:
            from testcontainers.community.postgres import PostgresContainer
        except ImportError:  # testcontainers before the community split
            from testcontainers.postgres import PostgresContainer

        with PostgresContainer(POSTGRES_IMAGE, driver=None) as container:
            yield PostgresServer(admin_url=container.get_connection_url(), kind="testcontainers")
        return
    with _throwaway_data_dir("mdchunks-test-pg-") as folder:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from mdchunks.db.embedded import start_server

            server = start_server(folder / "pg")
        yield PostgresServer(admin_url=server.get_uri("postgres"), kind="pgserver")


@pytest.fixture
def new_database(postgres_server: PostgresServer) -> Iterator[Callable[[], str]]:
    """Creates empty databases on demand (all dropped after the test)."""
    with _databases(postgres_server, "mdchunks_test_") as create:
        yield create


@pytest.fixture(scope="module")
def module_database(postgres_server: PostgresServer) -> Iterator[Callable[[], str]]:
    """Databases on the session's server that live as long as the module
    (reference tables computed once for several tests)."""
    with _databases(postgres_server, "mdchunks_rel_") as create:
        yield create


@pytest.fixture
def database_url(new_database: Callable[[], str]) -> str:
    """A new, empty database for this test (dropped afterwards)."""
    return new_database()


@dataclass(frozen=True)
class EmbeddedServer:
    data_dir: Path  # `--data-dir` of the CLI: the server lives in data_dir/pg

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "pg"

    def url(self, dbname: str = "mdchunks") -> str:
        """Starts the server if it is not running (as `mdchunks` would)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from mdchunks.db import database

            db = database.resolve(None, self.data_dir)
        return db.url.replace("/mdchunks?", f"/{dbname}?", 1)

    def create_database(self) -> str:
        import psycopg

        name = f"reliability_{uuid.uuid4().hex[:10]}"
        # Over our own database: a new embedded server has no `postgres` one.
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@pytest.fixture(scope="session")
def embedded() -> Iterator[EmbeddedServer]:
    """An embedded server of a data dir of its own, for the session (not the
    session's shared server: tests may stop it or change its pg_hba.conf)."""
    with _throwaway_data_dir("mdchunks-reliability-") as folder:
        server = EmbeddedServer(folder)
        server.url()  # initdb and start, once for the session
        yield server


# -- the quick tier ---------------------------------------------------------------
# `pytest -m quick` runs the pure tests: no PostgreSQL, no cocoindex engine run,
# no wheel build (docs/tests.md). A test is quick unless it asks, directly or
# through another fixture, for one of SLOW_FIXTURES, lives in a SLOW_FOLDERS
# folder, or is marked `slow` (an engine run without a database fixture). With
# `-m quick` the property tests also take the hypothesis profile `quick`: a
# tenth of their examples (`examples()` in tests/hypothesis_budget.py).

SLOW_FIXTURES = frozenset({"postgres_server", "embedded", "installed"})
SLOW_FOLDERS = ("benchmarks", "reliability")
QUICK_PROFILE = "quick"


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("markexpr", "") == "quick":
        from hypothesis import settings

        settings.register_profile(QUICK_PROFILE, max_examples=10)
        settings.load_profile(QUICK_PROFILE)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tests = Path(__file__).resolve().parent
    for item in items:
        folder = item.path.resolve().relative_to(tests).parts[0]
        slow = (
            SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ()))
            or folder in SLOW_FOLDERS
            or item.get_closest_marker("slow") is not None
        )
        if not slow:
            item.add_marker(pytest.mark.quick)
