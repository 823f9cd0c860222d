-- Breadcrumbs and embed texts (docs/structure-chunker.md; both chunkers fill them) and
-- the per-document counts of the structure chunker.
--
-- Rows written before this migration have no breadcrumb and an empty
-- embed_text. They were made by a recipe whose fingerprint the code of this
-- version no longer produces (the breadcrumb budget is part of every recipe
-- now), so the next ingest or backfill of their source re-processes every
-- document and the reconciliation deletes whatever is left of the old recipe.
-- Until then they stay readable: adding the columns rewrites nothing, and the
-- breadcrumb CHECK is NOT VALID, so it holds every row written from now on
-- without failing on the old ones. Once every source has been re-run,
-- `ALTER TABLE content_chunks VALIDATE CONSTRAINT content_chunks_breadcrumb_check`
-- makes Postgres prove it for the whole table.

ALTER TABLE content_chunks
    ADD COLUMN breadcrumb text,
    ADD COLUMN embed_text text NOT NULL DEFAULT '';

-- The breadcrumb is NULL exactly when the heading path is empty (a preamble,
-- plain text, headings off).
ALTER TABLE content_chunks
    ADD CONSTRAINT content_chunks_breadcrumb_check
    CHECK ((breadcrumb IS NULL) = (cardinality(heading_path) = 0)) NOT VALID;

ALTER TABLE mdchunks_documents
    ADD COLUMN merges integer NOT NULL DEFAULT 0,
    ADD COLUMN breadcrumb_truncations integer NOT NULL DEFAULT 0,
    ADD CONSTRAINT mdchunks_documents_counts_check
        CHECK (merges >= 0 AND breadcrumb_truncations >= 0);
