-- The SQL of the flow that is more than a one-liner, by name (flow/db/queries.py
-- loads this file). Placeholders %(name)s (flow/db/connection.py numbers them).
-- `{chunks}` is the chunk table a read goes to, ours or a host's, filled in as a
-- quoted identifier by flow/retrieval/tables.py (`ChunkTable.query`).

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
INSERT INTO mdchunks_sources AS s
    (source, root, recipe, recipe_spec, max_doc_bytes, follow_outside_links)
VALUES (%(source)s, %(root)s, %(recipe)s, %(recipe_spec)s, %(max_doc_bytes)s,
        %(follow_outside_links)s)
ON CONFLICT (source) DO UPDATE
SET root = excluded.root,
    recipe = excluded.recipe,
    recipe_spec = excluded.recipe_spec,
    max_doc_bytes = excluded.max_doc_bytes,
    follow_outside_links = excluded.follow_outside_links,
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
-- The rows of the documents this run processed (flow/source/ledger.py), in one
-- statement: arrays side by side, one element per document. A row that
-- already says the same is left alone (a full re-process writes nothing new).
INSERT INTO mdchunks_documents AS d
    (source, rel_path, recipe, content_hash, size_bytes, chunks, error, merges,
     breadcrumb_truncations, sections, source_format, import_note, title)
SELECT %(source)s, p.rel_path, %(recipe)s, p.content_hash, p.size_bytes, p.chunks, p.error,
       p.merges, p.breadcrumb_truncations, p.sections, p.source_format, p.import_note, p.title
FROM unnest(
    %(rel_paths)s::text[], %(content_hashes)s::text[], %(sizes)s::bigint[], %(chunks)s::integer[],
    %(errors)s::text[], %(merges)s::integer[], %(truncations)s::integer[],
    %(sections)s::integer[], %(formats)s::text[], %(notes)s::text[], %(titles)s::text[]
) AS p(rel_path, content_hash, size_bytes, chunks, error, merges, breadcrumb_truncations,
       sections, source_format, import_note, title)
ON CONFLICT (source, rel_path) DO UPDATE
SET recipe = excluded.recipe,
    content_hash = excluded.content_hash,
    size_bytes = excluded.size_bytes,
    chunks = excluded.chunks,
    error = excluded.error,
    merges = excluded.merges,
    breadcrumb_truncations = excluded.breadcrumb_truncations,
    sections = excluded.sections,
    source_format = excluded.source_format,
    import_note = excluded.import_note,
    title = excluded.title
WHERE (d.recipe, d.content_hash, d.size_bytes, d.chunks, d.error, d.merges,
       d.breadcrumb_truncations, d.sections, d.source_format, d.import_note, d.title)
      IS DISTINCT FROM
      (excluded.recipe, excluded.content_hash, excluded.size_bytes, excluded.chunks,
       excluded.error, excluded.merges, excluded.breadcrumb_truncations, excluded.sections,
       excluded.source_format, excluded.import_note, excluded.title);

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
-- Chunk rows of documents whose processing raised this run: a failed
-- component writes nothing, so its old rows are still there; a failed
-- document keeps none.
DELETE FROM content_chunks
WHERE source = %(source)s
  AND rel_path = ANY(%(failed)s::text[]);

-- name: reconcile_chunks
-- Every chunk row must be declared by its document's row: same recipe, no
-- error, position below the document's chunk count. Anything else (other
-- recipes, documents that are gone or failed, extra positions of a document
-- that shrank) goes. Of every document, or (a live watch, after each change)
-- only of `rel_paths`.
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
  AND (%(rel_paths)s::text[] IS NULL OR c.rel_path = ANY(%(rel_paths)s::text[]))
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

-- name: reconcile_failed_sections
-- Section rows of documents whose processing raised this run, as for chunks.
DELETE FROM content_sections
WHERE source = %(source)s
  AND rel_path = ANY(%(failed)s::text[]);

-- name: reconcile_sections
-- Every section row must be declared by its document's row, as for chunks
-- (reconcile_chunks, which says why it is written this way): same recipe, no
-- error, ordinal below the document's section count. Of every document, or
-- (a live watch, after each change) only of `rel_paths`.
DELETE FROM content_sections s
WHERE s.source = %(source)s
  AND (%(rel_paths)s::text[] IS NULL OR s.rel_path = ANY(%(rel_paths)s::text[]))
  AND (
      s.recipe <> %(recipe)s
      OR s.ordinal >= coalesce((
          SELECT d.sections
          FROM mdchunks_documents d
          WHERE d.source = s.source
            AND d.rel_path = s.rel_path
            AND d.recipe = %(recipe)s
            AND d.error IS NULL
      ), 0)
  );

-- name: write_chunks
-- Chunk rows of processed documents (flow/source/writes.py), many documents
-- in one statement: a JSON array of row objects, written from the run's
-- ledger rather than as a cocoindex target (the module says why). A row that
-- already says the same is left alone: it keeps its xmin (the run's count of
-- rows written) and its vector (content_chunk_embeddings, by id). The
-- trigger sets the search columns of the rows proposed.
INSERT INTO content_chunks AS c
    (id, source, rel_path, position, char_start, char_end, text, heading_text,
     heading_level, heading_path, parent_chunk_id, breadcrumb, table_header, recipe,
     start_line, end_line, section_ids, title, unsearched, language)
SELECT r.id, r.source, r.rel_path, r.position, r.char_start, r.char_end, r.text,
       r.heading_text, r.heading_level, r.heading_path, r.parent_chunk_id, r.breadcrumb,
       r.table_header, r.recipe, r.start_line, r.end_line, r.section_ids,
       r.title, coalesce(r.unsearched, '{}'), r.language
FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(
    id uuid, source text, rel_path text, position integer, char_start integer,
    char_end integer, text text, heading_text text, heading_level smallint,
    heading_path text[], parent_chunk_id uuid, breadcrumb text, table_header text,
    recipe text, start_line integer, end_line integer, section_ids uuid[], title text,
    unsearched integer[], language text
)
ON CONFLICT (id) DO UPDATE
SET source = excluded.source,
    rel_path = excluded.rel_path,
    position = excluded.position,
    char_start = excluded.char_start,
    char_end = excluded.char_end,
    text = excluded.text,
    heading_text = excluded.heading_text,
    heading_level = excluded.heading_level,
    heading_path = excluded.heading_path,
    parent_chunk_id = excluded.parent_chunk_id,
    breadcrumb = excluded.breadcrumb,
    table_header = excluded.table_header,
    recipe = excluded.recipe,
    start_line = excluded.start_line,
    end_line = excluded.end_line,
    section_ids = excluded.section_ids,
    title = excluded.title,
    unsearched = excluded.unsearched,
    language = excluded.language
WHERE (c.source, c.rel_path, c.position, c.char_start, c.char_end, c.text, c.heading_text,
       c.heading_level, c.heading_path, c.parent_chunk_id, c.breadcrumb, c.table_header,
       c.recipe, c.start_line, c.end_line, c.section_ids, c.title, c.unsearched,
       c.language)
      IS DISTINCT FROM
      (excluded.source, excluded.rel_path, excluded.position, excluded.char_start,
       excluded.char_end, excluded.text, excluded.heading_text, excluded.heading_level,
       excluded.heading_path, excluded.parent_chunk_id, excluded.breadcrumb,
       excluded.table_header, excluded.recipe, excluded.start_line, excluded.end_line,
       excluded.section_ids, excluded.title, excluded.unsearched,
       excluded.language);

-- name: write_sections
-- Section rows of processed documents (flow/source/writes.py), many
-- documents in one statement: a JSON array of row objects. Written from the
-- run's ledger, as the document rows are, rather than as a second cocoindex
-- target (docs/sections.md says why). A row that already says the same is
-- left alone.
INSERT INTO content_sections AS s
    (id, source, rel_path, ordinal, heading_text, heading_level, heading_path, breadcrumb,
     char_start, heading_end, body_end, char_end, start_line, heading_end_line,
     body_end_line, end_line, parent_section_id, gap_starts, gap_texts, recipe, title)
SELECT r.id, r.source, r.rel_path, r.ordinal, r.heading_text, r.heading_level,
       r.heading_path, r.breadcrumb, r.char_start, r.heading_end, r.body_end, r.char_end,
       r.start_line, r.heading_end_line, r.body_end_line, r.end_line, r.parent_section_id,
       r.gap_starts, r.gap_texts, r.recipe, r.title
FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(
    id uuid, source text, rel_path text, ordinal integer, heading_text text,
    heading_level smallint, heading_path text[], breadcrumb text, char_start integer,
    heading_end integer, body_end integer, char_end integer, start_line integer,
    heading_end_line integer, body_end_line integer, end_line integer,
    parent_section_id uuid, gap_starts integer[], gap_texts text[], recipe text, title text
)
ON CONFLICT (id) DO UPDATE
SET source = excluded.source,
    rel_path = excluded.rel_path,
    ordinal = excluded.ordinal,
    heading_text = excluded.heading_text,
    heading_level = excluded.heading_level,
    heading_path = excluded.heading_path,
    breadcrumb = excluded.breadcrumb,
    char_start = excluded.char_start,
    heading_end = excluded.heading_end,
    body_end = excluded.body_end,
    char_end = excluded.char_end,
    start_line = excluded.start_line,
    heading_end_line = excluded.heading_end_line,
    body_end_line = excluded.body_end_line,
    end_line = excluded.end_line,
    parent_section_id = excluded.parent_section_id,
    gap_starts = excluded.gap_starts,
    gap_texts = excluded.gap_texts,
    recipe = excluded.recipe,
    title = excluded.title
WHERE (s.*) IS DISTINCT FROM (excluded.*);

-- name: forget_chunks
-- Live mode: the chunk rows of documents that are gone.
DELETE FROM content_chunks
WHERE source = %(source)s
  AND rel_path = ANY(%(rel_paths)s::text[]);

-- name: forget_sections
-- Live mode: the section rows of documents that are gone.
DELETE FROM content_sections
WHERE source = %(source)s
  AND rel_path = ANY(%(rel_paths)s::text[]);

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
      OR (d.error IS NULL AND d.sections <> (
          SELECT count(*) FROM content_sections s
          WHERE s.source = d.source AND s.rel_path = d.rel_path
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
    -- A document a run wrote rows of but did not finish recording (it was
    -- stopped: its document rows are written after the engine) counts too;
    -- only a source whose last run did not finish can have one.
    SELECT source, count(*) AS documents, count(*) FILTER (WHERE error IS NOT NULL) AS failed
    FROM (
        SELECT source, rel_path, error FROM mdchunks_documents
        UNION ALL
        SELECT DISTINCT c.source, c.rel_path, NULL FROM content_chunks c
        WHERE c.source IN (
            SELECT source FROM mdchunks_sources
            WHERE starts_with(state_token, %(in_progress)s::text)
        )
          AND NOT EXISTS (
            SELECT 1 FROM mdchunks_documents m
            WHERE m.source = c.source AND m.rel_path = c.rel_path
        )
    ) documents
    GROUP BY source
) d USING (source)
LEFT JOIN (
    SELECT source, count(*) AS chunks, count(*) FILTER (WHERE heading_text IS NOT NULL) AS with_headings
    FROM content_chunks GROUP BY source
) c USING (source)
ORDER BY s.source;

-- name: unfinished_runs
-- Sources whose last run marked their engine state in progress and did not
-- stamp it (flow/source/state.py), optionally one (%(source)s NULL: all),
-- and what holds the source's lock now (flow/source/lock.py's key): NULL for
-- nothing (the run stopped), else the holder's application_name (a watch's
-- starts with 'mdchunks watch ').
SELECT s.source,
       (SELECT coalesce(a.application_name, '')
        FROM pg_locks l
        LEFT JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory'
          AND l.granted
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = ((k.key >> 32) & 4294967295)::bigint::oid
          AND l.objid = (k.key & 4294967295)::bigint::oid
          AND l.objsubid = 1
        LIMIT 1) AS holder
FROM mdchunks_sources s
CROSS JOIN LATERAL (SELECT hashtextextended(%(lock_prefix)s::text || s.source, 0) AS key) k
WHERE starts_with(s.state_token, %(in_progress)s::text)
  AND (%(source)s::text IS NULL OR s.source = %(source)s::text)
ORDER BY s.source;

-- name: status_languages
-- Each source's documents by language (content_chunks.language, migration
-- 0018; NULL: none stated, analysed as English).
SELECT source, coalesce(language, '') AS language, count(DISTINCT rel_path) AS documents
FROM content_chunks
GROUP BY source, language
ORDER BY source, count(DISTINCT rel_path) DESC, language;

-- name: status_formats
-- Each source's ingested documents (failed ones apart) by what their files
-- were (markdown, text, html, ...).
SELECT source, source_format, count(*) AS documents
FROM mdchunks_documents
WHERE error IS NULL
GROUP BY source, source_format
ORDER BY source, count(*) DESC, source_format;

-- name: remember_skipped
-- The files the walk of this run did not take, by suffix (`status` shows them).
UPDATE mdchunks_sources SET skipped_suffixes = %(skipped)s::jsonb WHERE source = %(source)s;

-- name: status_skipped
SELECT source, skipped_suffixes FROM mdchunks_sources ORDER BY source;

-- name: status_recipes
SELECT c.source, c.recipe, count(*) AS rows, r.spec
FROM content_chunks c
LEFT JOIN mdchunks_recipes r USING (recipe)
GROUP BY c.source, c.recipe, r.spec
ORDER BY c.source, count(*) DESC;

-- name: drop_source
WITH chunks AS (DELETE FROM content_chunks WHERE source = %(source)s RETURNING 1),
     sections AS (DELETE FROM content_sections WHERE source = %(source)s RETURNING 1),
     search_stats AS (DELETE FROM mdchunks_search_stats WHERE source = %(source)s RETURNING 1),
     search_terms AS (DELETE FROM mdchunks_search_terms WHERE source = %(source)s RETURNING 1),
     search_top AS (DELETE FROM mdchunks_search_top WHERE source = %(source)s RETURNING 1),
     documents AS (DELETE FROM mdchunks_documents WHERE source = %(source)s RETURNING 1),
     sources AS (DELETE FROM mdchunks_sources WHERE source = %(source)s RETURNING 1)
SELECT (SELECT count(*) FROM chunks), (SELECT count(*) FROM documents), (SELECT count(*) FROM sources),
       (SELECT count(*) FROM sections);


-- name: search_stats_refresh
-- BM25's collection statistics of one source (flow/retrieval/lexical_stats.py), recomputed
-- from its rows: chunk count and total lengths here, the document frequency
-- of each lexeme in the next two statements. The caller runs the three in one
-- transaction: a search sees the old statistics or the new ones, never a mix.
INSERT INTO mdchunks_search_stats AS s
    (source, chunks, heading_length, text_length, min_heading_length, min_text_length,
     languages)
SELECT %(source)s, count(*), coalesce(sum(search_heading_length), 0),
       coalesce(sum(search_text_length), 0), min(search_heading_length), min(search_text_length),
       array_agg(DISTINCT language)
FROM content_chunks
WHERE source = %(source)s
ON CONFLICT (source) DO UPDATE
SET chunks = excluded.chunks,
    languages = excluded.languages,
    heading_length = excluded.heading_length,
    text_length = excluded.text_length,
    min_heading_length = excluded.min_heading_length,
    min_text_length = excluded.min_text_length,
    refreshed_at = now()
RETURNING chunks, heading_length, text_length, min_heading_length, min_text_length;

-- name: search_terms_clear
DELETE FROM mdchunks_search_terms WHERE source = %(source)s;

-- name: search_terms_refresh
-- unnest lists each lexeme of a vector once, so count(*) per lexeme is its
-- document frequency; the most positions it has in one chunk, in all and in
-- the heading path (weight A), bound what one chunk can get from it
-- (MaxScore's ceilings, flow/retrieval/lexical.py). One pass over the vectors: counting
-- the A weights per entry costs less than reading the vectors twice.
INSERT INTO mdchunks_search_terms
    (source, lexeme, df, max_occurrences, max_heading_occurrences)
SELECT %(source)s, u.lexeme, count(*), max(cardinality(u.positions)),
       coalesce(max(cardinality(array_positions(u.weights, 'A'))), 0)
FROM content_chunks c, unnest(c.search_vector) AS u
WHERE c.source = %(source)s
GROUP BY u.lexeme;

-- name: search_terms_refresh_df
-- The document frequencies alone (a source too small for the bounds to pay):
-- tsvector_to_array lists each lexeme of a vector once, without positions.
INSERT INTO mdchunks_search_terms (source, lexeme, df)
SELECT %(source)s, t.lexeme, count(*)
FROM content_chunks c, unnest(tsvector_to_array(c.search_vector)) AS t(lexeme)
WHERE c.source = %(source)s
GROUP BY t.lexeme;

-- name: search_top_clear
DELETE FROM mdchunks_search_top WHERE source = %(source)s;

-- name: search_top_refresh
-- The top chunks of each common lexeme of the source (migration 0019), by
-- BM25's saturation tf / (tf + K) at the source's mean length %(avgdl)s, tf
-- weighted as lexical.py weighs it: the %(size)s largest, and the floor no
-- other chunk exceeds. Only occurrences of weighted tf 2 or more are ranked
-- (a sort of the few, not of every chunk that holds a common word): a chunk
-- of tf 1 gets at most %(single)s (1 / (1 + K) at the shortest chunk), so
-- the floor is at least that. `floors`: after each %(segment)s listed, the
-- saturation of the next (none past the end of a short list: the floor).
WITH ranked AS (
    SELECT p.lexeme, p.id, p.tf / (p.tf + p.norm) AS saturation,
           row_number() OVER (PARTITION BY p.lexeme ORDER BY p.tf / (p.tf + p.norm) DESC, p.id)
               AS rank
    FROM (
        SELECT u.lexeme, c.id,
               cardinality(u.positions)
                 + (%(w)s::float8 - 1) * coalesce(cardinality(array_positions(u.weights, 'A')), 0)
                   AS tf,
               %(k1)s::float8 * (1 - %(b)s::float8 + %(b)s::float8
                 * (%(w)s::float8 * c.search_heading_length + c.search_text_length)
                 / %(avgdl)s::float8) AS norm
        FROM content_chunks c, unnest(c.search_vector) AS u
        WHERE c.source = %(source)s
          AND u.lexeme IN (SELECT t.lexeme FROM mdchunks_search_terms t
                           WHERE t.source = %(source)s AND t.df >= %(min_df)s)
    ) p
    WHERE p.tf >= 2
),
lists AS (
    SELECT lexeme, max(saturation) FILTER (WHERE rank > %(size)s) AS floor,
           array_agg(id ORDER BY rank) FILTER (WHERE rank <= %(size)s) AS chunks,
           array_agg(greatest(saturation, %(single)s::float8) ORDER BY rank)
               FILTER (WHERE rank > 1 AND (rank - 1) %% %(segment)s = 0) AS floors
    FROM ranked
    WHERE rank <= %(size)s + 1
    GROUP BY lexeme
)
INSERT INTO mdchunks_search_top (source, lexeme, avgdl, floor, chunks, floors)
SELECT %(source)s, t.lexeme, %(avgdl)s, greatest(l.floor, %(single)s::float8),
       coalesce(l.chunks, '{}'), coalesce(l.floors, '{}')
FROM mdchunks_search_terms t
LEFT JOIN lists l USING (lexeme)
WHERE t.source = %(source)s AND t.df >= %(min_df)s;

-- name: search_top_add
-- Chunks of %(rel_paths)s (just written) that beat a floor join that
-- lexeme's top chunks (`added`, read with the first segment), as
-- search_top_refresh would rank them (at the list's own avgdl): each floor
-- stays true of every chunk outside the list.
UPDATE mdchunks_search_top t
SET added = t.added || n.chunks
FROM (
    SELECT top.lexeme, array_agg(c.id) AS chunks
    FROM content_chunks c
    CROSS JOIN LATERAL unnest(c.search_vector) AS u
    JOIN mdchunks_search_top top ON top.source = c.source AND top.lexeme = u.lexeme
    CROSS JOIN LATERAL (
        SELECT cardinality(u.positions)
                 + (%(w)s::float8 - 1) * coalesce(cardinality(array_positions(u.weights, 'A')), 0)
                   AS tf,
               %(k1)s::float8 * (1 - %(b)s::float8 + %(b)s::float8
                 * (%(w)s::float8 * c.search_heading_length + c.search_text_length)
                 / top.avgdl) AS norm
    ) s
    WHERE c.source = %(source)s AND c.rel_path = ANY(%(rel_paths)s::text[])
      AND s.tf / (s.tf + s.norm) > top.floor
      AND c.id <> ALL(top.chunks) AND c.id <> ALL(top.added)
    GROUP BY top.lexeme
) n
WHERE t.source = %(source)s AND t.lexeme = n.lexeme;

-- name: search_top_lists
-- The top chunks of the query's lexemes in each searched source that holds
-- them (none where a source keeps no list for one: lexical_stats.top_lists), with
-- the ratio by which a saturation computed at the list's avgdl may grow at
-- the searched mean length %(avgdl)s (K shrinks with avgdl by at most that).
SELECT t.lexeme, top.chunks, top.floors, top.floor, top.added,
       greatest(1.0, %(avgdl)s::float8 / top.avgdl) AS drift
FROM mdchunks_search_terms t
LEFT JOIN mdchunks_search_top top ON top.source = t.source AND top.lexeme = t.lexeme
WHERE t.lexeme = ANY(%(lexemes)s::text[])
  AND (%(source)s::text IS NULL OR t.source = %(source)s::text);

-- name: search_rows_of_documents
-- Some documents' chunk rows, as search_share counts them (their share of
-- the source's BM25 statistics, flow/retrieval/lexical_stats.py `documents_share`).
SELECT search_vector, search_heading_length, search_text_length, language
FROM content_chunks
WHERE source = %(source)s AND rel_path = ANY(%(rel_paths)s::text[]);

-- name: search_share
-- What the rows of `shared` (a WITH the caller puts in front: some
-- documents' rows, or the rows a DELETE returns) add to their source's BM25
-- statistics, counted as search_stats_refresh and search_terms_refresh count
-- all of them, in one row: [chunks, heading length, text length, shortest
-- heading, shortest text], and [lexeme, df, most positions in one chunk, most
-- in one heading path] per lexeme, and the rows' languages (migration 0018).
-- JSON: one row whatever the rows, read the same way on the engine's
-- connections and ours.
SELECT json_build_array(count(*), coalesce(sum(search_heading_length), 0),
                        coalesce(sum(search_text_length), 0), min(search_heading_length),
                        min(search_text_length))::text,
       coalesce(json_agg(DISTINCT language), '[]')::text,
       (SELECT coalesce(json_agg(json_build_array(t.lexeme, t.df, t.most, t.most_in_heading)),
                        '[]')
        FROM (SELECT u.lexeme, count(*) AS df, max(cardinality(u.positions)) AS most,
                     coalesce(max(cardinality(array_positions(u.weights, 'A'))), 0)
                         AS most_in_heading
              FROM shared, unnest(shared.search_vector) AS u
              GROUP BY u.lexeme) t)::text
FROM shared;

-- name: search_stats_add
-- The lengths' change; the shortest lengths are lower bounds (MaxScore's
-- ceilings only loosen when a shortest chunk goes); the languages gain the
-- changed documents' (a language gone stays listed until the next refresh:
-- the query is parsed once more than needed, nothing is missed).
UPDATE mdchunks_search_stats
SET chunks = chunks + %(chunks)s,
    languages = ARRAY(
        SELECT DISTINCT l
        FROM unnest(coalesce(languages, ARRAY[NULL::text]) || %(languages)s::text[]) AS l
    ),
    heading_length = heading_length + %(heading_length)s,
    text_length = text_length + %(text_length)s,
    min_heading_length = least(min_heading_length, %(min_heading_length)s),
    min_text_length = least(min_text_length, %(min_text_length)s),
    refreshed_at = now()
WHERE source = %(source)s;

-- name: search_terms_drop
-- Lexemes no chunk of the source holds any more.
DELETE FROM mdchunks_search_terms t
USING jsonb_to_recordset(%(deltas)s::jsonb) AS d(lexeme text, df integer)
WHERE t.source = %(source)s AND t.lexeme = d.lexeme AND t.df + d.df <= 0;

-- name: search_terms_add
-- Each lexeme's df change; its most positions in one chunk rise to the new
-- rows' and never fall (upper bounds; NULL, not kept, stays NULL). A lexeme
-- new to the source gets the new rows' own, which are exact.
WITH d AS (
    SELECT * FROM jsonb_to_recordset(%(deltas)s::jsonb)
        AS d(lexeme text, df integer, most integer, most_in_heading integer)
),
changed AS (
    UPDATE mdchunks_search_terms t
    SET df = t.df + d.df,
        max_occurrences = CASE WHEN t.max_occurrences IS NULL THEN NULL
                               ELSE greatest(t.max_occurrences, d.most) END,
        max_heading_occurrences = CASE WHEN t.max_heading_occurrences IS NULL THEN NULL
                                       ELSE greatest(t.max_heading_occurrences, d.most_in_heading) END
    FROM d
    WHERE t.source = %(source)s AND t.lexeme = d.lexeme
    RETURNING t.lexeme
)
INSERT INTO mdchunks_search_terms (source, lexeme, df, max_occurrences, max_heading_occurrences)
SELECT %(source)s, d.lexeme, d.df, d.most, d.most_in_heading
FROM d
WHERE d.df > 0 AND d.lexeme NOT IN (SELECT lexeme FROM changed)
  AND NOT EXISTS (
    SELECT 1 FROM mdchunks_search_terms t WHERE t.source = %(source)s AND t.lexeme = d.lexeme
  );

-- name: search_query_terms
-- The query's BM25 terms: the lexemes of the query parsed as the chunks'
-- vectors were, once in each of the searched languages %(languages)s
-- (mdchunks_query_terms, migration 0018; a lexeme two languages share is one
-- term), each with its number of occurrences in the query, its document
-- frequency over the searched chunks (one source, or all of them) from the
-- stored statistics (see search_collection for sources that have none), and
-- the languages whose parse gave it (BM25 scores a chunk with its own
-- language's terms).
WITH q AS (
    SELECT t.lexeme, t.occurrences, t.languages
    FROM mdchunks_query_terms(%(query)s, %(languages)s::text[]) AS t
),
searched AS (
    SELECT s.source FROM mdchunks_search_stats s
    WHERE %(source)s::text IS NULL OR s.source = %(source)s::text
)
SELECT q.lexeme, q.occurrences, coalesce(t.df, 0) AS df, t.max_occurrences,
       t.max_heading_occurrences, q.languages
FROM q
LEFT JOIN LATERAL (
    -- Over the searched sources: df adds up, the maxima are the largest (NULL
    -- if a source's statistics predate them: no bound known).
    SELECT sum(t.df) AS df,
           CASE WHEN bool_and(t.max_occurrences IS NOT NULL) THEN max(t.max_occurrences) END
               AS max_occurrences,
           CASE WHEN bool_and(t.max_heading_occurrences IS NOT NULL)
                THEN max(t.max_heading_occurrences) END AS max_heading_occurrences
    FROM mdchunks_search_terms t
    WHERE t.lexeme = q.lexeme AND t.source IN (SELECT source FROM searched)
) t ON true
ORDER BY q.lexeme;

-- name: search_query_keeps_terms
-- Whether the query keeps any lexeme at all, parsed as search_query_terms
-- parses it (a query of stop words only keeps none).
SELECT EXISTS (SELECT 1 FROM mdchunks_query_terms(%(query)s, %(languages)s::text[]));

-- name: search_languages
-- The languages of the searched sources' chunks, from the stored statistics
-- (NULL among them: none stated; statistics from before migration 0018 list
-- none, which reads as that).
SELECT DISTINCT l
FROM mdchunks_search_stats s,
     unnest(coalesce(s.languages, ARRAY[NULL::text])) AS l
WHERE %(source)s::text IS NULL OR s.source = %(source)s::text;

-- name: search_languages_live
-- The same counted from the rows (a source without stored statistics, a
-- host's table).
SELECT DISTINCT language FROM {chunks}
WHERE %(source)s::text IS NULL OR source = %(source)s::text;

-- name: sources_with_rows
-- The sources that hold chunks (one, or all), as their statistics count them
-- (every ingest run that changed a source refreshes them).
SELECT source FROM mdchunks_search_stats
WHERE chunks > 0 AND (%(source)s::text IS NULL OR source = %(source)s::text);

-- name: search_collection
-- N and the total lengths of the searched chunks from the stored statistics,
-- and whether every searched source has them (`complete`). The sources that
-- have rows are found by a skip scan of the (source, recipe) index, one probe
-- per source, not by reading every row.
WITH RECURSIVE present(source) AS (
    (SELECT c.source FROM content_chunks c
     WHERE %(source)s::text IS NULL OR c.source = %(source)s::text
     ORDER BY c.source LIMIT 1)
    UNION ALL
    SELECT (SELECT c.source FROM content_chunks c
            WHERE c.source > p.source
              AND (%(source)s::text IS NULL OR c.source = %(source)s::text)
            ORDER BY c.source LIMIT 1)
    FROM present p
    WHERE p.source IS NOT NULL
)
SELECT coalesce(sum(s.chunks), 0) AS chunks,
       coalesce(sum(s.heading_length), 0) AS heading_length,
       coalesce(sum(s.text_length), 0) AS text_length,
       CASE WHEN bool_and(s.min_heading_length IS NOT NULL) THEN min(s.min_heading_length) END
           AS min_heading_length,
       CASE WHEN bool_and(s.min_text_length IS NOT NULL) THEN min(s.min_text_length) END
           AS min_text_length,
       NOT EXISTS (
           SELECT 1 FROM present
           WHERE present.source IS NOT NULL
             AND present.source NOT IN (SELECT source FROM mdchunks_search_stats)
       ) AS complete
FROM mdchunks_search_stats s
WHERE %(source)s::text IS NULL OR s.source = %(source)s::text;

-- name: search_collection_live
-- The same counted from the rows (a source without stored statistics).
SELECT count(*) AS chunks, coalesce(sum(search_heading_length), 0) AS heading_length,
       coalesce(sum(search_text_length), 0) AS text_length
FROM {chunks}
WHERE %(source)s::text IS NULL OR source = %(source)s::text;

-- name: search_df_live
-- Document frequencies of the query's lexemes counted from the rows (GIN).
SELECT t.lexeme,
       (SELECT count(*) FROM {chunks} c
        WHERE c.search_vector @@ quote_literal(t.lexeme)::tsquery
          AND (%(source)s::text IS NULL OR c.source = %(source)s::text)) AS df
FROM unnest(%(lexemes)s::text[]) AS t(lexeme);

-- name: search_candidates
-- What BM25 needs of the chunks that match %(candidates)s (a tsquery over some
-- of the query's lexemes; the GIN index finds them) or are among %(ids)s
-- (top chunks of common lexemes, search_top_lists), and are not among
-- %(seen)s (chunks an earlier MaxScore round scored), of documents whose path
-- starts with %(path_prefix)s when it is not NULL: the lengths, and the
-- query's lexemes %(lexemes)s cut out of the stored vector with their
-- positions (flow/retrieval/lexical.py counts them and scores in Python). The cut is two
-- linear C passes (setweight to D on those lexemes, then keep D), where
-- unnesting the whole vector in SQL cost 10 times more. Heading-path
-- occurrences (weight A) are cut from the A part alone, only for the chunks
-- whose heading path holds a query lexeme at all (%(heading_query)s, a binary
-- search per lexeme); and the chunk's language (it is scored with the terms of
-- its language's parse). The vector is read (detoasted) once, in the subquery:
-- each use of the column itself would read it again.
SELECT s.id::text, s.source, s.rel_path, s.position, s.heading_length, s.text_length,
       s.language,
       ts_filter(setweight(s.vector, 'D', %(lexemes)s::text[]), ARRAY['d']::"char"[])::text
           AS matched,
       CASE WHEN s.vector @@ %(heading_query)s::tsquery
            THEN ts_filter(setweight(ts_filter(s.vector, ARRAY['a']::"char"[]), 'D',
                                     %(lexemes)s::text[]),
                           ARRAY['d']::"char"[])::text
       END AS heading
FROM (
    SELECT c.id, c.source, c.rel_path, c.position, c.search_heading_length AS heading_length,
           c.search_text_length AS text_length, c.language,
           c.search_vector || ''::tsvector AS vector
    FROM {chunks} c
    WHERE (c.search_vector @@ %(candidates)s::tsquery OR c.id = ANY(%(ids)s::uuid[]))
      AND (%(source)s::text IS NULL OR c.source = %(source)s::text)
      AND (%(path_prefix)s::text IS NULL OR starts_with(c.rel_path, %(path_prefix)s::text))
      AND c.id::text <> ALL(%(seen)s::text[])
    OFFSET 0
) s;

-- name: search_section_chunks
-- For each hit, the chunks of its document, each saying whether its heading
-- path starts with the hit's (flow/retrieval/hits.py keeps the contiguous run of those
-- around the hit, and looks for the heading line in the chunk before it). An
-- empty path is a prefix of every path: a preamble hit's section is its
-- document.
SELECT h.id, s.position, s.char_start, s.char_end, s.text,
       s.heading_path[1:cardinality(h.heading_path)] = h.heading_path AS in_section
FROM {chunks} h
JOIN {chunks} s ON s.source = h.source AND s.rel_path = h.rel_path
WHERE h.id = ANY(%(ids)s::uuid[])
ORDER BY h.id, s.position;

-- name: hit_sections
-- The sections each hit's chunk holds, in its order (flow/retrieval/sections.py
-- scores their slices): whether it is the one the chunk's heading columns
-- name, the chunk's text within the section's own span [char_start, body_end),
-- the to_tsvector of that slice of the chunk's searchable text (its
-- unsearched spans, front matter and MDX's ESM and comments, as spaces, as
-- the chunk's own search vector reads them: heading_index/searchable.py) and
-- of the section's whole heading path, read as a chunk's BM25 reads its own
-- path (the very functions the chunks' search vectors are made with, in the
-- chunk's language: migration 0018), then the section.
SELECT c.id, s.heading_path = c.heading_path AS governing,
       substr(c.text, p.offset_ + 1, p.length),
       to_tsvector(mdchunks_search_config(c.language),
                   mdchunks_search_words(substr(t.searched, p.offset_ + 1, p.length)))::text,
       CASE WHEN s.heading_text IS NOT NULL
            THEN to_tsvector(mdchunks_search_config(c.language),
                             mdchunks_search_words(array_to_string(s.heading_path, ' ')))::text
       END,
       s.id, s.ordinal, s.heading_text, s.heading_level, s.heading_path, s.breadcrumb,
       s.char_start, s.char_end, s.start_line, s.end_line
FROM content_chunks c
CROSS JOIN LATERAL (
    SELECT CASE WHEN cardinality(c.unsearched) = 0 THEN c.text ELSE (
        SELECT string_agg(substr(c.text, coalesce(c.unsearched[2 * g - 2], 0) + 1,
                                 c.unsearched[2 * g - 1] - coalesce(c.unsearched[2 * g - 2], 0))
                          || repeat(' ', c.unsearched[2 * g] - c.unsearched[2 * g - 1]), ''
                          ORDER BY g)
        FROM generate_series(1, cardinality(c.unsearched) / 2) AS g
    ) || substr(c.text, c.unsearched[cardinality(c.unsearched)] + 1) END AS searched
) t
CROSS JOIN LATERAL unnest(c.section_ids) WITH ORDINALITY AS h(section_id, n)
JOIN content_sections s ON s.id = h.section_id
CROSS JOIN LATERAL (
    SELECT greatest(s.char_start, c.char_start) - c.char_start AS offset_,
           greatest(least(s.body_end, c.char_end) - greatest(s.char_start, c.char_start), 0)
        AS length
) p
WHERE c.id = ANY(%(ids)s::uuid[])
ORDER BY c.id, h.n;

-- name: slice_vectors
-- What hit_sections parses of each slice and its section's heading path, in
-- its chunk's language, for slices made outside the sections table (a
-- host's table), in their order.
SELECT to_tsvector(mdchunks_search_config(u.language), mdchunks_search_words(u.text))::text,
       to_tsvector(mdchunks_search_config(u.language), mdchunks_search_words(u.heading))::text
FROM unnest(%(texts)s::text[], %(headings)s::text[], %(languages)s::text[])
     WITH ORDINALITY AS u(text, heading, language, n)
ORDER BY u.n;

-- name: section_pieces
-- What a section's text is rebuilt from (flow/retrieval/sections.py): the
-- texts of its document's chunks that overlap it and the gaps of its
-- document's sections inside it, each with its offset; every row also
-- carries the section itself. No row: no such section.
WITH s AS (
    SELECT id, source, rel_path, ordinal, heading_text, heading_level, heading_path, breadcrumb,
           char_start, char_end, start_line, end_line
    FROM content_sections WHERE id = %(id)s
),
pieces AS (
    SELECT c.char_start AS offset_, c.text, true AS is_chunk
    FROM content_chunks c, s
    WHERE c.source = s.source AND c.rel_path = s.rel_path
      AND c.char_start < s.char_end AND c.char_end > s.char_start
    UNION ALL
    SELECT g.start, g.text, false
    FROM content_sections o, s,
         unnest(o.gap_starts, o.gap_texts) AS g(start, text)
    WHERE o.source = s.source AND o.rel_path = s.rel_path
      AND o.char_start < s.char_end AND o.body_end > s.char_start
)
SELECT p.offset_, p.text, p.is_chunk, s.id, s.ordinal, s.heading_text, s.heading_level,
       s.heading_path,
       s.breadcrumb, s.char_start, s.char_end, s.start_line, s.end_line
FROM s LEFT JOIN pieces p ON true;

-- name: document_outline
-- Documents' sections in order (`mdchunks outline`): of one document, of a
-- source, or of every source; each with its parent and how many chunks hold
-- it. Documents without sections come as one row of NULLs after their names;
-- the last columns are the document's error (a failed document has no rows)
-- and its importer's note (a PDF without bookmarks has no headings).
SELECT d.source, d.rel_path, s.id, s.ordinal, s.heading_text, s.heading_level, s.heading_path,
       s.breadcrumb, s.char_start, s.char_end, s.start_line, s.end_line, s.parent_section_id,
       (SELECT count(*) FROM content_chunks c
        WHERE c.source = s.source AND c.rel_path = s.rel_path AND s.id = ANY(c.section_ids)),
       d.error, d.import_note, d.title
FROM mdchunks_documents d
LEFT JOIN content_sections s ON s.source = d.source AND s.rel_path = d.rel_path
WHERE (%(source)s::text IS NULL OR d.source = %(source)s::text)
  AND (%(rel_path)s::text IS NULL OR d.rel_path = %(rel_path)s::text)
ORDER BY d.source, d.rel_path, s.ordinal;

-- name: find_section
-- The sections of a document with exactly this heading path, in order.
SELECT s.id, s.ordinal, s.heading_text, s.heading_level, s.heading_path, s.breadcrumb,
       s.char_start, s.char_end, s.start_line, s.end_line
FROM content_sections s
WHERE s.source = %(source)s AND s.rel_path = %(rel_path)s
  AND s.heading_path = %(heading_path)s::text[]
ORDER BY s.ordinal;

-- name: search_parents
SELECT h.id, p.id, p.position, p.char_start, p.char_end, p.heading_path, p.breadcrumb, p.text
FROM {chunks} h
JOIN {chunks} p ON p.id = h.parent_chunk_id
WHERE h.id = ANY(%(ids)s::uuid[]);

-- name: source_totals
-- A source's rows after a run, and the chunker counts its documents keep.
SELECT
    (SELECT count(*) FROM content_chunks WHERE source = %(source)s) AS chunks,
    coalesce(sum(merges), 0) AS merges,
    coalesce(sum(breadcrumb_truncations), 0) AS breadcrumb_truncations
FROM mdchunks_documents
WHERE source = %(source)s;

-- name: migration_table_schema
-- The schema holding yoyo's record of applied migrations (flow/db/migrate.py):
-- the bookkeeping schema, else (a database migrated by an older mdchunks, not
-- moved yet) wherever the search_path finds it; no row if there is none.
-- Read from the catalogs, which any role may read, so a missing right is
-- reported when the table itself is read.
SELECT n.nspname
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname = %(table)s
  AND (n.nspname = %(schema)s OR c.oid = to_regclass(quote_ident(%(table)s)))
ORDER BY n.nspname = %(schema)s DESC
LIMIT 1;

-- name: legacy_yoyo_tables
-- yoyo's tables that an older mdchunks left where the search_path finds them
-- (the user's schema) and that the bookkeeping schema does not hold yet.
SELECT t.name
FROM unnest(%(tables)s::text[]) AS t(name)
JOIN pg_class c ON c.oid = to_regclass(quote_ident(t.name))
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname <> %(schema)s
  AND NOT EXISTS (
      SELECT 1 FROM pg_class b JOIN pg_namespace bn ON bn.oid = b.relnamespace
      WHERE bn.nspname = %(schema)s AND b.relname = t.name
  );

-- name: has_chunks
-- Does the table hold any chunk (of the source, when one is named)?
SELECT EXISTS (
    SELECT 1 FROM {chunks} WHERE %(source)s::text IS NULL OR source = %(source)s::text
);

-- name: search_query_lexemes
-- The query's BM25 terms where no statistics are stored (a host's table): the
-- lexemes of the query in each of %(languages)s with their occurrences, as
-- search_query_terms takes them; df is counted live (search_df_live).
SELECT t.lexeme, t.occurrences, 0 AS df,
       NULL::integer AS max_occurrences, NULL::integer AS max_heading_occurrences, t.languages
FROM mdchunks_query_terms(%(query)s, %(languages)s::text[]) AS t
ORDER BY t.lexeme;

-- name: chunk_sources
-- The sources of a chunk table, with their documents and chunks
-- (`mdchunks.list_sources`): one pass over the table.
SELECT source, count(DISTINCT rel_path) AS documents, count(*) AS chunks,
       count(*) FILTER (WHERE heading_text IS NOT NULL) AS with_headings
FROM {chunks}
GROUP BY source
ORDER BY source;

-- name: chunk_with_neighbours
-- One chunk by id and up to %(neighbours)s chunks of its document on each side,
-- in document order (`mdchunks.read_chunk`).
SELECT n.id, n.source, n.rel_path, n.position, n.char_start, n.char_end, n.start_line,
       n.end_line, n.heading_path, n.breadcrumb, n.parent_chunk_id, n.text
FROM {chunks} h
JOIN {chunks} n ON n.source = h.source AND n.rel_path = h.rel_path
    AND n.position BETWEEN h.position - %(neighbours)s AND h.position + %(neighbours)s
WHERE h.id = %(id)s
ORDER BY n.position;

-- name: document_chunks
-- Every chunk of one document, in order: what its outline and sections are
-- rebuilt from (flow/retrieval/rebuilt.py).
SELECT position, char_start, char_end, start_line, end_line, text, title
FROM {chunks}
WHERE source = %(source)s AND rel_path = %(rel_path)s
ORDER BY position;

-- name: embedded_wal_settings
-- The embedded server's WAL settings (flow/db/embedded.py, docs/database.md):
-- the values in force, in pg_settings' units (MB for the sizes, bytes for
-- the segment, which initdb fixed).
SELECT name, setting FROM pg_settings
WHERE name IN ('max_wal_size', 'min_wal_size', 'wal_compression', 'wal_recycle', 'wal_segment_size')
ORDER BY name;

-- name: embedded_wal_compression
ALTER SYSTEM SET wal_compression = 'on';

-- name: embedded_wal_recycle
ALTER SYSTEM SET wal_recycle = 'off';

-- name: reload_settings
SELECT pg_reload_conf();

-- name: chunk_rows_total
-- Every source's chunk rows: the GIN index below is the whole table's.
SELECT count(*) FROM content_chunks;

-- name: search_index_rebuild
-- After a run that wrote most of the table (flow/retrieval/lexical_stats.py,
-- rebuild_index): the search vectors' GIN index in one pass.
REINDEX INDEX content_chunks_search_vector_idx;

-- name: own_catalogs
-- The connected database's own catalog tables (not those all databases
-- share), for flow/db/embedded.py compact_catalogs.
SELECT c.relname
FROM pg_catalog.pg_class c
WHERE c.relnamespace = 'pg_catalog'::regnamespace AND c.relkind = 'r' AND NOT c.relisshared
ORDER BY c.oid;

-- name: search_index_engines
-- BM25 index engines the server offers, by extension name (lexical_stats.py
-- `index_engines`): installed in this database, or available to install.
SELECT name, installed_version IS NOT NULL AS installed
FROM pg_available_extensions
WHERE name = ANY(%(names)s::text[])
ORDER BY name;
