"""The schema explains itself (`psql \\d+`): every table and column we own has a
comment, no constraint is NOT VALID in a fresh database, and the migration
tool's bookkeeping lives in a schema of its own, also after an upgrade from a
database that an older mdchunks migrated with yoyo's tables in `public`."""

from __future__ import annotations

from pathlib import Path

import mdchunks
import psycopg
import pytest
from mdchunks.db import database, migrate
from mdchunks.retrieval import embedding

OUR_TABLES = {
    "content_chunks",
    "content_sections",
    "mdchunks_documents",
    "mdchunks_sources",
    "mdchunks_recipes",
    "mdchunks_search_stats",
    "mdchunks_search_terms",
    "mdchunks_search_top",
}
YOYO_TABLES = set(migrate.YOYO_TABLES)
OLD_MIGRATIONS = [mid for mid in migrate.migration_ids() if mid < "0007"]
OLD_LAST = "0006"  # the last migration of that release


def _query(url: str, statement: str, params: object = None) -> list[tuple[object, ...]]:
    """The rows of `statement` ([] for a statement that returns none)."""
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(statement, params)  # type: ignore[arg-type]
        return cursor.fetchall() if cursor.description is not None else []


def _tables(url: str, schema: str) -> set[str]:
    rows = _query(
        url,
        "SELECT relname FROM pg_class WHERE relnamespace = to_regnamespace(%s) AND relkind = 'r'",
        [schema],
    )
    return {str(name) for (name,) in rows}


def _uncommented(url: str, tables: set[str]) -> list[str]:
    """Tables and columns (`table.column`) of `tables` that have no comment."""
    relations = [sorted(tables)]
    no_table_comment = _query(
        url,
        "SELECT relname FROM pg_class WHERE oid = ANY(%s::regclass[]) "
        "AND obj_description(oid, 'pg_class') IS NULL",
        relations,
    )
    no_column_comment = _query(
        url,
        "SELECT attrelid::regclass::text || '.' || attname FROM pg_attribute "
        "WHERE attrelid = ANY(%s::regclass[]) AND attnum > 0 AND NOT attisdropped "
        "AND col_description(attrelid, attnum) IS NULL",
        relations,
    )
    return sorted(str(name) for (name,) in no_table_comment + no_column_comment)


def _not_valid(url: str) -> list[str]:
    rows = _query(url, "SELECT conname FROM pg_constraint WHERE NOT convalidated ORDER BY 1")
    return [str(name) for (name,) in rows]


def _migrate_the_old_way(url: str, through: str) -> None:
    """What mdchunks before migration 0007 left: the migrations through
    `through` applied, and the record (yoyo's tables, in yoyo's format) in the
    database's own schema, `public`."""
    migrate.apply(url, through=through)
    for name in migrate.YOYO_TABLES:
        _query(url, f"ALTER TABLE {migrate.BOOKKEEPING_SCHEMA}.{name} SET SCHEMA public")
    _query(url, f"DROP SCHEMA {migrate.BOOKKEEPING_SCHEMA}")


def test_every_table_and_column_we_own_explains_itself(database_url: str) -> None:
    migrate.apply(database_url)

    assert _tables(database_url, "public") == OUR_TABLES
    assert _uncommented(database_url, OUR_TABLES) == []
    _query(database_url, "COMMENT ON COLUMN mdchunks_recipes.spec IS NULL")
    assert _uncommented(database_url, OUR_TABLES) == ["mdchunks_recipes.spec"]  # it sees one
    (function,) = _query(
        database_url,
        "SELECT obj_description('mdchunks_heading_path_text(text[])'::regprocedure, 'pg_proc')",
    )
    assert function[0]


def test_the_optional_embeddings_table_explains_itself(database_url: str) -> None:
    migrate.apply(database_url)
    with database.connect(database_url) as conn:
        embedding.ensure_schema(conn)

    assert _uncommented(database_url, {embedding.TABLE}) == []


def test_a_fresh_database_has_no_constraint_left_not_valid(database_url: str) -> None:
    migrate.apply(database_url)

    assert _not_valid(database_url) == []
    checks = _query(
        database_url,
        "SELECT convalidated FROM pg_constraint WHERE conname = 'content_chunks_breadcrumb_check'",
    )
    assert checks == [(True,)]


def test_the_migration_tools_tables_are_out_of_the_users_schema(database_url: str) -> None:
    migrate.apply(database_url)

    assert not _tables(database_url, "public") & YOYO_TABLES
    assert _tables(database_url, migrate.BOOKKEEPING_SCHEMA) == YOYO_TABLES
    applied = _query(
        database_url, f"SELECT migration_id FROM {migrate.BOOKKEEPING_SCHEMA}._yoyo_migration"
    )
    assert sorted(str(mid) for (mid,) in applied) == list(migrate.migration_ids())
    (comment,) = _query(
        database_url, "SELECT obj_description(%s::regnamespace)", [migrate.BOOKKEEPING_SCHEMA]
    )
    assert comment[0]


_OLD_ROW = """
INSERT INTO content_chunks (id, source, rel_path, position, char_start, char_end, text,
                            heading_text, heading_level, heading_path, recipe)
VALUES (gen_random_uuid(), 'docs', 'a.md', 0, 0, 6, '# A\nx', 'A', 1, '{A}', 'old')
"""


def test_a_database_migrated_by_the_previous_code_upgrades(
    database_url: str, tmp_path: Path
) -> None:
    # Migrated by an older mdchunks: yoyo's tables in public, 0001-0006 applied,
    # and a row written before 0006 (no breadcrumb although it has a path).
    _migrate_the_old_way(database_url, "0005")
    _query(database_url, _OLD_ROW)
    _migrate_the_old_way(database_url, OLD_LAST)
    assert _tables(database_url, "public") >= YOYO_TABLES
    # The record where it is still counts: only the new migrations are pending.
    new = tuple(mid for mid in migrate.migration_ids() if mid not in OLD_MIGRATIONS)
    assert new and migrate.pending(database_url) == new

    result = migrate.apply(database_url)

    assert result.applied == new and migrate.pending(database_url) == ()
    assert _tables(database_url, "public") == OUR_TABLES  # moved, nothing left behind
    assert _tables(database_url, migrate.BOOKKEEPING_SCHEMA) == YOYO_TABLES
    logged = _query(
        database_url, f"SELECT count(*) FROM {migrate.BOOKKEEPING_SCHEMA}._yoyo_migration"
    )
    assert logged == [(len(migrate.migration_ids()),)]
    assert _uncommented(database_url, OUR_TABLES) == []
    # The old row contradicts the breadcrumb check: it stays NOT VALID (new
    # rows are checked all the same) until the row's source is run again.
    assert _not_valid(database_url) == ["content_chunks_breadcrumb_check"]
    _query(database_url, "DELETE FROM content_chunks WHERE recipe = 'old'")
    _query(
        database_url,
        "ALTER TABLE content_chunks VALIDATE CONSTRAINT content_chunks_breadcrumb_check",
    )
    assert _not_valid(database_url) == []

    # And the upgraded database works: ingest, search, a no-op migrate.
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Zebras\n\nThey graze.\n")
    report = mdchunks.ingest(
        tmp_path / "docs", source="docs", database_url=database_url, data_dir=tmp_path / "d"
    )
    assert report.ok and report.rows_total == 1
    assert migrate.apply(database_url).applied == ()


def test_an_upgrade_without_old_rows_validates_the_check(database_url: str) -> None:
    _migrate_the_old_way(database_url, OLD_LAST)
    assert _not_valid(database_url) == ["content_chunks_breadcrumb_check"]

    migrate.apply(database_url)

    assert _not_valid(database_url) == []
    assert not _tables(database_url, "public") & YOYO_TABLES


@pytest.mark.parametrize("schema_first", [False, True])
def test_a_role_that_may_not_create_the_schema_is_told_so(
    database_url: str, schema_first: bool
) -> None:
    # A role that may create tables in public but not schemas in the database:
    # refused in one line, unless an administrator created the schema for it.
    role = f"mdchunks_mig_{'a' if schema_first else 'b'}"
    admin = psycopg.connect(database_url, autocommit=True)
    try:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
        admin.execute(f"GRANT CREATE ON SCHEMA public TO {role}")
        if schema_first:
            admin.execute(f"CREATE SCHEMA {migrate.BOOKKEEPING_SCHEMA} AUTHORIZATION {role}")
        parts = psycopg.conninfo.conninfo_to_dict(database_url)
        parts.update(user=role, password="pw")
        url = psycopg.conninfo.make_conninfo(**parts)  # type: ignore[arg-type]
        if schema_first:
            assert migrate.apply(url).applied == migrate.migration_ids()
        else:
            with pytest.raises(mdchunks.errors.DatabaseUnavailable, match="may not create the"):
                migrate.apply(url)
    finally:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [role]
        )
        admin.execute(f"DROP OWNED BY {role}")
        admin.execute(f"DROP ROLE {role}")
        admin.close()


def test_a_role_that_may_not_read_the_record_is_told_what_to_grant(database_url: str) -> None:
    migrate.apply(database_url)
    role = "mdchunks_reader_without_usage"
    admin = psycopg.connect(database_url, autocommit=True)
    try:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
        parts = psycopg.conninfo.conninfo_to_dict(database_url)
        parts.update(user=role, password="pw")
        url = psycopg.conninfo.make_conninfo(**parts)  # type: ignore[arg-type]
        with pytest.raises(mdchunks.errors.DatabaseUnavailable) as refused:
            migrate.pending(url)
        message = str(refused.value)
        assert "\n" not in message
        assert f"USAGE ON SCHEMA {migrate.BOOKKEEPING_SCHEMA}" in message, message
        assert f"SELECT ON {migrate.BOOKKEEPING_SCHEMA}._yoyo_migration" in message, message
    finally:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [role]
        )
        admin.execute(f"DROP OWNED BY {role}")
        admin.execute(f"DROP ROLE {role}")
        admin.close()


def test_a_failing_migration_leaves_neither_its_changes_nor_its_record(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each file is sent whole: a statement failing after others of the same
    # file must take them back with it, and the migrations before it stay.
    import contextlib

    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "0001_first.sql").write_text("CREATE TABLE first_table (a int);\n")
    (folder / "0002_second.sql").write_text(
        "CREATE TABLE second_table (a int);\n"
        "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$;\n"
        "SELECT 1 / 0;\n"
    )

    @contextlib.contextmanager
    def migrations_dir() -> object:
        yield folder

    monkeypatch.setattr(migrate, "_migrations_dir", migrations_dir)
    with pytest.raises(
        mdchunks.MdchunksError, match=r"a migration failed: division by zero \(migration 0002_"
    ):
        migrate.apply(database_url)

    assert _tables(database_url, "public") == {"first_table"}
    logged = _query(
        database_url,
        f"SELECT migration_id FROM {migrate.BOOKKEEPING_SCHEMA}._yoyo_migration",
    )
    assert logged == [("0001_first",)]
    assert _query(database_url, "SELECT to_regprocedure('f()') IS NULL") == [(True,)]
