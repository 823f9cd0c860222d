"""Issue #5, bad documents: one corpus holding every kind of bad document beside
good ones, ingested with the real CLI in a process of its own.

For each bad one: the good files are all ingested; it is named in the output
with its cause; it leaves no rows, also when it was a good document with rows
in the run before; the exit status is 1 when any failed and 0 otherwise.
"""

from __future__ import annotations

import dataclasses
import json
import os
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import psycopg
import pytest
from mdchunks import ChunkRow, Recipe
from mdchunks.plugin.documents import document_text
from mdchunks.plugin.recipe import DEFAULT_MAX_DOC_BYTES
from mdchunks.source.app import chunk_document
from psycopg.rows import dict_row
from reliability_support import (
    FAILED_HEADER,
    RUST_BOOK,
    Done,
    cli_env,
    copy_corpus,
    query,
)

SWAP = Path(__file__).with_name("swap_after_walk.py")
SOURCE = "corpus"
BIG_BYTES = 20_000_000  # "a 20 MB valid document", under the default limit
OVER_LIMIT = 40 * 1024 * 1024  # sparse files: the walk only stats them
WEIRD = 'specials/it\'s a "quoted" námé — ünïcødé ✓.md'
WEIRD_LATE = 'late/it\'s "quoted" too — vanishes ✗.md'

# Present before the run, bad in run 2 (good documents with rows in run 1).
BAD_BEFORE = {
    "bad/latin1.md": "invalid UTF-8 at byte offset 5",
    "bad/nul.md": "binary content: NUL byte at byte offset 18",
    "bad/image.md": "binary content: NUL byte at byte offset 8",
    "bad/huge.md": (
        f"too large: {OVER_LIMIT:,} bytes, over the limit of {DEFAULT_MAX_DOC_BYTES:,} "
        "(--max-doc-bytes)"
    ),
    "bad/loop.md": "symlink loop: the link never reaches a file",
    "bad/dangling.md": "broken symlink to nowhere.md: No such file or directory",
    "bad/fifo.md": "not a regular file",
    "bad/folder-loop/": "symlink loop: the folder contains itself; not entered",
}
# Listed by the walk as good files, changed before the engine reads them.
BAD_AFTER_WALK = {
    "late/vanishes.md": "vanished while the run read it",
    WEIRD_LATE: "vanished while the run read it",
    "late/becomes-folder.md": "replaced after the walk by a folder; not read",
    "late/becomes-fifo.md": "replaced after the walk by a FIFO; not read",
    "late/becomes-dangling.md": "vanished while the run read it",
    "late/grows.md": (
        f"too large: {OVER_LIMIT:,} bytes, over the limit of {DEFAULT_MAX_DOC_BYTES:,} "
        "(--max-doc-bytes)"
    ),
}
# Good documents that look special; ingested (empty ones have no rows, no error).
SPECIALS = ["specials/crlf.md", "specials/bom.md", "specials/bom-crlf.md", WEIRD]
EMPTY = ["specials/empty.md", "specials/blank.md"]
BIG = "specials/big.md"


def _chapter(name: str) -> bytes:
    return (RUST_BOOK / name).read_bytes()


def _png() -> bytes:
    """A real 1x1 PNG: its IHDR length field puts a NUL at byte offset 8."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def _big_document() -> bytes:
    chapters = b"".join(path.read_bytes() for path in sorted(RUST_BOOK.glob("ch*.md")))
    data = chapters * (BIG_BYTES // len(chapters) + 1)
    cut = data.rfind(b"\n\n", 0, BIG_BYTES + 4096) + 2  # whole paragraphs, >= 20 MB
    assert cut >= BIG_BYTES
    return data[:cut]


def _good(rel: str) -> bytes:
    return f"# {Path(rel).stem}\n\nA good document at {rel}.\n\n## Details\n\nMore text.\n".encode()


def _build(root: Path) -> None:
    copy_corpus(root, tldr_pages=20, book_chapters=2)
    specials = root / "specials"
    specials.mkdir()
    crlf = _chapter("ch03-02-data-types.md").replace(b"\n", b"\r\n")
    (specials / "crlf.md").write_bytes(crlf)
    (specials / "bom.md").write_bytes(
        b"\xef\xbb\xbf" + _chapter("ch03-01-variables-and-mutability.md")
    )
    (specials / "bom-crlf.md").write_bytes(b"\xef\xbb\xbf" + crlf[:5000])
    (root / WEIRD).write_bytes(_good("weird") + "Ünïcødé text ✓ and “quotes”.\n".encode())
    (specials / "empty.md").write_bytes(b"")
    (specials / "blank.md").write_bytes(b"  \n\t\n   \r\n\n")
    (root / BIG).write_bytes(_big_document())
    for rel in [*BAD_BEFORE, *BAD_AFTER_WALK]:
        if rel.endswith("/"):  # a folder with a good document, for now
            (root / rel).mkdir(parents=True)
            (root / rel / "inner.md").write_bytes(_good(rel + "inner.md"))
            continue
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(_good(rel))


def _make_bad(root: Path) -> None:
    # The late ones are edited (still good) before the run, so the run reads
    # them: an unchanged file is a memo hit and is not read at all.
    for rel in BAD_AFTER_WALK:
        (root / rel).write_bytes(_good(rel) + b"\nEdited.\n")
    bad = root / "bad"
    (bad / "latin1.md").write_bytes("# Café\n\nCrème brûlée.\n".encode("latin-1"))
    (bad / "nul.md").write_bytes(b"# Title\n\nsome text\x00more text\n")
    (bad / "image.md").write_bytes(_png())
    os.truncate(bad / "huge.md", OVER_LIMIT)
    (bad / "loop.md").unlink()
    (bad / "loop.md").symlink_to("loop.md")
    (bad / "dangling.md").unlink()
    (bad / "dangling.md").symlink_to("nowhere.md")
    (bad / "fifo.md").unlink()
    os.mkfifo(bad / "fifo.md")
    (bad / "folder-loop" / "inner.md").unlink()
    (bad / "folder-loop").rmdir()
    (bad / "folder-loop").symlink_to(".")


def _ingest(root: Path, url: str, data_dir: Path, plan: dict[str, Any] | None = None) -> Done:
    args = ["ingest", str(root), "--source", SOURCE, "--database-url", url]
    args += ["--data-dir", str(data_dir)]
    if plan is None:
        command = [sys.executable, "-m", "mdchunks", *args]
    else:
        plan_file = data_dir.parent / "swap-plan.json"
        plan_file.write_text(json.dumps({"root": str(root), **plan}))
        command = [sys.executable, str(SWAP), str(plan_file), *args]
    started = time.monotonic()
    done = subprocess.run(command, env=cli_env(), capture_output=True, text=True, timeout=600)
    return Done(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def _failures_listed(done: Done) -> dict[str, str]:
    """`  rel_path: cause` lines under the CLI's "N documents failed" header."""
    lines = done.err.splitlines()
    header = next(i for i, line in enumerate(lines) if FAILED_HEADER.match(line))
    listed: dict[str, str] = {}
    for line in lines[header + 1 :]:
        assert line.startswith("  "), done.err
        rel, _, cause = line.strip().partition(": ")
        # A path may hold ": " itself: the expected paths are matched whole.
        for known in [*BAD_BEFORE, *BAD_AFTER_WALK]:
            if line.strip().startswith(known + ": "):
                rel, cause = known, line.strip()[len(known) + 2 :]
        listed[rel] = cause
    return listed


def _rows_by_document(url: str, *, skip: str = "") -> dict[str, list[dict[str, Any]]]:
    """Chunk rows per document (all columns), without the document `skip`."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    with psycopg.connect(url, row_factory=dict_row) as conn:
        for row in conn.execute(
            "SELECT * FROM content_chunks WHERE source = %s AND rel_path <> %s "
            "ORDER BY rel_path, position",
            [SOURCE, skip],
        ):
            grouped.setdefault(row["rel_path"], []).append(row)
    return grouped


def _documents_with_rows(url: str) -> set[str]:
    return {
        rel
        for (rel,) in query(
            url, "SELECT DISTINCT rel_path FROM content_chunks WHERE source = %s", [SOURCE]
        )
    }


def _assert_rows_are_the_documents(root: Path, url: str, expected: set[str]) -> None:
    """Exactly the expected documents have rows, and those rows are what the
    per-document function makes of the file (all columns), offsets right."""
    assert _documents_with_rows(url) == expected
    recipe = Recipe()
    columns = [f.name for f in dataclasses.fields(ChunkRow)]
    for rel, rows in _rows_by_document(url, skip=BIG).items():
        text = document_text((root / rel).read_bytes())
        for row in rows:
            assert row["text"] == text[row["char_start"] : row["char_end"]], (rel, row["position"])
        made = chunk_document(text, source=SOURCE, rel_path=rel, recipe=recipe).rows
        stored = [{name: row[name] for name in columns} for row in rows]
        assert stored == [dataclasses.asdict(chunk) for chunk in made], rel


def _big_rows(url: str) -> list[tuple[Any, ...]]:
    return query(
        url,
        "SELECT position, char_start, char_end, xmin::text FROM content_chunks "
        "WHERE source = %s AND rel_path = %s ORDER BY position",
        [SOURCE, BIG],
    )


def _assert_big_document_ingested(root: Path, url: str) -> None:
    """The 20 MB document: rows at positions 0..n-1 covering the text, each
    row's text the slice of the document it says (checked in the database)."""
    text = document_text((root / BIG).read_bytes())
    rows = _big_rows(url)
    assert len(rows) > 5000
    assert [position for position, *_ in rows] == list(range(len(rows)))
    assert rows[0][1] == 0 and rows[-1][2] >= len(text) - 2
    mismatched = query(
        url,
        "SELECT position FROM content_chunks WHERE source = %s AND rel_path = %s "
        "AND length(text) <> char_end - char_start",
        [SOURCE, BIG],
    )
    assert mismatched == []
    sample = query(
        url,
        "SELECT char_start, char_end, text FROM content_chunks WHERE source = %s "
        "AND rel_path = %s AND position %% 500 = 0",
        [SOURCE, BIG],
    )
    for start, end, chunk in sample:
        assert chunk == text[start:end]


def test_bad_documents_cost_only_themselves(tmp_path: Path, database_url: str) -> None:
    root = tmp_path / "corpus"
    data_dir = tmp_path / "data"
    _build(root)
    good = {
        path.relative_to(root).as_posix()
        for path in root.rglob("*.md")
        if path.is_file() and path.relative_to(root).as_posix() not in EMPTY
    }

    # Run 1: everything is good (the bad ones are still good documents), the
    # 20 MB document and the special ones included: exit 0, all ingested.
    first = _ingest(root, database_url, data_dir)
    assert first.code == 0, first.text
    assert "0 failed" in first.out and "failed" not in first.err, first.text
    _assert_rows_are_the_documents(root, database_url, good)
    _assert_big_document_ingested(root, database_url)
    big_rows = _big_rows(database_url)
    had_rows = _documents_with_rows(database_url)
    assert {*BAD_BEFORE, *BAD_AFTER_WALK} - {"bad/folder-loop/"} <= had_rows
    assert "bad/folder-loop/inner.md" in had_rows

    # Run 2: the bad ones go bad; some of them between the walk and the reads.
    _make_bad(root)
    plan = {
        "delete": ["late/vanishes.md", WEIRD_LATE],
        "folder": ["late/becomes-folder.md"],
        "fifo": ["late/becomes-fifo.md"],
        "dangling": ["late/becomes-dangling.md"],
        "grow": [["late/grows.md", OVER_LIMIT]],
    }
    second = _ingest(root, database_url, data_dir, plan)

    assert second.code == 1, second.text
    assert "Traceback" not in second.text
    listed = _failures_listed(second)
    expected = {**BAD_BEFORE, **BAD_AFTER_WALK}
    assert set(listed) == set(expected), second.err
    for rel, cause in expected.items():
        assert cause in listed[rel], (rel, listed[rel])
    assert f"{len(expected)} documents failed" in second.err
    # No bad one keeps a row (they all had some), the good ones are untouched.
    still_good = good - {*BAD_BEFORE, *BAD_AFTER_WALK, "bad/folder-loop/inner.md"}
    _assert_rows_are_the_documents(root, database_url, still_good)
    assert _big_rows(database_url) == big_rows  # not even rewritten
    failed_docs = query(
        database_url,
        "SELECT rel_path FROM mdchunks_documents WHERE source = %s AND chunks > 0 "
        "AND NOT (rel_path = ANY(%s))",
        [SOURCE, sorted(still_good)],
    )
    assert failed_docs == []

    # Run 3: the bad ones removed: exit 0, nothing failed, good rows as they were.
    for rel in [*BAD_BEFORE, *BAD_AFTER_WALK]:
        path = root / rel.rstrip("/")
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        elif path.exists() or path.is_symlink():
            path.unlink()
    third = _ingest(root, database_url, data_dir)
    assert third.code == 0, third.text
    assert "0 failed" in third.out and "0 processed" in third.out, third.out
    _assert_rows_are_the_documents(root, database_url, still_good)
    assert _big_rows(database_url) == big_rows
    print(
        f"\nbad-documents runs: {first.seconds:.1f} s (20 MB document), "
        f"{second.seconds:.1f} s, {third.seconds:.1f} s"
    )


def test_crlf_and_bom_offsets_count_in_the_decoded_text(tmp_path: Path, database_url: str) -> None:
    """text == document[char_start:char_end], with document the file's bytes
    decoded as UTF-8 and one leading BOM removed; CR characters are kept."""
    from mdchunks import ingest

    root = tmp_path / "docs"
    root.mkdir()
    body = "# Título\r\n\r\nPárrafo uno — ✓.\r\n\r\n## Sección\r\n\r\n" + "Línea, más texto. " * 200
    (root / "bom-crlf.md").write_bytes(b"\xef\xbb\xbf" + body.encode())
    report = ingest(
        root,
        source=SOURCE,
        database_url=database_url,
        data_dir=tmp_path / "d",
        recipe=Recipe(chunk_size=400, min_chunk_size=200, chunk_overlap=40),
    )
    assert report.ok
    rows = _rows_by_document(database_url)["bom-crlf.md"]
    assert len(rows) > 3
    assert rows[0]["char_start"] == 0 and rows[0]["text"].startswith("# Título\r\n")
    for row in rows:
        assert row["text"] == body[row["char_start"] : row["char_end"]]
    assert any("\r\n" in row["text"] for row in rows)
    assert rows[-1]["heading_path"] == ["Título", "Sección"]


def test_invalid_utf8_can_be_ingested_with_replacement_characters(
    tmp_path: Path, database_url: str
) -> None:
    """`--invalid-utf8 replace`: each invalid sequence becomes U+FFFD; that text
    is stored and the offsets count in it. Back to `skip`, the document fails
    again and its rows go (the option is part of the recipe)."""
    from mdchunks import ingest

    root = tmp_path / "docs"
    root.mkdir()
    data = "# Café\n\nCrème brûlée, ".encode("latin-1") + "déjà vu ✓\n\n## Next\n\nText.\n".encode()
    (root / "latin1.md").write_bytes(data)
    (root / "nul.md").write_bytes(b"# NUL\n\n\x00\n")
    (root / "good.md").write_bytes(b"# Good\n\ntext\n")

    def run(mode: str) -> Any:
        return ingest(
            root,
            source=SOURCE,
            database_url=database_url,
            data_dir=tmp_path / "d",
            recipe=Recipe(invalid_utf8=mode),
        )

    replaced = run("replace")
    assert {f.rel_path for f in replaced.failures} == {"nul.md"}  # NUL is never replaced
    text = data.decode("utf-8", errors="replace")
    rows = _rows_by_document(database_url)["latin1.md"]
    assert text.count("\ufffd") == 4 and "déjà vu ✓" in text
    assert rows[0]["text"].startswith("# Caf\ufffd\n\nCr\ufffdme br\ufffdl\ufffde, déjà vu ✓")
    for row in rows:
        assert row["text"] == text[row["char_start"] : row["char_end"]]
    assert rows[0]["heading_text"] == "Caf\ufffd"

    skipped = run("skip")
    causes = {f.rel_path: f.cause for f in skipped.failures}
    assert set(causes) == {"latin1.md", "nul.md"}
    assert causes["latin1.md"].startswith("invalid UTF-8 at byte offset 5")
    assert set(_rows_by_document(database_url)) == {"good.md"}


def test_the_invalid_utf8_option_keeps_existing_fingerprints() -> None:
    """Adding the option changed no existing recipe's fingerprint (no surprise
    re-processing), and each mode is a recipe of its own."""
    assert (
        Recipe(heading_index_version="1").fingerprint()
        == Recipe(heading_index_version="1", invalid_utf8="skip").fingerprint()
    )
    assert Recipe(invalid_utf8="replace").fingerprint() != Recipe().fingerprint()
    with pytest.raises(ValueError, match="invalid UTF-8 handling"):
        Recipe(invalid_utf8="ignore")
