"""The plugin face (docs/plugin.md): mdchunks inside a host's own cocoindex app.

Real PostgreSQL, real cocoindex runs in subprocesses (a host's process: its
own engine state, its own context keys).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import mdchunks
import mdchunks.heading_index
import psycopg
import pytest
from conftest import Ingest
from mdchunks.heading_index.chunkers import CHUNKERS
from mdchunks.heading_index.options import ChunkOptions

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "chunks_with_word_count.py"
COLUMNS = (
    "id, rel_path, position, char_start, char_end, text, heading_text, heading_level, "
    "heading_path, parent_chunk_id, breadcrumb, c.embed_text, recipe, section_ids, title, "
    "unsearched, search_vector::text"
)  # c.embed_text: a host table's column, content_chunks' function of the row (migration 0014)


def _host_env(database_url: str, state: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RUST_LOG"}
    env.update(
        DATABASE_URL=database_url,
        COCOINDEX_DB=str(state),
        COCOINDEX_DISABLE_USAGE_TRACKING="1",
    )
    return env


def test_the_example_app_writes_the_clis_rows_plus_its_own_column(
    docs: Path, ingest: Ingest, database_url: str, tmp_path: Path
) -> None:
    assert len([line for line in EXAMPLE.read_text().splitlines() if line.strip()]) <= 60
    # A page titled in its front matter: the host's rows carry the title, the
    # breadcrumbs rooted at it and the search vector without the front matter
    # (its table's trigger, from chunk_table_sql), as the CLI's do.
    (docs / "titled.md").write_text(
        "---\ntitle: Quokka Guide\nsecret: zebrafish\n---\nIntro.\n\n## Usage\n\nWords.\n",
        encoding="utf-8",
    )
    assert ingest(docs).ok
    env = _host_env(database_url, tmp_path / "host-state")
    subprocess.run(
        [sys.executable, str(EXAMPLE), str(docs)], env=env, check=True, capture_output=True
    )
    with psycopg.connect(database_url) as conn:
        cli_rows = conn.execute(
            f"SELECT {COLUMNS} FROM content_chunks c WHERE source = 'docs' ORDER BY 2, 3"
        ).fetchall()
        host_rows = conn.execute(
            f"SELECT {COLUMNS}, word_count FROM doc_chunks c ORDER BY 2, 3"
        ).fetchall()
        # Only .md files for the example; the docs fixture has nothing else.
    assert len(cli_rows) > 20
    assert [row[:-1] for row in host_rows] == cli_rows
    titled = [row for row in host_rows if row[1] == "titled.md"]
    assert titled and all(row[10].startswith("Quokka Guide") for row in titled)
    assert {row[14] for row in titled} == {"Quokka Guide"}
    assert all("zebrafish" not in row[16] and "quokka" in row[16] for row in titled)
    assert all(row[-1] == len(row[5].split()) for row in host_rows)
    # Again: nothing changed, so the host's memo skips every file (no row rewritten).
    with psycopg.connect(database_url) as conn:
        before = conn.execute("SELECT id, xmin::text FROM doc_chunks ORDER BY id").fetchall()
    subprocess.run(
        [sys.executable, str(EXAMPLE), str(docs)], env=env, check=True, capture_output=True
    )
    with psycopg.connect(database_url) as conn:
        after = conn.execute("SELECT id, xmin::text FROM doc_chunks ORDER BY id").fetchall()
    assert after == before


_HOST = textwrap.dedent(
    """
    import asyncio, json, pathlib, sys
    import mdchunks.heading_index as index
    if sys.argv[2] != "-":  # what an upgrade of mdchunks with new heading logic looks like
        index.HEADING_INDEX_VERSION = sys.argv[2]
    import asyncpg, cocoindex as coco
    from cocoindex.connectors import localfs
    from cocoindex.resources.file import FileLike
    import mdchunks
    from mdchunks import split_markdown

    DB = coco.ContextKey[asyncpg.Pool]("host_db")
    DOCS = coco.ContextKey[pathlib.Path]("host_docs")

    @coco.lifespan
    async def lifespan(builder):
        async with asyncpg.create_pool(sys.argv[3]) as pool:
            builder.provide(DB, pool)
            builder.provide(DOCS, pathlib.Path(sys.argv[1]))
            yield

    @coco.fn(memo=True)
    async def own_file(file: FileLike, table, options: mdchunks.ChunkOptions) -> None:
        chunks = split_markdown(mdchunks.document_text(await file.read()), options)
        rel_path = file.file_path.path.as_posix()
        for row in mdchunks.chunk_rows(chunks, source="own", rel_path=rel_path):
            table.declare_row(row=row)

    @coco.fn
    async def app_main():
        table = await mdchunks.mount_chunk_table(DB, sys.argv[5])
        files = localfs.walk_dir(DOCS, recursive=True)
        if sys.argv[4] == "ready-made":
            await coco.mount_each(mdchunks.process_markdown_file, files.items(), table, "docs")
        else:
            await coco.mount_each(own_file, files.items(), table, mdchunks.ChunkOptions())

    app = coco.App(coco.AppConfig(name="Host" + sys.argv[4]), app_main)

    async def main():
        async with coco.runtime():
            handle = app.update()
            await handle.result()
            stats = handle.stats().by_component
            group = stats.get("process_markdown_file") or stats["own_file"]
            print(json.dumps({"adds": group.num_adds, "reprocessed": group.num_reprocesses,
                              "unchanged": group.num_unchanged}))

    asyncio.run(main())
    """
)


@pytest.mark.parametrize("per_file", ["ready-made", "own"])
def test_a_hosts_memo_re_runs_when_our_logic_changes(
    per_file: str, docs: Path, database_url: str, tmp_path: Path
) -> None:
    # Both a host that hands our per-file function to mount_each and one with
    # a memoized function of its own around split_markdown.
    table = f"host_{per_file.replace('-', '_')}"
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(mdchunks.chunk_table_sql(table))
    script = tmp_path / "host.py"
    script.write_text(_HOST)
    env = _host_env(database_url, tmp_path / "host-state")
    documents = len(list(docs.rglob("*.md")))

    def run(version: str) -> dict[str, int]:
        done = subprocess.run(
            [sys.executable, str(script), str(docs), version, database_url, per_file, table],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        return json.loads(done.stdout.strip().splitlines()[-1])

    assert run("-") == {"adds": documents, "reprocessed": 0, "unchanged": 0}
    assert run("-") == {"adds": 0, "reprocessed": 0, "unchanged": documents}
    # The same mdchunks with another heading index version: every file again.
    assert run("upgraded") == {"adds": 0, "reprocessed": documents, "unchanged": 0}
    assert run("upgraded")["unchanged"] == documents
    with psycopg.connect(database_url) as conn:
        (rows,) = conn.execute(f"SELECT count(*) FROM {table}").fetchone() or (0,)
    assert rows > documents


def test_a_file_the_ready_made_function_refuses_is_named_in_the_hosts_log(
    docs: Path, database_url: str, tmp_path: Path
) -> None:
    """cocoindex reports a component's failure by its message alone: ours
    names the file, and the other files get their rows."""
    folder = tmp_path / "host-docs"
    shutil.copytree(docs, folder)
    (folder / "notes" / "caf\u00e9.md").parent.mkdir(exist_ok=True)
    (folder / "notes" / "caf\u00e9.md").write_bytes("# Caf\u00e9\n".encode("latin-1"))
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(mdchunks.chunk_table_sql("host_refused"))
    script = tmp_path / "host.py"
    script.write_text(_HOST)
    done = subprocess.run(
        [sys.executable, str(script), str(folder), "-", database_url, "ready-made", "host_refused"],
        env=_host_env(database_url, tmp_path / "host-state"),
        capture_output=True,
        text=True,
    )
    assert "notes/caf\u00e9.md: invalid UTF-8 at byte offset 5" in done.stderr, done.stderr
    with psycopg.connect(database_url) as conn:
        paths = {row[0] for row in conn.execute("SELECT DISTINCT rel_path FROM host_refused")}
    assert paths == {path.relative_to(docs).as_posix() for path in docs.rglob("*.md")}


def _relation_shape(conn: psycopg.Connection, table: str) -> dict[str, object]:
    columns = conn.execute(
        "SELECT column_name, data_type, udt_name, is_nullable, column_default, "
        "generation_expression FROM information_schema.columns WHERE table_name = %s "
        "ORDER BY column_name",
        [table],
    ).fetchall()
    constraints = conn.execute(
        "SELECT replace(conname, %s, ''), pg_get_constraintdef(oid), convalidated "
        "FROM pg_constraint WHERE conrelid = %s::regclass ORDER BY 1",
        [table, table],
    ).fetchall()
    indexes = conn.execute(
        "SELECT replace(replace(indexdef, indexname, ''), tablename, '') FROM pg_indexes "
        "WHERE tablename = %s ORDER BY 1",
        [table],
    ).fetchall()
    triggers = conn.execute(
        "SELECT replace(tgname, %s, ''), replace(pg_get_triggerdef(oid), %s, '') FROM pg_trigger "
        "WHERE tgrelid = %s::regclass AND NOT tgisinternal ORDER BY 1",
        [table, table, table],
    ).fetchall()
    return {
        "columns": columns,
        "constraints": constraints,
        "indexes": indexes,
        "triggers": triggers,
    }


def test_the_hosts_table_sql_is_content_chunks_under_another_name(
    ingest: Ingest, docs: Path, database_url: str
) -> None:
    ingest(docs)  # applies our migrations
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(mdchunks.chunk_table_sql("host_chunks"))
        ours = _relation_shape(conn, "content_chunks")
        theirs = _relation_shape(conn, "host_chunks")
    # A constraint that migrations added NOT VALID to an older table is valid
    # in a fresh host table.
    ours["constraints"] = [
        (name, str(definition).removesuffix(" NOT VALID"), True)
        for name, definition, _ in ours["constraints"]  # type: ignore[attr-defined]
    ]
    # Except embed_text: a host's table keeps the column its trigger sets (the
    # public DDL); content_chunks computes it from the row (migration 0014),
    # with a trigger function of its own for the search columns alone.
    columns = theirs["columns"]
    assert isinstance(columns, list)
    assert [c for c in columns if c[0] == "embed_text"] == [
        ("embed_text", "text", "text", "NO", "''::text", None)
    ]
    theirs["columns"] = [c for c in columns if c[0] != "embed_text"]
    # (_relation_shape cut the table's name out of mdchunks_content_chunks_columns.)
    ours["triggers"] = [
        (name, str(definition).replace("mdchunks__columns", "mdchunks_chunk_columns"))
        for name, definition in ours["triggers"]  # type: ignore[attr-defined]
    ]
    assert theirs == ours


def test_a_hosts_search_trigger_in_its_own_schema_is_the_migrations(
    ingest: Ingest, docs: Path, database_url: str
) -> None:
    # The trigger function is written twice, in migration 0009 and in the
    # table SQL (for a schema our migrations never ran in): the same body.
    ingest(docs)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA host")
        conn.execute(mdchunks.chunk_table_sql("chunks", pg_schema_name="host"))
        bodies = conn.execute(
            "SELECT n.nspname, p.prosrc FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE p.proname = 'mdchunks_chunk_columns' ORDER BY 1"
        ).fetchall()
        conn.execute(
            "INSERT INTO host.chunks (id, source, rel_path, position, char_start, char_end, text, "
            "recipe) VALUES (gen_random_uuid(), 's', 'a.md', 0, 0, 4, 'Zebras graze', 'r')"
        )
        row = conn.execute(
            "SELECT search_vector::text, search_text_length FROM host.chunks"
        ).fetchone()
    assert [schema for schema, _ in bodies] == ["host", "public"]
    assert len({" ".join(str(body).split()) for _, body in bodies}) == 1
    assert row == ("'graze':2B 'zebra':1B", 2)


@pytest.mark.parametrize("chunker", sorted(CHUNKERS))
def test_split_markdown_chunks_know_their_lines_and_parents(chunker: str) -> None:
    text = (ROOT / "sample" / "ch08-02-strings.md").read_text()
    chunks = mdchunks.split_markdown(
        text, ChunkOptions(chunker=chunker, chunk_size=600, min_chunk_size=300, chunk_overlap=60)
    )
    assert len(chunks) > 10
    headings = {
        heading.start: heading for heading in mdchunks.heading_index.build_index(text).headings
    }
    for position, chunk in enumerate(chunks):
        assert chunk.text == text[chunk.start : chunk.end]
        assert chunk.start_line == text.count("\n", 0, chunk.start) + 1
        assert chunk.end_line == text.count("\n", 0, max(chunk.start, chunk.end - 1)) + 1
        assert chunk.parent_index is None or chunk.parent_index < position
        assert (chunk.breadcrumb is None) == (not chunk.heading_path)
        if chunk.heading_start is not None:
            named = headings[chunk.heading_start]
            assert (named.text, named.level) == (chunk.heading_text, chunk.heading_level)
    assert any(chunk.parent_index is not None for chunk in chunks)


def test_chunk_options_validate_like_the_cli() -> None:
    with pytest.raises(ValueError, match=r"^chunk size must be at least 1 byte \(got 0\)$"):
        ChunkOptions(chunk_size=0)  # only that: not the default minimum and overlap too
    with pytest.raises(ValueError, match=r"^chunk size .*; min chunk size must be between 1 and"):
        ChunkOptions(chunk_size=0, min_chunk_size=0)
    with pytest.raises(ValueError, match=r"unknown chunker 'semantic' \(known: recursive"):
        ChunkOptions(chunker="semantic")
    assert mdchunks.recipe_of(ChunkOptions()) == mdchunks.Recipe().fingerprint()


def test_line_numbers_end_lines_as_the_heading_index_does() -> None:
    from mdchunks.heading_index.chunk import LineNumbers

    lines = LineNumbers("a\rb\r\nc\nd")  # CR, CRLF and LF each end a line
    assert [lines.of(offset) for offset in range(8)] == [1, 1, 2, 2, 2, 3, 3, 4]
    assert lines.span(0, 1) == (1, 1)
    assert lines.span(0, 2) == (1, 1)  # a chunk ending with its line's end stays on it
    assert lines.span(2, 8) == (2, 4)


def test_the_table_sql_refuses_a_name_its_constraint_names_would_cut() -> None:
    assert 'CREATE TABLE "s"."t"' in mdchunks.chunk_table_sql("t", pg_schema_name="s")
    with pytest.raises(ValueError, match="too long"):
        mdchunks.chunk_table_sql("x" * 40)


def test_the_example_app_names_a_file_it_refuses(
    docs: Path, database_url: str, tmp_path: Path
) -> None:
    # cocoindex reports a failed file by the exception's message alone.
    (docs / "latin-1.md").write_bytes("# Caf\u00e9\n".encode("latin-1"))
    env = _host_env(database_url, tmp_path / "host-state")
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), str(docs)], env=env, capture_output=True, text=True
    )
    assert "latin-1.md: invalid UTF-8 at byte offset 5" in done.stderr, done.stderr
    without = {k: v for k, v in env.items() if k != "DATABASE_URL"}
    unset = subprocess.run(
        [sys.executable, str(EXAMPLE), str(docs)], env=without, capture_output=True, text=True
    )
    assert unset.returncode == 1 and unset.stderr.startswith("set DATABASE_URL"), unset.stderr


def test_a_host_table_without_the_line_columns_is_refused_in_one_line(
    docs: Path, database_url: str, tmp_path: Path
) -> None:
    # A table made by an older chunk_table_sql: no start_line/end_line.
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(mdchunks.chunk_table_sql("doc_chunks"))
        conn.execute("ALTER TABLE doc_chunks DROP COLUMN start_line, DROP COLUMN end_line")
        conn.execute("ALTER TABLE doc_chunks ADD COLUMN word_count bigint")
    env = _host_env(database_url, tmp_path / "host-state")
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), str(docs)], env=env, capture_output=True, text=True
    )
    assert done.returncode != 0
    assert (
        'table "doc_chunks" lacks the column(s) start_line, end_line that its rows write '
        '(to add them: ALTER TABLE "doc_chunks" ADD COLUMN start_line integer, '
        "ADD COLUMN end_line integer)"
    ) in done.stderr
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT count(*) FROM doc_chunks").fetchone() == (0,)


def test_a_host_table_of_an_older_release_is_refused_then_upgraded_to_the_clis_rows(
    docs: Path, ingest: Ingest, database_url: str, tmp_path: Path
) -> None:
    # The previous release's chunk_table_sql: no table_header, and a trigger
    # that sets the search columns only (migration 0009's function, which our
    # migrations keep in this schema); embed_text came from the rows then.
    assert ingest(docs).ok
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(mdchunks.chunk_table_sql("doc_chunks"))
        conn.execute("ALTER TABLE doc_chunks DROP COLUMN table_header, DROP COLUMN section_ids")
        # (and, as the release before that, no line columns and their check)
        conn.execute("ALTER TABLE doc_chunks DROP COLUMN start_line, DROP COLUMN end_line")
        conn.execute('DROP TRIGGER "doc_chunks_chunk_columns" ON doc_chunks')
        conn.execute(
            'CREATE TRIGGER "doc_chunks_search_columns" BEFORE INSERT OR UPDATE ON doc_chunks '
            "FOR EACH ROW EXECUTE FUNCTION mdchunks_search_columns()"
        )
        conn.execute("ALTER TABLE doc_chunks ADD COLUMN word_count bigint")
    env = _host_env(database_url, tmp_path / "host-state")
    example = [sys.executable, str(EXAMPLE), str(docs)]
    refused = subprocess.run(example, env=env, capture_output=True, text=True)
    assert refused.returncode != 0
    assert (
        'table "doc_chunks" lacks the column(s) table_header, start_line, end_line, section_ids '
        "that its rows write: it was made by an older chunk_table_sql (to bring it up to date: "
        "run the "
        "SQL of mdchunks.chunk_table_upgrade_sql('doc_chunks'))"
    ) in refused.stderr
    with psycopg.connect(database_url, autocommit=True) as conn:
        for _ in range(2):  # twice: the second changes nothing
            conn.execute(mdchunks.chunk_table_upgrade_sql("doc_chunks"))
        triggers = conn.execute(
            "SELECT tgname FROM pg_trigger WHERE tgrelid = 'doc_chunks'::regclass "
            "AND NOT tgisinternal"
        ).fetchall()
        # The upgraded table is a fresh one but for the order of its columns.
        conn.execute(mdchunks.chunk_table_sql("fresh_chunks"))
        conn.execute("ALTER TABLE fresh_chunks ADD COLUMN word_count bigint")
        upgraded = _relation_shape(conn, "doc_chunks")
        fresh = _relation_shape(conn, "fresh_chunks")
    assert triggers == [("doc_chunks_chunk_columns",)]
    assert upgraded == fresh
    subprocess.run(example, env=env, check=True, capture_output=True)
    with psycopg.connect(database_url) as conn:
        cli_rows = conn.execute(
            f"SELECT {COLUMNS} FROM content_chunks c WHERE source = 'docs' ORDER BY 2, 3"
        ).fetchall()
        host_rows = conn.execute(f"SELECT {COLUMNS} FROM doc_chunks c ORDER BY 2, 3").fetchall()
    assert len(cli_rows) > 20
    assert host_rows == cli_rows


def test_the_hosts_section_table_sql_is_content_sections_under_another_name(
    ingest: Ingest, docs: Path, database_url: str
) -> None:
    ingest(docs)  # applies our migrations
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(mdchunks.section_table_sql("host_sections"))
        ours = _relation_shape(conn, "content_sections")
        theirs = _relation_shape(conn, "host_sections")
    assert theirs == ours


def test_a_section_table_of_an_older_release_is_upgraded_to_the_title(database_url: str) -> None:
    # The section_table_sql before migration 0017: no title, and a check that
    # refuses a breadcrumb on the preamble (the title is its breadcrumb now).
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(mdchunks.section_table_sql("old_sections"))
        conn.execute("ALTER TABLE old_sections DROP COLUMN title")
        conn.execute(
            "ALTER TABLE old_sections ADD CONSTRAINT old_sections_headings_together_check CHECK ("
            "(heading_text IS NULL) = (heading_level IS NULL) "
            "AND (heading_text IS NULL) = (cardinality(heading_path) = 0) "
            "AND (breadcrumb IS NULL) = (cardinality(heading_path) = 0))"
        )
        for _ in range(2):  # twice: the second changes nothing
            conn.execute(mdchunks.section_table_upgrade_sql("old_sections"))
        conn.execute(mdchunks.section_table_sql("new_sections"))
        assert _relation_shape(conn, "old_sections") == _relation_shape(conn, "new_sections")


_SECTIONS_HOST = textwrap.dedent(
    """
    import asyncio, pathlib, sys
    import asyncpg, cocoindex as coco, mdchunks
    from cocoindex.connectors import localfs
    from cocoindex.resources.file import PatternFilePathMatcher

    root, url = pathlib.Path(sys.argv[1]), sys.argv[2]
    DB = coco.ContextKey[asyncpg.Pool]("host_sections_db")
    DOCS = coco.ContextKey[pathlib.Path]("host_sections_docs")

    @coco.lifespan
    async def lifespan(builder):
        async with asyncpg.create_pool(url) as pool:
            builder.provide(DB, pool)
            builder.provide(DOCS, root)
            yield

    @coco.fn
    async def app_main():
        chunks = await mdchunks.mount_chunk_table(DB, "h_chunks")
        sections = await mdchunks.mount_section_table(DB, "h_sections")
        files = localfs.walk_dir(
            DOCS, recursive=True, path_matcher=PatternFilePathMatcher(included_patterns=["**/*.md"])
        )
        await coco.mount_each(
            mdchunks.process_markdown_file, files.items(), chunks, "docs",
            mdchunks.ChunkOptions(), sections,
        )

    coco.App(coco.AppConfig(name="HostSections"), app_main).update_blocking()
    """
)


def test_the_ready_made_function_writes_the_clis_section_rows(
    docs: Path, ingest: Ingest, database_url: str, tmp_path: Path
) -> None:
    assert ingest(docs).ok
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(mdchunks.chunk_table_sql("h_chunks"))
        conn.execute(mdchunks.section_table_sql("h_sections"))
    script = tmp_path / "host_sections.py"
    script.write_text(_SECTIONS_HOST)
    env = _host_env(database_url, tmp_path / "host-state")
    subprocess.run(
        [sys.executable, str(script), str(docs), database_url],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    columns = "id, rel_path, ordinal, heading_path, char_start, char_end, gap_texts, recipe"
    with psycopg.connect(database_url) as conn:
        cli = conn.execute(
            f"SELECT {columns} FROM content_sections WHERE source = 'docs' ORDER BY 2, 3"
        ).fetchall()
        host = conn.execute(f"SELECT {columns} FROM h_sections ORDER BY 2, 3").fetchall()
        listed = conn.execute(
            "SELECT count(*) FROM h_chunks WHERE cardinality(section_ids) > 0"
        ).fetchone()
    assert len(cli) > 50 and host == cli
    assert listed and listed[0] > 20


def test_a_hosts_chunk_and_section_rows_share_one_section_ids() -> None:
    # As docs/plugin.md says: one `SectionIds`, importable from mdchunks, for
    # a document's section rows and its chunk rows, whose section_ids name them.
    chunking = mdchunks.chunk_markdown("# A\n\nx\n\n## B\n\ny\n")
    ids = mdchunks.SectionIds("own", "a.md")
    sections = mdchunks.section_rows(chunking.sections, source="own", rel_path="a.md", ids=ids)
    (chunk,) = mdchunks.chunk_rows(chunking.chunks, source="own", rel_path="a.md", ids=ids)
    assert chunk.section_ids == [row.id for row in sections]
    assert [row.id for row in sections] == [mdchunks.section_id("own", "a.md", i) for i in (0, 1)]
    assert chunk.section_ids[0] is sections[0].id  # one id object, made once
