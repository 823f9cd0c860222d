"""A search, step by step (flow/retrieval/search_steps.py; the picture is in
docs/layout.md): analyse the query, rank, fetch the hits' rows, name each
hit's matched section, expand, and make the hits. The Python API checks the
arguments and opens the session (`mdchunks.search`); the CLI and the MCP
server call that, and keep only their own output.
"""

from __future__ import annotations

from mdchunks.db.connection import Connection
from mdchunks.retrieval import search_steps as steps
from mdchunks.retrieval.hits import SearchHit
from mdchunks.retrieval.search_steps import SearchRequest
from mdchunks.retrieval.section_source import SectionSource


def search(conn: Connection, request: SearchRequest, sections: SectionSource) -> list[SearchHit]:
    """The hits of `request`, best first, their sections from `sections`."""
    # One snapshot for every statement of the search: a concurrent run (a
    # watch) that deletes a ranked chunk before its row is fetched would
    # otherwise make the hit vanish under it (issue 42: KeyError).
    with conn.transaction(snapshot=True):
        analysed = steps.analyse(conn, request)
        if analysed is None:
            return []
        ranked = steps.rank(conn, request, analysed)
        rows = steps.fetch_hits(conn, request, ranked)
        matched = steps.name_sections(conn, request, analysed, rows, sections)
        expansions = steps.expand(conn, request, rows, matched, sections)
    return steps.hits_of(request, ranked, rows, matched, expansions)
