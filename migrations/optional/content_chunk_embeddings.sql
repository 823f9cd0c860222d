-- content_chunk_embeddings: one vector per chunk, for `mdchunks search
-- --method semantic|hybrid`. OPTIONAL: not a numbered migration, because it
-- needs the pgvector extension and every other feature works without it.
-- flow/embedding.py runs this file when `ingest --embed` first needs it (under
-- the migration lock); it is idempotent. The base migrations never mention
-- `vector`, so a server without pgvector keeps working.
--
-- id is the chunk's id and references it ON DELETE CASCADE: whoever deletes a
-- chunk row (cocoindex, the reconciliation, `mdchunks drop`, a person with
-- psql) deletes its vector in the same statement, so a vector never outlives
-- its chunk. input_md5 is md5 of the text that was embedded (the chunk's
-- embed_text, or its text when embed_text is empty): a chunk whose text
-- changed under the same id is re-embedded by the next `ingest --embed`.
-- The dimension is that of the one model mdchunks ships for (all-MiniLM-L6-v2).
-- No ANN index: search is an exact scan (fine to ~10^5 chunks); for more, add
--   CREATE INDEX ON content_chunk_embeddings USING hnsw (embedding vector_cosine_ops);

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE IF NOT EXISTS content_chunk_embeddings (
    id        uuid        PRIMARY KEY REFERENCES content_chunks (id) ON DELETE CASCADE,
    source    text        NOT NULL,
    rel_path  text        NOT NULL,
    model     text        NOT NULL,
    input_md5 text        NOT NULL,
    embedding vector(384) NOT NULL
);

CREATE INDEX IF NOT EXISTS content_chunk_embeddings_source_model_idx
    ON content_chunk_embeddings (source, model);

COMMENT ON TABLE content_chunk_embeddings IS
    'mdchunks (optional, `ingest --embed`): one vector per chunk of content_chunks, for `mdchunks search --method semantic|hybrid`.';
COMMENT ON COLUMN content_chunk_embeddings.id IS
    'The chunk''s id (content_chunks.id); deleting the chunk deletes its vector.';
COMMENT ON COLUMN content_chunk_embeddings.source IS
    'The chunk''s source (as content_chunks.source).';
COMMENT ON COLUMN content_chunk_embeddings.rel_path IS
    'The chunk''s document (as content_chunks.rel_path).';
COMMENT ON COLUMN content_chunk_embeddings.model IS
    'The sentence model that made the vector (all-MiniLM-L6-v2).';
COMMENT ON COLUMN content_chunk_embeddings.input_md5 IS
    'md5 of the text embedded (the chunk''s embed_text, or its text when that is empty): a chunk whose text changed is embedded again.';
COMMENT ON COLUMN content_chunk_embeddings.embedding IS
    'The vector (384 dimensions), compared by cosine distance.';
