"""Errors a user can act on: the CLI prints their message as one line."""

from __future__ import annotations

import errno


class MdchunksError(Exception):
    """A problem with the input, the database or the environment, explained.

    `exit_code` follows the CLI's table (1 is kept for "the run finished but
    some documents failed"): 2 bad usage, option or path, 3 database
    unreachable or not usable, 4 another run holds the source, 5 anything else.
    """

    exit_code: int = 5


class UsageError(MdchunksError):
    exit_code = 2


class DatabaseUnavailable(MdchunksError):
    exit_code = 3


class SourceBusy(MdchunksError):
    exit_code = 4


class DiskFull(MdchunksError):
    """A filesystem filled up under the run: the environment, not a bug."""

    exit_code = 3


# PostgreSQL's disk_full (class 53, insufficient resources); the words an
# OSError of errno ENOSPC, or the engine's Rust I/O error, carries.
_DISK_FULL_SQLSTATE = "53100"
_NO_SPACE_WORDS = ("no space left on device", "os error 28")


def disk_full(exc: BaseException) -> DiskFull | None:
    """The one-line error of a run that stopped because a disk filled up, if
    that is why `exc` (or anything in its chain of causes) was raised: which
    filesystem (the database's or the engine state's), and what to do."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if getattr(current, "sqlstate", None) == _DISK_FULL_SQLSTATE:
            return DiskFull(
                "the database server's disk is full (PostgreSQL could not write: "
                f"{_first_line(current)}): free space on the filesystem of its data "
                "(for the embedded PostgreSQL, the data dir's), then run the same command "
                "again; it picks up where this one stopped"
            )
        is_enospc = isinstance(current, OSError) and current.errno == errno.ENOSPC
        if is_enospc or any(words in str(current).lower() for words in _NO_SPACE_WORDS):
            filename = getattr(current, "filename", None)
            where = f" at {filename}" if filename else ""
            return DiskFull(
                f"the filesystem of the engine state is full{where} (No space left on "
                "device): free space on the data dir's filesystem (or give another "
                "--data-dir), then run the same command again; it picks up where this "
                "one stopped"
            )
        current = current.__cause__ or current.__context__
    return None


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
