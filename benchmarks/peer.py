"""The peer: the script a user would write instead of mdchunks (issue #16).

    python -m benchmarks.peer ROOT DATABASE_URL

LangChain's `MarkdownHeaderTextSplitter` (sections by `#`..`######` lines,
the heading texts in each piece's metadata) and then
`RecursiveCharacterTextSplitter` at our budgets (2,000 / 200, counted in
characters; the corpora are nearly all ASCII), the rows streamed with
`COPY` into a table with a generated `tsvector` column (heading path weighted
A, text B, as ours) and a GIN index. It is the documented recipe of both
splitters, with their defaults, and the fastest load psycopg has.

It gets headings wrong that mdchunks gets right (a `#` line inside a fence,
setext headings, closing hashes), keeps no state, and redoes everything on
every run; it is what a first ingest is compared with. Deliberately
self-contained: it imports nothing of mdchunks, like the user's script.
The stage times the whole process (interpreter start and imports included),
as it times `python -m mdchunks ingest`. The last line of stdout is JSON:
documents, rows, bytes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import psycopg
from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

TABLE = "peer_chunks"
HEADERS = [("#" * level, f"h{level}") for level in range(1, 7)]
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    id            bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    rel_path      text    NOT NULL,
    position      integer NOT NULL,
    headings      text    NOT NULL,
    text          text    NOT NULL,
    search_vector tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', headings), 'A')
        || setweight(to_tsvector('english', text), 'B')
    ) STORED
);
CREATE INDEX IF NOT EXISTS {TABLE}_search_idx ON {TABLE} USING gin (search_vector);
"""
COPY = f"COPY {TABLE} (rel_path, position, headings, text) FROM STDIN"


def main(root: Path, database_url: str) -> dict[str, int]:
    sections = MarkdownHeaderTextSplitter(headers_to_split_on=HEADERS)
    pieces = RecursiveCharacterTextSplitter(chunk_size=2000, chunk_overlap=200)
    files = sorted(path for path in root.rglob("*.md") if path.is_file())
    rows = size = 0
    with psycopg.connect(database_url) as conn:
        conn.execute(SCHEMA)
        with conn.cursor() as cursor, cursor.copy(COPY) as copy:
            for path in files:
                text = path.read_text(encoding="utf-8")
                size += len(text.encode("utf-8"))
                rel_path = path.relative_to(root).as_posix()
                documents = pieces.split_documents(sections.split_text(text))
                for position, document in enumerate(documents):
                    headings = " > ".join(
                        document.metadata[key] for _, key in HEADERS if key in document.metadata
                    )
                    copy.write_row((rel_path, position, headings, document.page_content))
                    rows += 1
    return {"documents": len(files), "rows": rows, "bytes": size}


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), sys.argv[2])))
