"""A managed source: what the `mdchunks` command runs over a folder.

One run phase by phase (run), what builds on it (backfill, the live watch),
BM25's statistics through a run (bm25_stats) and the watchdog its engine runs
under (watchdog), the cocoindex app it runs (app) and how it is run and
watched (engine), the walk (listing) and the defensive read (files),
the trusted state and the source catalog (state, catalog), the per-source
lock (lock), reconciliation of the table with the walk (reconcile), the run's
ledger, quarantine of documents that crash the parser, off-loop work, and the
reports a run returns.

May use: the plugin face (its rows, chunker and table target), search's
write side (BM25 statistics and vectors), the database room, the heading
index and `mdchunks.errors`; never the CLI or the Python API (docs/layout.md).
"""
