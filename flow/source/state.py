"""The trusted engine state of a source (docs/reliability.md).

cocoindex trusts its memos; mdchunks trusts a source's engine state only
while it is the one that made the source's rows. These are the three steps
of that protocol, in the order a run takes them: `trust` (keep the state or
start afresh), `distrust` (an in-progress mark before the engine starts) and
`stamp` (a new token after a successful run).
"""

from __future__ import annotations

import enum
import re
import shutil
import uuid
from pathlib import Path

from mdchunks.db import database
from mdchunks.db.connection import Connection
from mdchunks.db.queries import QUERIES
from mdchunks.source import catalog, lock


def state_dir_for(db: database.Database, conn: Connection, source: str) -> Path:
    """`<data dir>/state/<source>-<hash>`: bound to this database and source."""
    key = database.identity_hash(database.identity(conn) + "\0" + source)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", source)[:40].strip("._") or "source"
    return db.data_dir / "state" / f"{slug}-{key}"


STATE_TOKEN_FILE = "mdchunks-state-token"
RUN_IN_PROGRESS = "running:"  # a token no state dir carries: the run did not finish
# What the state is a state of: the token file's second line. Before "2",
# the chunk rows were cocoindex targets and the engine kept a record of each:
# opened by this version, it would delete the rows its documents no longer
# declare to it. A release before "2" that stamps the state writes its token
# alone, so a state it made is never taken for one of this layout.
STATE_LAYOUT = "2: rows written by mdchunks (flow/source/writes.py)"


class Trust(enum.Enum):
    """What `trust` made of a source's engine state."""

    KEPT = "kept"  # it made the source's rows (or there is none yet): its memos stand
    OLDER_LAYOUT = "older layout"  # it made them, in a layout this release does not open
    NOT_ITS_ROWS = "not its rows"  # another run wrote the rows since, or one did not finish

    @property
    def started_afresh(self) -> bool:
        return self is not Trust.KEPT


def trust(conn: Connection, source: str, state_dir: Path) -> Trust:
    """Keep the engine state only if it is the one that made the source's rows.

    cocoindex trusts its memos: a document whose file matches the memo is not
    processed, whatever its rows say. A memo describes the rows of the run
    that wrote it; if another run wrote the source since (from another data
    dir: another machine, another role's state dir) or the database or the
    state was restored, a file edited back to an earlier version would keep
    the other run's rows forever. So each successful run writes a new random
    token to the source's row and next to its state; when the two differ, the
    state is deleted and this run processes every document (a first run after
    an upgrade has neither; a state of an older layout, `STATE_LAYOUT`, is
    started afresh all the same). A run replaces the token with
    an in-progress mark before its engine starts (`distrust`), so the
    run after a crash finds the mark and processes every document."""
    path = state_dir / STATE_TOKEN_FILE
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        lines = []
    in_state = lines[0].strip() or None if lines else None
    layout = lines[1].strip() if len(lines) > 1 else ""
    if catalog.state_token(conn, source) != in_state:
        shutil.rmtree(state_dir, ignore_errors=True)
        return Trust.NOT_ITS_ROWS
    if layout == STATE_LAYOUT or not (state_dir.is_dir() and any(state_dir.iterdir())):
        return Trust.KEPT
    # An older layout (or a state with no token yet): started afresh, as a
    # first run is (every document processed once; rows that say the same
    # are not rewritten, flow/source/writes.py).
    shutil.rmtree(state_dir, ignore_errors=True)
    return Trust.OLDER_LAYOUT


def distrust(conn: Connection, source: str) -> None:
    """Before the engine starts: until `stamp`, the source's engine state
    is not trusted. The engine commits a document's memo before the run
    writes its rows and its document row (flow/source/reconcile.py); a run killed in between leaves
    this mark, and the next run starts from an empty state, re-processing every
    document, instead of trusting memos whose document rows were never written."""
    catalog.set_state_token(conn, source, f"{RUN_IN_PROGRESS}{uuid.uuid4().hex}")


def stamp(conn: Connection, source: str, state_dir: Path) -> None:
    """After a successful run: a new token in the database and next to the state."""
    token = uuid.uuid4().hex
    state_dir.mkdir(parents=True, exist_ok=True)
    staged = state_dir / f"{STATE_TOKEN_FILE}.new"
    staged.write_text(f"{token}\n{STATE_LAYOUT}\n")
    staged.replace(state_dir / STATE_TOKEN_FILE)
    catalog.set_state_token(conn, source, token)


STOPPED, RUNNING, WATCHING = "stopped", "running", "watching"


def unfinished(conn: Connection, source: str | None = None) -> dict[str, str]:
    """The sources (or `source`) whose last run did not finish: it marked
    the state in progress (`distrust`) and never stamped it, because it
    stopped (a full disk, a lost database, a crash, a kill) or because it
    runs now. Each maps to STOPPED, RUNNING (a run holds the source's lock
    now) or WATCHING (a live watch holds it: its rows follow each change)."""
    rows = conn.execute(
        QUERIES["unfinished_runs"],
        {"source": source, "in_progress": RUN_IN_PROGRESS, "lock_prefix": lock.lock_name("")},
    ).fetchall()
    return {
        str(name): (
            STOPPED
            if holder is None
            else WATCHING
            if (lock.purpose_of(str(holder)) or ("",))[0] == "watch"
            else RUNNING
        )
        for name, holder in rows
    }
