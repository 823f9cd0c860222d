"""A search never fails on rows a concurrent run changes (issue 42, docs/search.md).

A search ranks the chunks in one statement and reads the ranked rows in the
next: a watch that deleted a ranked chunk in between made the second miss
it, a `KeyError` on every face (7 of 150 CLI searches under a busy watch).
Each face is searched here with a real deletion, committed by another
session exactly between the ranking and the reads (the ranking function is
wrapped to do it; the database is the real one): the search answers from
one snapshot, the rows as they were when it began.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mdchunks
import psycopg
import pytest
from conftest import Ingest, RunCli
from mdchunks.mcp import server
from mdchunks.retrieval import rankings

QUERY = "ownership borrowing"


def _deleting_after_ranking(
    monkeypatch: pytest.MonkeyPatch, database_url: str
) -> Callable[[], int]:
    """Wrap the ranking so that the ranked chunks' rows are deleted, and
    committed by another session, before the search reads them. Returns how
    many rows were deleted so far."""
    ranking = rankings.rank
    deleted = [0]

    def rank_then_delete(*args: Any, **kwargs: Any) -> list[rankings.Ranked]:
        ranked = ranking(*args, **kwargs)
        with psycopg.connect(database_url, autocommit=True) as writer:
            gone = writer.execute(
                "DELETE FROM content_chunks WHERE id = ANY(%s)", [[hit.id for hit in ranked]]
            )
            deleted[0] += gone.rowcount
        return ranked

    monkeypatch.setattr(rankings, "rank", rank_then_delete)
    return lambda: deleted[0]


@pytest.fixture
def ingested(ingest: Ingest, docs: Path, database_url: str, data_dir: Path) -> list[str]:
    """The docs ingested; the rel_paths of the first hits, before anything changes."""
    assert ingest(docs).ok
    hits = mdchunks.search(QUERY, k=5, database_url=database_url, data_dir=data_dir)
    assert len(hits) == 5
    return [hit.rel_path for hit in hits]


def test_the_api_searches_one_snapshot(
    ingested: list[str], monkeypatch: pytest.MonkeyPatch, database_url: str, data_dir: Path
) -> None:
    deleted = _deleting_after_ranking(monkeypatch, database_url)
    for turn, expand in enumerate(("none", "section", "parent")):
        hits = mdchunks.search(
            QUERY, k=5, expand=expand, database_url=database_url, data_dir=data_dir
        )
        if turn == 0:  # the hits of the snapshot: the rows as the ranking saw them
            assert [hit.rel_path for hit in hits] == ingested
        # (Later rounds rank what the earlier ones' deletions left.)
        assert len(hits) == 5 and all(hit.text for hit in hits)
        if expand == "section":
            assert all(hit.section is not None and hit.section.text for hit in hits)
        assert deleted() == 5 * (turn + 1)  # the rows really went between the two steps


def test_the_cli_searches_one_snapshot(
    ingested: list[str], monkeypatch: pytest.MonkeyPatch, run_cli: RunCli, database_url: str
) -> None:
    deleted = _deleting_after_ranking(monkeypatch, database_url)
    found = run_cli("search", QUERY, "-k", "5", "--json")
    assert found.code == 0, found.err
    assert [json.loads(line)["rel_path"] for line in found.out.splitlines()] == ingested
    assert deleted() == 5


def test_mcp_searches_one_snapshot(
    ingested: list[str], monkeypatch: pytest.MonkeyPatch, database_url: str, data_dir: Path
) -> None:
    deleted = _deleting_after_ranking(monkeypatch, database_url)
    tools = server.build(server.Settings(database_url=database_url, data_dir=data_dir))
    result = asyncio.run(tools.call_tool("search", {"query": QUERY, "k": 5}))
    assert not result.is_error, result  # type: ignore[union-attr]
    hits = result.structured_content["hits"]  # type: ignore[union-attr]
    assert [hit["rel_path"] for hit in hits] == ingested
    assert deleted() == 5
