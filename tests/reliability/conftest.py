"""Fixtures of the reliability tests (DESIGN section 9, issue #5).

Besides the session's PostgreSQL (tests/conftest.py), some tests need a server
of their own: one they may stop and restart, change the authentication of, or
reach over a unix socket only. `embedded` is that server: the embedded
PostgreSQL that `mdchunks` itself starts in a data dir (pgserver), in a
temporary folder, so the session's server is never touched.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest


@dataclass(frozen=True)
class Embedded:
    data_dir: Path  # `--data-dir` of the CLI: the server lives in data_dir/pg

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "pg"

    def url(self, dbname: str = "mdchunks") -> str:
        """Starts the server if it is not running (as `mdchunks` would)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from flow import database

            db = database.resolve(None, self.data_dir)
        return db.url.replace("/mdchunks?", f"/{dbname}?", 1)

    def create_database(self) -> str:
        name = f"reliability_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@pytest.fixture(scope="session")
def embedded() -> Iterator[Embedded]:
    from flow import database

    # Not under pytest's temporary folder: as root, the server runs as the user
    # "pgserver", which must traverse the path, and every pytest session that
    # starts sets /tmp/pytest-of-<user> back to mode 0700.
    server = Embedded(Path(tempfile.mkdtemp(prefix="mdchunks-reliability-")))
    server.url()  # initdb and start, once for the session
    try:
        yield server
    finally:
        database.stop_embedded(server.data_dir)
        shutil.rmtree(server.data_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def module_database(postgres_server) -> Iterator[Callable[[], str]]:  # type: ignore[no-untyped-def]
    """Databases on the session's server that live as long as the module
    (reference tables computed once for several tests)."""
    created: list[str] = []

    def create() -> str:
        name = f"mdchunks_rel_{uuid.uuid4().hex[:12]}"
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
