-- Search sees every word written as a tag (docs/search.md, "Words written as
-- tags").
--
-- PostgreSQL's default text-search parser takes `<KeepAlive>`, `<Teleport>`
-- or `<script setup>` for an XML tag and drops it, and with it, in a line
-- such as "Use <KeepAlive> and <keep-alive> or </Listing>", every word up to
-- the last `>`: on component, HTML and XML docs whole names were unsearchable
-- wherever they were written as tags. Now each `<` and `</` becomes a space
-- before the text is parsed, so `<KeepAlive>` is the word KeepAlive (found by
-- `KeepAlive` and by `<KeepAlive>`), `<keep-alive>` the hyphenated word it
-- is. The query side does the same (flow/db/queries.sql, flow/retrieval/), and
-- so does the trigger function of a host's chunk table
-- (flow/plugin/chunk_columns.sql), kept equal to this one by a test.
--
-- Existing rows whose text or heading path holds a `<` are indexed anew here
-- (the trigger keeps a row's vector while its text is unchanged, so it is
-- off for that one statement), and their sources' BM25 statistics are
-- deleted: search counts from the rows until the next ingest stores them
-- again (flow/retrieval/lexical.py).

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

ALTER TABLE content_chunks DISABLE TRIGGER content_chunks_chunk_columns;

WITH parsed AS (
    SELECT c.id,
           to_tsvector('english', regexp_replace(array_to_string(c.heading_path, ' '), '</?', ' ', 'g'))
               AS heading,
           to_tsvector('english', regexp_replace(c.text, '</?', ' ', 'g')) AS body
    FROM content_chunks c
    WHERE strpos(c.text, '<') > 0 OR strpos(array_to_string(c.heading_path, ' '), '<') > 0
)
UPDATE content_chunks c
SET search_vector = setweight(p.heading, 'A') || setweight(p.body, 'B'),
    search_heading_length = (
        SELECT coalesce(sum(coalesce(cardinality(u.positions), 1)), 0) FROM unnest(p.heading) AS u),
    search_text_length = (
        SELECT coalesce(sum(coalesce(cardinality(u.positions), 1)), 0) FROM unnest(p.body) AS u)
FROM parsed p
WHERE c.id = p.id;

ALTER TABLE content_chunks ENABLE TRIGGER content_chunks_chunk_columns;

DELETE FROM mdchunks_search_terms t
WHERE t.source IN (SELECT DISTINCT source FROM content_chunks WHERE strpos(text, '<') > 0);
DELETE FROM mdchunks_search_stats s
WHERE s.source IN (SELECT DISTINCT source FROM content_chunks WHERE strpos(text, '<') > 0);

COMMENT ON COLUMN content_chunks.search_vector IS
    'Full-text search vector: to_tsvector(''english'', heading path) weighted A, then to_tsvector(''english'', text) weighted B, each with every < and </ read as a space (words written as tags are words). Set by the mdchunks_chunk_columns trigger; GIN-indexed.';
