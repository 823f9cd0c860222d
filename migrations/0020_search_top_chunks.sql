-- BM25's top chunks per common term (flow/retrieval/lexical.py, docs/search.md):
-- for each lexeme a source's chunks hold often, the chunks that get the most
-- from it (the largest tf / (tf + K), K at the source's mean length then),
-- and a floor no other chunk of the source exceeds. A query scores the
-- listed chunks, not every chunk that holds a common word; the floors bound
-- what the others can score, so its top k stays exact. Kept for large
-- sources by the statistics' recount and moved with them by each write (the
-- chunks written that beat a floor join its list).

CREATE TABLE IF NOT EXISTS mdchunks_search_top (
    source text NOT NULL,
    lexeme text NOT NULL,
    avgdl double precision NOT NULL,
    floor double precision NOT NULL,
    chunks uuid[] NOT NULL,
    PRIMARY KEY (source, lexeme)
);

COMMENT ON TABLE mdchunks_search_top IS
    'BM25 top chunks per common lexeme of a source (migration 0020, docs/search.md)';
COMMENT ON COLUMN mdchunks_search_top.avgdl IS
    'the source''s mean weighted chunk length the saturations were computed at';
COMMENT ON COLUMN mdchunks_search_top.floor IS
    'no chunk of the source outside `chunks` has a larger tf / (tf + K) at avgdl';
COMMENT ON COLUMN mdchunks_search_top.chunks IS
    'ids of the chunks with the largest tf / (tf + K) for the lexeme';
