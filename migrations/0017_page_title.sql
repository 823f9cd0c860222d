-- The page title, and front matter and ESM out of search (docs/heading-index.md
-- "The page title", docs/search.md "What is searched"; issue 37).
--
-- A document's title comes from its front matter (`title:` in YAML, `title =`
-- in TOML). It is kept on its document row, and on every chunk and section
-- row (`title`), and it roots their breadcrumbs: `Title > Section > Sub`,
-- unless the heading path already starts with it; a chunk or section before
-- the first heading has the title as its breadcrumb. So the breadcrumb checks
-- change: a breadcrumb is NULL exactly when the path is empty and there is no
-- title. The heading columns keep their rule (the title is no heading).
--
-- The search vector's heading field (weight A) holds the title too, unless
-- the path starts with it. Its text field (weight B) leaves out the spans of
-- the chunk that are no text to search: front matter and MDX's ESM blocks and
-- `{/* comments */}`, listed by the writer in `unsearched` (flat start/end
-- pairs of code-point offsets into text; heading_index/searchable.py) and
-- read as spaces. They stay in text: offsets never move.
--
-- Existing rows keep their vectors until their documents are processed again:
-- the title rule is part of the recipe, so the next run of every source
-- re-processes its documents once (a backfill) and writes both columns.
-- mdchunks_chunk_columns (the trigger of a host's table in this schema, kept
-- equal to flow/plugin/chunk_columns.sql by a test) reads title and
-- unsearched through to_jsonb(NEW), so a host table made before them keeps
-- working.

ALTER TABLE content_chunks
    ADD COLUMN IF NOT EXISTS title text,
    ADD COLUMN IF NOT EXISTS unsearched integer[] NOT NULL DEFAULT '{}';
ALTER TABLE content_sections ADD COLUMN IF NOT EXISTS title text;
ALTER TABLE mdchunks_documents ADD COLUMN IF NOT EXISTS title text;

-- NOT VALID as 0006 added it: rows written before 0006 (no breadcrumb yet)
-- stay until their documents are processed again; valid at once where every
-- row holds it, as 0007b did.
ALTER TABLE content_chunks DROP CONSTRAINT IF EXISTS content_chunks_breadcrumb_check;
ALTER TABLE content_chunks
    ADD CONSTRAINT content_chunks_breadcrumb_check
    CHECK ((breadcrumb IS NULL) = (cardinality(heading_path) = 0 AND title IS NULL)) NOT VALID;
DO $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM content_chunks
        WHERE (breadcrumb IS NULL) <> (cardinality(heading_path) = 0 AND title IS NULL)
    ) THEN
        ALTER TABLE content_chunks VALIDATE CONSTRAINT content_chunks_breadcrumb_check;
    END IF;
END
$$;
ALTER TABLE content_sections DROP CONSTRAINT IF EXISTS content_sections_headings_together_check;
ALTER TABLE content_sections
    ADD CONSTRAINT content_sections_headings_together_check CHECK (
        (heading_text IS NULL) = (heading_level IS NULL)
        AND (heading_text IS NULL) = (cardinality(heading_path) = 0)
        AND (breadcrumb IS NULL) = (cardinality(heading_path) = 0 AND title IS NULL)
    );

CREATE OR REPLACE FUNCTION mdchunks_content_chunks_columns() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    heading tsvector;
    body tsvector;
    searched text;
    headings text;
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.text IS NOT DISTINCT FROM OLD.text
       AND NEW.heading_path IS NOT DISTINCT FROM OLD.heading_path
       AND NEW.title IS NOT DISTINCT FROM OLD.title
       AND NEW.unsearched IS NOT DISTINCT FROM OLD.unsearched THEN
        NEW.search_vector := OLD.search_vector;
        NEW.search_heading_length := OLD.search_heading_length;
        NEW.search_text_length := OLD.search_text_length;
        RETURN NEW;
    END IF;
    -- The heading field: the page title, unless the path starts with it, then the path.
    headings := pg_catalog.array_to_string(NEW.heading_path, ' ');
    IF coalesce(NEW.title, '') <> '' AND pg_catalog.lower(NEW.title) IS DISTINCT FROM pg_catalog.lower(NEW.heading_path[1]) THEN
        headings := NEW.title OPERATOR(pg_catalog.||) ' ' OPERATOR(pg_catalog.||) headings;
    END IF;
    -- The searchable text: front matter and MDX's ESM and comments, the
    -- spans in unsearched (start/end pairs, code points into text), as spaces.
    searched := NEW.text;
    FOR i IN 1 .. coalesce(pg_catalog.array_length(NEW.unsearched, 1), 0) - 1 BY 2 LOOP
        searched := pg_catalog.overlay(searched, pg_catalog.repeat(' ', NEW.unsearched[i + 1] - NEW.unsearched[i]),
                                       NEW.unsearched[i] + 1, NEW.unsearched[i + 1] - NEW.unsearched[i]);
    END LOOP;
    heading := pg_catalog.to_tsvector('english', pg_catalog.regexp_replace(headings, '</?', ' ', 'g'));
    body := pg_catalog.to_tsvector('english', pg_catalog.regexp_replace(searched, '</?', ' ', 'g'));
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

CREATE OR REPLACE FUNCTION mdchunks_chunk_columns() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    heading tsvector;
    body tsvector;
    row_json jsonb;
    title text;
    unsearched integer[];
    searched text;
    headings text;
BEGIN
    NEW.embed_text := CASE WHEN coalesce(NEW.table_header, '') = '' THEN NEW.text
                           ELSE NEW.table_header OPERATOR(pg_catalog.||) E'\n' OPERATOR(pg_catalog.||) NEW.text END;
    IF coalesce(NEW.breadcrumb, '') <> '' THEN
        NEW.embed_text := NEW.breadcrumb OPERATOR(pg_catalog.||) E'\n\n' OPERATOR(pg_catalog.||) NEW.embed_text;
    END IF;
    -- title and unsearched (migration 0017) read from the row as JSON:
    -- a table made before them has neither, and keeps working.
    row_json := pg_catalog.to_jsonb(NEW);
    title := row_json OPERATOR(pg_catalog.->>) 'title';
    unsearched := ARRAY(SELECT pg_catalog.jsonb_array_elements_text(
        coalesce(row_json OPERATOR(pg_catalog.->) 'unsearched', '[]'))::integer);
    IF TG_OP = 'UPDATE' AND NEW.text IS NOT DISTINCT FROM OLD.text
       AND NEW.heading_path IS NOT DISTINCT FROM OLD.heading_path
       AND row_json OPERATOR(pg_catalog.->) 'title' IS NOT DISTINCT FROM pg_catalog.to_jsonb(OLD) OPERATOR(pg_catalog.->) 'title'
       AND row_json OPERATOR(pg_catalog.->) 'unsearched' IS NOT DISTINCT FROM pg_catalog.to_jsonb(OLD) OPERATOR(pg_catalog.->) 'unsearched' THEN
        NEW.search_vector := OLD.search_vector;
        NEW.search_heading_length := OLD.search_heading_length;
        NEW.search_text_length := OLD.search_text_length;
        RETURN NEW;
    END IF;
    -- The heading field: the page title, unless the path starts with it, then the path.
    headings := pg_catalog.array_to_string(NEW.heading_path, ' ');
    IF coalesce(title, '') <> '' AND pg_catalog.lower(title) IS DISTINCT FROM pg_catalog.lower(NEW.heading_path[1]) THEN
        headings := title OPERATOR(pg_catalog.||) ' ' OPERATOR(pg_catalog.||) headings;
    END IF;
    -- The searchable text: front matter and MDX's ESM and comments, the
    -- spans in unsearched (start/end pairs, code points into text), as spaces.
    searched := NEW.text;
    FOR i IN 1 .. coalesce(pg_catalog.array_length(unsearched, 1), 0) - 1 BY 2 LOOP
        searched := pg_catalog.overlay(searched, pg_catalog.repeat(' ', unsearched[i + 1] - unsearched[i]),
                                       unsearched[i] + 1, unsearched[i + 1] - unsearched[i]);
    END LOOP;
    heading := pg_catalog.to_tsvector('english', pg_catalog.regexp_replace(headings, '</?', ' ', 'g'));
    body := pg_catalog.to_tsvector('english', pg_catalog.regexp_replace(searched, '</?', ' ', 'g'));
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

COMMENT ON COLUMN content_chunks.title IS
    'The document''s title from its front matter (YAML title:, TOML title =): the root of breadcrumb and part of the search vector''s heading field. NULL: none, or titles off.';
COMMENT ON COLUMN content_chunks.unsearched IS
    'Spans of text that are no words to search (front matter, MDX ESM and comments): start/end pairs of code-point offsets into text, read as spaces by the search vector''s trigger.';
COMMENT ON COLUMN content_sections.title IS
    'The document''s title from its front matter: the root of breadcrumb.';
COMMENT ON COLUMN mdchunks_documents.title IS
    'The document''s title from its front matter (NULL: none, or titles off).';
COMMENT ON COLUMN content_chunks.search_vector IS
    'Full-text search vector: to_tsvector(''english'', the title unless the heading path starts with it, then the heading path) weighted A, then to_tsvector(''english'', text with its unsearched spans as spaces) weighted B, each with every < and </ read as a space. Set by the mdchunks_content_chunks_columns trigger; GIN-indexed.';
COMMENT ON FUNCTION mdchunks_content_chunks_columns() IS
    'mdchunks: sets search_vector, search_heading_length and search_text_length of a content_chunks row from one to_tsvector parse of the title and heading path and one of the text less its unsearched spans, each < and </ read as a space (BEFORE INSERT OR UPDATE trigger; migration 0017).';
