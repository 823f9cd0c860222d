"""A full disk is named as one (flow/errors.py `disk_full`, issue 26): the
errors a full filesystem raises, as the libraries raise them, become one line
with exit status 3; anything else stays what it was."""

from __future__ import annotations

import errno
from pathlib import Path

import asyncpg
import psycopg
import pytest
from mdchunks.errors import DiskFull, MdchunksError, disk_full
from mdchunks.source import space


def _wrapped(inner: BaseException) -> MdchunksError:
    """As flow/source/engine.py wraps the engine's failure (`from None` keeps the context)."""
    try:
        raise inner
    except BaseException:
        try:
            raise MdchunksError("the ingest engine failed: see above") from None
        except MdchunksError as outer:
            return outer


@pytest.mark.parametrize(
    ("exc", "names"),
    [
        (OSError(errno.ENOSPC, "No space left on device", "/data/state/mdb"), "/data/state/mdb"),
        (RuntimeError("I/O error: No space left on device (os error 28)"), "engine state"),
        (asyncpg.exceptions.DiskFullError("could not extend file"), "database server"),
        (psycopg.errors.DiskFull('could not extend file "base/1/2"'), "database server"),
    ],
)
def test_what_a_full_disk_raises_is_named_with_exit_3(exc: BaseException, names: str) -> None:
    for raised in (exc, _wrapped(exc)):
        full = disk_full(raised)
        assert isinstance(full, DiskFull) and full.exit_code == 3
        assert names in str(full) and "\n" not in str(full)
        assert "run the same command again" in str(full)


@pytest.mark.parametrize(
    "exc",
    [
        OSError(errno.EACCES, "Permission denied", "/data"),
        RuntimeError("the engine failed"),
        asyncpg.exceptions.UniqueViolationError("duplicate key"),
    ],
)
def test_other_errors_are_not_a_full_disk(exc: BaseException) -> None:
    assert disk_full(exc) is None
    assert disk_full(_wrapped(exc)) is None


def test_free_space_below_the_reserve_is_a_full_disk_naming_the_mount(tmp_path: Path) -> None:
    """flow/source/space.py: one filesystem watched once for both, its mount
    point and free space in the line; a state dir not made yet is looked up
    by its nearest folder."""
    state_dir, pgdata = tmp_path / "data" / "state" / "docs-1", tmp_path / "data" / "pg"
    places = space.watched(state_dir, pgdata)
    assert [place.what for place in places] == [
        "the engine state and the embedded PostgreSQL's data"
    ]
    space.check(places, started=True, reserve=0)
    for started, said in ((True, "marked unfinished"), (False, "nothing was changed")):
        with pytest.raises(DiskFull) as raised:
            space.check(places, started=started, reserve=2**62)
        message = str(raised.value)
        assert raised.value.exit_code == 3 and "\n" not in message
        assert said in message and str(space.mount_point(tmp_path)) in message
        assert str(state_dir) in message and "MB free" in message
