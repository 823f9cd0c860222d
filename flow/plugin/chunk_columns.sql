-- The trigger function of a chunk table (docs/plugin.md), created in the
-- table's schema unless it is there already (its owner may be another role):
-- it sets the search columns (migrations 0009 and 0013: a `<` or `</` is
-- read as a space) and embed_text (migration 0010), as the migrations'
-- mdchunks_chunk_columns does for content_chunks.
-- `chunk_table_sql` and `chunk_table_upgrade_sql` both begin with it.

DO $do$
BEGIN
    -- The chunk columns' trigger (migrations 0009 and 0010 say why and how).
    IF to_regprocedure({chunk_columns_literal}) IS NULL THEN
        CREATE FUNCTION {chunk_columns}() RETURNS trigger
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
    END IF;
END
$do$;
