-- The schema explains itself: `\d+ content_chunks` in psql, or any tool that
-- reads pg_description, says what each table and column is without the README.
-- A column added by a later migration gets its comment in that migration (a
-- test checks that every column of our tables has one).

COMMENT ON TABLE content_chunks IS
    'mdchunks: one row per chunk of a markdown (or .txt) document, with the headings it sits under. Written by `mdchunks ingest` (cocoindex manages the rows, these migrations the table).';
COMMENT ON COLUMN content_chunks.id IS
    'uuid5(fb8159f0-c42d-4e50-8a16-a15733f9b164, ''chunk:{source}:{rel_path}:{position}''): the same on every machine and every run.';
COMMENT ON COLUMN content_chunks.source IS
    'Name of the ingested root folder (`--source`); several roots share the table.';
COMMENT ON COLUMN content_chunks.rel_path IS
    'POSIX path of the document relative to its source''s root.';
COMMENT ON COLUMN content_chunks.position IS
    'Ordinal of the chunk in its document, from 0.';
COMMENT ON COLUMN content_chunks.char_start IS
    'Start of the chunk in the document, in code points (not bytes) of its text decoded as UTF-8 without a leading BOM.';
COMMENT ON COLUMN content_chunks.char_end IS
    'End of the chunk (exclusive), in code points: text = document[char_start:char_end].';
COMMENT ON COLUMN content_chunks.text IS
    'The chunk, verbatim.';
COMMENT ON COLUMN content_chunks.heading_text IS
    'Plain text of the governing heading (the last heading starting at or before the chunk; front matter and blank lines before a chunk''s first heading do not count). NULL before the first heading (the preamble), in .txt documents, or with headings off.';
COMMENT ON COLUMN content_chunks.heading_level IS
    'Level (1..6) of the governing heading; NULL exactly when heading_text is.';
COMMENT ON COLUMN content_chunks.heading_path IS
    'Texts of the headings the chunk sits under, root first, the governing heading last; empty exactly when heading_text is NULL.';
COMMENT ON COLUMN content_chunks.parent_chunk_id IS
    'id of the first chunk of the section that encloses the governing heading''s section (its nearest ancestor heading); NULL for a top-level heading or the preamble. Never the row''s own id.';
COMMENT ON COLUMN content_chunks.breadcrumb IS
    'heading_path rendered `A > B > C` within the recipe''s byte budget (truncated from the left: `… > C`); NULL exactly when heading_path is empty.';
COMMENT ON COLUMN content_chunks.embed_text IS
    'What to embed: the breadcrumb, a blank line, then the text (a piece of a table split between rows also gets the table''s header rows before its text).';
COMMENT ON COLUMN content_chunks.recipe IS
    'Fingerprint of the chunking recipe that produced the row (its meaning: mdchunks_recipes); a run leaves no row of another recipe in its source.';
COMMENT ON COLUMN content_chunks.search_vector IS
    'Generated: tsvector of heading_path (weight A) and text (weight B), English stemming, for `mdchunks search`.';

COMMENT ON FUNCTION mdchunks_heading_path_text(text[]) IS
    'array_to_string(path, '' ''), declared IMMUTABLE so that content_chunks.search_vector may use it.';

COMMENT ON TABLE mdchunks_documents IS
    'mdchunks bookkeeping: one row per document the last run of its source saw; the chunk rows are reconciled against it, and a failed document is reported again until it changes.';
COMMENT ON COLUMN mdchunks_documents.source IS
    'Name of the source (see content_chunks.source).';
COMMENT ON COLUMN mdchunks_documents.rel_path IS
    'POSIX path of the document relative to its source''s root.';
COMMENT ON COLUMN mdchunks_documents.recipe IS
    'Fingerprint of the recipe the document was last processed with.';
COMMENT ON COLUMN mdchunks_documents.content_hash IS
    'sha256 of the file''s bytes, hex.';
COMMENT ON COLUMN mdchunks_documents.size_bytes IS
    'Size of the file in bytes.';
COMMENT ON COLUMN mdchunks_documents.chunks IS
    'How many chunk rows the document has (positions 0..chunks-1); 0 when it failed or is empty.';
COMMENT ON COLUMN mdchunks_documents.error IS
    'Why the document could not be ingested (it then has no chunk rows); NULL when it was.';
COMMENT ON COLUMN mdchunks_documents.merges IS
    'Structure chunker: sections folded into an earlier section''s chunk.';
COMMENT ON COLUMN mdchunks_documents.breadcrumb_truncations IS
    'Chunks whose breadcrumb was truncated to the breadcrumb budget.';

COMMENT ON TABLE mdchunks_sources IS
    'mdchunks bookkeeping: each source''s root folder and the recipe options it was last ingested with (what `mdchunks backfill` re-runs).';
COMMENT ON COLUMN mdchunks_sources.source IS
    'Name of the source (see content_chunks.source).';
COMMENT ON COLUMN mdchunks_sources.root IS
    'The folder the source was last ingested from; a source is never moved to another root silently.';
COMMENT ON COLUMN mdchunks_sources.recipe IS
    'Fingerprint of the recipe of the last run.';
COMMENT ON COLUMN mdchunks_sources.recipe_spec IS
    'The recipe options of the last run, as JSON (what `mdchunks backfill` runs again).';
COMMENT ON COLUMN mdchunks_sources.max_doc_bytes IS
    'The size limit of the last run (`--max-doc-bytes`); larger documents were skipped.';
COMMENT ON COLUMN mdchunks_sources.created_at IS
    'When the source was first ingested.';
COMMENT ON COLUMN mdchunks_sources.updated_at IS
    'When the source was last ingested.';
COMMENT ON COLUMN mdchunks_sources.state_token IS
    'Random token of the engine state that made the rows (also kept next to that state in the data dir); a run whose state carries another token starts from an empty state.';

COMMENT ON TABLE mdchunks_recipes IS
    'mdchunks bookkeeping: what each recipe fingerprint means, for `mdchunks status`.';
COMMENT ON COLUMN mdchunks_recipes.recipe IS
    'The fingerprint (as in content_chunks.recipe).';
COMMENT ON COLUMN mdchunks_recipes.spec IS
    'The recipe''s options, as JSON.';
COMMENT ON COLUMN mdchunks_recipes.first_seen IS
    'When the fingerprint was first recorded.';
