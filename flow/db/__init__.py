"""The database: where PostgreSQL comes from (the embedded server or a URL),
the one connection object every statement of ours goes over, the migrations
runner, and the named queries (`queries.sql`).

May use: `mdchunks.errors` and asyncpg. Nothing here knows chunks, sources or
search; the rooms above pass a `Connection` in (docs/layout.md).
"""
