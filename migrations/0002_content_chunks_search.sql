-- Full-text search over chunk text and heading path (`mdchunks search`).
-- A generated column: writers never set it, so the row type does not list it.
-- array_to_string is only STABLE in general, but over text[] it is immutable,
-- which a generated column requires; hence the small wrapper.

CREATE FUNCTION mdchunks_heading_path_text(path text[]) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT array_to_string(path, ' ') $$;

ALTER TABLE content_chunks
    ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', mdchunks_heading_path_text(heading_path)), 'A')
        || setweight(to_tsvector('english', text), 'B')
    ) STORED;

CREATE INDEX content_chunks_search_vector_idx ON content_chunks USING gin (search_vector);
