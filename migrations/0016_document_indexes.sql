-- A document's rows are found by (source, rel_path) through an index of that
-- pair, which PostgreSQL deduplicates (one entry per document and page, not
-- per row): the unique keys on (source, rel_path, position) and (source,
-- rel_path, ordinal) held every row's path once more, 5.1 MB of the 44 MB
-- rust-book x36's data dir against 0.9 MB now (docs/benchmarks.md, Disk).
--
-- Nothing is lost of what they promised: a row's id is uuid5 of (source,
-- rel_path, position), or of its ordinal for a section (docs/rows-and-table.md),
-- and the primary key is unique, so two rows of one place are two rows of one
-- id. chunk_table_sql and section_table_sql make a host's tables the same
-- way from now on; a host table made before keeps its unique key (it costs
-- space, not correctness).

ALTER TABLE content_chunks DROP CONSTRAINT content_chunks_document_position_key;
CREATE INDEX content_chunks_document_idx ON content_chunks (source, rel_path);

ALTER TABLE content_sections DROP CONSTRAINT content_sections_document_ordinal_key;
CREATE INDEX content_sections_document_idx ON content_sections (source, rel_path);
