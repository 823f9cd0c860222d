"""Search: the rankings (BM25 in PostgreSQL, vectors, their fusion), what a hit
shows of its chunk (hits, snippets), and the write side they need kept: the
BM25 statistics (lexical_stats) and the stored vectors (embedding, embedder).

Named `retrieval`, not `search`: `mdchunks.search` is the Python API's
function. May use: the database room, the heading index (breadcrumbs) and
`mdchunks.errors`; never the managed source, the plugin face or the faces
above (docs/layout.md).
"""
