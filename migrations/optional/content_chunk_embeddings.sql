-- content_chunk_embeddings: one vector per chunk, for `mdchunks search
-- --method semantic|hybrid`. OPTIONAL: not a numbered migration, because it
-- needs the pgvector extension and every other feature works without it.
-- flow/retrieval/embedding.py runs this file when `ingest --embed` first needs it (under
-- the migration lock); it is idempotent. The base migrations never mention
-- `vector`, so a server without pgvector keeps working.
--
-- id is the chunk's id and references it ON DELETE CASCADE: whoever deletes a
-- chunk row (cocoindex, the reconciliation, `mdchunks drop`, a person with
-- psql) deletes its vector in the same statement, so a vector never outlives
-- its chunk. input_md5 is md5 of the text that was embedded (the chunk's
-- embed_text, or its text when embed_text is empty): a chunk whose text
-- changed under the same id is re-embedded by the next `ingest --embed`.
--
-- `embedding` is `vector` without a dimension: each model's vectors have the
-- model's own size (--embed-model), and `model` keeps them apart (a search
-- compares the vectors of one model only). pgvector indexes a fixed
-- dimension, so each model gets its own HNSW index, made by flow/retrieval/embedding.py
-- when that model's vectors are first written: a partial expression index
--   USING hnsw ((embedding::vector(N)) vector_cosine_ops)
--   WHERE model = '<model>' AND vector_dims(embedding) = N
--
-- Upgrade: an mdchunks that knew one model made this table with
-- `embedding vector(384)`. The DO block below lifts that limit in place
-- (changing only the column's declared size: no row is rewritten, every
-- vector stays), so running this file on an old database upgrades it, and on
-- a current one changes nothing.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE IF NOT EXISTS content_chunk_embeddings (
    id        uuid        PRIMARY KEY REFERENCES content_chunks (id) ON DELETE CASCADE,
    source    text        NOT NULL,
    rel_path  text        NOT NULL,
    model     text        NOT NULL,
    input_md5 text        NOT NULL,
    embedding vector      NOT NULL
);

DO $$
BEGIN
    IF (SELECT atttypmod FROM pg_attribute
        WHERE attrelid = 'content_chunk_embeddings'::regclass
          AND attname = 'embedding' AND NOT attisdropped) <> -1 THEN
        ALTER TABLE content_chunk_embeddings ALTER COLUMN embedding TYPE vector;
    END IF;
END
$$;

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
    'The sentence model that made the vector: all-MiniLM-L6-v2 (bundled), an installed model package, or the absolute path of a model folder (--embed-model).';
COMMENT ON COLUMN content_chunk_embeddings.input_md5 IS
    'md5 of the long-input rule''s prefix (empty for truncation, ''windows'' and a newline for windows pooled) and the text embedded (the chunk''s embed_text, or its text when that is empty): a chunk whose text changed is embedded again.';
COMMENT ON COLUMN content_chunk_embeddings.embedding IS
    'The vector, of the model''s own size (all-MiniLM-L6-v2: 384), compared by cosine distance with vectors of the same model only.';
