-- The statements of flow/retrieval/embedding.py over content_chunk_embeddings (the table
-- is migrations/optional/content_chunk_embeddings.sql). Named as in
-- flow/db/queries.sql; {placeholders} are filled by str.format with quote_ident
-- and quote_literal (flow/db/connection.py), %(name)s are parameters.

-- name: embedding_schema
-- What is there: pgvector's version (NULL: not enabled), whether the table
-- exists, and the typmod of its embedding column (-1: any dimension, the
-- current shape; 384: a table made by an mdchunks that knew one model).
SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS extension,
       to_regclass('content_chunk_embeddings') IS NOT NULL AS table_exists,
       (SELECT atttypmod FROM pg_attribute
        WHERE attrelid = to_regclass('content_chunk_embeddings')
          AND attname = 'embedding' AND NOT attisdropped) AS typmod

-- name: embedding_pending
-- Chunks of the source whose vector is missing, of another model, of another
-- size, or made from another input (input_md5: md5 of the long-input rule's
-- prefix and the text; the prefix of `truncate` is empty, so vectors written
-- before the rule existed count as truncated).
SELECT c.id, c.rel_path, coalesce(nullif(c.embed_text, ''), c.text) AS input
FROM content_chunks c
LEFT JOIN content_chunk_embeddings e ON e.id = c.id
WHERE c.source = %(source)s
  AND (e.id IS NULL
       OR e.model <> %(model)s
       OR (%(dimensions)s::int IS NOT NULL AND vector_dims(e.embedding) <> %(dimensions)s::int)
       OR e.input_md5 <> md5(%(rule)s || coalesce(nullif(c.embed_text, ''), c.text)))
ORDER BY c.rel_path, c.position

-- name: embedding_upsert
INSERT INTO content_chunk_embeddings (id, source, rel_path, model, input_md5, embedding)
VALUES (%s, %s, %s, %s, md5(%s || %s), %s::vector)
ON CONFLICT (id) DO UPDATE
SET source = excluded.source, rel_path = excluded.rel_path, model = excluded.model,
    input_md5 = excluded.input_md5, embedding = excluded.embedding

-- name: embedding_delete_other_models
DELETE FROM content_chunk_embeddings WHERE source = %(source)s AND model <> %(model)s

-- name: embedding_delete_source
DELETE FROM content_chunk_embeddings WHERE source = %(source)s

-- name: embedding_stored_dimensions
SELECT vector_dims(embedding) FROM content_chunk_embeddings
WHERE source = %(source)s AND model = %(model)s
LIMIT 1

-- name: embedding_count
SELECT count(*) FROM content_chunk_embeddings WHERE source = %(source)s AND model = %(model)s

-- name: embedding_counts
-- How many vectors each source has of each model (`mdchunks status`).
SELECT source, model, count(*) FROM content_chunk_embeddings GROUP BY source, model
ORDER BY source, model;

-- name: embedding_models
-- The (source, model) pairs of the stored vectors (one source, or all): a
-- loose scan of the (source, model) index, one probe per pair, however many
-- vectors there are.
WITH RECURSIVE pairs AS (
    (SELECT source, model FROM content_chunk_embeddings
     WHERE %(source)s::text IS NULL OR source = %(source)s::text
     ORDER BY source, model
     LIMIT 1)
    UNION ALL
    SELECT later.source, later.model
    FROM pairs, LATERAL (
        SELECT e.source, e.model FROM content_chunk_embeddings e
        WHERE (e.source, e.model) > (pairs.source, pairs.model)
          AND (%(source)s::text IS NULL OR e.source = %(source)s::text)
        ORDER BY e.source, e.model
        LIMIT 1
    ) later
)
SELECT source, model FROM pairs

-- name: embedding_index
-- The HNSW index (cosine) of one model's vectors of one size: pgvector indexes
-- a column of a fixed dimension, so the index is over the expression
-- `embedding::vector(N)` of the rows of that model and size (a partial index:
-- the cast never sees a vector of another size). Placeholders: name, model,
-- dimensions.
CREATE INDEX IF NOT EXISTS {name} ON content_chunk_embeddings
USING hnsw ((embedding::vector({dimensions})) vector_cosine_ops)
WHERE model = {model} AND vector_dims(embedding) = {dimensions}

-- name: embedding_nearest
-- The k nearest vectors of one model and size to the query vector, best first
-- (ties by source, path, position). The placeholder `order` is the distance
-- the inner query orders by: `embedding::vector(N) <=> q` matches the expression of the HNSW
-- index (approximate, fast), `embedding <=> q` matches none (an exact scan).
SELECT nearest.id, 1 - nearest.distance AS score
FROM (
    SELECT e.id, e.embedding <=> %(vector)s::vector AS distance
    FROM content_chunk_embeddings e
    WHERE e.model = {model} AND vector_dims(e.embedding) = {dimensions}
      AND (%(source)s::text IS NULL OR e.source = %(source)s::text)
      AND (%(path_prefix)s::text IS NULL OR starts_with(e.rel_path, %(path_prefix)s::text))
    ORDER BY {order}
    LIMIT %(k)s
) nearest
JOIN content_chunks c ON c.id = nearest.id
ORDER BY nearest.distance, c.source, c.rel_path, c.position
