"""Issue #5, least privilege and safety.

- A role with only DML rights (SELECT/INSERT/UPDATE/DELETE on content_chunks
  and the bookkeeping tables, SELECT on yoyo's record of migrations; no
  CREATE, no TEMP) ingests, re-runs, follows edits and backfills, once the
  migrations ran as a stronger role.
- Source names are data: hostile ones are stored verbatim and break nothing;
  no SQL in flow/ is assembled from strings.
- No network access at run time: a whole `mdchunks ingest` runs under a
  seccomp filter that kills the process on any AF_INET/AF_INET6 socket.
"""

from __future__ import annotations

import ast
import signal
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import mdchunks
import psycopg
import pytest
from mdchunks import Recipe
from mdchunks.db import database, migrate
from mdchunks.db.connection import quote_ident
from mdchunks.retrieval import embedder, embedding
from psycopg import sql
from reliability_support import (
    ROOT,
    assert_invariants,
    cli_env,
    copy_corpus,
    documents,
    one_line_error,
    query,
    run_cli,
    table,
    with_credentials,
)

SOURCE = "docs"
NO_NETWORK = [sys.executable, str(Path(__file__).with_name("no_network.py"))]

# What `mdchunks ingest` and `backfill` need, table by table (docs/rows-and-table.md).
INGEST_GRANTS = {
    "content_chunks": "SELECT, INSERT, UPDATE, DELETE",
    "content_sections": "SELECT, INSERT, UPDATE, DELETE",
    "mdchunks_documents": "SELECT, INSERT, UPDATE, DELETE",
    "mdchunks_sources": "SELECT, INSERT, UPDATE",
    "mdchunks_recipes": "SELECT, INSERT",
    # BM25's statistics, recomputed by every run that changed rows (migration 0008).
    "mdchunks_search_stats": "SELECT, INSERT, UPDATE, DELETE",
    # UPDATE: every run that changes rows moves them by its documents (docs/search.md).
    "mdchunks_search_terms": "SELECT, INSERT, UPDATE, DELETE",
    "mdchunks_search_top": "SELECT, INSERT, UPDATE, DELETE",  # migration 0019: the same
    f"{migrate.BOOKKEEPING_SCHEMA}.{migrate.MIGRATION_TABLE}": "SELECT",
}


def _dbname(url: str) -> str:
    return psycopg.conninfo.conninfo_to_dict(url)["dbname"]  # type: ignore[return-value]


@pytest.fixture
def restricted(database_url: str) -> Iterator[str]:
    """A login role with only the grants above, in a database whose public
    rights (CONNECT, TEMP, CREATE on the schema) are revoked. Its URL."""
    role, password = f"mdchunks_dml_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    mdchunks.migrate_database(database_url=database_url)  # as the stronger role
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                sql.Identifier(role), sql.Literal(password)
            )
        )
        database = sql.Identifier(_dbname(database_url))
        conn.execute(sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(database))
        conn.execute(sql.SQL("REVOKE CREATE ON SCHEMA public FROM PUBLIC"))
        conn.execute(
            sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(database, sql.Identifier(role))
        )
        for schema in ("public", migrate.BOOKKEEPING_SCHEMA):
            conn.execute(
                sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(
                    sql.Identifier(schema), sql.Identifier(role)
                )
            )
        for name, rights in INGEST_GRANTS.items():
            conn.execute(
                sql.SQL("GRANT {} ON TABLE {} TO {}").format(
                    sql.SQL(rights), sql.Identifier(*name.split(".")), sql.Identifier(role)
                )
            )
    try:
        yield with_credentials(database_url, role, password)
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [role]
            )
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_a_role_with_only_dml_rights_ingests(
    restricted: str,
    new_database,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    root = copy_corpus(tmp_path / "docs", tldr_pages=60, book_chapters=3)
    data_dir = tmp_path / "data"
    args = ["--source", SOURCE, "--database-url", restricted, "--data-dir", str(data_dir)]

    # It really is restricted: no table, no temporary table, no TRUNCATE.
    with psycopg.connect(restricted, autocommit=True) as conn:
        for statement in [
            "CREATE TABLE mine (a int)",
            "CREATE TEMP TABLE mine (a int)",
            "TRUNCATE content_chunks",
        ]:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)

    first = run_cli("ingest", str(root), *args)
    assert first.code == 0, first.text
    again = run_cli("ingest", str(root), *args)
    assert again.code == 0 and "0 processed" in again.out, again.text

    (root / "pages" / sorted((root / "pages").iterdir())[0].name).write_text("# Edited\n\nNew.\n")
    sorted((root / "pages").iterdir())[1].unlink()
    edited = run_cli("ingest", str(root), *args)
    assert edited.code == 0 and "1 processed" in edited.out and "1 removed" in edited.out
    backfill = run_cli(
        "backfill",
        "--source",
        SOURCE,
        "--chunk-size",
        "700",
        "--database-url",
        restricted,
        "--data-dir",
        str(data_dir),
    )
    assert backfill.code == 0, backfill.text
    searched = run_cli(
        "search",
        "tar archive",
        "--source",
        SOURCE,
        "--database-url",
        restricted,
        "--data-dir",
        str(data_dir),
    )
    assert searched.code == 0, searched.text

    # The rows are exactly those of a superuser's clean run of the same recipe.
    reference = new_database()
    mdchunks.ingest(
        root,
        source=SOURCE,
        recipe=Recipe().with_options(chunk_size=700),
        database_url=reference,
        data_dir=tmp_path / "reference",
    )
    assert table(restricted, SOURCE) == table(reference, SOURCE)
    assert documents(restricted, SOURCE) == documents(reference, SOURCE)
    assert_invariants(restricted, SOURCE)

    # Without DELETE on mdchunks_sources (docs/rows-and-table.md's grants), drop says so
    # in one line and deletes nothing.
    dropped = run_cli("drop", "--yes", *args)
    assert dropped.code == 3, dropped.text
    assert dropped.err.splitlines() == [
        f"error: cannot drop source {SOURCE!r}, nothing was deleted: permission denied for "
        "table mdchunks_sources (drop needs DELETE on content_chunks, content_sections, "
        "mdchunks_documents, mdchunks_sources, mdchunks_search_stats, mdchunks_search_terms and "
        "mdchunks_search_top)"
    ], dropped.err
    assert table(restricted, SOURCE) == table(reference, SOURCE)


def test_a_dml_role_embeds_into_an_old_vector_table_it_may_not_upgrade(
    restricted: str, database_url: str, tmp_path: Path
) -> None:
    """Embeddings with DML rights only (docs/rows-and-table.md: the grants), on a table of the
    shape an older mdchunks made (`embedding vector(384)`): the role may
    neither upgrade it nor make the HNSW index, and still embeds (384
    dimensions fit), is told the index is missing, and searches (exactly)."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# Birds\n\nOwls hunt at night and sleep by day.\n")
    (root / "b.md").write_text("# Kitchens\n\nA kettle boils water for tea.\n")
    role = psycopg.conninfo.conninfo_to_dict(restricted)["user"]
    with database.connect(database_url) as owner:
        embedding.ensure_schema(owner)
        owner.execute(f"ALTER TABLE {embedding.TABLE} ALTER COLUMN embedding TYPE vector(384)")
        owner.execute(
            "GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE "
            f"{quote_ident(embedding.TABLE)} TO {quote_ident(str(role))}"
        )
    data_dir = tmp_path / "data"
    args = ["--source", SOURCE, "--database-url", restricted, "--data-dir", str(data_dir)]

    done = run_cli("ingest", str(root), "--embed", *args)

    assert done.code == 0, done.text
    assert "2 embedded, 0 deleted (2 in the source; all-MiniLM-L6-v2;" in done.out
    assert "may not create the model's HNSW index" in done.out
    with database.connect(database_url) as owner:
        assert embedding.schema(owner).typmod == 384  # not upgraded
        name = embedding.index_name(embedder.DEFAULT_MODEL, 384)
        row = owner.execute("SELECT to_regclass(%s)", [name]).fetchone()
        assert row is not None and row[0] is None
    hits = mdchunks.search(
        "owls at night", k=1, method="semantic", database_url=restricted, data_dir=data_dir
    )
    assert hits[0].rel_path == "a.md"


def test_without_migrations_the_dml_role_gets_a_clear_message(
    new_database,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    url = new_database()
    role, password = f"mdchunks_dml_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                sql.Identifier(role), sql.Literal(password)
            )
        )
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    try:
        (tmp_path / "docs").mkdir()
        (tmp_path / "docs" / "a.md").write_text("# A\n")
        done = run_cli(
            "ingest",
            str(tmp_path / "docs"),
            "--database-url",
            with_credentials(url, role, password),
            "--data-dir",
            str(tmp_path / "d"),
        )
        assert done.code == 3, done.text
        line = one_line_error(done)
        assert line.startswith("error: migrations need the right to create tables"), line
        assert password not in done.text
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [role]
            )
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


HOSTILE = [
    "x'; DROP TABLE content_chunks; --",
    '"; DELETE FROM mdchunks_sources; --',
    "$$; DROP TABLE mdchunks_documents; $$",
    "%(source)s %s {source} {}",
    "../../../../tmp/escape",
    "ünïcødé 名前 🚀 back\\slash 'q' \"dq\"",
]


def test_hostile_source_names_are_data_not_sql(database_url: str, tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# A\n\ntext\n")
    data_dir = tmp_path / "data"
    url_args = ["--database-url", database_url, "--data-dir", str(data_dir)]

    # The classic through the whole CLI: ingest, status, search, backfill, drop.
    name = HOSTILE[0]
    assert run_cli("ingest", str(root), "--source", name, *url_args).code == 0
    assert run_cli("status", *url_args).code == 0
    assert run_cli("search", "text", "--source", name, *url_args).code == 0
    assert run_cli("backfill", "--source", name, "--chunk-size", "900", *url_args).code == 0
    for other in HOSTILE[1:]:
        assert mdchunks.ingest(root, source=other, database_url=database_url, data_dir=data_dir).ok

    tables = {
        row[0]
        for row in query(
            database_url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        )
    }
    assert {"content_chunks", "mdchunks_documents", "mdchunks_sources"} <= tables
    sources = {row[0] for row in query(database_url, "SELECT DISTINCT source FROM content_chunks")}
    assert sources == set(HOSTILE)
    assert {row[0] for row in query(database_url, "SELECT source FROM mdchunks_sources")} == set(
        HOSTILE
    )
    state = (data_dir / "state").resolve()
    assert all(path.resolve().parent == state for path in state.iterdir())
    assert not Path("/tmp/escape").exists()

    dropped = run_cli("drop", "--source", name, "--yes", *url_args)
    assert dropped.code == 0, dropped.text
    left = {row[0] for row in query(database_url, "SELECT DISTINCT source FROM content_chunks")}
    assert left == set(HOSTILE[1:])


@pytest.mark.parametrize("name", ["", "   ", "a\x00b", "line\nbreak", "x" * 201])
def test_invalid_source_names_are_refused(name: str, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    with pytest.raises(mdchunks.MdchunksError) as refused:
        mdchunks.ingest(tmp_path / "docs", source=name, database_url="postgresql://u@h/db")
    assert refused.value.exit_code == 2


def _execute_calls(tree: ast.AST) -> Iterator[tuple[ast.Call, dict[str, list[ast.expr]]]]:
    """Each statement sent (`execute`, `executemany`, `run_script`), anywhere in
    the module, once, with what the names of its outermost enclosing function
    are assigned (a statement built into a variable first is judged by what
    the variable was given; a nested function's names are among them)."""
    seen: set[int] = set()

    def sent(scope: ast.AST) -> Iterator[ast.Call]:
        for node in ast.walk(scope):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in {"execute", "executemany", "run_script"}
                and node.args
                and id(node) not in seen
            ):
                seen.add(id(node))
                yield node

    for function in ast.walk(tree):  # outer functions come before the ones they hold
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        assigned: dict[str, list[ast.expr]] = {}
        for node in ast.walk(function):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        assigned.setdefault(target.id, []).append(node.value)
        for call in sent(function):
            yield call, assigned
    for call in sent(tree):  # at module level
        yield call, {}


def _string_constants(tree: ast.Module) -> set[str]:
    """Module-level names bound once to a string literal (`TABLE = "x"`)."""
    bound: dict[str, int] = {}
    literal: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                bound[target.id] = bound.get(target.id, 0) + 1
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                    literal.add(target.id)
    return {name for name in literal if bound[name] == 1 and name.isupper()}


QUOTING = {"quote_ident", "quote_literal"}  # flow/db/connection.py


def _quoting(value: ast.expr) -> bool:
    """A call of one of the quoting functions (`quote_ident(name)`), possibly
    with a `.replace(...)` after it (a `%` doubled for the placeholders)."""
    replaced = isinstance(value, ast.Call) and getattr(value.func, "attr", "") == "replace"
    if replaced:
        return _quoting(value.func.value)  # type: ignore[attr-defined]
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    return name in QUOTING


def _assembled(
    statement: ast.expr, constants: set[str], assigned: dict[str, list[ast.expr]] | None = None
) -> bool:
    """Is this SQL text built from something other than literals, constants
    and quoted identifiers or constants?"""
    assigned = assigned or {}

    def template(value: ast.expr) -> bool:
        """Text of our own: a literal, a constant, a named query (`QUERIES[...]`),
        or a local name given only such."""
        if isinstance(value, ast.Constant) or (
            isinstance(value, ast.Name) and value.id in constants
        ):
            return True
        if isinstance(value, ast.Subscript) and getattr(value.value, "id", "") == "QUERIES":
            return True
        if isinstance(value, ast.IfExp):
            return template(value.body) and template(value.orelse)
        if isinstance(value, ast.Name) and value.id in assigned:
            return all(template(given) for given in assigned[value.id])
        return False

    def safe_part(value: ast.expr) -> bool:
        if template(value) or _quoting(value):
            return True
        return isinstance(value, (ast.Call, ast.JoinedStr)) and composed(value)

    def composed(value: ast.expr) -> bool:
        """An f-string or a template's `.format` over safe parts only."""
        if isinstance(value, ast.JoinedStr):
            return all(
                isinstance(part, ast.Constant)
                or (isinstance(part, ast.FormattedValue) and safe_part(part.value))
                for part in value.values
            )
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "format"
        ):
            return (
                template(value.func.value)
                and all(safe_part(arg) for arg in value.args)
                and all(safe_part(keyword.value) for keyword in value.keywords)
            )
        return False

    if isinstance(statement, ast.Name) and statement.id in assigned:
        values = assigned.pop(statement.id)  # popped: a name assigned from itself ends here
        return any(_assembled(value, constants, assigned) for value in values)
    if isinstance(statement, ast.JoinedStr):
        return not composed(statement)
    if isinstance(statement, ast.BinOp):
        return True
    if isinstance(statement, ast.Call) and getattr(statement.func, "attr", "") == "format":
        return not composed(statement)
    return False


def test_no_sql_in_flow_is_assembled_from_strings() -> None:
    """Every statement flow/ executes is a literal, a named query from
    queries.sql, a module constant, or an f-string or `.format` over
    module-level string constants (a table name) and quoted identifiers and
    constants (`quote_ident`, `quote_literal`: DDL takes no parameters):
    never text built from a raw value (`%`, `+`, `.format` or an f-string over
    a variable), also when it is built into a variable first. Values (source
    names, paths, options) always travel as parameters."""
    offenders = []
    calls = 0
    for path in sorted((ROOT / "flow").rglob("*.py")):  # every room
        tree = ast.parse(path.read_text(), str(path))
        constants = _string_constants(tree)
        for call, assigned in _execute_calls(tree):
            calls += 1
            if _assembled(call.args[0], constants, dict(assigned)):
                offenders.append(f"{path.relative_to(ROOT)}:{call.lineno}")
    assert calls > 20
    assert offenders == []
    # The check itself catches what it should (and lets constants through).
    probe = ast.parse(
        'TABLE = "t"\n'
        'QUERY = "CREATE INDEX {name} ... {size}"\n'
        "def f():\n"
        "    conn.execute(f\"DELETE FROM x WHERE s = '{source}'\")\n"
        '    conn.execute("SELECT " + column)\n'
        '    conn.execute("SELECT %s" % value)\n'
        '    conn.execute("SELECT {}".format(value))\n'
        "    statement = QUERY.format(name=name)\n"
        "    conn.execute(statement)\n"
        '    conn.execute(f"DELETE FROM {TABLE} WHERE s = %s", [source])\n'
        '    conn.execute(f"CREATE DATABASE {quote_ident(name)}")\n'
        "    ddl = QUERY.format(name=connection.quote_ident(n), size=quote_literal(k))\n"
        "    conn.run_script(ddl)\n"
        '    conn.execute(f"SELECT {str(value)}")\n'
        "    conn.execute(text.format(a=quote_ident(n)))\n"
        'conn.execute(f"DROP TABLE {name}")\n'
    )
    verdicts = [
        _assembled(c.args[0], _string_constants(probe), dict(assigned))
        for c, assigned in _execute_calls(probe)
    ]
    assert verdicts == [True, True, True, True, True, False, False, False, True, True, True]
    # No format fields in the named queries but `{chunks}`, the chunk table a read
    # goes to, which flow/retrieval/tables.py fills with a quoted identifier.
    queries = (ROOT / "flow" / "db" / "queries.sql").read_text()
    assert "{" not in queries.replace("'{}'", "").replace("{chunks}", "")


def test_no_network_access_at_run_time(embedded, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`mdchunks ingest` (migrations included) and `search`, run under the
    no-network filter against the embedded server's unix socket, with the
    telemetry variable unset and then set to 0: they exit 0, so nothing in
    the process opened an internet socket (no telemetry, no DNS lookup).

    Controls show the filter is not vacuous: a plain TCP connect is killed,
    and so is a bare cocoindex app without the variable (its telemetry)."""
    killed = -signal.SIGSYS
    probe = [sys.executable, "-c", "import socket; socket.create_connection(('192.0.2.1', 9), 1)"]
    assert _guarded(probe, cli_env()).returncode == killed

    bare_app = (
        "import asyncio, tempfile, pathlib, cocoindex as coco\n"
        "@coco.fn\nasync def main() -> None: pass\n"
        "env = coco.Environment(coco.Settings(db_path=pathlib.Path(tempfile.mkdtemp())))\n"
        "asyncio.run(coco.App(coco.AppConfig(name='bare', environment=env), main).update())\n"
        "import time; time.sleep(3)\n"
    )
    environment = cli_env()
    del environment["COCOINDEX_DISABLE_USAGE_TRACKING"]
    assert _guarded([sys.executable, "-c", bare_app], environment).returncode == killed

    root = copy_corpus(tmp_path / "docs", tldr_pages=30)
    for setting in (None, "0"):
        url = embedded.create_database()
        env = cli_env()
        del env["COCOINDEX_DISABLE_USAGE_TRACKING"]
        if setting is not None:
            env["COCOINDEX_DISABLE_USAGE_TRACKING"] = setting
        args = ["--database-url", url, "--data-dir", str(tmp_path / "data")]
        done = _guarded([*MDCHUNKS_CMD, "ingest", str(root), "--source", SOURCE, *args], env)
        assert done.returncode == 0, (setting, done.returncode, done.stdout + done.stderr)
        found = _guarded([*MDCHUNKS_CMD, "search", "archive", *args], env)
        assert found.returncode == 0, found.stdout + found.stderr
        assert len(table(url, SOURCE)) >= 30


MDCHUNKS_CMD = [sys.executable, "-m", "mdchunks"]


def _guarded(command: list[str], env: dict[str, str]):  # type: ignore[no-untyped-def]
    import subprocess

    return subprocess.run(
        [*NO_NETWORK, *command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
