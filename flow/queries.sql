-- The SQL of the flow that is more than a one-liner, by name (flow/queries.py
-- loads this file). psycopg placeholders: %(name)s.

-- name: lock_holder
-- Who holds an advisory lock (for the "source is busy" message).
SELECT a.pid, a.application_name, a.backend_start, a.client_addr::text AS client_addr
FROM pg_locks l
LEFT JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory'
  AND l.granted
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.classid = ((%(key)s::bigint >> 32) & 4294967295)::bigint::oid
  AND l.objid = (%(key)s::bigint & 4294967295)::bigint::oid
  AND l.objsubid = 1
LIMIT 1;

-- name: remember_source
INSERT INTO mdchunks_sources AS s (source, root, recipe, recipe_spec, max_doc_bytes)
VALUES (%(source)s, %(root)s, %(recipe)s, %(recipe_spec)s, %(max_doc_bytes)s)
ON CONFLICT (source) DO UPDATE
SET root = excluded.root,
    recipe = excluded.recipe,
    recipe_spec = excluded.recipe_spec,
    max_doc_bytes = excluded.max_doc_bytes,
    updated_at = now();

-- name: remember_recipe
INSERT INTO mdchunks_recipes (recipe, spec)
VALUES (%(recipe)s, %(spec)s)
ON CONFLICT (recipe) DO NOTHING;

-- name: rows_per_document
-- Per-document row counts, taken before and after the run to count the rows
-- it deleted: rows of each document are positions 0..n-1, and ids are a
-- function of the position, so a document that had b rows and has a now lost
-- max(b - a, 0).
SELECT rel_path, count(*) AS n
FROM content_chunks
WHERE source = %(source)s
GROUP BY rel_path;

-- name: rows_written_since
-- Rows inserted or updated by transactions that started at or after the
-- run began: their xmin lies in the window [start, start + span) of
-- transaction ids (32-bit, modulo wraparound).
SELECT count(*)
FROM content_chunks
WHERE source = %(source)s
  AND ((xmin::text::bigint - %(start_xid)s::bigint + 4294967296) %% 4294967296) < %(span)s::bigint;

-- name: record_documents
-- The rows of the documents this run processed (flow/ledger.py), in one
-- statement: arrays side by side, one element per document. A row that
-- already says the same is left alone (a full re-process writes nothing new).
INSERT INTO mdchunks_documents AS d
    (source, rel_path, recipe, content_hash, size_bytes, chunks, error, merges,
     breadcrumb_truncations)
SELECT %(source)s, p.rel_path, %(recipe)s, p.content_hash, p.size_bytes, p.chunks, p.error,
       p.merges, p.breadcrumb_truncations
FROM unnest(
    %(rel_paths)s::text[], %(content_hashes)s::text[], %(sizes)s::bigint[], %(chunks)s::integer[],
    %(errors)s::text[], %(merges)s::integer[], %(truncations)s::integer[]
) AS p(rel_path, content_hash, size_bytes, chunks, error, merges, breadcrumb_truncations)
ON CONFLICT (source, rel_path) DO UPDATE
SET recipe = excluded.recipe,
    content_hash = excluded.content_hash,
    size_bytes = excluded.size_bytes,
    chunks = excluded.chunks,
    error = excluded.error,
    merges = excluded.merges,
    breadcrumb_truncations = excluded.breadcrumb_truncations
WHERE (d.recipe, d.content_hash, d.size_bytes, d.chunks, d.error, d.merges,
       d.breadcrumb_truncations)
      IS DISTINCT FROM
      (excluded.recipe, excluded.content_hash, excluded.size_bytes, excluded.chunks,
       excluded.error, excluded.merges, excluded.breadcrumb_truncations);

-- name: reconcile_documents
-- Document rows the run did not declare: documents that are not in the
-- listing (gone, or skipped before processing) or of another recipe.
-- `<> ALL(array)` is a hash look-up (PostgreSQL 14+) at any listing size; a
-- NOT EXISTS over unnest() stops being hashed once the listing outgrows
-- work_mem (about 100,000 paths) and turns quadratic (minutes at 200,000).
DELETE FROM mdchunks_documents d
WHERE d.source = %(source)s
  AND (
      d.recipe <> %(recipe)s
      OR d.rel_path <> ALL(%(mounted)s::text[])
  );

-- name: reconcile_failed_chunks
-- Chunk rows of documents whose processing raised this run: cocoindex keeps
-- the old rows of a failed component; a failed document keeps none.
DELETE FROM content_chunks
WHERE source = %(source)s
  AND rel_path = ANY(%(failed)s::text[]);

-- name: reconcile_chunks
-- Every chunk row must be declared by its document's row: same recipe, no
-- error, position below the document's chunk count. Anything else (other
-- recipes, documents that are gone or failed, extra positions of a document
-- that shrank while the engine state was lost) goes.
--
-- Written as one primary-key look-up per chunk row (a scalar subquery, never
-- flattened into a join), so its cost is linear whatever the statistics say:
-- as a NOT EXISTS anti-join, right after a bulk load (no ANALYZE yet) the
-- planner chose a nested loop over both tables, quadratic in the documents
-- (6 s at 7,425 documents, minutes at 50,000). (source, rel_path) is the
-- primary key of mdchunks_documents, and position >= 0, so a missing
-- document row (coalesce to 0) deletes every chunk row of the document.
DELETE FROM content_chunks c
WHERE c.source = %(source)s
  AND (
      c.recipe <> %(recipe)s
      OR c.position >= coalesce((
          SELECT d.chunks
          FROM mdchunks_documents d
          WHERE d.source = c.source
            AND d.rel_path = c.rel_path
            AND d.recipe = %(recipe)s
            AND d.error IS NULL
      ), 0)
  );

-- name: documents_missing_rows
-- After reconciling: listed documents that should have rows but do not have
-- all of them (no document row at all, or fewer chunk rows than it says).
-- Only a database changed behind the engine's back gets here (restored,
-- edited by hand, or a state directory that describes another database).
SELECT m.rel_path
FROM unnest(%(mounted)s::text[]) AS m(rel_path)
LEFT JOIN mdchunks_documents d ON d.source = %(source)s AND d.rel_path = m.rel_path
WHERE NOT (m.rel_path = ANY(%(failed)s::text[]))
  AND (
      d.rel_path IS NULL
      OR (d.error IS NULL AND d.chunks <> (
          SELECT count(*) FROM content_chunks c
          WHERE c.source = d.source AND c.rel_path = d.rel_path
      ))
  )
ORDER BY m.rel_path;

-- name: failed_documents
-- Failures recorded on document rows of the listing (this run's and those of
-- unchanged documents that failed in an earlier run).
SELECT rel_path, error
FROM mdchunks_documents
WHERE source = %(source)s AND error IS NOT NULL
ORDER BY rel_path;

-- name: status_sources
SELECT s.source,
       s.root,
       s.recipe AS current_recipe,
       s.updated_at,
       coalesce(d.documents, 0) AS documents,
       coalesce(d.failed, 0) AS failed,
       coalesce(c.chunks, 0) AS chunks,
       coalesce(c.with_headings, 0) AS with_headings
FROM (
    SELECT source, root, recipe, updated_at FROM mdchunks_sources
    UNION
    SELECT DISTINCT source, NULL, NULL, NULL::timestamptz FROM content_chunks
    WHERE source NOT IN (SELECT source FROM mdchunks_sources)
) s
LEFT JOIN (
    SELECT source, count(*) AS documents, count(*) FILTER (WHERE error IS NOT NULL) AS failed
    FROM mdchunks_documents GROUP BY source
) d USING (source)
LEFT JOIN (
    SELECT source, count(*) AS chunks, count(*) FILTER (WHERE heading_text IS NOT NULL) AS with_headings
    FROM content_chunks GROUP BY source
) c USING (source)
ORDER BY s.source;

-- name: status_recipes
SELECT c.source, c.recipe, count(*) AS rows, r.spec
FROM content_chunks c
LEFT JOIN mdchunks_recipes r USING (recipe)
GROUP BY c.source, c.recipe, r.spec
ORDER BY c.source, count(*) DESC;

-- name: drop_source
WITH chunks AS (DELETE FROM content_chunks WHERE source = %(source)s RETURNING 1),
     documents AS (DELETE FROM mdchunks_documents WHERE source = %(source)s RETURNING 1),
     sources AS (DELETE FROM mdchunks_sources WHERE source = %(source)s RETURNING 1)
SELECT (SELECT count(*) FROM chunks), (SELECT count(*) FROM documents), (SELECT count(*) FROM sources);

-- name: source_totals
-- A source's rows after a run, and the chunker counts its documents keep.
SELECT
    (SELECT count(*) FROM content_chunks WHERE source = %(source)s) AS chunks,
    coalesce(sum(merges), 0) AS merges,
    coalesce(sum(breadcrumb_truncations), 0) AS breadcrumb_truncations
FROM mdchunks_documents
WHERE source = %(source)s;
