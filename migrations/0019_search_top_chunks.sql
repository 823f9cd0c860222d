-- BM25's top chunks per common term (flow/retrieval/lexical.py, docs/search.md):
-- for each lexeme a source's chunks hold often, the chunks that get the most
-- from it (the largest tf / (tf + K), K at the source's mean length then),
-- best first, and after each segment of them the most any chunk further down
-- (or not listed) gets. A query reads the listed chunks a segment at a time,
-- not every chunk that holds a common word; the floors bound what the others
-- can score, so its top k stays exact. Kept for large sources by the
-- statistics' recount and moved with them by each write (the chunks written
-- that beat the floor of the whole list join `added`, read with the first
-- segment).

CREATE TABLE IF NOT EXISTS mdchunks_search_top (
    source text NOT NULL,
    lexeme text NOT NULL,
    avgdl double precision NOT NULL,
    floor double precision NOT NULL,
    chunks uuid[] NOT NULL,
    floors double precision[] NOT NULL DEFAULT '{}',
    added uuid[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (source, lexeme)
);

COMMENT ON TABLE mdchunks_search_top IS
    'BM25 top chunks per common lexeme of a source (migration 0019, docs/search.md)';
COMMENT ON COLUMN mdchunks_search_top.source IS
    'the source whose chunks these are (its statistics: mdchunks_search_stats)';
COMMENT ON COLUMN mdchunks_search_top.lexeme IS
    'a lexeme of at least lexical.TOP_MIN_DF of the source''s chunks';
COMMENT ON COLUMN mdchunks_search_top.avgdl IS
    'the source''s mean weighted chunk length the saturations were computed at';
COMMENT ON COLUMN mdchunks_search_top.floor IS
    'no chunk of the source outside `chunks` and `added` has a larger tf / (tf + K) at avgdl';
COMMENT ON COLUMN mdchunks_search_top.chunks IS
    'ids of the chunks with the largest tf / (tf + K) for the lexeme, best first';
COMMENT ON COLUMN mdchunks_search_top.floors IS
    'per segment of `chunks`: the largest tf / (tf + K) of any chunk after it but `added`';
COMMENT ON COLUMN mdchunks_search_top.added IS
    'chunks written since the recount that beat `floor`';
