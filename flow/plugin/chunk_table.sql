-- The chunk table for a host's own cocoindex app (docs/plugin.md): what
-- mdchunks' migrations make of `content_chunks`, under the host's table name.
-- `mdchunks.chunk_table_sql(name)` fills in the table (a quoted identifier,
-- schema-qualified if asked) and the prefix of its constraints' and indexes'
-- names (the table's own name). Apply it with your own migrations; add your
-- own columns after it (ALTER TABLE ... ADD COLUMN). A test keeps it equal,
-- column for column, constraint for constraint and trigger for trigger, to
-- `content_chunks`. (`chunk_table_sql` puts flow/plugin/chunk_columns.sql, the
-- trigger's function, before it.)

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
    -- Set by the trigger below: from text, heading_path, title and unsearched the search vector
    -- and BM25's document lengths (docs/search.md), and embed_text from
    -- breadcrumb, table_header and text (docs/rows-and-table.md).
    search_vector   tsvector,
    breadcrumb      text,
    embed_text      text     NOT NULL DEFAULT '',
    search_heading_length integer,
    search_text_length integer,
    start_line      integer,
    end_line        integer,
    table_header    text,
    section_ids     uuid[]   NOT NULL DEFAULT '{{}}',
    -- The page title (front matter), the root of breadcrumb; and the spans of
    -- text that are no words to search (migration 0017).
    title           text,
    unsearched      integer[] NOT NULL DEFAULT '{{}}',

    CONSTRAINT "{prefix}_position_check" CHECK (position >= 0),
    CONSTRAINT "{prefix}_span_check" CHECK (char_start >= 0 AND char_end >= char_start),
    CONSTRAINT "{prefix}_heading_level_check" CHECK (heading_level BETWEEN 1 AND 6),
    CONSTRAINT "{prefix}_headings_together_check" CHECK (
        (heading_text IS NULL) = (heading_level IS NULL)
        AND (heading_text IS NULL) = (cardinality(heading_path) = 0)
    ),
    CONSTRAINT "{prefix}_parent_not_self_check" CHECK (parent_chunk_id <> id),
    CONSTRAINT "{prefix}_breadcrumb_check"
        CHECK ((breadcrumb IS NULL) = (cardinality(heading_path) = 0 AND title IS NULL)),
    CONSTRAINT "{prefix}_lines_check" CHECK (start_line >= 1 AND end_line >= start_line)
);

CREATE TRIGGER "{prefix}_chunk_columns"
    BEFORE INSERT OR UPDATE ON {table}
    FOR EACH ROW EXECUTE FUNCTION {chunk_columns}();

CREATE INDEX "{prefix}_parent_chunk_id_idx"
    ON {table} (parent_chunk_id) WHERE parent_chunk_id IS NOT NULL;
CREATE INDEX "{prefix}_source_recipe_idx" ON {table} (source, recipe);
-- A document's rows (migration 0016): the pair, deduplicated; an id is uuid5
-- of (source, rel_path, position), so the primary key keeps them unique.
CREATE INDEX "{prefix}_document_idx" ON {table} (source, rel_path);
-- A pending list of 1 MB, not 4: the pages a flushed list leaves free stay in
-- the index's file (migration 0014 measured it half the size).
CREATE INDEX "{prefix}_search_vector_idx" ON {table} USING gin (search_vector)
    WITH (gin_pending_list_limit = 1024);
