-- Every language a docs site ships in is searchable (docs/search.md,
-- "Languages"; issue 38).
--
-- Before, every row was analysed as English, and PostgreSQL's parser reads a
-- run of Chinese, Japanese or Korean text with no spaces as one word: a
-- query's word matched only a whole run, never a word inside a sentence
-- (`站点地图` found nothing in a page that says 如何添加站点地图).
--
-- Now:
-- - content_chunks.language holds the document's language tag (`zh-cn`,
--   `fr`; NULL: none stated, analysed as English), set by the flow
--   (flow/plugin/languages.py: front matter, then the path).
-- - mdchunks_search_config(language) is its text search configuration: the
--   language's own where PostgreSQL 14 ships one (stemming, stop words),
--   'simple' for a language it has none for, 'english' for NULL.
-- - mdchunks_search_words(text) is what every parse for search reads, for
--   documents and queries alike: each `<` and `</` read as a space
--   (migration 0013), and every run of CJK, kana, Hangul or Thai characters
--   cut into overlapping character bigrams (a lone character stays itself), as
--   Lucene's CJK analyzer does: `站点地图` is 站点 点地 地图, in a sentence
--   and in a query alike. Plain regular expressions, no extension. Text with
--   no such character is only the `<` rule, as before.
-- - Both triggers (ours and a host table's, flow/plugin/chunk_columns.sql,
--   kept equal by a test) parse the heading path and the text with them.
-- - mdchunks_search_stats.languages lists a source's languages: a query is
--   parsed once for each (flow/retrieval/lexical.py).
--
-- Rows holding such characters are indexed anew here (their language comes
-- with the next ingest: the language rules are part of the recipe, so it
-- processes every document once), and their sources' statistics dropped
-- (counted live until that ingest stores them again). A host table whose
-- trigger is ours (same schema) and that has no language column keeps
-- working: the trigger reads title, unsearched and language through
-- to_jsonb(NEW), as migration 0017 does.

ALTER TABLE content_chunks ADD COLUMN IF NOT EXISTS language text;
ALTER TABLE mdchunks_search_stats ADD COLUMN IF NOT EXISTS languages text[];

CREATE OR REPLACE FUNCTION mdchunks_search_config(language text) RETURNS regconfig
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

CREATE OR REPLACE FUNCTION mdchunks_search_words(doc text) RETURNS text
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
    words := pg_catalog.regexp_replace(words, '(?<![\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F])[\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F] (?=[\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F]{2})', '', 'g');
    RETURN pg_catalog.regexp_replace(words, '(?<=[\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F]{2}) [\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F](?![\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F])', '', 'g');
END
$$;

-- A query's BM25 terms over chunks of the languages `searched` (NULL among
-- them: none stated), for flow/retrieval/lexical.py: the query parsed as the
-- chunks are, once in each language, each lexeme with its occurrences and
-- the languages whose parse gave it (a chunk is scored with its own
-- language's). A word one of the parses drops as a stop word is dropped from
-- every parse (all parses number the words alike): `the` of an English
-- question must not weigh in the 'simple' parse that a Japanese page's
-- chunks are scored with. A hyphenated word counts as its parts, not also
-- as the whole compound (docs/search.md).
CREATE OR REPLACE FUNCTION mdchunks_query_terms(query_text text, searched text[])
    RETURNS TABLE (lexeme text, occurrences integer, languages text[])
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    WITH parsed AS (
        SELECT l.tag, t.lexeme AS word, t.positions
        FROM unnest(searched) AS l(tag),
             unnest(pg_catalog.to_tsvector(mdchunks_search_config(l.tag),
                                           mdchunks_search_words(query_text))) AS t
        WHERE pg_catalog.strpos(t.lexeme, '-') = 0
    ),
    kept AS (
        SELECT pg_catalog.array_agg(k.position) AS positions
        FROM (
            SELECT p.position
            FROM parsed, unnest(parsed.positions) AS p(position)
            GROUP BY p.position
            HAVING count(DISTINCT coalesce(parsed.tag, '')) = (
                SELECT count(DISTINCT coalesce(s.tag, '')) FROM unnest(searched) AS s(tag))
        ) AS k
    )
    SELECT parsed.word,
           max(pg_catalog.cardinality(ARRAY(
               SELECT unnest(parsed.positions) INTERSECT ALL SELECT unnest(kept.positions))))::integer,
           pg_catalog.array_agg(parsed.tag)
    FROM parsed, kept
    WHERE parsed.positions OPERATOR(pg_catalog.&&) kept.positions
    GROUP BY parsed.word
    $$;

-- A row's search columns from what it holds (both triggers below, one
-- place): the heading field is the page title, unless the heading path
-- starts with it, then the path (migration 0017); the text field is the
-- text with its unsearched spans (start/end pairs, code points into text:
-- front matter, MDX's ESM and comments) as spaces; each parsed in the
-- language's configuration through mdchunks_search_words; BM25's lengths
-- are each part's lexeme occurrences (positions).
CREATE OR REPLACE FUNCTION mdchunks_search_fields(
    body_text text, heading_path text[], title text, unsearched integer[], language text,
    OUT search_vector tsvector, OUT search_heading_length integer, OUT search_text_length integer)
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$
DECLARE
    config regconfig := mdchunks_search_config(language);
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
    heading := pg_catalog.to_tsvector(config, mdchunks_search_words(headings));
    body := pg_catalog.to_tsvector(config, mdchunks_search_words(searched));
    search_vector := pg_catalog.setweight(heading, 'A') OPERATOR(pg_catalog.||) pg_catalog.setweight(body, 'B');
    search_heading_length := (
        SELECT coalesce(pg_catalog.sum(coalesce(pg_catalog.cardinality(u.positions), 1)), 0)
        FROM pg_catalog.unnest(heading) AS u);
    search_text_length := (
        SELECT coalesce(pg_catalog.sum(coalesce(pg_catalog.cardinality(u.positions), 1)), 0)
        FROM pg_catalog.unnest(body) AS u);
END
$$;

-- The chunk columns of content_chunks (migration 0017's function), through
-- mdchunks_search_fields: the same, each part parsed in the row's language.
CREATE OR REPLACE FUNCTION mdchunks_content_chunks_columns() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.text IS NOT DISTINCT FROM OLD.text
       AND NEW.heading_path IS NOT DISTINCT FROM OLD.heading_path
       AND NEW.title IS NOT DISTINCT FROM OLD.title
       AND NEW.unsearched IS NOT DISTINCT FROM OLD.unsearched
       AND NEW.language IS NOT DISTINCT FROM OLD.language THEN
        NEW.search_vector := OLD.search_vector;
        NEW.search_heading_length := OLD.search_heading_length;
        NEW.search_text_length := OLD.search_text_length;
        RETURN NEW;
    END IF;
    SELECT c.search_vector, c.search_heading_length, c.search_text_length
    INTO NEW.search_vector, NEW.search_heading_length, NEW.search_text_length
    FROM mdchunks_search_fields(NEW.text, NEW.heading_path, NEW.title, NEW.unsearched, NEW.language) AS c;
    RETURN NEW;
END
$$;

-- The same for a host's chunk table in this schema (flow/plugin/chunk_columns.sql),
-- which also composes embed_text (migration 0010); title, unsearched and
-- language are read from the row as JSON: a table made before them has
-- none of them, and keeps working (parsed as English, as before).
CREATE OR REPLACE FUNCTION mdchunks_chunk_columns() RETURNS trigger
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
    FROM mdchunks_search_fields(
        NEW.text, NEW.heading_path, row_json OPERATOR(pg_catalog.->>) 'title',
        ARRAY(SELECT pg_catalog.jsonb_array_elements_text(
            coalesce(row_json OPERATOR(pg_catalog.->) 'unsearched', '[]'))::integer),
        row_json OPERATOR(pg_catalog.->>) 'language') AS c;
    RETURN NEW;
END
$$;

-- Rows holding CJK, kana, Hangul or Thai text, indexed anew by the trigger
-- above: it keeps a row's vector while nothing it reads changes, so each such
-- row's language is set to a marked value and back (two passes, each a parse).
UPDATE content_chunks SET language = 'x-mdchunks-0018:' OPERATOR(pg_catalog.||) coalesce(language, '')
WHERE text ~ '[\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F]' OR array_to_string(heading_path, ' ') ~ '[\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F]'
   OR coalesce(title, '') ~ '[\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F]';
UPDATE content_chunks SET language = nullif(substr(language, 17), '')
WHERE starts_with(language, 'x-mdchunks-0018:');

DELETE FROM mdchunks_search_terms t
WHERE t.source IN (SELECT DISTINCT source FROM content_chunks
                   WHERE text ~ '[\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F]' OR array_to_string(heading_path, ' ') ~ '[\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F]');
DELETE FROM mdchunks_search_stats s
WHERE s.source IN (SELECT DISTINCT source FROM content_chunks
                   WHERE text ~ '[\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F]' OR array_to_string(heading_path, ' ') ~ '[\u0E00-\u0E7F\u1100-\u11FF\u3005-\u3007\u3040-\u30FF\u3130-\u318F\u31F0-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7FF\uF900-\uFAFF\uFF66-\uFF9F\U00020000-\U0002FA1F]');

COMMENT ON COLUMN content_chunks.language IS
    'The document''s language tag (zh-cn, fr), from its front matter or its path; NULL: none stated, analysed as English. Its text search configuration is mdchunks_search_config(language) (migration 0018).';
COMMENT ON COLUMN mdchunks_search_stats.languages IS
    'The languages of the source''s chunks (content_chunks.language, NULL among them for none stated): a query is parsed once for each (migration 0018).';
COMMENT ON FUNCTION mdchunks_search_config(text) IS
    'mdchunks: the text search configuration of a language tag: PostgreSQL''s own for the language where it ships one, simple otherwise, english for NULL (migration 0018).';
COMMENT ON FUNCTION mdchunks_search_words(text) IS
    'mdchunks: what every parse for search reads, documents and queries alike: < and </ read as spaces, runs of CJK, kana, Hangul and Thai characters cut into overlapping character bigrams (migration 0018).';
COMMENT ON FUNCTION mdchunks_query_terms(text, text[]) IS
    'mdchunks: a query''s BM25 terms over chunks of the given languages: its lexemes in each language''s parse, with occurrences and the languages that gave them; a stop word of one parse is dropped from all (migration 0018).';
COMMENT ON FUNCTION mdchunks_search_fields(text, text[], text, integer[], text) IS
    'mdchunks: a chunk row''s search vector and BM25 lengths from its text, heading path, title, unsearched spans and language (migration 0018); both chunk triggers call it.';
COMMENT ON FUNCTION mdchunks_content_chunks_columns() IS
    'mdchunks: sets search_vector, search_heading_length and search_text_length of a content_chunks row from one parse of the title and heading path and one of the text less its unsearched spans, in the row''s language, through mdchunks_search_words (BEFORE INSERT OR UPDATE trigger; migration 0018).';
COMMENT ON COLUMN content_chunks.search_vector IS
    'Full-text search vector: to_tsvector(mdchunks_search_config(language), mdchunks_search_words(the title unless the heading path starts with it, then the heading path)) weighted A, then the same of the text with its unsearched spans as spaces weighted B. Set by the mdchunks_content_chunks_columns trigger; GIN-indexed (migration 0018).';
