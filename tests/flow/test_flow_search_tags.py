"""Search sees every word: names written as tags (`<KeepAlive>`) are words of
the chunks' search vectors and of the queries (migration 0013), and a query
of stop words only says why it finds nothing."""

from __future__ import annotations

from pathlib import Path

import mdchunks
import pytest
from conftest import Ingest, RunCli

PAGE = """# Built-in components

## KeepAlive

Wrap a dynamic component in <KeepAlive> to cache its instance. In Vue 2 the
same component was written <keep-alive>.

## Teleport

<Teleport> moves its content to another part of the DOM.

## Single-file components

A <script setup> block is compiled at build time.
"""


@pytest.fixture
def vue(tmp_path: Path, ingest: Ingest) -> Path:
    root = tmp_path / "vue"
    root.mkdir()
    (root / "components.md").write_text(PAGE)
    (root / "other.md").write_text("# Routing\n\nThe router maps paths to views.\n")
    assert ingest(root).ok
    return root


@pytest.mark.parametrize(
    ("query", "section"),
    [
        ("KeepAlive", "KeepAlive"),
        ("<KeepAlive>", "KeepAlive"),
        ("keep-alive", "KeepAlive"),
        ("<Teleport>", "Teleport"),
        ("Teleport", "Teleport"),
        ("<script setup>", "Single-file components"),
    ],
)
def test_a_name_written_as_a_tag_is_found(
    vue: Path, database_url: str, data_dir: Path, query: str, section: str
) -> None:
    for match in ("any", "all"):
        found = mdchunks.search(
            query, method="bm25", match=match, database_url=database_url, data_dir=data_dir
        )
        assert found and found[0].rel_path == "components.md", (query, match)
        assert found[0].matched_section is not None
        assert found[0].matched_section.section.heading_path[-1] == section, (query, match)


def test_the_snippet_marks_the_tag_word(vue: Path, run_cli: RunCli) -> None:
    result = run_cli("search", "<Teleport>", "--method", "bm25", "-k", "1")
    assert result.code == 0, result.err
    assert "<Teleport> moves its content" in result.out


def test_a_query_of_stop_words_only_says_so_in_one_line(vue: Path, run_cli: RunCli) -> None:
    result = run_cli("search", "the of a")
    assert result.code == 0
    assert result.out.strip() == (
        "no match: the query has only stop words, which search leaves out (dropped: the, of, a)"
    )
    assert run_cli("search", "zebras").out.strip() == (
        "no match: no searched document holds any of the query's words (zebras)"
    )
    # Words that stand in the pages, though not in one chunk together: no reason.
    assert run_cli("search", "router Teleport", "--match", "all").out.strip() == "no match"
    # Punctuation and symbols are no stop words; the line says what they are.
    assert run_cli("search", "!!! \U0001f389").out.strip() == (
        "no match: the query has no word search can use (stop words, punctuation and "
        "symbols), which search leaves out (dropped: !!!, \U0001f389)"
    )
