-- BM25 over the stored search_vector (flow/lexical.py; docs: the README's
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
