-- The trigger function of a chunk table (docs/plugin.md), created in the
-- table's schema unless it is there already (its owner may be another role),
-- or replaced when it is one from before migration 0018 (it knows no
-- language): it sets the search columns (migrations 0009 and 0013: a `<` or
-- `</` is read as a space; 0017: the page title in the heading field, the
-- unsearched spans out of the text; 0018: each part parsed in the row's
-- language, through mdchunks_search_words: docs/search.md, "Languages") and
-- embed_text (migration 0010), as the migrations' mdchunks_chunk_columns
-- does. The three functions it calls are made beside it, unless there; a
-- test keeps all four equal to migration 0018's.
-- `chunk_table_sql` and `chunk_table_upgrade_sql` both begin with it.

DO $do$
BEGIN
    -- A language's text search configuration (migration 0018).
    IF to_regprocedure({search_config_literal}) IS NULL THEN
        CREATE FUNCTION {search_config}(language text) RETURNS regconfig
            LANGUAGE sql IMMUTABLE PARALLEL SAFE
            AS $$
            SELECT CASE pg_catalog.lower(pg_catalog."substring"(coalesce(language, 'en'), '^[A-Za-z]+'))
                WHEN 'en' THEN 'pg_catalog.english'::regconfig
                WHEN 'ar' THEN 'pg_catalog.arabic'::regconfig
                WHEN 'da' THEN 'pg_catalog.danish'::regconfig
                WHEN 'de' THEN 'pg_catalog.german'::regconfig
                WHEN 'el' THEN 'pg_catalog.greek'::regconfig
                WHEN 'es' THEN 'pg_catalog.spanish'::regconfig
                WHEN 'fi' THEN 'pg_catalog.finnish'::regconfig
                WHEN 'fr' THEN 'pg_catalog.french'::regconfig
                WHEN 'ga' THEN 'pg_catalog.irish'::regconfig
                WHEN 'hu' THEN 'pg_catalog.hungarian'::regconfig
                WHEN 'id' THEN 'pg_catalog.indonesian'::regconfig
                WHEN 'it' THEN 'pg_catalog.italian'::regconfig
                WHEN 'lt' THEN 'pg_catalog.lithuanian'::regconfig
                WHEN 'nb' THEN 'pg_catalog.norwegian'::regconfig
                WHEN 'ne' THEN 'pg_catalog.nepali'::regconfig
                WHEN 'nl' THEN 'pg_catalog.dutch'::regconfig
                WHEN 'nn' THEN 'pg_catalog.norwegian'::regconfig
                WHEN 'no' THEN 'pg_catalog.norwegian'::regconfig
                WHEN 'pt' THEN 'pg_catalog.portuguese'::regconfig
                WHEN 'ro' THEN 'pg_catalog.romanian'::regconfig
                WHEN 'ru' THEN 'pg_catalog.russian'::regconfig
                WHEN 'sv' THEN 'pg_catalog.swedish'::regconfig
                WHEN 'ta' THEN 'pg_catalog.tamil'::regconfig
                WHEN 'tr' THEN 'pg_catalog.turkish'::regconfig
                ELSE 'pg_catalog.simple'::regconfig
            END
            $$;
    END IF;
    -- What every parse for search reads (migration 0018).
    IF to_regprocedure({search_words_literal}) IS NULL THEN
        CREATE FUNCTION {search_words}(doc text) RETURNS text
            LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
            AS $$
        DECLARE
            words text := pg_catalog.regexp_replace(doc, '</?', ' ', 'g');
        BEGIN
            IF words OPERATOR(pg_catalog.!~) '[\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F]' THEN
                RETURN words;
            END IF;
            -- Each run apart; each of its characters doubled, and each doubled pair
            -- cut in two: ABC -> AABBCC -> A AB BC C.
            words := pg_catalog.regexp_replace(words, '([\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F]+)', ' \1 ', 'g');
            words := pg_catalog.regexp_replace(words, '([\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F])', '\1\1', 'g');
            words := pg_catalog.regexp_replace(words, '([\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F])\1', '\1 \1', 'g');
            -- A lone character once (A A -> A); a longer run loses its first and
            -- last single character: bigrams only (A AB BC C -> AB BC).
            words := pg_catalog.regexp_replace(words, '(?<![\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F])([\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F]) \1(?![\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F])', '\1', 'g');
            words := pg_catalog.regexp_replace(words, '(?<![\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F])[\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F] (?=[\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F]{{2}})', '', 'g');
            RETURN pg_catalog.regexp_replace(words, '(?<=[\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F]{{2}}) [\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F](?![\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F])', '', 'g');
        END
        $$;
    END IF;
    -- A row's search columns (migration 0018).
    IF to_regprocedure({search_fields_literal}) IS NULL THEN
        CREATE FUNCTION {search_fields}(
            body_text text, heading_path text[], title text, unsearched integer[], language text,
            OUT search_vector tsvector, OUT search_heading_length integer, OUT search_text_length integer)
            LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
            AS $$
        DECLARE
            config regconfig := {search_config}(language);
            heading tsvector;
            body tsvector;
            searched text := body_text;
            headings text := pg_catalog.array_to_string(heading_path, ' ');
        BEGIN
            IF coalesce(title, '') <> '' AND pg_catalog.lower(title) IS DISTINCT FROM pg_catalog.lower(heading_path[1]) THEN
                headings := title OPERATOR(pg_catalog.||) ' ' OPERATOR(pg_catalog.||) headings;
            END IF;
            FOR i IN 1 .. coalesce(pg_catalog.array_length(unsearched, 1), 0) - 1 BY 2 LOOP
                searched := pg_catalog.overlay(searched, pg_catalog.repeat(' ', unsearched[i + 1] - unsearched[i]),
                                               unsearched[i] + 1, unsearched[i + 1] - unsearched[i]);
            END LOOP;
            heading := pg_catalog.to_tsvector(config, {search_words}(headings));
            body := pg_catalog.to_tsvector(config, {search_words}(searched));
            search_vector := pg_catalog.setweight(heading, 'A') OPERATOR(pg_catalog.||) pg_catalog.setweight(body, 'B');
            search_heading_length := (
                SELECT coalesce(pg_catalog.sum(coalesce(pg_catalog.cardinality(u.positions), 1)), 0)
                FROM pg_catalog.unnest(heading) AS u);
            search_text_length := (
                SELECT coalesce(pg_catalog.sum(coalesce(pg_catalog.cardinality(u.positions), 1)), 0)
                FROM pg_catalog.unnest(body) AS u);
        END
        $$;
    END IF;
    -- The chunk columns' trigger (migrations 0009, 0010, 0017 and 0018 say why and how).
    IF to_regprocedure({chunk_columns_literal}) IS NULL OR NOT EXISTS (
        SELECT 1 FROM pg_catalog.pg_proc
        WHERE oid = to_regprocedure({chunk_columns_literal}) AND prosrc LIKE '%search_fields%'
    ) THEN
        CREATE OR REPLACE FUNCTION {chunk_columns}() RETURNS trigger
            LANGUAGE plpgsql
            AS $$
        DECLARE
            row_json jsonb;
            old_json jsonb;
        BEGIN
            NEW.embed_text := CASE WHEN coalesce(NEW.table_header, '') = '' THEN NEW.text
                                   ELSE NEW.table_header OPERATOR(pg_catalog.||) E'\n' OPERATOR(pg_catalog.||) NEW.text END;
            IF coalesce(NEW.breadcrumb, '') <> '' THEN
                NEW.embed_text := NEW.breadcrumb OPERATOR(pg_catalog.||) E'\n\n' OPERATOR(pg_catalog.||) NEW.embed_text;
            END IF;
            row_json := pg_catalog.to_jsonb(NEW);
            IF TG_OP = 'UPDATE' AND NEW.text IS NOT DISTINCT FROM OLD.text
               AND NEW.heading_path IS NOT DISTINCT FROM OLD.heading_path THEN
                old_json := pg_catalog.to_jsonb(OLD);
                IF row_json OPERATOR(pg_catalog.->) 'title' IS NOT DISTINCT FROM old_json OPERATOR(pg_catalog.->) 'title'
                   AND row_json OPERATOR(pg_catalog.->) 'unsearched' IS NOT DISTINCT FROM old_json OPERATOR(pg_catalog.->) 'unsearched'
                   AND row_json OPERATOR(pg_catalog.->) 'language' IS NOT DISTINCT FROM old_json OPERATOR(pg_catalog.->) 'language' THEN
                    NEW.search_vector := OLD.search_vector;
                    NEW.search_heading_length := OLD.search_heading_length;
                    NEW.search_text_length := OLD.search_text_length;
                    RETURN NEW;
                END IF;
            END IF;
            SELECT c.search_vector, c.search_heading_length, c.search_text_length
            INTO NEW.search_vector, NEW.search_heading_length, NEW.search_text_length
            FROM {search_fields}(
                NEW.text, NEW.heading_path, row_json OPERATOR(pg_catalog.->>) 'title',
                ARRAY(SELECT pg_catalog.jsonb_array_elements_text(
                    coalesce(row_json OPERATOR(pg_catalog.->) 'unsearched', '[]'))::integer),
                row_json OPERATOR(pg_catalog.->>) 'language') AS c;
            RETURN NEW;
        END
        $$;
    END IF;
END
$do$;
