"""The page title through the product (docs/heading-index.md, "The page title";
docs/search.md, "What is searched"): rows, outline, search, BM25."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mdchunks
import pytest
from conftest import Ingest
from flow_checks import assert_rows_match_files, fetch
from mdchunks import Recipe

PAGE = """---
title: Middleware
description: Zebrafish quokkas wander here
---
import { Aside } from '@astrojs/starlight/components';

Middleware lets you intercept requests and responses.

## Basic usage

Write a function that receives the context and a next callback.

### Chaining

Chain several of them with the sequence helper.
"""

# Its body opens with the title as an H1: the breadcrumb names it once.
OWN_H1 = """---
title: "Routing"
---
# Routing

Routes map paths to pages.

## Dynamic routes

Brackets in a file name make a parameter.
"""

UNTITLED = """# Plain page

Words of a plain page.
"""

SMALL = Recipe(chunk_size=120, min_chunk_size=60, chunk_overlap=0)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "middleware.mdx").write_text(PAGE, encoding="utf-8")
    (docs / "middleware.md").write_text(PAGE, encoding="utf-8")
    (docs / "routing.md").write_text(OWN_H1, encoding="utf-8")
    (docs / "plain.md").write_text(UNTITLED, encoding="utf-8")
    # Front matter alone: no section (the structure chunker makes no chunk of
    # it either), and still its document row keeps the title.
    (docs / "stub.md").write_text("---\ntitle: Stub page\n---\n", encoding="utf-8")
    return docs


@pytest.mark.parametrize("chunker", ["recursive", "structure"])
def test_every_row_of_a_titled_page_carries_the_title_at_its_breadcrumbs_root(
    ingest: Ingest, site: Path, database_url: str, chunker: str
) -> None:
    recipe = Recipe(chunk_size=120, min_chunk_size=60, chunk_overlap=0, chunker=chunker)
    assert ingest(site, recipe=recipe).ok
    assert_rows_match_files(database_url, site, recipe=recipe)
    chunks = fetch(
        database_url,
        "SELECT rel_path, position, title, breadcrumb, heading_path, heading_text "
        "FROM content_chunks ORDER BY rel_path, position",
    )
    for rel_path in ("middleware.md", "middleware.mdx"):
        rows = [row for row in chunks if row["rel_path"] == rel_path]
        assert len(rows) >= 3
        assert {row["title"] for row in rows} == {"Middleware"}
        assert all(row["breadcrumb"].startswith("Middleware") for row in rows), rows
        # The preamble: the title is its breadcrumb, its heading columns stay NULL.
        assert rows[0]["breadcrumb"] == "Middleware"
        assert (rows[0]["heading_path"], rows[0]["heading_text"]) == ([], None)
        assert "Middleware > Basic usage > Chaining" in {row["breadcrumb"] for row in rows}
    routing = [row for row in chunks if row["rel_path"] == "routing.md"]
    assert all(not row["breadcrumb"].startswith("Routing > Routing") for row in routing)
    assert all(row["breadcrumb"].startswith("Routing") for row in routing)
    if chunker == "recursive":  # (the structure chunker merges this small page's sections)
        assert "Routing > Dynamic routes" in {row["breadcrumb"] for row in routing}
    plain = [row for row in chunks if row["rel_path"] == "plain.md"]
    assert [(row["title"], row["breadcrumb"]) for row in plain] == [(None, "Plain page")]

    sections = fetch(
        database_url,
        "SELECT rel_path, ordinal, title, breadcrumb FROM content_sections "
        "WHERE rel_path = 'middleware.mdx' ORDER BY ordinal",
    )
    assert [(row["title"], row["breadcrumb"]) for row in sections] == [
        ("Middleware", "Middleware"),
        ("Middleware", "Middleware > Basic usage"),
        ("Middleware", "Middleware > Basic usage > Chaining"),
    ]
    documents = fetch(
        database_url, "SELECT rel_path, title FROM mdchunks_documents ORDER BY rel_path"
    )
    assert [(row["rel_path"], row["title"]) for row in documents] == [
        ("middleware.md", "Middleware"),
        ("middleware.mdx", "Middleware"),
        ("plain.md", None),
        ("routing.md", "Routing"),
        ("stub.md", "Stub page"),
    ]


def test_titles_off_leaves_rows_as_they_were_and_titles_change_only_breadcrumbs(
    ingest: Ingest, site: Path, database_url: str
) -> None:
    assert ingest(site, recipe=SMALL, source="on").ok
    off = Recipe(chunk_size=120, min_chunk_size=60, chunk_overlap=0, titles=False)
    assert ingest(site, recipe=off, source="off").ok
    assert_rows_match_files(database_url, site, source="off", recipe=off)
    assert SMALL.fingerprint() != off.fingerprint()  # the title rule is part of the recipe
    columns = (
        "rel_path, position, char_start, char_end, text, heading_text, heading_level, "
        "heading_path, parent_chunk_id IS NULL AS root, start_line, end_line, unsearched"
    )
    rows = {
        source: fetch(
            database_url,
            f"SELECT {columns}, breadcrumb, title FROM content_chunks WHERE source = %s "
            "ORDER BY rel_path, position",
            [source],
        )
        for source in ("on", "off")
    }
    assert len(rows["on"]) == len(rows["off"])
    for on, off_row in zip(rows["on"], rows["off"], strict=True):
        assert {k: v for k, v in on.items() if k not in ("breadcrumb", "title")} == {
            k: v for k, v in off_row.items() if k not in ("breadcrumb", "title")
        }
        assert off_row["title"] is None
        if on["title"] is None or on["heading_path"][:1] == [on["title"]]:
            # Untitled, or under a body `# Title`: the breadcrumb is the same.
            assert on["breadcrumb"] == off_row["breadcrumb"]
        else:  # the title at its root
            assert on["breadcrumb"] == " > ".join(
                [on["title"], *([off_row["breadcrumb"]] if off_row["breadcrumb"] else [])]
            )


def test_outline_shows_the_title(ingest: Ingest, site: Path, run_cli: Any) -> None:
    assert ingest(site, recipe=SMALL).ok
    shown = run_cli("outline", "middleware.mdx", "--source", "docs")
    assert shown.code == 0, shown.err
    assert "title: Middleware" in shown.out
    as_json = json.loads(run_cli("outline", "middleware.mdx", "--source", "docs", "--json").out)
    assert as_json["title"] == "Middleware"
    assert as_json["sections"][0]["breadcrumb"] == "Middleware"
    untitled = run_cli("outline", "plain.md", "--source", "docs")
    assert "title:" not in untitled.out


def test_a_search_hit_and_its_matched_section_name_the_title(
    ingest: Ingest, site: Path, database_url: str, data_dir: Path
) -> None:
    assert ingest(site, recipe=SMALL).ok
    hits = mdchunks.search(
        "sequence helper chain", k=3, database_url=database_url, data_dir=data_dir
    )
    top = hits[0]
    assert top.rel_path.startswith("middleware.md")
    assert top.title == "Middleware"
    assert top.breadcrumb == "Middleware > Basic usage > Chaining"
    assert top.matched_section is not None
    assert top.matched_section.section.breadcrumb == "Middleware > Basic usage > Chaining"
    assert top.to_json()["title"] == "Middleware"
    # The title is in BM25's heading field: a word only the title holds finds the page.
    titled = mdchunks.search("middleware", k=10, database_url=database_url, data_dir=data_dir)
    assert {hit.rel_path for hit in titled} >= {"middleware.md", "middleware.mdx"}


def test_front_matter_and_esm_are_no_words_to_search(
    ingest: Ingest, site: Path, database_url: str, data_dir: Path
) -> None:
    assert ingest(site).ok  # at the default budget a page is one chunk, front matter and all
    # Words only the front matter holds: no hit, in the vectors or the statistics.
    assert mdchunks.search("zebrafish quokkas", database_url=database_url, data_dir=data_dir) == []
    terms = fetch(
        database_url,
        "SELECT count(*) AS n FROM content_chunks c, unnest(c.search_vector) AS u "
        "WHERE u.lexeme IN ('zebrafish', 'quokka', 'descript')",
    )
    assert terms[0]["n"] == 0
    # ESM is no text in MDX; in a .md page the same line is text.
    found = mdchunks.search("aside", database_url=database_url, data_dir=data_dir)
    assert [hit.rel_path for hit in found] == ["middleware.md"]
    # The preamble's snippet opens on its words, not on YAML or imports.
    hit = next(
        h
        for h in mdchunks.search("intercept requests", database_url=database_url, data_dir=data_dir)
        if h.rel_path == "middleware.mdx"
    )
    assert hit.text.startswith("---\ntitle: Middleware")  # stored text unchanged
    assert "title:" not in hit.snippet and "import" not in hit.snippet
    assert "intercept" in hit.plain_snippet
