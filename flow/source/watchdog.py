"""A run's watchdog: what stops the engine when the run can no longer go on.

The engine calls it (twice a second, and as it ends): a disk the run writes
nearly full (flow/source/space.py), or the connection holding the source's
lock lost (and the lock with it), raise, and the engine stops the run
instead of retrying its writes. `ingest` and the live `watch` both run under
it (flow/source/run.py, flow/source/watch.py).
"""

from __future__ import annotations

from mdchunks.db import connection, database
from mdchunks.db.connection import Connection
from mdchunks.source import engine, space

# A server that stops answering (a black-holed host) is lost too: not waited
# for forever.
ALIVE_TIMEOUT_SECONDS = 30.0


def alive_check(
    db: database.Database,
    conn: Connection,
    disks: tuple[space.Watched, ...],
    *,
    run: str = "run",
    shared: bool = False,
) -> engine.AliveFn:
    """Raises when a disk the run writes is nearly full, or the connection
    holding the source's lock is gone (and the lock with it): the engine then
    stops the run instead of retrying its writes. Space first: an embedded
    server whose WAL could not grow is gone because its disk is full.
    `shared`: the connection also writes the run's rows (a watch's, at each
    change), so the check's statement can land inside one of their
    transactions: only a lost connection counts then."""

    def alive() -> None:
        space.check(disks, started=True, run=run)
        try:
            conn.execute("SELECT 1", timeout=ALIVE_TIMEOUT_SECONDS)
        except connection.Error as exc:
            if database.is_connection_loss(exc) or conn.closed:
                raise database.lost(db.url, exc) from None
            if not shared:
                raise

    return alive
