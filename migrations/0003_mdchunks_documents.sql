-- One row per document the last run handed to cocoindex (flow/plugin/rows.py's
-- DocumentRow). cocoindex declares it next to the document's chunks, so it
-- says how many chunk rows the document must have, and keeps a document's
-- failure (error) until the file or the recipe changes.

CREATE TABLE mdchunks_documents (
    source       text    NOT NULL,
    rel_path     text    NOT NULL,
    recipe       text    NOT NULL,
    content_hash text    NOT NULL,
    size_bytes   bigint  NOT NULL,
    chunks       integer NOT NULL,
    error        text,

    PRIMARY KEY (source, rel_path),
    CONSTRAINT mdchunks_documents_chunks_check CHECK (chunks >= 0),
    CONSTRAINT mdchunks_documents_failed_has_no_chunks_check CHECK (error IS NULL OR chunks = 0)
);
