-- BM25 over the stored search_vector (flow/retrieval/lexical.py; docs: the README's
-- "Search" section). Plain SQL, no extension, PostgreSQL 14+.
--
-- 1. Document lengths. BM25 normalises a chunk's term frequencies by its
--    length, |d| = the number of lexeme occurrences (stop words do not count:
--    to_tsvector drops them). Counting them from the vector at query time means
--    unnesting every candidate's whole vector (10x the cost of scoring it), so
--    the counts are stored, one per weight class: the heading path (weight A in
--    search_vector) and the text (weight B). A generated column may not read
--    another generated column, so each count re-runs to_tsvector on its own
--    input: the same immutable function as search_vector, hence the same
--    lexemes and positions.
-- 2. Collection statistics per source: chunk count, total lengths, and each
--    lexeme's document frequency (chunks whose vector holds it), refreshed by
--    every ingest run that changed the source's rows (after the
--    reconciliation, under the source's lock). Search falls back to counting
--    them live when a source has none (rows written by a host's own app).

CREATE FUNCTION mdchunks_lexeme_occurrences(vector tsvector) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT coalesce(sum(coalesce(cardinality(u.positions), 1)), 0)::integer
          FROM unnest(vector) AS u $$;

ALTER TABLE content_chunks
    ADD COLUMN search_heading_length integer GENERATED ALWAYS AS (
        mdchunks_lexeme_occurrences(to_tsvector('english', mdchunks_heading_path_text(heading_path)))
    ) STORED,
    ADD COLUMN search_text_length integer GENERATED ALWAYS AS (
        mdchunks_lexeme_occurrences(to_tsvector('english', text))
    ) STORED;

CREATE TABLE mdchunks_search_stats (
    source          text        PRIMARY KEY,
    chunks          bigint      NOT NULL CHECK (chunks >= 0),
    heading_length  bigint      NOT NULL CHECK (heading_length >= 0),
    text_length     bigint      NOT NULL CHECK (text_length >= 0),
    refreshed_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE mdchunks_search_terms (
    source  text    NOT NULL,
    lexeme  text    NOT NULL,
    df      integer NOT NULL CHECK (df > 0),
    PRIMARY KEY (source, lexeme)
);

COMMENT ON FUNCTION mdchunks_lexeme_occurrences(tsvector) IS
    'Number of lexeme occurrences (positions) in a tsvector: a document length for BM25.';
COMMENT ON COLUMN content_chunks.search_heading_length IS
    'BM25 length of the heading path: lexeme occurrences of to_tsvector(''english'', heading path), the A part of search_vector. Generated.';
COMMENT ON COLUMN content_chunks.search_text_length IS
    'BM25 length of the text: lexeme occurrences of to_tsvector(''english'', text), the B part of search_vector (stop words do not count). Generated.';
COMMENT ON TABLE mdchunks_search_stats IS
    'mdchunks: BM25 collection statistics per source, recomputed from the rows by every ingest run that changed them (`mdchunks search --method bm25`).';
COMMENT ON COLUMN mdchunks_search_stats.source IS
    'The source these statistics describe.';
COMMENT ON COLUMN mdchunks_search_stats.chunks IS
    'N: the number of the source''s chunk rows.';
COMMENT ON COLUMN mdchunks_search_stats.heading_length IS
    'Sum of search_heading_length over the source''s chunks.';
COMMENT ON COLUMN mdchunks_search_stats.text_length IS
    'Sum of search_text_length over the source''s chunks (with heading_length: the average length avgdl).';
COMMENT ON COLUMN mdchunks_search_stats.refreshed_at IS
    'When the statistics were last recomputed.';
COMMENT ON TABLE mdchunks_search_terms IS
    'mdchunks: BM25 document frequencies per source and lexeme, recomputed with mdchunks_search_stats.';
COMMENT ON COLUMN mdchunks_search_terms.source IS
    'The source of the chunks counted.';
COMMENT ON COLUMN mdchunks_search_terms.lexeme IS
    'A lexeme of the source''s search_vector columns.';
COMMENT ON COLUMN mdchunks_search_terms.df IS
    'Document frequency: how many of the source''s chunks hold the lexeme.';
