"""The database: where PostgreSQL comes from (a URL or the embedded server)
and connecting to it (database), the embedded server's process and WAL
(embedded), a URL checked, converted and masked (urls), the one connection
object every statement of ours goes over (connection), the migrations
runner, and the named queries (`queries.sql`).

May use: `mdchunks.errors` and asyncpg. Nothing here knows chunks, sources or
search; the rooms above pass a `Connection` in (docs/layout.md).
"""
