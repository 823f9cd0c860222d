-- The chunk table for a host's own cocoindex app (docs/plugin.md): what
-- mdchunks' migrations make of `content_chunks`, under the host's table name.
-- `mdchunks.chunk_table_sql(name)` fills in the table (a quoted identifier,
-- schema-qualified if asked) and the prefix of its constraints' and indexes'
-- names (the table's own name). Apply it with your own migrations; add your
-- own columns after it (ALTER TABLE ... ADD COLUMN). A test keeps it equal,
-- column for column, constraint for constraint and trigger for trigger, to
-- `content_chunks`.

DO $do$
BEGIN
    -- The search columns' trigger (migration 0009 says why and how).
    IF to_regprocedure({search_columns_literal}) IS NULL THEN
        CREATE FUNCTION {search_columns}() RETURNS trigger
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
    END IF;
END
$do$;

CREATE TABLE {table} (
    id              uuid     PRIMARY KEY,
    source          text     NOT NULL,
    rel_path        text     NOT NULL,
    position        integer  NOT NULL,
    char_start      integer  NOT NULL,
    char_end        integer  NOT NULL,
    text            text     NOT NULL,
    heading_text    text,
    heading_level   smallint,
    heading_path    text[]   NOT NULL DEFAULT '{{}}',
    parent_chunk_id uuid,
    recipe          text     NOT NULL,
    -- Set by the trigger below from text and heading_path (docs/search.md):
    -- the search vector and BM25's document lengths.
    search_vector   tsvector,
    breadcrumb      text,
    embed_text      text     NOT NULL DEFAULT '',
    search_heading_length integer,
    search_text_length integer,
    start_line      integer,
    end_line        integer,

    CONSTRAINT "{prefix}_document_position_key" UNIQUE (source, rel_path, position),
    CONSTRAINT "{prefix}_position_check" CHECK (position >= 0),
    CONSTRAINT "{prefix}_span_check" CHECK (char_start >= 0 AND char_end >= char_start),
    CONSTRAINT "{prefix}_heading_level_check" CHECK (heading_level BETWEEN 1 AND 6),
    CONSTRAINT "{prefix}_headings_together_check" CHECK (
        (heading_text IS NULL) = (heading_level IS NULL)
        AND (heading_text IS NULL) = (cardinality(heading_path) = 0)
    ),
    CONSTRAINT "{prefix}_parent_not_self_check" CHECK (parent_chunk_id <> id),
    CONSTRAINT "{prefix}_breadcrumb_check"
        CHECK ((breadcrumb IS NULL) = (cardinality(heading_path) = 0)),
    CONSTRAINT "{prefix}_lines_check" CHECK (start_line >= 1 AND end_line >= start_line)
);

CREATE TRIGGER "{prefix}_search_columns"
    BEFORE INSERT OR UPDATE ON {table}
    FOR EACH ROW EXECUTE FUNCTION {search_columns}();

CREATE INDEX "{prefix}_parent_chunk_id_idx"
    ON {table} (parent_chunk_id) WHERE parent_chunk_id IS NOT NULL;
CREATE INDEX "{prefix}_source_recipe_idx" ON {table} (source, recipe);
CREATE INDEX "{prefix}_search_vector_idx" ON {table} USING gin (search_vector);
