-- No constraint is left NOT VALID where nothing contradicts it. Migration
-- 0006 added content_chunks_breadcrumb_check NOT VALID, so that rows written
-- before it (no breadcrumb yet) stay readable until the next run of their
-- source replaces them. A database with no such row, a fresh one above all,
-- has it validated here: Postgres then proves it for every row, and
-- `\d content_chunks` shows no NOT VALID. A database that still holds such
-- rows keeps it NOT VALID (every new row is checked all the same); once
-- their sources have been run again,
--   ALTER TABLE content_chunks VALIDATE CONSTRAINT content_chunks_breadcrumb_check;
-- validates it.

DO $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM content_chunks
        WHERE (breadcrumb IS NULL) <> (cardinality(heading_path) = 0)
    ) THEN
        ALTER TABLE content_chunks VALIDATE CONSTRAINT content_chunks_breadcrumb_check;
    END IF;
END
$$;
