-- embed_text is composed in the database, from the row's breadcrumb, text and
-- a new column, table_header (docs/rows-and-table.md).
--
-- Until now every row carried its embed_text from Python: the breadcrumb, a
-- blank line, then the text, so each row held its text twice through
-- cocoindex's engine (its fingerprints and tracked target states), asyncpg
-- and the wire. Measured in whole first ingests (docs/benchmarks.md), rows
-- without it took 16% off our process's CPU and 18% off its peak memory on
-- 12 MB of long documents (4% of the CPU on the rust-book). Now writers send
-- table_header instead (a table's header and delimiter rows, before the text
-- of a piece that continues a table split between rows; NULL for every other
-- chunk) and a BEFORE trigger composes embed_text exactly as
-- `mdchunks.heading_index.embed_text` does:
--   body       = table_header || E'\n' || text   when table_header is not empty, else text
--   embed_text = breadcrumb || E'\n\n' || body   when breadcrumb is not empty, else body
-- Stored values do not change: rows written before keep their embed_text
-- (the trigger composes the same string whenever they are written again).
--
-- The trigger function is a new one, mdchunks_chunk_columns: the search
-- columns as migration 0009 set them, and embed_text. The old function,
-- mdchunks_search_columns, stays: a host's chunk table made by an older
-- `chunk_table_sql` in this schema may still call it.

-- A host may have run `chunk_table_upgrade_sql` on a table of its own in
-- this schema before this migration ran (or on content_chunks itself): the
-- column, the function (the same body) and the trigger may be here already.
ALTER TABLE content_chunks ADD COLUMN IF NOT EXISTS table_header text;

CREATE OR REPLACE FUNCTION mdchunks_chunk_columns() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    heading tsvector;
    body tsvector;
BEGIN
    NEW.embed_text := CASE WHEN coalesce(NEW.table_header, '') = '' THEN NEW.text
                           ELSE NEW.table_header OPERATOR(pg_catalog.||) E'\n' OPERATOR(pg_catalog.||) NEW.text END;
    IF coalesce(NEW.breadcrumb, '') <> '' THEN
        NEW.embed_text := NEW.breadcrumb OPERATOR(pg_catalog.||) E'\n\n' OPERATOR(pg_catalog.||) NEW.embed_text;
    END IF;
    IF TG_OP = 'UPDATE' AND NEW.text IS NOT DISTINCT FROM OLD.text
       AND NEW.heading_path IS NOT DISTINCT FROM OLD.heading_path THEN
        NEW.search_vector := OLD.search_vector;
        NEW.search_heading_length := OLD.search_heading_length;
        NEW.search_text_length := OLD.search_text_length;
        RETURN NEW;
    END IF;
    heading := pg_catalog.to_tsvector('english', pg_catalog.array_to_string(NEW.heading_path, ' '));
    body := pg_catalog.to_tsvector('english', NEW.text);
    NEW.search_vector := pg_catalog.setweight(heading, 'A') OPERATOR(pg_catalog.||) pg_catalog.setweight(body, 'B');
    -- BM25's lengths: lexeme occurrences (positions) of each part.
    NEW.search_heading_length := (
        SELECT coalesce(pg_catalog.sum(coalesce(pg_catalog.cardinality(u.positions), 1)), 0)
        FROM pg_catalog.unnest(heading) AS u);
    NEW.search_text_length := (
        SELECT coalesce(pg_catalog.sum(coalesce(pg_catalog.cardinality(u.positions), 1)), 0)
        FROM pg_catalog.unnest(body) AS u);
    RETURN NEW;
END
$$;

DROP TRIGGER IF EXISTS content_chunks_search_columns ON content_chunks;
DROP TRIGGER IF EXISTS content_chunks_chunk_columns ON content_chunks;

CREATE TRIGGER content_chunks_chunk_columns
    BEFORE INSERT OR UPDATE ON content_chunks
    FOR EACH ROW EXECUTE FUNCTION mdchunks_chunk_columns();

COMMENT ON FUNCTION mdchunks_chunk_columns() IS
    'mdchunks: sets embed_text from breadcrumb, table_header and text, and search_vector, search_heading_length and search_text_length from one to_tsvector parse of the heading path and one of the text (BEFORE INSERT OR UPDATE trigger).';
COMMENT ON FUNCTION mdchunks_search_columns() IS
    'mdchunks: superseded by mdchunks_chunk_columns (migration 0010); kept for host chunk tables made by an older chunk_table_sql.';
COMMENT ON COLUMN content_chunks.table_header IS
    'For a piece of a table split between rows that is not the first: the table''s header and delimiter rows, which embed_text puts before the text (structure chunker); NULL otherwise. Written by the flow.';
COMMENT ON COLUMN content_chunks.embed_text IS
    'What gets embedded: the breadcrumb, a blank line, then the text (a continued table''s header rows before it). Set by the mdchunks_chunk_columns trigger from breadcrumb, table_header and text; writers do not send it. Empty only in rows written before migration 0006.';
COMMENT ON COLUMN content_chunks.search_vector IS
    'Full-text search vector: to_tsvector(''english'', heading path) weighted A, then to_tsvector(''english'', text) weighted B. Set by the mdchunks_chunk_columns trigger; GIN-indexed.';
COMMENT ON COLUMN content_chunks.search_heading_length IS
    'BM25 length of the heading path: lexeme occurrences of its to_tsvector, the A part of search_vector. Set by the mdchunks_chunk_columns trigger.';
COMMENT ON COLUMN content_chunks.search_text_length IS
    'BM25 length of the text: lexeme occurrences of its to_tsvector, the B part of search_vector (stop words do not count). Set by the mdchunks_chunk_columns trigger.';
