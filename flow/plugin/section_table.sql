-- The section table for a host's own cocoindex app (docs/plugin.md,
-- docs/sections.md): what mdchunks' migrations make of `content_sections`,
-- under the host's table name. `mdchunks.section_table_sql(name)` fills in the
-- table (a quoted identifier, schema-qualified if asked) and the prefix of
-- its constraints' and indexes' names. A test keeps it equal, column for
-- column and constraint for constraint, to `content_sections`.

CREATE TABLE {table} (
    id                uuid     PRIMARY KEY,
    source            text     NOT NULL,
    rel_path          text     NOT NULL,
    ordinal           integer  NOT NULL,
    heading_text      text,
    heading_level     smallint,
    heading_path      text[]   NOT NULL DEFAULT '{{}}',
    breadcrumb        text,
    char_start        integer  NOT NULL,
    heading_end       integer  NOT NULL,
    body_end          integer  NOT NULL,
    char_end          integer  NOT NULL,
    start_line        integer  NOT NULL,
    heading_end_line  integer  NOT NULL,
    body_end_line     integer  NOT NULL,
    end_line          integer  NOT NULL,
    parent_section_id uuid,
    gap_starts        integer[] NOT NULL DEFAULT '{{}}',
    gap_texts         text[]   NOT NULL DEFAULT '{{}}',
    recipe            text     NOT NULL,
    title             text,

    CONSTRAINT "{prefix}_ordinal_check" CHECK (ordinal >= 0),
    CONSTRAINT "{prefix}_span_check" CHECK (
        char_start >= 0 AND heading_end >= char_start AND body_end >= heading_end
        AND char_end >= body_end
    ),
    CONSTRAINT "{prefix}_lines_check" CHECK (
        start_line >= 1 AND heading_end_line >= start_line
        AND body_end_line >= heading_end_line AND end_line >= body_end_line
    ),
    CONSTRAINT "{prefix}_heading_level_check" CHECK (heading_level BETWEEN 1 AND 6),
    CONSTRAINT "{prefix}_headings_together_check" CHECK (
        (heading_text IS NULL) = (heading_level IS NULL)
        AND (heading_text IS NULL) = (cardinality(heading_path) = 0)
        AND (breadcrumb IS NULL) = (cardinality(heading_path) = 0 AND title IS NULL)
    ),
    CONSTRAINT "{prefix}_parent_not_self_check" CHECK (parent_section_id <> id),
    CONSTRAINT "{prefix}_gaps_check" CHECK (
        cardinality(gap_starts) = cardinality(gap_texts)
    )
);

CREATE INDEX "{prefix}_source_recipe_idx" ON {table} (source, recipe);
-- A document's sections (migration 0016), as for chunks.
CREATE INDEX "{prefix}_document_idx" ON {table} (source, rel_path);
