-- content_chunks: one row per chunk (docs/rows-and-table.md). The column names are
-- part of the contract; flow/plugin/rows.py's ChunkRow writes exactly these columns
-- (a test compares them). cocoindex manages the rows, never the table.

CREATE TABLE content_chunks (
    id              uuid     PRIMARY KEY,
    source          text     NOT NULL,
    rel_path        text     NOT NULL,
    position        integer  NOT NULL,
    char_start      integer  NOT NULL,
    char_end        integer  NOT NULL,
    text            text     NOT NULL,
    heading_text    text,
    heading_level   smallint,
    heading_path    text[]   NOT NULL DEFAULT '{}',
    parent_chunk_id uuid,
    recipe          text     NOT NULL,

    CONSTRAINT content_chunks_document_position_key UNIQUE (source, rel_path, position),
    CONSTRAINT content_chunks_position_check CHECK (position >= 0),
    CONSTRAINT content_chunks_span_check CHECK (char_start >= 0 AND char_end >= char_start),
    CONSTRAINT content_chunks_heading_level_check CHECK (heading_level BETWEEN 1 AND 6),
    -- The three heading columns are NULL together exactly when the path is empty.
    CONSTRAINT content_chunks_headings_together_check CHECK (
        (heading_text IS NULL) = (heading_level IS NULL)
        AND (heading_text IS NULL) = (cardinality(heading_path) = 0)
    ),
    CONSTRAINT content_chunks_parent_not_self_check CHECK (parent_chunk_id <> id)
);

-- Lookups by document use the unique index above (source, rel_path, position).
CREATE INDEX content_chunks_parent_chunk_id_idx
    ON content_chunks (parent_chunk_id) WHERE parent_chunk_id IS NOT NULL;
CREATE INDEX content_chunks_source_recipe_idx ON content_chunks (source, recipe);
