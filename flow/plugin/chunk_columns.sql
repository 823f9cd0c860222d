-- The trigger function of a chunk table (docs/plugin.md), created in the
-- table's schema unless it is there already (its owner may be another role),
-- or replaced when it is one from before migration 0017 (it knows no title):
-- it sets the search columns (migrations 0009 and 0013: a `<` or `</` is
-- read as a space; 0017: the page title in the heading field, the unsearched
-- spans out of the text) and embed_text (migration 0010), as the migrations'
-- mdchunks_chunk_columns does.
-- `chunk_table_sql` and `chunk_table_upgrade_sql` both begin with it.

DO $do$
BEGIN
    -- The chunk columns' trigger (migrations 0009, 0010 and 0017 say why and how).
    IF to_regprocedure({chunk_columns_literal}) IS NULL OR NOT EXISTS (
        SELECT 1 FROM pg_catalog.pg_proc
        WHERE oid = to_regprocedure({chunk_columns_literal}) AND prosrc LIKE '%unsearched%'
    ) THEN
        CREATE OR REPLACE FUNCTION {chunk_columns}() RETURNS trigger
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
    END IF;
END
$do$;
