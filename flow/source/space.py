"""Free space under a run: a run stops before a disk fills (docs/reliability.md).

What a full disk does to the engine, measured (cocoindex 1.0.26): its state
store fails with ENOSPC, then EIO on every later write, and the engine logs
each failure with a backtrace and retries it, for as long as the process
lives; the embedded PostgreSQL fails the statement that extends a table
(SQLSTATE 53100), or, when its WAL cannot grow, stops with a PANIC. None of
that reaches mdchunks as one error it could name. So the run watches the
free space of the filesystems it writes (the engine state's, and the
embedded server's data) twice a second, and stops while RESERVE_BYTES are
still free: the engine never meets the full disk, the server never panics.
A server given by URL is on a disk this process cannot see; its full disk
arrives as SQLSTATE 53100, which `errors.disk_full` names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mdchunks.errors import DiskFull

# Stopping below 64 MiB: at the fastest this machine writes during a run
# (about 8 MB of rows and engine state per MB of markdown, a few MB/s) two
# checks are far less apart than that, and PostgreSQL keeps room for a
# checkpoint's WAL segment (16 MB) and the aborted transaction.
RESERVE_BYTES = 64 * 1024 * 1024
MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Watched:
    what: str  # "the engine state", "the embedded PostgreSQL's data", or both
    path: Path  # where it is written (it may not exist yet)


def watched(state_dir: Path, pgdata: Path | None) -> tuple[Watched, ...]:
    """The filesystems a run writes to, one entry each (a data dir on one
    disk is one filesystem for both)."""
    places = [Watched("the engine state", state_dir)]
    if pgdata is not None:
        places.append(Watched("the embedded PostgreSQL's data", pgdata))
    by_device: dict[int, Watched] = {}
    for place in places:
        device = os.stat(_existing(place.path)).st_dev
        earlier = by_device.get(device)
        by_device[device] = (
            place if earlier is None else Watched(f"{earlier.what} and {place.what}", earlier.path)
        )
    return tuple(by_device.values())


def check(
    places: tuple[Watched, ...], *, started: bool, run: str = "run", reserve: int = RESERVE_BYTES
) -> None:
    """Raise DiskFull when a watched filesystem has less than `reserve` bytes
    free (for an unprivileged user: what the embedded server, which runs as
    its own user, may still write). `started`: the run had begun (its source
    is then marked unfinished) rather than not begun; `run` names it ("run",
    or "watch" for `ingest --live`)."""
    for place in places:
        existing = _existing(place.path)
        stats = os.statvfs(existing)
        free = stats.f_bavail * stats.f_frsize
        if free >= reserve:
            continue
        done = (
            f"the {run} stopped, and the source is marked unfinished"
            if started
            else "nothing was changed"
        )
        raise DiskFull(
            f"the filesystem of {place.what} is nearly full ({free / MB:.1f} MB free on "
            f"{mount_point(existing)}, at {place.path}; a run needs {reserve // MB} MB "
            f"free): {done}; free space there (or give another --data-dir), then run "
            "the same command again"
        )


def mount_point(path: Path) -> Path:
    """The mount point of the filesystem `path` is on."""
    path = path.resolve()
    device = os.stat(path).st_dev
    while path.parent != path and os.stat(path.parent).st_dev == device:
        path = path.parent
    return path


def _existing(path: Path) -> Path:
    """`path`, or its nearest ancestor that exists (a state dir made by the run)."""
    while not path.exists() and path.parent != path:
        path = path.parent
    return path
