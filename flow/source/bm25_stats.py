"""BM25's statistics through a run: moved by the documents it touches, or recounted.

A run moves the source's statistics (document frequencies and lengths,
flow/retrieval/lexical.py) by each write's share of the rows, before and
after, while they counted the source's rows before the run and its writes
stay a small part of them; else it recounts them once, after the
reconciliation and before the state is trusted again (phase 7 of
flow/source/run.py), so that a run stopped in between leaves the next one
its rows to count. `plan` chooses before the run, `settle` updates after it
and says how, in the words of the run's report (docs/search.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from mdchunks.db.connection import Connection
from mdchunks.retrieval import lexical_stats
from mdchunks.source.ledger import RunLedger

# A run moves BM25's statistics by the rows it writes while they are at most
# this fraction of the source's: taking each write's share before and after
# reads its rows twice, a recount reads every row once (docs/search.md).
MOVE_SHARE = 4


def distrusted(
    stored: int | None,
    *,
    after_unfinished: bool,
    state_reset: bool,
    recipe_changed: bool,
    full_reprocess: bool,
) -> str | None:
    """Why a run recounts BM25's statistics rather than moving them by the
    documents it touches (None: it moves them). Moving keeps them exact only
    if they counted the source's rows before the run: a run that did not
    finish may have written rows it never counted, and an engine state that
    did not make the rows, a new recipe or a full re-process rewrite them
    all (a recount costs less)."""
    if stored is None:
        return "no statistics yet"
    if after_unfinished:
        return "the last run did not finish"
    if recipe_changed:
        return "the recipe changed"
    if state_reset or full_reprocess:
        return "every document re-processed"
    return None


@dataclass(frozen=True, slots=True)
class StatsPlan:
    """The statistics before the run: the source's chunks they counted (None:
    none yet), and why they are recounted after it (None: moved by each write)."""

    stored: int | None
    recount: str | None


def plan(
    conn: Connection,
    source: str,
    ledger: RunLedger,
    *,
    after_unfinished: bool,
    state_reset: bool,
    recipe_changed: bool,
    full_reprocess: bool,
) -> StatsPlan:
    """Before the engine runs: move or recount (`distrusted`). Moving, the
    ledger is given the rows the run may write before it stops moving them."""
    stored = lexical_stats.stored_chunks(conn, source)
    recount = distrusted(
        stored,
        after_unfinished=after_unfinished,
        state_reset=state_reset,
        recipe_changed=recipe_changed,
        full_reprocess=full_reprocess,
    )
    if recount is None and stored is not None:
        ledger.stats_of, ledger.stats_rows_left = source, stored // MOVE_SHARE
    return StatsPlan(stored, recount)


def settle(
    conn: Connection,
    source: str,
    planned: StatsPlan,
    *,
    healed: bool,
    stats_behind: bool,
    written: int,
    deleted: int,
    state_reset: bool,
) -> str:
    """After the reconciliation: the statistics recounted if the run must
    (`planned`, or what the run found) and wrote anything; how they were
    updated, for the run's report ("": not at all)."""
    stored, recount = planned.stored, planned.recount
    if recount is None and healed:
        recount = "rows were missing, every document was re-processed"
    elif recount is None and stats_behind:
        recount = f"more than 1/{MOVE_SHARE} of the rows changed"
    elif recount is None and (stored or 0) < lexical_stats.BOUNDS_MIN_CHUNKS <= (
        lexical_stats.stored_chunks(conn, source) or 0
    ):
        # Moves keep the bounds and top chunks a source has: one that
        # grew past the size that keeps them gets them from a recount.
        recount = f"the source reached {lexical_stats.BOUNDS_MIN_CHUNKS} chunks"
    if recount is not None and (written or deleted or state_reset or stored is None):
        # A run after one that did not finish may find its rows written
        # already (rows that say the same are left alone), not its statistics.
        lexical_stats.refresh_stats(conn, source)
        return f"recounted ({recount})"
    if recount is None and (written or deleted):
        return "moved by the documents the run touched"
    return ""
