-- One text-search parse per row, and each chunk's lines (docs/search.md).
--
-- 1. Until now each inserted row ran to_tsvector over its text three times:
--    the generated search_vector (0002) and the two generated BM25 lengths
--    (0008), because a generated column may not read another. Measured on the
--    rust-book's rows (`python -m benchmarks.row_cost`), the two lengths cost
--    more than the vector itself. Now one BEFORE trigger parses the heading
--    path and the text once each and sets all three columns from those two
--    vectors: the same function, tokens and values as before, so rankings do
--    not change. The columns stay what they were for readers (writers never
--    set them: the trigger overwrites whatever a writer gives); only their
--    kind changes, from generated to trigger-set. DROP EXPRESSION keeps the
--    stored values, so existing rows are not rewritten.
--    An UPDATE that leaves the text and heading path alone (cocoindex's
--    upsert of an unchanged chunk) keeps the old values without parsing.
--    The trigger's body calls only pg_catalog functions: it finds them
--    whatever the writer's search_path.
-- 2. Bounds for MaxScore (flow/retrieval/lexical.py): per source and lexeme the most
--    positions it has in one chunk, in all and in the heading path; per
--    source the shortest chunk's lengths. They tighten each term's ceiling
--    (the most one chunk can get from it), so fewer chunks need scoring.
--    Filled by the statistics refresh of a source of 10,000 chunks or more
--    (flow/retrieval/lexical.py BOUNDS_MIN_CHUNKS: reading every position doubles the
--    refresh); NULL otherwise (no bound known: the loose ceiling, exact all
--    the same).
-- 3. start_line and end_line: 1-based lines of the chunk's first and last
--    character (HeadingChunk's), written by the flow. Rows written before
--    have NULL until their document is processed again: the next ingest does
--    that for every document (the rows' logic version changed, flow/plugin/rows.py).

ALTER TABLE content_chunks
    ALTER COLUMN search_vector DROP EXPRESSION,
    ALTER COLUMN search_heading_length DROP EXPRESSION,
    ALTER COLUMN search_text_length DROP EXPRESSION,
    ADD COLUMN start_line integer,
    ADD COLUMN end_line integer,
    ADD CONSTRAINT content_chunks_lines_check CHECK (start_line >= 1 AND end_line >= start_line);

ALTER TABLE mdchunks_search_terms
    ADD COLUMN max_occurrences integer CHECK (max_occurrences >= 0),
    ADD COLUMN max_heading_occurrences integer CHECK (max_heading_occurrences >= 0);

ALTER TABLE mdchunks_search_stats
    ADD COLUMN min_heading_length integer CHECK (min_heading_length >= 0),
    ADD COLUMN min_text_length integer CHECK (min_text_length >= 0);

CREATE FUNCTION mdchunks_search_columns() RETURNS trigger
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

CREATE TRIGGER content_chunks_search_columns
    BEFORE INSERT OR UPDATE ON content_chunks
    FOR EACH ROW EXECUTE FUNCTION mdchunks_search_columns();

COMMENT ON FUNCTION mdchunks_search_columns() IS
    'mdchunks: sets search_vector, search_heading_length and search_text_length of a chunk row from one to_tsvector parse of its heading path and one of its text (BEFORE INSERT OR UPDATE trigger).';
COMMENT ON COLUMN content_chunks.search_vector IS
    'Full-text search vector: to_tsvector(''english'', heading path) weighted A, then to_tsvector(''english'', text) weighted B. Set by the mdchunks_search_columns trigger; GIN-indexed.';
COMMENT ON COLUMN content_chunks.search_heading_length IS
    'BM25 length of the heading path: lexeme occurrences of its to_tsvector, the A part of search_vector. Set by the mdchunks_search_columns trigger.';
COMMENT ON COLUMN content_chunks.search_text_length IS
    'BM25 length of the text: lexeme occurrences of its to_tsvector, the B part of search_vector (stop words do not count). Set by the mdchunks_search_columns trigger.';
COMMENT ON COLUMN content_chunks.start_line IS
    '1-based line of the chunk''s first character in its document (NULL for rows written before migration 0009 until their document is processed again).';
COMMENT ON COLUMN content_chunks.end_line IS
    '1-based line of the chunk''s last character in its document (NULL like start_line).';
COMMENT ON COLUMN mdchunks_search_terms.max_occurrences IS
    'The most positions the lexeme has in one of the source''s chunks (a bound for BM25''s MaxScore; NULL when not computed: sources under 10,000 chunks, or not refreshed since migration 0009).';
COMMENT ON COLUMN mdchunks_search_terms.max_heading_occurrences IS
    'The most positions the lexeme has in one chunk''s heading path (weight A), 0 if in none (NULL like max_occurrences).';
COMMENT ON COLUMN mdchunks_search_stats.min_heading_length IS
    'The smallest search_heading_length of the source''s chunks (a bound for BM25''s MaxScore; NULL until the source''s first refresh after migration 0009).';
COMMENT ON COLUMN mdchunks_search_stats.min_text_length IS
    'The smallest search_text_length of the source''s chunks (NULL like min_heading_length).';
