"""Sections as rows (docs/sections.md) on a real ingest: `content_sections`
equals the heading index of every document, each chunk row lists the
sections it holds, both stay right through re-runs, backfills, lost state
and drop; a hit names the section its match lies in; `outline` reads them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import mdchunks
import psycopg
import pytest
from conftest import Ingest, RunCli
from flow_checks import assert_rows_match_files
from mdchunks import Recipe
from mdchunks.heading_index.chunkers import CHUNKERS
from mdchunks.plugin.chunking import chunk_markdown
from mdchunks.plugin.rows import section_rows
from mdchunks.source import writes

SECTION_COLUMNS = (
    "id, source, rel_path, ordinal, heading_text, heading_level, heading_path, breadcrumb, "
    "char_start, heading_end, body_end, char_end, start_line, heading_end_line, "
    "body_end_line, end_line, parent_section_id, gap_starts, gap_texts, recipe"
)


def stored_sections(url: str, source: str = "docs") -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(
            f"SELECT {SECTION_COLUMNS} FROM content_sections WHERE source = %s ORDER BY 3, 4",
            [source],
        ).fetchall()


def expected_sections(root: Path, recipe: Recipe, source: str = "docs") -> list[tuple[Any, ...]]:
    """What the heading index says, computed here without the engine."""
    rows = []
    for path in sorted(root.rglob("*.md")):
        rel_path = path.relative_to(root).as_posix()
        chunking = chunk_markdown(path.read_text(encoding="utf-8"), recipe.chunk_options())
        for row in section_rows(
            chunking.sections, source=source, rel_path=rel_path, recipe=recipe.fingerprint()
        ):
            rows.append(tuple(getattr(row, name.strip()) for name in SECTION_COLUMNS.split(",")))
    return sorted(rows, key=lambda row: (row[2], row[3]))


def chunk_sections(url: str, source: str = "docs") -> dict[tuple[str, int], list[Any]]:
    with psycopg.connect(url) as conn:
        return {
            (rel_path, position): list(ids)
            for rel_path, position, ids in conn.execute(
                "SELECT rel_path, position, section_ids FROM content_chunks WHERE source = %s",
                [source],
            )
        }


@pytest.mark.parametrize("chunker", sorted(CHUNKERS))
def test_section_rows_are_the_heading_index_and_chunks_list_theirs(
    ingest: Ingest, docs: Path, database_url: str, chunker: str
) -> None:
    report = ingest(docs, recipe=Recipe(chunker=chunker))
    assert report.ok
    recipe = Recipe(chunker=chunker)
    assert stored_sections(database_url) == expected_sections(docs, recipe)
    listed = chunk_sections(database_url)
    for path in sorted(docs.rglob("*.md")):
        rel_path = path.relative_to(docs).as_posix()
        chunking = chunk_markdown(path.read_text(encoding="utf-8"), recipe.chunk_options())
        for position, chunk in enumerate(chunking.chunks):
            ids = [mdchunks.section_id("docs", rel_path, o) for o in chunk.sections]
            assert listed[(rel_path, position)] == ids
    with psycopg.connect(database_url) as conn:
        counts = dict(conn.execute("SELECT rel_path, sections FROM mdchunks_documents").fetchall())
    assert sum(counts.values()) == len(stored_sections(database_url)) > 50


def test_section_rows_follow_edits_deletions_backfills_and_drop(
    ingest: Ingest, docs: Path, database_url: str, run_cli: RunCli
) -> None:
    assert ingest(docs).ok
    before = stored_sections(database_url)
    again = ingest(docs)
    assert again.ok and stored_sections(database_url) == before  # a no-op re-run
    # An edit that removes headings, and a deleted document.
    strings = docs / "ch08-02-strings.md"
    strings.write_text("# Strings\n\nOnly this now.\n", encoding="utf-8")
    (docs / "appendix" / "appendix-02-operators.md").unlink()
    assert ingest(docs).ok
    assert stored_sections(database_url) == expected_sections(docs, Recipe())
    # A backfill to another recipe: every section row is of the new one, and
    # the spans (which no chunk budget changes) are the same.
    result = run_cli("backfill", "--source", "docs", "--chunk-size", "700")
    assert result.code == 0, result.err
    with psycopg.connect(database_url) as conn:
        recipes = {r for (r,) in conn.execute("SELECT DISTINCT recipe FROM content_chunks")}
    assert len(recipes) == 1 and recipes != {Recipe().fingerprint()}
    assert {row[-1] for row in stored_sections(database_url)} == recipes
    spans = [row[:17] for row in stored_sections(database_url)]
    assert spans == [row[:17] for row in expected_sections(docs, Recipe())]
    dropped = run_cli("drop", "--source", "docs", "--yes")
    assert dropped.code == 0
    assert f"{len(spans)} section rows" in dropped.out, dropped.out
    assert stored_sections(database_url) == []


def test_rows_written_in_many_batches_as_the_engine_runs(
    ingest: Ingest, docs: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Batches of a few rows: most are written while the engine runs, over its
    # pool, the rest by the reconciliation; the same rows either way.
    monkeypatch.setattr(writes, "BATCH_ROWS", 7)
    assert ingest(docs).ok
    assert stored_sections(database_url) == expected_sections(docs, Recipe())
    assert_rows_match_files(database_url, docs)
    strings = docs / "ch08-02-strings.md"
    strings.write_text("# Strings\n\nOnly this now.\n", encoding="utf-8")
    (docs / "appendix" / "appendix-02-operators.md").unlink()
    (docs / "ch99-new.md").write_text("# New\n\nA page.\n\n## Its part\n\nText.\n")
    assert ingest(docs).ok
    assert stored_sections(database_url) == expected_sections(docs, Recipe())
    assert_rows_match_files(database_url, docs)


def test_section_rows_deleted_behind_the_engines_back_come_back(
    ingest: Ingest, docs: Path, database_url: str
) -> None:
    assert ingest(docs).ok
    before = stored_sections(database_url)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("DELETE FROM content_sections WHERE rel_path = 'ch08-02-strings.md'")
    assert ingest(docs).ok  # the check after reconciling re-processes everything once
    assert stored_sections(database_url) == before


def test_a_failed_document_keeps_no_section_rows(
    ingest: Ingest, docs: Path, database_url: str
) -> None:
    assert ingest(docs).ok
    (docs / "ch08-02-strings.md").write_bytes(b"# Strings\n\n\xff\xfe not UTF-8\n")
    report = ingest(docs)
    assert [failure.rel_path for failure in report.failures] == ["ch08-02-strings.md"]
    assert not [row for row in stored_sections(database_url) if row[2] == "ch08-02-strings.md"]


# -- a hit names its section --------------------------------------------------------------

WATCHERS = """# Watchers

## Basic Example

Computed properties let us declaratively compute derived values. A watcher
runs a callback whenever a piece of reactive state changes.

## Deep Watchers

When you call watch() directly on a reactive object, it implicitly creates a
deep watcher: the callback fires on all nested mutations of a deeply nested
object, not only when the object itself is replaced.
"""


@pytest.fixture
def watchers(tmp_path: Path) -> Path:
    root = tmp_path / "vue"
    root.mkdir()
    (root / "watchers.md").write_text(WATCHERS, encoding="utf-8")
    return root


@pytest.mark.parametrize("chunker", sorted(CHUNKERS))
def test_a_hit_names_the_section_its_match_lies_in(
    watchers: Path, run_cli: RunCli, chunker: str
) -> None:
    options = ["--chunker", chunker] + (["--split-levels", "1"] if chunker == "structure" else [])
    assert run_cli("ingest", str(watchers), "--source", "vue", *options).code == 0
    # One chunk holds both sections; its heading columns name where it starts.
    result = run_cli("search", "deeply nested object mutations", "-k", "1", "--json")
    (hit,) = [json.loads(line) for line in result.out.splitlines()]
    assert hit["matched_section"]["heading_path"] == ["Watchers", "Deep Watchers"]
    assert hit["matched_section"]["breadcrumb"] == "Watchers > Deep Watchers"
    assert hit["matched_section"]["start_line"] == 8
    shown = run_cli("search", "deeply nested object mutations", "-k", "1")
    assert "Watchers > Deep Watchers" in shown.out
    assert "more section" in shown.out
    # A query of the other section's words names that one.
    other = run_cli("search", "computed properties derived values", "-k", "1", "--json")
    (first,) = [json.loads(line) for line in other.out.splitlines()]
    assert first["matched_section"]["heading_path"] == ["Watchers", "Basic Example"]
    # --expand section is that section, exactly.
    expanded = run_cli(
        "search", "deeply nested object mutations", "-k", "1", "--json", "--expand", "section"
    )
    (full,) = [json.loads(line) for line in expanded.out.splitlines()]
    assert full["section"]["text"] == WATCHERS[WATCHERS.index("## Deep Watchers") :]


def test_the_python_api_names_the_matched_section(
    watchers: Path, database_url: str, data_dir: Path
) -> None:
    mdchunks.ingest(watchers, source="vue", database_url=database_url, data_dir=data_dir)
    (hit,) = mdchunks.search(
        "deep watcher callback", k=1, database_url=database_url, data_dir=data_dir
    )
    assert hit.matched_section is not None
    assert hit.breadcrumb == "Watchers > Deep Watchers"
    assert hit.stored_breadcrumb == "Watchers"  # the spec's columns keep their rule
    assert hit.matched_section.held == 3


GADGET = """# Widgets

Widgets are the parts a page is built of.

## `<Gadget>` component

The `<Gadget>` component draws a gadget. Import Gadget from the components
package and place Gadget anywhere on a page; Gadget takes the props below.

### `label`

**type:** `string`

The text shown beside the label's icon.
"""


@pytest.mark.parametrize("chunker", sorted(CHUNKERS))
def test_a_question_naming_the_parent_of_a_prop_names_the_prop(
    tmp_path: Path, run_cli: RunCli, chunker: str
) -> None:
    """A reference page's prop sits under its component's heading; a question
    names both. The prop's slice reads its whole heading path, as a chunk's
    BM25 does, so the component's name counts for it too and the prop's own
    word decides (with the own heading alone the parent won: "Gadget" is
    said five times there)."""
    root = tmp_path / "ui"
    root.mkdir()
    (root / "gadget.md").write_text(GADGET, encoding="utf-8")
    options = ["--chunker", chunker] + (["--split-levels", "1"] if chunker == "structure" else [])
    assert run_cli("ingest", str(root), "--source", "ui", *options).code == 0
    result = run_cli("search", "What does label do on Gadget?", "-k", "1", "--json")
    (hit,) = [json.loads(line) for line in result.out.splitlines()]
    assert hit["matched_section"]["heading_path"] == ["Widgets", "<Gadget> component", "label"]


CODE_MDX = """---
title: Code
---

## Usage

Render highlighted code with the component.

export const sample = 'read a file from the repository';
export const files = ['file', 'repository', 'file'];

### Imported code

Import a file from your repository as a string and pass it on.
"""


@pytest.mark.parametrize("chunker", sorted(CHUNKERS))
def test_a_slice_reads_no_esm_as_its_chunk_reads_none(
    tmp_path: Path, run_cli: RunCli, chunker: str
) -> None:
    """MDX's ESM is no text to search (docs/search.md): a chunk's BM25 reads
    it as spaces, and so does each of its sections' slices. Counted, the
    `export const` lines' words made *Usage* the match."""
    root = tmp_path / "mdx"
    root.mkdir()
    (root / "code.mdx").write_text(CODE_MDX, encoding="utf-8")
    options = ["--chunker", chunker] + (["--split-levels", "1"] if chunker == "structure" else [])
    assert run_cli("ingest", str(root), "--source", "mdx", *options).code == 0
    result = run_cli("search", "a file from the repository", "-k", "1", "--json")
    (hit,) = [json.loads(line) for line in result.out.splitlines()]
    assert hit["matched_section"]["heading_path"] == ["Usage", "Imported code"]


# -- outline ------------------------------------------------------------------------------


def test_outline_prints_the_heading_tree_with_lines_and_chunks(
    watchers: Path, run_cli: RunCli
) -> None:
    assert run_cli("ingest", str(watchers), "--source", "vue").code == 0
    result = run_cli("outline", "watchers.md")
    assert result.code == 0, result.err
    assert result.out.splitlines() == [
        "vue:watchers.md",
        "        L1-12  # Watchers  (1 chunk)",
        "         L3-7    ## Basic Example  (1 chunk)",
        "        L8-12    ## Deep Watchers  (1 chunk)",
    ]
    (document,) = [json.loads(line) for line in run_cli("outline", "--json").out.splitlines()]
    assert [s["heading_path"] for s in document["sections"]] == [
        ["Watchers"],
        ["Watchers", "Basic Example"],
        ["Watchers", "Deep Watchers"],
    ]
    assert document["sections"][1]["parent_id"] == document["sections"][0]["id"]
    # Past four-digit lines the column widens for the whole document.
    (watchers / "long.md").write_text("# Top\n" + "text\n" * 12_000 + "## Deep\n", "utf-8")
    assert run_cli("ingest", str(watchers), "--source", "vue").code == 0
    assert run_cli("outline", "long.md", "--source", "vue").out.splitlines() == [
        "vue:long.md",
        "      L1-12002  # Top  (34 chunks)",
        "  L12002-12002    ## Deep  (1 chunk)",
    ]
    missing = run_cli("outline", "nope.md", "--source", "vue")
    assert missing.code == 2
    assert "no document 'nope.md' in source 'vue'" in missing.err


def test_outline_of_a_document_without_headings(tmp_path: Path, run_cli: RunCli) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "notes.txt").write_text("no headings here\n", encoding="utf-8")
    shutil.copy2(root / "notes.txt", root / "notes.md")
    assert run_cli("ingest", str(root), "--source", "plain").code == 0
    result = run_cli("outline", "--source", "plain")
    assert result.code == 0, result.err
    assert "plain:notes.md\n" in result.out and "(preamble)" in result.out
    assert "plain:notes.txt\n  (no sections" in result.out


def test_outline_of_a_document_that_failed_says_so_with_its_cause(
    tmp_path: Path, run_cli: RunCli
) -> None:
    # Not "no sections": the document has text, its last run refused it.
    root = tmp_path / "docs"
    root.mkdir()
    (root / "fine.md").write_text("# Fine\n\nText.\n", encoding="utf-8")
    (root / "latin-1.md").write_bytes(b"# Caf\xe9\n\nText.\n")
    assert run_cli("ingest", str(root), "--source", "docs").code == 1
    result = run_cli("outline", "--source", "docs", "latin-1.md")
    assert result.code == 0, result.err
    assert result.out.splitlines()[1].startswith(
        "  (failed on its last run, so it has no rows: invalid UTF-8 at byte offset 5"
    ), result.out
    as_json = run_cli("outline", "--source", "docs", "--json")
    documents = [json.loads(line) for line in as_json.out.splitlines()]
    assert [(d["rel_path"], bool(d["error"]), len(d["sections"])) for d in documents] == [
        ("fine.md", False, 1),
        ("latin-1.md", True, 0),
    ]
    assert documents[1]["error"].startswith("invalid UTF-8 at byte offset 5")
