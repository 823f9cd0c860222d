-- Documents that are not markdown (docs/importers.md): each document row says
-- what its file was, and a source remembers the files its last walk left out.
--
-- source_format: 'markdown' or 'text' for a file read as it is, else the name
-- of the importer that converted it ('html', 'docx', 'pdf'); the chunk rows'
-- offsets count in the converted markdown. Kept on the document row, not on
-- every chunk row: it is a fact of the file, and the chunk rows reach it by
-- (source, rel_path). Rows written before are markdown, or text for `.txt`.
-- import_note: what the importer noted (a PDF without outline has no
-- headings), NULL otherwise.
-- mdchunks_sources.skipped_suffixes: suffix -> count of the files the last
-- walk did not take (no importer reads them, or their extra is not
-- installed), so `status` names them as the run's summary did.

ALTER TABLE mdchunks_documents
    ADD COLUMN source_format text NOT NULL DEFAULT 'markdown',
    ADD COLUMN import_note   text;

UPDATE mdchunks_documents SET source_format = 'text' WHERE lower(rel_path) LIKE '%.txt';

ALTER TABLE mdchunks_sources
    ADD COLUMN skipped_suffixes jsonb NOT NULL DEFAULT '{}';

COMMENT ON COLUMN mdchunks_documents.source_format IS
    'What the file was: markdown or text (read as it is), else the importer that converted it to the markdown its chunks'' offsets count in (html, docx, pdf).';
COMMENT ON COLUMN mdchunks_documents.import_note IS
    'What the importer noted about the file (a PDF without outline has no headings); NULL otherwise.';
COMMENT ON COLUMN mdchunks_sources.skipped_suffixes IS
    'Suffix -> count of the files the last walk of the source did not take (no importer reads them).';
