-- content_sections: one row per section of a document (docs/sections.md): per
-- heading, plus one for a non-empty preamble (ordinal 0, empty path).
-- flow/plugin/rows.py's SectionRow writes exactly these columns (a test
-- compares them), from the same memoized per-document function as the chunk
-- rows, under the same recipe; the reconciliation keeps both in step.
--
-- Spans in code points: the heading line(s) [char_start, heading_end), its
-- own body [heading_end, body_end) up to the next heading of any level, the
-- whole section [char_start, char_end) up to section_end; lines are 1-based
-- (the last line of each part). gap_starts/gap_texts: what of the own span
-- [char_start, body_end) no chunk holds (trimmed whitespace, heading lines a
-- chunker leaves out), so a section's text is rebuilt exactly from stored
-- rows: chunk texts plus gaps.
--
-- content_chunks.section_ids lists the sections each chunk holds (their own
-- span meets a character of the chunk that is not whitespace), in document
-- order; mdchunks_documents.sections counts a document's section rows, as
-- chunks counts its chunk rows.

CREATE TABLE content_sections (
    id                uuid     PRIMARY KEY,
    source            text     NOT NULL,
    rel_path          text     NOT NULL,
    ordinal           integer  NOT NULL,
    heading_text      text,
    heading_level     smallint,
    heading_path      text[]   NOT NULL DEFAULT '{}',
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
    gap_starts        integer[] NOT NULL DEFAULT '{}',
    gap_texts         text[]   NOT NULL DEFAULT '{}',
    recipe            text     NOT NULL,

    CONSTRAINT content_sections_document_ordinal_key UNIQUE (source, rel_path, ordinal),
    CONSTRAINT content_sections_ordinal_check CHECK (ordinal >= 0),
    CONSTRAINT content_sections_span_check CHECK (
        char_start >= 0 AND heading_end >= char_start AND body_end >= heading_end
        AND char_end >= body_end
    ),
    CONSTRAINT content_sections_lines_check CHECK (
        start_line >= 1 AND heading_end_line >= start_line
        AND body_end_line >= heading_end_line AND end_line >= body_end_line
    ),
    CONSTRAINT content_sections_heading_level_check CHECK (heading_level BETWEEN 1 AND 6),
    CONSTRAINT content_sections_headings_together_check CHECK (
        (heading_text IS NULL) = (heading_level IS NULL)
        AND (heading_text IS NULL) = (cardinality(heading_path) = 0)
        AND (breadcrumb IS NULL) = (cardinality(heading_path) = 0)
    ),
    CONSTRAINT content_sections_parent_not_self_check CHECK (parent_section_id <> id),
    CONSTRAINT content_sections_gaps_check CHECK (
        cardinality(gap_starts) = cardinality(gap_texts)
    )
);

CREATE INDEX content_sections_source_recipe_idx ON content_sections (source, recipe);

ALTER TABLE content_chunks ADD COLUMN IF NOT EXISTS section_ids uuid[] NOT NULL DEFAULT '{}';

ALTER TABLE mdchunks_documents
    ADD COLUMN sections integer NOT NULL DEFAULT 0,
    ADD CONSTRAINT mdchunks_documents_sections_check CHECK (sections >= 0);

COMMENT ON TABLE content_sections IS
    'One row per section of a document: per heading, and a non-empty preamble (docs/sections.md). Written with the chunk rows, by the same per-document function.';
COMMENT ON COLUMN content_sections.id IS
    'uuid5 of (source, rel_path, ordinal); content_chunks.section_ids point here';
COMMENT ON COLUMN content_sections.source IS 'The source the document belongs to';
COMMENT ON COLUMN content_sections.rel_path IS 'The document''s path in its source';
COMMENT ON COLUMN content_sections.ordinal IS
    'Position in the document''s sections, from 0 (the preamble, when there is one)';
COMMENT ON COLUMN content_sections.heading_text IS
    'The heading''s plain text; NULL for the preamble';
COMMENT ON COLUMN content_sections.heading_level IS 'The heading''s level, 1 to 6; NULL for the preamble';
COMMENT ON COLUMN content_sections.heading_path IS
    'Ancestors'' heading texts, root first, this heading last; empty for the preamble';
COMMENT ON COLUMN content_sections.breadcrumb IS
    'The heading path rendered A > B > C within the recipe''s budget; NULL exactly when the path is empty';
COMMENT ON COLUMN content_sections.char_start IS
    'Where the heading line starts (the preamble: where the content after any front matter starts), in code points';
COMMENT ON COLUMN content_sections.heading_end IS
    'Just past the heading''s last line; the own body starts here';
COMMENT ON COLUMN content_sections.body_end IS
    'The next heading of any level (the own body''s end), in code points';
COMMENT ON COLUMN content_sections.char_end IS
    'section_end: the next heading of this level or shallower, in code points';
COMMENT ON COLUMN content_sections.start_line IS '1-based line of the heading''s first line';
COMMENT ON COLUMN content_sections.heading_end_line IS '1-based line of the heading''s last line';
COMMENT ON COLUMN content_sections.body_end_line IS
    '1-based last line of the own body (the heading''s last line when the body is empty)';
COMMENT ON COLUMN content_sections.end_line IS '1-based last line of the whole section';
COMMENT ON COLUMN content_sections.parent_section_id IS
    'The enclosing section''s id; NULL at the top level and for the preamble';
COMMENT ON COLUMN content_sections.gap_starts IS
    'Where each of gap_texts starts, in code points';
COMMENT ON COLUMN content_sections.gap_texts IS
    'What of the own span [char_start, body_end) no chunk holds, so the section''s text is rebuilt from stored rows alone';
COMMENT ON COLUMN content_sections.recipe IS 'The recipe fingerprint the row was made with';
COMMENT ON COLUMN content_chunks.section_ids IS
    'The sections the chunk holds (those whose own span meets its text that is not whitespace), in document order (content_sections.id)';
COMMENT ON COLUMN mdchunks_documents.sections IS
    'How many content_sections rows the document has';
