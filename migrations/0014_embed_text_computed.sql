-- content_chunks stops storing embed_text: it is computed where it is read;
-- and its GIN index keeps a smaller pending list
-- (docs/database.md, "Disk").
--
-- Each row held its text twice: as text, and inside embed_text (the
-- breadcrumb, a blank line, then the text). Rows under 2 KB are never
-- compressed by PostgreSQL, so the copy cost as much as the text itself:
-- measured on the rust-book x16 (benchmarks/disk.py), the table's heap and
-- TOAST were 56 MB with the column and 40 MB without it, for 19.6 MB of
-- markdown. Now `embed_text(content_chunks)` composes it from the row, as
-- migration 0010's trigger did (so `c.embed_text` still reads it, in
-- PostgreSQL's attribute notation for a function of the row):
--   body       = table_header || E'\n' || text   when table_header is not empty, else text
--   embed_text = breadcrumb || E'\n\n' || body   when breadcrumb is not empty, else body
-- A row written before migration 0006 stored an empty embed_text, read as its
-- text; it has no breadcrumb, so the function gives its text too. A row
-- written before migration 0010 has no table_header: when its stored
-- embed_text holds a table's header rows between the breadcrumb and the
-- text, they become its table_header here, so its embed_text reads the same.
--
-- content_chunks' trigger gets a function of its own,
-- mdchunks_content_chunks_columns: the search columns as migration 0013 set
-- them, without embed_text. mdchunks_chunk_columns stays as it is: a host's
-- chunk table (flow/plugin/chunk_table.sql, which keeps its embed_text
-- column) in this schema calls it.
--
-- The search vector's GIN index keeps a pending list of 1 MB, not the default
-- 4 MB: its inserts go to the list and a full list is merged into the index,
-- but the list's pages stay in the index's file, free. Measured on the same
-- rows (13,120, inserted 200 at a time): 7.8 MB with 4 MB, 4.7 MB with 1 MB,
-- 3.7 MB without a list (fastupdate off, ten times slower to insert).
--
-- The space the column held is free for new rows at once; the file shrinks
-- when the table is rewritten (`VACUUM FULL content_chunks`), which a
-- migration, run in a transaction, cannot do.

CREATE OR REPLACE FUNCTION mdchunks_content_chunks_columns() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    heading tsvector;
    body tsvector;
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.text IS NOT DISTINCT FROM OLD.text
       AND NEW.heading_path IS NOT DISTINCT FROM OLD.heading_path THEN
        NEW.search_vector := OLD.search_vector;
        NEW.search_heading_length := OLD.search_heading_length;
        NEW.search_text_length := OLD.search_text_length;
        RETURN NEW;
    END IF;
    heading := pg_catalog.to_tsvector('english', pg_catalog.regexp_replace(
        pg_catalog.array_to_string(NEW.heading_path, ' '), '</?', ' ', 'g'));
    body := pg_catalog.to_tsvector('english', pg_catalog.regexp_replace(NEW.text, '</?', ' ', 'g'));
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

DROP TRIGGER content_chunks_chunk_columns ON content_chunks;
CREATE TRIGGER content_chunks_chunk_columns
    BEFORE INSERT OR UPDATE ON content_chunks
    FOR EACH ROW EXECUTE FUNCTION mdchunks_content_chunks_columns();

WITH stored AS (
    SELECT id, embed_text, text,
           CASE WHEN coalesce(breadcrumb, '') = '' THEN '' ELSE breadcrumb || E'\n\n' END AS lead
    FROM content_chunks
    WHERE embed_text <> '' AND coalesce(table_header, '') = ''
)
UPDATE content_chunks c
SET table_header = substr(s.embed_text, char_length(s.lead) + 1,
                          char_length(s.embed_text) - char_length(s.lead) - char_length(s.text) - 1)
FROM stored s
WHERE c.id = s.id
  AND starts_with(s.embed_text, s.lead)
  AND char_length(s.embed_text) > char_length(s.lead) + char_length(s.text) + 1
  AND right(s.embed_text, char_length(s.text) + 1) = E'\n' || s.text;

ALTER TABLE content_chunks DROP COLUMN embed_text;

CREATE FUNCTION embed_text(chunk content_chunks) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT CASE WHEN coalesce(chunk.breadcrumb, '') = '' THEN ''
                ELSE chunk.breadcrumb OPERATOR(pg_catalog.||) E'\n\n' END
           OPERATOR(pg_catalog.||)
           CASE WHEN coalesce(chunk.table_header, '') = '' THEN chunk.text
                ELSE chunk.table_header OPERATOR(pg_catalog.||) E'\n' OPERATOR(pg_catalog.||) chunk.text END
    $$;

ALTER INDEX content_chunks_search_vector_idx SET (gin_pending_list_limit = 1024);

COMMENT ON FUNCTION mdchunks_content_chunks_columns() IS
    'mdchunks: sets search_vector, search_heading_length and search_text_length of a content_chunks row from one to_tsvector parse of the heading path and one of the text, each < and </ read as a space (BEFORE INSERT OR UPDATE trigger; migration 0014).';
COMMENT ON FUNCTION embed_text(content_chunks) IS
    'What gets embedded: the breadcrumb, a blank line, then the text (a continued table''s header rows before it); read as c.embed_text. Computed from the row, not stored (migration 0014).';
