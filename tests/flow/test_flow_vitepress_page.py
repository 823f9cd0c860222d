"""A VitePress-style page, ingested and searched for real: front matter is not
preamble content (its first chunk is the H1's, for both chunkers), and search
snippets keep inline HTML and component tags verbatim (flow/retrieval/snippets.py)."""

from __future__ import annotations

from pathlib import Path

import mdchunks
import psycopg
import pytest
from conftest import Ingest, RunCli
from mdchunks import Recipe
from mdchunks.api import HIGHLIGHT_START, HIGHLIGHT_STOP

PAGE = """---
title: Built-in Components
outline: deep
---

# Built-in Components

Components that ship with the framework.

## Teleport

`<Teleport>` is a built-in component that renders a part of a template into a
DOM node that lives outside the component's own tree.

## Keyboard shortcuts

Press <kbd>Ctrl</kbd> + <kbd>K</kbd> to open the search box.
<!-- a comment stays a comment --> An escaped &lt;tag&gt; stays escaped.
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    (root / "api").mkdir(parents=True)
    (root / "api" / "built-in-components.md").write_text(PAGE, encoding="utf-8")
    return root


def _first_rows(url: str, source: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT heading_text, heading_level, heading_path, breadcrumb FROM content_chunks "
            "WHERE source = %s AND position = 0",
            [source],
        ).fetchall()


@pytest.mark.parametrize("chunker", ["recursive", "structure"])
def test_the_first_chunk_of_a_page_with_front_matter_is_its_h1s(
    ingest: Ingest, database_url: str, site: Path, chunker: str
) -> None:
    report = ingest(site, source=chunker, recipe=Recipe(chunker=chunker))

    assert report.ok
    # One chunk holds front matter (recursive: it starts at offset 0), H1, H2s:
    # governed by the H1, not NULL columns of a preamble.
    assert _first_rows(database_url, chunker) == [
        ("Built-in Components", 1, ["Built-in Components"], "Built-in Components")
    ]


def test_search_snippets_keep_tags_verbatim(
    ingest: Ingest, database_url: str, data_dir: Path, site: Path, run_cli: RunCli
) -> None:
    assert ingest(site).ok

    def snippet(query: str) -> str:
        (hit,) = mdchunks.search(query, k=1, database_url=database_url, data_dir=data_dir)
        return hit.plain_snippet

    teleport = snippet("teleport built-in component")
    assert "`<Teleport>` is a built-in component" in teleport, teleport
    keys = snippet("open the search box")
    assert "Press <kbd>Ctrl</kbd> + <kbd>K</kbd> to open" in keys, keys
    assert "<!-- a comment stays a comment -->" in keys and "&lt;tag&gt;" in keys, keys
    # The tag's name is a word of the snippet again: it is highlighted.
    (hit,) = mdchunks.search("Teleport", k=1, database_url=database_url, data_dir=data_dir)
    assert f"<{HIGHLIGHT_START}Teleport{HIGHLIGHT_STOP}>" in hit.snippet

    # What the CLI prints (rich markup would eat nothing either).
    printed = run_cli("search", "teleport built-in component", "-k", "1")
    assert printed.code == 0 and "`<Teleport>` is a built-in component" in printed.out


def test_control_characters_of_the_text_cannot_forge_highlights_or_tags(
    ingest: Ingest, database_url: str, data_dir: Path, tmp_path: Path
) -> None:
    # \x01 (the mask of `<`), \x02 and \x03 (the highlight marks) in a document
    # come out as spaces: the snippet marks only what ts_headline marked.
    root = tmp_path / "odd"
    root.mkdir()
    (root / "a.md").write_text("# Odd\n\nbefore\x01x \x02fake\x03 zebra after\n")
    assert ingest(root, source="odd").ok

    (hit,) = mdchunks.search("zebra", k=1, database_url=database_url, data_dir=data_dir)

    # (`…`: the heading's word before the fragment is not shown.)
    assert hit.plain_snippet == "… before x fake zebra after"
    marked = f"{HIGHLIGHT_START}zebra{HIGHLIGHT_STOP}"
    assert hit.snippet == f"… before x fake {marked} after"
