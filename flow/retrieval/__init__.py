"""Search: the rankings (BM25 in PostgreSQL, vectors, their fusion), what a hit
shows of its chunk (hits, snippets), and the write side they need kept: the
BM25 statistics (lexical_stats) and the stored vectors (embedding, embedder).

A search is a pipeline (pipeline, over the steps of search_steps; the picture
is in docs/layout.md) whose sections come from one seam, the section source
(section_source: stored section rows, or rebuilt from a host's chunks); a
read opens its session through session (one line for each mistake of where).

Named `retrieval`, not `search`: `mdchunks.search` is the Python API's
function. May use: the database room, the heading index (breadcrumbs) and
`mdchunks.errors`; never the managed source, the plugin face or the faces
above (docs/layout.md): what it needs of them is handed in (a section's id).
"""
