"""`mdchunks mcp`, driven by the SDK's own client (docs/mcp.md): over stdio
(tools listed with schemas, every tool on an ingested corpus, errors as tool
errors, two clients at once, a role with only SELECT) and over streamable
HTTP on loopback (bearer token required when set, a wrong one refused).
The host-table reads (`--table`) are checked through the API, against the
same rows in our table. The corpus is a small made-up folder, written here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import select
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2
import mdchunks
import psycopg
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mdchunks import api
from mdchunks.db import migrate
from mdchunks.importers import pdf
from mdchunks.mcp import serve
from mdchunks.retrieval import lexical, lexical_terms
from mdchunks.source import lock, state
from psycopg import sql

GUIDE = """# Guide

Intro words before any section.

## Install

Run the installer with care.

### Linux

Use the package manager: apt install kettle.

## Usage

Boil water with the kettle, then pour.
"""
NOTES = "# Notes\n\nA page about owls and their nests.\n"
TOKEN = "a-test-token-of-32-characters-xx"


@pytest.fixture
def corpus(tmp_path: Path, database_url: str) -> str:
    root = tmp_path / "docs"
    (root / "guide").mkdir(parents=True)
    (root / "guide" / "kettle.md").write_text(GUIDE)
    (root / "notes.md").write_text(NOTES)
    mdchunks.ingest(root, source="docs", database_url=database_url, data_dir=tmp_path / "d")
    return database_url


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", serve.TOKEN_VARIABLE}}
    env["COCOINDEX_DISABLE_USAGE_TRACKING"] = "1"
    return env


@asynccontextmanager
async def _stdio(url: str, tmp: Path, *extra: str) -> AsyncIterator[ClientSession]:
    args = ["-m", "mdchunks", "mcp", "--database-url", url, "--data-dir", str(tmp), *extra]
    params = StdioServerParameters(command=sys.executable, args=args, env=_env())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def _call(session: ClientSession, tool: str, **arguments: Any) -> Any:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def _error(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


def test_outline_shows_the_preamble_and_what_the_importer_said(corpus: str, tmp_path: Path) -> None:
    """The text before a document's first heading is a section an agent can
    read (heading_path []), so the outline lists it; a PDF without bookmarks
    is all preamble, and its importer's note says why it has no headings."""
    from spikes import format_documents as documents

    root = tmp_path / "scans"
    root.mkdir()
    (root / "intro.md").write_text("Words before any heading.\n\n# Title\n\nBody.\n")
    # A page titled in its front matter: the outline names it, and it roots
    # every breadcrumb, the preamble's whole (docs/heading-index.md).
    (root / "kettles.md").write_text("---\ntitle: Kettles\n---\nWords.\n\n## Boil\n\nWater.\n")
    (root / "scan.pdf").write_bytes(
        documents.pdf_of(documents.tender(), outline=False, styled=False)
    )
    assert mdchunks.ingest(root, source="scans", database_url=corpus, data_dir=tmp_path / "d").ok

    async def scenario() -> None:
        async with _stdio(corpus, tmp_path) as session:
            intro = await _call(session, "outline", source="scans", rel_path="intro.md")
            assert intro["note"] is None and [
                (h["level"], h["heading_path"], h["breadcrumb"], h["start_line"])
                for h in intro["headings"]
            ] == [(None, [], "(preamble)", 1), (1, ["Title"], "Title", 3)]
            assert intro["title"] is None
            kettles = await _call(session, "outline", source="scans", rel_path="kettles.md")
            assert kettles["title"] == "Kettles"
            assert [(h["heading_path"], h["breadcrumb"]) for h in kettles["headings"]] == [
                ([], "Kettles"),
                (["Boil"], "Kettles > Boil"),
            ]
            boil = await _call(
                session,
                "read_section",
                source="scans",
                rel_path="kettles.md",
                heading_path=["Boil"],
            )
            assert boil["breadcrumb"] == "Kettles > Boil"
            scan = await _call(session, "outline", source="scans", rel_path="scan.pdf")
            assert scan["note"] == pdf.NO_HEADINGS, scan
            assert [h["heading_path"] for h in scan["headings"]] == [[]]
            whole = await _call(
                session, "read_section", source="scans", rel_path="scan.pdf", heading_path=[]
            )
            assert "The works cover the renovation" in whole["text"]

    asyncio.run(scenario())


def test_every_tool_over_stdio(corpus: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with _stdio(corpus, tmp_path) as session:
            info = session.server_info
            assert info is not None and (info.name, info.version) == ("mdchunks", api.version())
            assert api.version()[0].isdigit()  # the installed package's, never empty
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert set(tools) == {"search", "outline", "read_section", "read_chunk", "list_sources"}
            search_schema = tools["search"].input_schema
            assert search_schema["required"] == ["query"]
            assert search_schema["properties"]["k"]["maximum"] == 50
            assert all(tool.description for tool in tools.values())
            assert all(
                tool.annotations and tool.annotations.read_only_hint for tool in tools.values()
            )

            sources = await _call(session, "list_sources")
            assert sources["sources"] == [
                {"source": "docs", "documents": 2, "chunks": 2, "with_headings": 2}
            ]
            hits = (await _call(session, "search", query="apt package manager", k=3))["hits"]
            first = hits[0]
            assert first["rel_path"] == "guide/kettle.md"
            assert first["citation"] == "guide/kettle.md:L1-L15"
            # The chunk starts at the guide; the words are in its Linux section.
            assert first["breadcrumb"] == "Guide > Install > Linux"
            assert "apt install kettle" in first["text"]
            assert first["score"] > 0 and uuid.UUID(first["id"])
            only_notes = await _call(session, "search", query="owls kettle", path_prefix="notes")
            assert [hit["rel_path"] for hit in only_notes["hits"]] == ["notes.md"]

            stop_words = await _call(session, "search", query="the of", k=3)
            assert stop_words == {
                "hits": [],
                "note": "no match: the query has only stop words, which search leaves out "
                "(dropped: the, of)",
            }
            nowhere = await _call(session, "search", query="zebras quagga", method="bm25")
            assert nowhere == {
                "hits": [],
                "note": "no match: no searched document holds any of the query's words "
                "(zebras, quagga)",
            }
            outline = await _call(session, "outline", source="docs", rel_path="guide/kettle.md")
            assert outline["error"] is None
            assert [
                (h["level"], h["text"], h["start_line"], h["end_line"]) for h in outline["headings"]
            ] == [
                (1, "Guide", 1, 15),
                (2, "Install", 5, 12),
                (3, "Linux", 9, 12),
                (2, "Usage", 13, 15),
            ]
            section = await _call(
                session,
                "read_section",
                source="docs",
                rel_path="guide/kettle.md",
                heading_path=["Guide", "Install"],
            )
            assert section["text"] == GUIDE[GUIDE.index("## Install") : GUIDE.index("## Usage")]
            assert section["citation"] == "guide/kettle.md:L5-L12" and section["omitted_chars"] == 0
            by_id = await _call(
                session,
                "read_section",
                source="docs",
                rel_path="guide/kettle.md",
                section_id=outline["headings"][2]["section_id"],
                max_chars=10,
            )
            assert by_id["text"] == "### Linux\n" and by_id["omitted_chars"] > 0
            assert "not shown" in by_id["note"]
            chunk = await _call(session, "read_chunk", id=first["id"], neighbours=1)
            assert chunk["chunk"]["id"] == first["id"] and chunk["before"] == chunk["after"] == []

            # Bad arguments: one line each, and the server keeps serving.
            errors = [
                await _error(session, "search", query="x", source="nope"),
                await _error(session, "search", query="x", k=0),
                await _error(session, "search", query="word " * 1000),
                await _error(session, "search", query="   "),
                await _error(session, "read_chunk", id="not-a-uuid"),
                await _error(session, "read_chunk", id=str(uuid.uuid4())),
                await _error(session, "outline", source="docs", rel_path="missing.md"),
                await _error(session, "search", query="x", k="three"),
                await _error(session, "search", query="x", method="fuzzy"),
                await _error(session, "outline", rel_path="guide/kettle.md"),
                await _error(
                    session,
                    "read_section",
                    source="docs",
                    rel_path="guide/kettle.md",
                    heading_path=["Guide", "Nowhere"],
                ),
                await _error(
                    session,
                    "read_section",
                    source="docs",
                    rel_path="guide/kettle.md",
                    section_id="not-a-uuid",
                ),
            ]
            assert all("\n" not in e and e for e in errors), errors
            # An id that is no uuid is said so alike, of a chunk and of a section.
            assert errors[4].endswith(": chunk id 'not-a-uuid' is not a uuid"), errors[4]
            assert errors[11].endswith(": section id 'not-a-uuid' is not a uuid"), errors[11]
            assert "unknown source 'nope'" in errors[0] and "k must be 1 to 50" in errors[1]
            assert "2,000" in errors[2] and "empty" in errors[3]
            # Arguments the schema refuses: one line naming each and what it must be.
            assert errors[7] == (
                "bad arguments to search: k: input should be a valid integer, "
                "unable to parse string as an integer"
            ), errors[7]
            assert errors[8].startswith("bad arguments to search: method: input should be "), errors
            assert errors[9] == "bad arguments to outline: source: field required", errors[9]
            # The API's advice in this server's terms, not the CLI's.
            assert errors[6].endswith("(search hits name documents by their rel_path)")
            assert "mdchunks" not in errors[6]
            assert (await _call(session, "list_sources"))["sources"]

    asyncio.run(scenario())


def test_two_clients_at_once_and_a_select_only_role(corpus: str, tmp_path: Path) -> None:
    """Two servers, one per client, run side by side; one of them reads as a
    role that may only SELECT (the server never writes)."""
    role, password = f"mdchunks_ro_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    with psycopg.connect(corpus, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                sql.Identifier(role), sql.Literal(password)
            )
        )
        conn.execute(
            sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(
                sql.Identifier(migrate.BOOKKEEPING_SCHEMA), sql.Identifier(role)
            )
        )
        conn.execute(
            sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA public, {} TO {}").format(
                sql.Identifier(migrate.BOOKKEEPING_SCHEMA), sql.Identifier(role)
            )
        )
    parts = urlsplit(corpus)  # the same server, as the reader
    host = parts.netloc.rsplit("@", 1)[-1]
    reader_url = urlunsplit(
        (parts.scheme, f"{role}:{password}@{host}", parts.path, parts.query, "")
    )

    async def one(url: str, query: str) -> list[str]:
        async with _stdio(url, tmp_path) as session:
            found = []
            for _ in range(3):
                hits = (await _call(session, "search", query=query, k=1))["hits"]
                found.append(hits[0]["rel_path"])
                await _call(session, "outline", source="docs", rel_path=hits[0]["rel_path"])
            return found

    async def both() -> tuple[list[str], list[str]]:
        return await asyncio.gather(one(corpus, "owls"), one(reader_url, "kettle water"))

    try:
        owls, kettle = asyncio.run(both())
        assert owls == ["notes.md"] * 3 and kettle == ["guide/kettle.md"] * 3
    finally:
        with psycopg.connect(corpus, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [role]
            )
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_server(corpus: str, tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    env = {**_env(), serve.TOKEN_VARIABLE: TOKEN}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mdchunks",
            "mcp",
            "--http",
            f"127.0.0.1:{port}",
            "--database-url",
            corpus,
            "--data-dir",
            str(tmp_path),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_http_on_loopback_with_a_bearer_token(http_server: str) -> None:
    async def with_token(token: str | None) -> list[str]:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers) as client,
            streamable_http_client(http_server, http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            hits = (await _call(session, "search", query="owls"))["hits"]
            return [hit["rel_path"] for hit in hits]

    assert asyncio.run(with_token(TOKEN)) == ["notes.md"]
    for wrong in (None, "another-token-of-enough-length"):
        answer = httpx2.post(
            http_server,
            json={},
            headers={} if wrong is None else {"Authorization": f"Bearer {wrong}"},
        )
        assert answer.status_code == 401


def test_an_open_address_needs_a_token(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mdchunks",
            "mcp",
            "--http",
            "0.0.0.0:8765",
            "--data-dir",
            str(tmp_path),
        ],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and serve.TOKEN_VARIABLE in done.stderr


def test_addresses_and_tokens() -> None:
    assert serve.parse_address("127.0.0.1:80") == serve.Address("127.0.0.1", 80)
    assert serve.parse_address(":9000").loopback and serve.parse_address("[::1]:1").loopback
    assert not serve.parse_address("0.0.0.0:1").loopback
    with pytest.raises(mdchunks.MdchunksError, match="HOST:PORT"):
        serve.parse_address("localhost")
    with pytest.raises(mdchunks.MdchunksError, match=r"port 99999 is out of range \(0 to 65535\)"):
        serve.parse_address("127.0.0.1:99999")
    assert serve.check_token(serve.parse_address("localhost:1"), None) is None
    with pytest.raises(mdchunks.MdchunksError, match="too short"):
        serve.check_token(serve.parse_address("localhost:1"), "short")
    assert serve.check_token(serve.parse_address("10.0.0.1:1"), TOKEN) == TOKEN


def test_a_host_table_is_searched_and_outlined(
    corpus: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table made by chunk_table_sql, holding the same rows as ours: BM25 with
    statistics counted live ranks and scores exactly as over our table."""
    _copy_into_a_host_table(corpus)
    host = {"table": "pages", "pg_schema": "host", "database_url": corpus}
    ours = mdchunks.search("kettle owls water", k=5, method="bm25", database_url=corpus)
    counted: list[str] = []
    count_terms = lexical_terms.query_terms

    def spied(*args: Any, **kwargs: Any) -> lexical_terms.QueryTerms:
        counted.append(kwargs["table"].shown)
        return count_terms(*args, **kwargs)

    with monkeypatch.context() as patch:
        # At home (the sections, the ranking) and where the API calls it.
        patch.setattr(lexical_terms, "query_terms", spied)
        patch.setattr(lexical, "query_terms", spied)
        theirs = mdchunks.search("kettle owls water", k=5, **host)  # type: ignore[arg-type]
    # Its statistics are counted over the whole table: once a search, for the
    # ranking and the matched sections both.
    assert counted == ["host.pages"] and any(h.matched_section.held > 1 for h in theirs)
    assert [(h.id, round(h.rank, 9)) for h in theirs] == [(h.id, round(h.rank, 9)) for h in ours]
    # The section a hit's match lies in, and that section whole, as over ours.
    ask = {"k": 3, "expand": "section"}
    ours = mdchunks.search("apt package manager", method="bm25", database_url=corpus, **ask)  # type: ignore[arg-type]
    theirs = mdchunks.search("apt package manager", **host, **ask)  # type: ignore[arg-type]

    def named(found: list[Any]) -> list[tuple[Any, ...]]:
        return [
            (h.id, h.matched_section and h.matched_section.section, h.section and h.section.text)
            for h in found
        ]

    assert named(theirs) == named(ours)
    assert theirs[0].breadcrumb == "Guide > Install > Linux" and theirs[0].matched_section.held > 1
    assert theirs[0].section.text == GUIDE[GUIDE.index("### Linux") : GUIDE.index("## Usage")]

    def headings(found: list[Any]) -> list[tuple[Any, ...]]:
        (document,) = found
        return [
            (e.section.heading_path, e.section.start_line, e.section.end_line, e.parent)
            for e in document.sections
        ]

    rebuilt = mdchunks.outline("guide/kettle.md", source="docs", **host)  # type: ignore[arg-type]
    stored = mdchunks.outline("guide/kettle.md", source="docs", database_url=corpus)
    assert headings(rebuilt) == headings(stored)
    with pytest.raises(mdchunks.MdchunksError, match="has none: search it with --method bm25"):
        mdchunks.search("kettle", method="semantic", **host)  # type: ignore[arg-type]
    with psycopg.connect(corpus, autocommit=True) as conn:
        conn.execute(mdchunks.section_table_sql("sections", pg_schema_name="host"))  # type: ignore[arg-type]
        conn.execute("CREATE TABLE host.notes (id uuid, body text)")
        # The first chunk_table_sql's shape: no line columns.
        conn.execute(mdchunks.chunk_table_sql("old_pages", pg_schema_name="host"))  # type: ignore[arg-type]
        conn.execute("ALTER TABLE host.old_pages DROP COLUMN start_line, DROP COLUMN end_line")
    with pytest.raises(
        mdchunks.MdchunksError,
        match=r"^table 'host.old_pages' lacks the column\(s\) start_line, end_line: it was made "
        r"by an older mdchunks.chunk_table_sql \(to bring it up to date: run the SQL of "
        r"mdchunks.chunk_table_upgrade_sql\('old_pages', pg_schema_name='host'\); "
        r"docs/plugin.md\)$",
    ):
        mdchunks.search("kettle", table="old_pages", pg_schema="host", database_url=corpus)
    # A table that is no chunk table: one line, before any read (as `mcp` checks at start).
    with pytest.raises(mdchunks.MdchunksError, match=r"'host.sections' is a section table"):
        mdchunks.list_sources(table="sections", pg_schema="host", database_url=corpus)
    with pytest.raises(
        mdchunks.MdchunksError, match=r"'host.notes' is no chunk table of mdchunks: it lacks "
    ):
        mdchunks.search("kettle", table="notes", pg_schema="host", database_url=corpus)
    with pytest.raises(mdchunks.MdchunksError, match=r"no table .host\.missing."):
        mdchunks.search("kettle", table="missing", pg_schema="host", database_url=corpus)
    with pytest.raises(mdchunks.MdchunksError, match=r"unknown source .web. in table host\.pages"):
        mdchunks.search("kettle", source="web", **host)  # type: ignore[arg-type]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mdchunks",
            "search",
            "kettle",
            "--json",
            "--table",
            "pages",
            "--pg-schema",
            "host",
            "--database-url",
            corpus,
        ],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["rel_path"] == "guide/kettle.md"


def _copy_into_a_host_table(url: str) -> None:
    """host.pages, made by chunk_table_sql, holding every row of content_chunks."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA host")
        conn.execute(mdchunks.chunk_table_sql("pages", pg_schema_name="host"))  # type: ignore[arg-type]
        columns = [
            row[0]
            for row in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = 'host' "
                "AND table_name = 'pages' ORDER BY ordinal_position"
            )
        ]
        listed = sql.SQL(", ").join(map(sql.Identifier, columns))
        # c.embed_text: content_chunks computes it from the row (migration 0014).
        read = sql.SQL(", ").join(sql.SQL("c.{}").format(sql.Identifier(c)) for c in columns)
        conn.execute(
            sql.SQL("INSERT INTO host.pages ({}) SELECT {} FROM content_chunks c").format(
                listed, read
            )
        )


def test_a_host_tables_outline_is_the_stored_one(tmp_path: Path, database_url: str) -> None:
    """Rebuilt from a host table's chunks, a document's outline has the stored
    outline's section ids, parents and chunk counts, also where two sections
    share a heading path (the ids count sections, not paths)."""
    root = tmp_path / "api"
    root.mkdir()
    parts = "".join(
        f"## Example\n\n{'An example of the call. ' * 120}\n\n### Detail {n}\n\nMore.\n\n"
        for n in ("one", "two")
    )
    (root / "calls.md").write_text("Before the title.\n\n# API\n\n" + parts)
    # Front matter is no preamble: the ordinals (so the ids) must agree still.
    front = "---\ntitle: Front\n---\n\n"
    (root / "front.md").write_text(front + "# Front\n\nText.\n\n## Part\n\nMore.\n")
    (root / "front-and-text.md").write_text(front + "A preamble.\n\n# F\n\nText.\n")
    mdchunks.ingest(root, source="api", database_url=database_url, data_dir=tmp_path / "d")
    _copy_into_a_host_table(database_url)
    host = {"table": "pages", "pg_schema": "host", "database_url": database_url}
    (rebuilt,) = mdchunks.outline("calls.md", source="api", **host)  # type: ignore[arg-type]
    (stored,) = mdchunks.outline("calls.md", source="api", database_url=database_url)
    assert [e.section.heading_path for e in stored.sections] == [
        (),
        ("API",),
        ("API", "Example"),
        ("API", "Example", "Detail one"),
        ("API", "Example"),
        ("API", "Example", "Detail two"),
    ]

    def tree(entries: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        # Not the last section's end: a rebuilt document ends where its last
        # chunk does, before the file's trailing line break.
        return [
            (e.section.id, e.section.heading_path, e.section.char_start, e.parent, e.chunks)
            for e in entries
        ]

    assert tree(rebuilt.sections) == tree(stored.sections)
    assert sum(e.chunks for e in stored.sections) > len(stored.sections)  # some held twice
    expected = {"front.md": [("Front",), ("Front", "Part")], "front-and-text.md": [(), ("F",)]}
    for name, paths in expected.items():
        (rebuilt,) = mdchunks.outline(name, source="api", **host)  # type: ignore[arg-type]
        (stored,) = mdchunks.outline(name, source="api", database_url=database_url)
        assert [e.section.heading_path for e in stored.sections] == paths
        assert tree(rebuilt.sections) == tree(stored.sections), name


@contextlib.contextmanager
def _serving(corpus: str, tmp_path: Path, address: str) -> Iterator[str]:
    """`mdchunks mcp --http ADDRESS` (no token); yields the URL it says it serves."""
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "mdchunks", "mcp", "--http", address),
            *("--database-url", corpus, "--data-dir", str(tmp_path)),
        ],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        said = process.stderr.readline()  # "mdchunks mcp: serving http://HOST:PORT/mcp"
        assert said.startswith("mdchunks mcp: serving http://"), said + process.stderr.read()
        url = said.split()[-1]
        parts = urlsplit(url)
        assert parts.port, url  # the port it got, never `:0`
        deadline = time.monotonic() + 60
        while True:  # bound at once, listening once the app has started
            try:
                with socket.create_connection((str(parts.hostname), parts.port), timeout=5):
                    break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
_POST_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.mark.parametrize("address", ["127.0.0.2:0", "[0:0:0:0:0:0:0:1]:0"])
def test_every_loopback_address_checks_host_and_origin(
    corpus: str, tmp_path: Path, address: str
) -> None:
    """The DNS-rebinding guard on loopback addresses other than the SDK's three
    literal hosts (issue 42: `Host: rebind.attacker.example` listed the
    sources); `:0` serves on a port it names."""
    with _serving(corpus, tmp_path, address) as url:
        port = urlsplit(url).port
        for host in ("rebind.attacker.example", f"rebind.attacker.example:{port}"):
            forged = httpx2.post(url, json=_INITIALIZE, headers={**_POST_HEADERS, "Host": host})
            assert forged.status_code == 421, (host, forged.status_code, forged.text)
        origin = httpx2.post(
            url,
            json=_INITIALIZE,
            headers={**_POST_HEADERS, "Origin": f"http://rebind.attacker.example:{port}"},
        )
        assert origin.status_code == 403, (origin.status_code, origin.text)
        # The address's own name, its canonical spelling, and a page of its own
        # origin are served.
        honest = httpx2.post(
            url,
            json=_INITIALIZE,
            headers={**_POST_HEADERS, "Origin": f"http://{urlsplit(url).netloc}"},
        )
        assert honest.status_code == 200, (honest.status_code, honest.text)

        async def sources() -> list[str]:
            async with (
                streamable_http_client(url) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                listed = await _call(session, "list_sources")
                return [s["source"] for s in listed["sources"]]

        assert asyncio.run(sources()) == ["docs"]


def test_a_connection_that_never_finishes_its_headers_is_closed(
    corpus: str, tmp_path: Path
) -> None:
    """uvicorn times out idle keep-alive connections only: one that sends part
    of its headers, or trickles them a byte at a time, held a slot for good."""
    with _serving(corpus, tmp_path, ":0") as url:
        parts = urlsplit(url)
        where = (str(parts.hostname), int(parts.port or 0))
        silent = socket.create_connection(where)
        trickling = socket.create_connection(where)
        trickling.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        opened = time.monotonic()
        open_ones = {silent, trickling}
        closed_after: dict[socket.socket, float] = {}
        while open_ones and time.monotonic() - opened < serve.HEADERS_SECONDS + 15:
            with contextlib.suppress(OSError):
                if trickling in open_ones:
                    trickling.sendall(b"a")  # a byte a second never moves the deadline
            readable, _, _ = select.select(list(open_ones), [], [], 1.0)
            for sock in readable:
                with contextlib.suppress(OSError):
                    if sock.recv(1024):
                        continue
                open_ones.discard(sock)
                closed_after[sock] = time.monotonic() - opened
        for sock in (silent, trickling):
            sock.close()
        assert not open_ones, "a connection without its headers was never closed"
        assert all(
            serve.HEADERS_SECONDS - 1 < after < serve.HEADERS_SECONDS + 10
            for after in closed_after.values()
        ), closed_after
        # A request whose headers come at once is served as before.
        answer = httpx2.post(url, json=_INITIALIZE, headers=_POST_HEADERS)
        assert answer.status_code == 200


def test_nul_in_arguments_is_an_error_naming_the_argument(corpus: str, tmp_path: Path) -> None:
    async def scenario() -> tuple[str, str]:
        async with _stdio(corpus, tmp_path) as session:
            query = await _error(session, "search", query="owls\x00nests")
            path = await _error(
                session, "read_section", source="docs", rel_path="notes.md", heading_path=["N\x00"]
            )
            assert (await _call(session, "search", query="owls"))["hits"]  # still serving
            return query, path

    query, path = asyncio.run(scenario())
    assert "query holds a NUL character (U+0000)" in query, query
    assert "heading_path holds a NUL character (U+0000)" in path, path


def test_search_notes_a_source_whose_last_run_did_not_finish(corpus: str, tmp_path: Path) -> None:
    """MCP's `search` says what the CLI prints on stderr beside its hits. The
    source is left as a run killed after its start leaves it (a recipe change
    killed mid-run: its state marked in progress, never stamped)."""
    with lock.source_lock(corpus, "docs") as conn:
        state.distrust(conn, "docs")

    async def scenario() -> dict[str, Any]:
        async with _stdio(corpus, tmp_path) as session:
            found: dict[str, Any] = await _call(session, "search", query="owls")
            return found

    found = asyncio.run(scenario())
    assert [hit["rel_path"] for hit in found["hits"]] == ["notes.md"]  # the hits all the same
    assert "source 'docs': its last run did not finish" in found["note"], found
    assert "rows may be incomplete or stale; run `mdchunks ingest " in found["note"], found
