"""`mdchunks search --json` and `--expand section|parent|none` (flow/retrieval/hits.py),
through the CLI on a real ingest of the repository's sample/ folder, and the
same fields from the Python API."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import mdchunks
import psycopg
import pytest
from mdchunks.cli import commands
from mdchunks.heading_index import build_index
from mdchunks.retrieval import hits

SAMPLE = Path(__file__).resolve().parents[2] / "sample"
FIELDS = {
    "id",
    "source",
    "rel_path",
    "position",
    "char_start",
    "char_end",
    "start_line",
    "end_line",
    "heading_path",
    "breadcrumb",
    "title",
    "score",
    "text",
    "matched_section",
}
SECTION_FIELDS = {
    "id",
    "heading_path",
    "breadcrumb",
    "char_start",
    "char_end",
    "start_line",
    "end_line",
}
QUERY = "how are strings stored in memory"


def collapse(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def sample(tmp_path: Path, run_cli: Any) -> Path:
    root = Path(shutil.copytree(SAMPLE, tmp_path / "sample"))
    assert run_cli("ingest", str(root), "--source", "sample").code == 0
    return root


def json_lines(result: Any) -> list[dict[str, Any]]:
    assert result.code == 0, result.out
    return [json.loads(line) for line in result.out.splitlines() if line.strip()]


def test_search_help_names_every_json_field(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        commands.main(["search", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    listed = shown[shown.index("One JSON object per hit") :].split(", and section")[0]
    assert set(listed.split(": ", 1)[1].split(", ")) == FIELDS


def test_json_lines_carry_the_chunk_and_its_place(sample: Path, run_cli: Any) -> None:
    found = json_lines(run_cli("search", QUERY, "-k", "5", "--json"))
    assert len(found) == 5
    for hit in found:
        assert set(hit) == FIELDS
        document = (sample / hit["rel_path"]).read_text(encoding="utf-8")
        assert document[hit["char_start"] : hit["char_end"]] == hit["text"]
        # 1-based lines of the first and last character (the sample ends lines with LF).
        assert hit["start_line"] == document.count("\n", 0, hit["char_start"]) + 1
        last = max(hit["char_start"], hit["char_end"] - 1)
        assert hit["end_line"] == document.count("\n", 0, last) + 1
        assert hit["source"] == "sample"
        assert (hit["breadcrumb"] is None) == (hit["heading_path"] == [])
    scores = [hit["score"] for hit in found]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0


def test_expand_section_is_the_matched_section_exactly(sample: Path, run_cli: Any) -> None:
    found = json_lines(run_cli("search", QUERY, "-k", "5", "--json", "--expand", "section"))
    for hit in found:
        assert set(hit) == FIELDS | {"section"}
        matched, section = hit["matched_section"], hit["section"]
        assert set(matched) == SECTION_FIELDS
        assert section["heading_path"] == matched["heading_path"]
        assert (section["char_start"], section["char_end"]) == (
            matched["char_start"],
            matched["char_end"],
        )
        # The section the hit names overlaps the hit's chunk...
        assert section["char_start"] < hit["char_end"] and hit["char_start"] < section["char_end"]
        document = (sample / hit["rel_path"]).read_text(encoding="utf-8")
        # ...and its text is the document's own slice, to the character.
        assert section["text"] == document[section["char_start"] : section["char_end"]]
        if matched["heading_path"]:
            heading = build_index(document[section["char_start"] :]).headings[0]
            assert heading.start == 0 and heading.path[-1] == matched["heading_path"][-1]
            assert matched["start_line"] == document.count("\n", 0, section["char_start"]) + 1
    # It holds more than the hit where the section is longer than one chunk.
    assert any(
        hit["section"]["char_end"] - hit["section"]["char_start"]
        > hit["char_end"] - hit["char_start"]
        for hit in found
    )


def test_expand_section_prints_each_section_once_and_cut_on_a_terminal(
    tmp_path: Path, run_cli: Any
) -> None:
    # One long section held by many chunks: every hit names it. Printed for
    # the first hit only, and cut at --max-section-chars with what is left
    # said; --json keeps the whole of it for every hit.
    root = tmp_path / "long"
    root.mkdir()
    body = "".join(f"Kettles boil water, paragraph {i}.\n\n" for i in range(400))
    (root / "kettle.md").write_text("# Kettles\n\n" + body, encoding="utf-8")
    assert run_cli("ingest", str(root), "--source", "long").code == 0
    whole = len("# Kettles\n\n" + body)
    result = run_cli(
        "search", "kettles boil", "-k", "3", "--expand", "section", "--max-section-chars", "100"
    )
    assert result.code == 0, result.err
    assert result.out.count(f"... {whole - 100:,} more characters not shown") == 1, result.out
    # Its lines, as `outline` gives them: the heading's to the document's last.
    assert result.out.count("section L1-802: printed with hit 1 above") == 2, result.out
    assert len(result.out) < 2_000  # three hits and 100 characters of the section
    everything = run_cli(
        "search", "kettles boil", "-k", "1", "--expand", "section", "--max-section-chars", "0"
    )
    assert "paragraph 399." in everything.out and "more characters" not in everything.out
    found = json_lines(
        run_cli(
            "search",
            "kettles boil",
            "-k",
            "3",
            "--expand",
            "section",
            "--json",
            "--max-section-chars",
            "100",
        )
    )
    assert [len(hit["section"]["text"]) for hit in found] == [whole] * 3


def test_expand_parent_is_the_parent_chunk_row(sample: Path, run_cli: Any) -> None:
    found = json_lines(run_cli("search", QUERY, "-k", "5", "--json", "--expand", "parent"))
    assert any(hit["parent"] is not None for hit in found)
    for hit in found:
        assert set(hit) == FIELDS | {"parent"}
        parent = hit["parent"]
        if parent is None:
            assert len(hit["heading_path"]) <= 1
            continue
        document = (sample / hit["rel_path"]).read_text(encoding="utf-8")
        assert document[parent["char_start"] : parent["char_end"]] == parent["text"]
        assert parent["position"] < hit["position"]
        # docs/assign.md: the first chunk that overlaps the ancestor's section.
        ancestor = next(
            h for h in build_index(document).headings if h.path == tuple(hit["heading_path"][:-1])
        )
        assert parent["char_start"] < ancestor.section_end
        assert parent["char_end"] > ancestor.start


def test_the_python_api_returns_the_same_fields(
    sample: Path, run_cli: Any, database_url: str, data_dir: Path
) -> None:
    printed = json_lines(run_cli("search", QUERY, "-k", "3", "--json", "--expand", "section"))
    found = mdchunks.search(
        QUERY, k=3, expand="section", database_url=database_url, data_dir=data_dir
    )
    assert [hit.to_json() for hit in found] == printed
    assert all(isinstance(hit.section, hits.Section) for hit in found)


def test_text_output_shows_the_section(sample: Path, run_cli: Any) -> None:
    result = run_cli("search", QUERY, "-k", "1", "--expand", "section")
    assert result.code == 0
    assert "section " in result.out and "chunks):" in result.out


def test_an_unknown_expansion_is_refused(run_cli: Any) -> None:
    result = run_cli("search", QUERY, "--expand", "chapter")
    assert result.code == 2


def test_stitch_keeps_an_overlap_once_and_stands_in_for_dropped_whitespace() -> None:
    pieces = [
        hits.Piece(0, 0, 10, "0123456789"),
        hits.Piece(1, 7, 14, "789abcd"),  # overlap of 3
        hits.Piece(2, 17, 20, "xyz"),  # 3 characters of whitespace dropped
        hits.Piece(3, 20, 21, "!"),
    ]
    assert hits.stitch(pieces) == (0, 21, "0123456789abcd\n\nxyz!")
    run = hits.section_run([hits.Piece(p, 0, 1, "") for p in (1, 2, 3, 5, 6)], 2)
    assert [piece.position for piece in run] == [1, 2, 3]


def test_every_row_of_an_ingest_has_the_lines_of_its_chunk(
    ingest: Any, rust_book: Path, database_url: str
) -> None:
    assert ingest(rust_book, source="book").ok
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT rel_path, char_start, char_end, start_line, end_line FROM content_chunks"
        ).fetchall()
    assert len(rows) > 500
    texts: dict[str, str] = {}
    for rel_path, start, end, start_line, end_line in rows:
        if rel_path not in texts:
            texts[rel_path] = (rust_book / rel_path).read_text(encoding="utf-8")
        text = texts[rel_path]
        assert "\r" not in text  # LF only: counting "\n" is the heading index's count
        assert start_line == text.count("\n", 0, start) + 1
        assert end_line == text.count("\n", 0, max(start, end - 1)) + 1


def test_a_score_too_small_for_three_decimals_keeps_its_digits(
    tmp_path: Path, run_cli: Any
) -> None:
    # A word in nearly every document of a big source weighs almost nothing
    # (BM25's idf): printed as 0.000 it read as "nothing matched".
    assert [commands._score(r) for r in (4.396, 0.0236, 0.0005, 0.000101, 0.0)] == [
        " 4.396",
        " 0.024",
        " 0.001",
        " 1e-04",
        " 0.000",
    ]
    # One chunk a paragraph, 3,000 chunks that all hold the word: a score of
    # about 1e-4, which the CLI must not print as 0.000.
    root = tmp_path / "rivers"
    root.mkdir()
    (root / "river.md").write_text("".join(f"River {i}.\n\n" for i in range(3000)))
    ingested = run_cli("ingest", str(root), "--source", "rivers", "--chunk-size", "12")
    assert ingested.code == 0, ingested.err
    [hit] = json_lines(run_cli("search", "river", "--source", "rivers", "-k", "1", "--json"))
    assert 0 < hit["score"] < 0.0005, hit
    result = run_cli("search", "river", "--source", "rivers", "-k", "1")
    assert result.code == 0 and result.out.split()[0] == f"{hit['score']:.0e}", result.out
