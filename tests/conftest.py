"""Shared fixtures: a real PostgreSQL for the whole session, a fresh database per test.

Where the server comes from (DESIGN section 6), first that works:
1. `TEST_DATABASE_URL` (a role that may CREATE DATABASE);
2. testcontainers' PostgreSQL, when a Docker engine answers a ping within a
   couple of seconds;
3. the embedded server of the `pgserver` package, in a temporary folder.
No test is skipped for want of a database, and nothing here is a mock.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

os.environ.setdefault("COCOINDEX_DISABLE_USAGE_TRACKING", "1")

import pytest

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
def _embedded_server(folder: Path) -> Iterator[PostgresServer]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from flow import database

        server = database._start_server(folder / "pg")
    try:
        yield PostgresServer(admin_url=server.get_uri("postgres"), kind="pgserver")
    finally:
        database.stop_embedded(folder)
        shutil.rmtree(folder, ignore_errors=True)


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
    # Not under pytest's basetemp: another pytest run on the machine prunes old
    # basetemp folders, and would delete a live server's data under our feet.
    with _embedded_server(Path(tempfile.mkdtemp(prefix="mdchunks-test-pg-"))) as server:
        yield server


@pytest.fixture
def new_database(postgres_server: PostgresServer) -> Iterator[Callable[[], str]]:
    """Creates empty databases on demand (all dropped after the test)."""
    import psycopg

    created: list[str] = []

    def create() -> str:
        name = f"mdchunks_test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(postgres_server.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        created.append(name)
        return postgres_server.url_for(name)

    try:
        yield create
    finally:
        with psycopg.connect(postgres_server.admin_url, autocommit=True) as conn:
            for name in created:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def database_url(new_database: Callable[[], str]) -> str:
    """A new, empty database for this test (dropped afterwards)."""
    return new_database()
