"""Hostile folders (issue "no document can take a source down, no text or row is
silently lost"): each class of failure, through the real `mdchunks` command
against a real PostgreSQL. Documents here are the tests' own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mdchunks.source.bounded import CHILD_ABOVE_BYTES
from mdchunks.source.quarantine import JOURNAL_SUFFIX
from reliability_support import FAILED_HEADER, Done, assert_invariants, cli_env, query

NATIVE_CRASH = Path(__file__).with_name("native_crash.py")
SOURCE = "docs"
# The trigger found in a released build: 266 bytes.
DEEP_QUOTES = "# T\n\n" + ">" * 255 + " word\n"
DEEP_LIST = "# Lists\n\n" + "".join("  " * depth + "- item\n" for depth in range(300))
FINE = "# Fine\n\nA document like any other, with a paragraph.\n\n## More\n\nAnd more text.\n"


def _mdchunks(*args: str, crash: str | None = None, timeout: float = 600) -> Done:
    command = (
        [sys.executable, "-m", "mdchunks"]
        if crash is None
        else [
            sys.executable,
            str(NATIVE_CRASH),
            crash,
        ]
    )
    started = time.monotonic()
    done = subprocess.run(
        [*command, *args], env=cli_env(), capture_output=True, text=True, timeout=timeout
    )
    return Done(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def _ingest(root: Path, url: str, data_dir: Path, *extra: str, crash: str | None = None) -> Done:
    return _mdchunks(
        "ingest",
        str(root),
        "--source",
        SOURCE,
        "--database-url",
        url,
        "--data-dir",
        str(data_dir),
        *extra,
        crash=crash,
    )


def _failures_listed(done: Done) -> dict[str, str]:
    lines = done.err.splitlines()
    header = next((i for i, line in enumerate(lines) if FAILED_HEADER.match(line)), None)
    if header is None:
        return {}
    listed: dict[str, str] = {}
    for line in lines[header + 1 :]:
        if not line.startswith("  "):
            break
        rel_path, _, cause = line.strip().partition(": ")
        listed[rel_path] = cause
    return listed


def _rows_by_document(url: str) -> dict[str, int]:
    return dict(
        query(
            url,
            "SELECT rel_path, count(*) FROM content_chunks WHERE source = %s GROUP BY 1",
            [SOURCE],
        )
    )


# -- 1. a document that kills the process -------------------------------------------------


def test_the_known_trigger_really_aborts_the_bare_splitter() -> None:
    """The guard below guards something real: cocoindex's splitter, unguarded,
    kills its process (SIGABRT) on the 266-byte document."""
    assert len(DEEP_QUOTES.encode()) == 266
    program = (
        "import sys\n"
        "from cocoindex.ops.text import RecursiveSplitter\n"
        "RecursiveSplitter().split(sys.stdin.read(), 2000, min_chunk_size=1000,"
        " chunk_overlap=200, language='markdown')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        input=DEEP_QUOTES,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -6, done.stderr  # SIGABRT
    assert "length <= 1024" in done.stderr


@pytest.mark.parametrize("chunker", ["recursive", "structure"])
def test_known_triggers_are_guarded_and_keep_their_headings(
    chunker: str, tmp_path: Path, database_url: str
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "quotes.md").write_text(DEEP_QUOTES)
    # Large enough that the structure chunker hands the section to the splitter.
    (root / "lists.md").write_text(DEEP_LIST)
    (root / "fine.md").write_text(FINE)
    done = _ingest(
        root, database_url, tmp_path / "data", "--chunker", chunker, "--chunk-size", "1000"
    )
    assert done.code == 0, done.text
    rows = _rows_by_document(database_url)
    assert set(rows) == {"quotes.md", "lists.md", "fine.md"}
    headings = query(
        database_url,
        "SELECT DISTINCT rel_path, heading_text FROM content_chunks WHERE rel_path <> 'fine.md'",
    )
    assert sorted(headings) == [("lists.md", "Lists"), ("quotes.md", "T")]
    assert_invariants(database_url, SOURCE)


def test_a_document_that_kills_the_process_is_quarantined_and_the_rest_ingests(
    tmp_path: Path, database_url: str
) -> None:
    """An injected native crash (os.abort() in the splitter, on one document):
    the run dies; the next run finds the document, proves it in a process of
    its own, reports it failed and ingests the rest; it stays quarantined
    until it changes."""
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(6):
        (root / f"fine-{i}.md").write_text(FINE + f"\nDocument {i}.\n")
    bad = root / "bad.md"
    bad.write_text("# Bad\n\nTHIS DOCUMENT KILLS THE PROCESS\n")
    data_dir = tmp_path / "data"

    first = _ingest(root, database_url, data_dir, crash="marker")
    assert first.code == -6, first.text  # the whole process died

    second = _ingest(root, database_url, data_dir, crash="marker")
    assert second.code == 1, second.text
    assert _failures_listed(second) == {
        "bad.md": "the process died while chunking this document (SIGABRT)"
    }
    rows = _rows_by_document(database_url)
    assert set(rows) == {f"fine-{i}.md" for i in range(6)}
    assert_invariants(database_url, SOURCE)
    error = query(database_url, "SELECT error FROM mdchunks_documents WHERE rel_path = 'bad.md'")
    assert error == [("the process died while chunking this document (SIGABRT)",)]

    # Quarantined: not tried again (the run survives), still reported, exit 1.
    third = _ingest(root, database_url, data_dir, crash="marker")
    assert third.code == 1, third.text
    assert list(_failures_listed(third)) == ["bad.md"]
    # Even when the engine state is gone (every document processed again).
    third_full = _ingest(root, database_url, data_dir, "--full-reprocess", crash="marker")
    assert third_full.code == 1, third_full.text
    assert "quarantined" in _failures_listed(third_full)["bad.md"]

    # Changed: tried again, and ingested.
    bad.write_text("# Bad\n\nNothing wrong with it any more.\n")
    fourth = _ingest(root, database_url, data_dir, crash="marker")
    assert fourth.code == 0, fourth.text
    assert set(_rows_by_document(database_url)) == {"bad.md"} | {f"fine-{i}.md" for i in range(6)}
    assert_invariants(database_url, SOURCE)


def test_a_large_document_that_kills_its_chunking_costs_only_itself(
    tmp_path: Path, database_url: str
) -> None:
    """The same injected crash in a document of 1 MiB or more: it is chunked
    in a child process (flow/source/bounded.py), so the run survives, names
    it at once and ingests the rest; being a problem of its bytes, it is
    reported again, unchanged, until it changes."""
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(3):
        (root / f"fine-{i}.md").write_text(FINE + f"\nDocument {i}.\n")
    filler = "Some prose of a large document.\n\n" * (CHILD_ABOVE_BYTES // 30)
    (root / "bad.md").write_text("# Bad\n\nTHIS DOCUMENT KILLS THE PROCESS\n\n" + filler)
    data_dir = tmp_path / "data"

    first = _ingest(root, database_url, data_dir, crash="marker")
    assert first.code == 1, first.text
    assert _failures_listed(first) == {
        "bad.md": "the process died while chunking this document (SIGABRT)"
    }
    assert set(_rows_by_document(database_url)) == {f"fine-{i}.md" for i in range(3)}
    assert_invariants(database_url, SOURCE)

    again = _ingest(root, database_url, data_dir, crash="marker")
    assert again.code == 1, again.text
    assert "unchanged since an earlier run" in _failures_listed(again)["bad.md"]


def test_a_real_splitter_abort_is_quarantined_when_the_guard_is_off(
    tmp_path: Path, database_url: str
) -> None:
    """The real abort (tree-sitter's assertion), with the nesting guard lifted
    in the test's process: the quarantine catches what the guard would."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "quotes.md").write_text(DEEP_QUOTES)
    (root / "fine.md").write_text(FINE)
    data_dir = tmp_path / "data"
    first = _ingest(root, database_url, data_dir, crash="unguarded")
    assert first.code == -6, first.text
    second = _ingest(root, database_url, data_dir, crash="unguarded")
    assert second.code == 1, second.text
    assert _failures_listed(second) == {
        "quotes.md": "the process died while chunking this document (SIGABRT)"
    }
    assert set(_rows_by_document(database_url)) == {"fine.md"}


def test_a_document_in_flight_when_a_run_was_killed_is_not_quarantined(
    tmp_path: Path, database_url: str
) -> None:
    """A run killed from outside (kill -9) also leaves documents in flight: the
    next run tries each in a process of its own, and ingests those that survive."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "fine.md").write_text(FINE)
    (root / "other.md").write_text(FINE + "\nOther.\n")
    data_dir = tmp_path / "data"
    assert _ingest(root, database_url, data_dir).code == 0
    (root / "fine.md").write_text(FINE + "\nEdited.\n")
    # What a run killed while chunking fine.md leaves next to the state.
    (journal,) = [
        folder.with_name(folder.name + JOURNAL_SUFFIX)
        for folder in (data_dir / "state").iterdir()
        if folder.is_dir()
    ]
    journal.write_text(f'+{json.dumps("other.md")}\n+{json.dumps("fine.md")}\n-"other.md"\n')
    done = _ingest(root, database_url, data_dir)
    assert done.code == 0, done.text
    assert set(_rows_by_document(database_url)) == {"fine.md", "other.md"}
    assert not journal.exists()  # a run that ends leaves no mark


# -- 6. lost text, oversized chunks ---------------------------------------------------------

CJK = "".join(
    f"これは{i}番目の文です。とても長い文章がここに続きます！本当ですか？はい；そうです。\n\n"
    for i in range(40)
) + "".join(f"这是第{i}句话。真的吗？是的！好；\n\n" for i in range(40))
BREAK_FREE = "x" * 9000 + "é" * 3000 + "字" * 2000  # no break point at all


def _uncovered(text: str, spans: list[tuple[int, int]], allowed: list[tuple[int, int]]) -> str:
    covered = bytearray(len(text))
    for start, end in [*spans, *allowed]:
        covered[start:end] = b"\x01" * (end - start)
    return "".join(ch for i, ch in enumerate(text) if not covered[i] and not ch.isspace())


def _left_out_by_design(text: str, chunker: str, split_levels: int = 3) -> list[tuple[int, int]]:
    """The structure chunker leaves splitting-heading lines (they are the
    breadcrumb of its embed text) and front matter out of stored text."""
    from mdchunks.heading_index import build_index
    from mdchunks.heading_index.blocks import front_matter_end

    if chunker != "structure":
        return []
    index = build_index(text)
    first = index.headings[0].start if index.headings else len(text)
    lines = [(h.start, h.end) for h in index.headings if h.level <= split_levels]
    return [(0, front_matter_end(text, first)), *lines]


@st.composite
def hostile_markdown(draw: st.DrawFn) -> str:
    blocks = st.sampled_from(
        [
            "# Title\n",
            "## Section\n",
            "これは文です。次の文です！",
            "这是一句话。真的吗？是的；",
            "Plain words in a sentence. Another one.",
            "- a list item\n- another",
            "> a quote",
            "| a | b |\n|---|---|\n| 1 | 2 |",
            "```\ncode\n```",
            "y" * 700,
            "é" * 400,
        ]
    )
    return "\n\n".join(draw(st.lists(blocks, min_size=1, max_size=25))) + "\n"


@pytest.mark.parametrize("chunker", ["recursive", "structure"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=hostile_markdown(), chunk_size=st.sampled_from([120, 300, 1000]))
def test_every_character_is_in_a_chunk_and_no_chunk_is_over_the_budget(
    chunker: str, text: str, chunk_size: int
) -> None:
    """The real splitter, through the plugin face, for every chunker."""
    from mdchunks import ChunkOptions, split_markdown

    options = ChunkOptions(
        chunk_size=chunk_size,
        min_chunk_size=chunk_size // 2,
        chunk_overlap=chunk_size // 10,
        chunker=chunker,
    )
    chunks = split_markdown(text, options)
    spans = [(chunk.start, chunk.end) for chunk in chunks]
    assert _uncovered(text, spans, _left_out_by_design(text, chunker)) == ""
    assert max((len(chunk.text.encode()) for chunk in chunks), default=0) <= chunk_size


@pytest.mark.parametrize("chunker", ["recursive", "structure"])
def test_cjk_punctuation_and_break_free_runs_reach_the_table(
    chunker: str, tmp_path: Path, database_url: str
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    documents = {
        "cjk.md": "# 文書\n\n" + CJK,
        "blob.md": "# Blob\n\n" + BREAK_FREE + "\n\nAfter the blob.\n",
        "cjk.txt": CJK,
    }
    for name, text in documents.items():
        (root / name).write_text(text)
    done = _ingest(root, database_url, tmp_path / "data", "--chunker", chunker)
    assert done.code == 0, done.text
    for name, text in documents.items():
        rows = query(
            database_url,
            "SELECT char_start, char_end, text FROM content_chunks WHERE rel_path = %s",
            [name],
        )
        assert all(text[a:b] == chunk for a, b, chunk in rows)
        assert max(len(chunk.encode()) for _, _, chunk in rows) <= 2000
        spans = [(a, b) for a, b, _ in rows]
        allowed = _left_out_by_design(text, chunker) if name.endswith(".md") else []
        assert _uncovered(text, spans, allowed) == "", name
    assert_invariants(database_url, SOURCE)


def test_a_database_error_is_reported_with_the_database_s_own_message(
    tmp_path: Path, database_url: str
) -> None:
    """A chunk within a (huge) budget that PostgreSQL still refuses: the cause is
    PostgreSQL's, not the task group's that carried it."""
    root = tmp_path / "docs"
    root.mkdir()
    paragraphs = (
        "\n".join(" ".join(f"w{i:06d}{j:03d}q{k}" for j in range(10)) for k in range(10))
        for i in range(700)
    )
    (root / "big.md").write_text("# Big\n\n" + "\n\n".join(paragraphs) + "\n")
    (root / "fine.md").write_text(FINE)
    done = _ingest(
        root,
        database_url,
        tmp_path / "data",
        "--chunk-size",
        "2000000",
        "--min-chunk-size",
        "1000000",
    )
    assert done.code == 1, done.text
    cause = _failures_listed(done)["big.md"]
    assert cause.startswith("the database refused its rows: string is too long for tsvector")
    assert set(_rows_by_document(database_url)) == {"fine.md"}


# -- 2, 7. names that are not UTF-8, names that forge output, links that leave the root ----


def test_a_name_that_is_not_utf8_costs_that_file_alone(tmp_path: Path, database_url: str) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "fine.md").write_text(FINE)
    with open(bytes(root) + b"/caf\xe9.md", "wb") as handle:
        handle.write(FINE.encode())
    folder = bytes(root) + b"/d\xfcr"
    import os

    os.mkdir(folder)
    with open(folder + b"/inside.md", "wb") as handle:
        handle.write(FINE.encode())
    done = _ingest(root, database_url, tmp_path / "data")
    assert done.code == 1, done.text
    assert _failures_listed(done) == {
        "caf\\xe9.md": "the name is not valid UTF-8 (not ingested; rename it)",
        "d\\xfcr/": "the name is not valid UTF-8 (folder not entered; rename it)",
    }
    assert set(_rows_by_document(database_url)) == {"fine.md"}
    assert_invariants(database_url, SOURCE)


def test_names_are_printed_escaped_and_cannot_forge_lines(
    tmp_path: Path, database_url: str
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "fine.md").write_text(FINE)
    # Binary content, so that each is listed as a failure under its name.
    (root / "\x1b[31mred.md").write_bytes(b"\x00binary")
    (root / "two\n  forged.md: looks like another failure.md").write_bytes(b"\x00binary")
    done = _ingest(root, database_url, tmp_path / "data")
    assert done.code == 1, done.text
    assert "\x1b" not in done.text
    listed = _failures_listed(done)
    assert sorted(listed) == [
        "\\x1b[31mred.md",
        "two\\n  forged.md: looks like another failure.md".partition(": ")[0],
    ]
    assert len(listed) == 2  # no third, forged entry
    # The names are data: ingested documents keep their real names.
    (root / "\x1b[31mred.md").write_text(FINE)
    assert _ingest(root, database_url, tmp_path / "data").code == 1
    assert "\x1b[31mred.md" in _rows_by_document(database_url)


def test_links_that_leave_the_root_are_not_followed_unless_allowed(
    tmp_path: Path, database_url: str
) -> None:
    root = tmp_path / "docs"
    (root / "inner").mkdir(parents=True)
    private = tmp_path / "private"
    private.mkdir()
    (private / "id_rsa.md").write_text("-----BEGIN PRIVATE KEY----- SECRET-KEY-MATERIAL\n")
    (root / "fine.md").write_text(FINE)
    (root / "notes.md").symlink_to(private / "id_rsa.md")
    (root / "elsewhere").symlink_to(private, target_is_directory=True)
    (root / "inner" / "alias.md").symlink_to(root / "fine.md")  # inside: followed
    done = _ingest(root, database_url, tmp_path / "data")
    assert done.code == 1, done.text
    listed = _failures_listed(done)
    assert set(listed) == {"notes.md", "elsewhere/"}
    assert listed["notes.md"].startswith(f"symlink to {private / 'id_rsa.md'}, outside the")
    assert "--follow-outside-links" in listed["notes.md"]
    assert set(_rows_by_document(database_url)) == {"fine.md", "inner/alias.md"}
    assert query(database_url, "SELECT 1 FROM content_chunks WHERE text LIKE '%SECRET%'") == []

    allowed = _ingest(root, database_url, tmp_path / "data", "--follow-outside-links")
    assert allowed.code == 0, allowed.text
    assert set(_rows_by_document(database_url)) == {
        "fine.md",
        "inner/alias.md",
        "notes.md",
        "elsewhere/id_rsa.md",
    }


def test_the_summary_tells_skipped_entries_from_failed_documents_as_status_does(
    tmp_path: Path, database_url: str
) -> None:
    """A document read and refused is failed (it has a document row with its
    error); an entry the walk did not read is skipped (no document row): the
    summary says which, and `status`, which counts document rows, agrees."""
    root = tmp_path / "docs"
    root.mkdir()
    (tmp_path / "private.md").write_text("# Private\n")
    (root / "fine.md").write_text(FINE)
    (root / "latin-1.md").write_bytes(b"# Caf\xe9\n")
    (root / "link.md").symlink_to(tmp_path / "private.md")
    done = _ingest(root, database_url, tmp_path / "data")
    assert done.code == 1, done.text
    assert "1 processed, 0 unchanged, 1 failed, 1 skipped (not read)" in done.out, done.out
    assert "2 documents failed or were skipped (they have no rows):" in done.err, done.err
    assert set(_failures_listed(done)) == {"latin-1.md", "link.md"}
    status = _mdchunks(
        "status", "--database-url", database_url, "--data-dir", str(tmp_path / "data")
    )
    assert status.code == 0, status.text
    assert "documents 2 (1 failed)" in status.out, status.out


# -- 3. two folders of the same name -----------------------------------------------------


def test_a_source_never_moves_to_another_folder_silently(tmp_path: Path, database_url: str) -> None:
    first = tmp_path / "a" / "docs"
    second = tmp_path / "b" / "docs"
    for folder, name in ((first, "first.md"), (second, "second.md")):
        folder.mkdir(parents=True)
        (folder / name).write_text(FINE)
    data_dir = tmp_path / "data"
    args = ("--database-url", database_url, "--data-dir", str(data_dir))
    assert _mdchunks("ingest", str(first), *args).code == 0
    refused = _mdchunks("ingest", str(second), *args)
    assert refused.code == 2, refused.text
    assert str(first) in refused.err and str(second) in refused.err
    assert "--source NAME" in refused.err and "--move" in refused.err
    assert set(_rows_by_document(database_url)) == {"first.md"}  # untouched

    # A name of its own: two sources side by side.
    assert _mdchunks("ingest", str(second), "--source", "docs-b", *args).code == 0
    # Or an explicit move.
    moved = _mdchunks("ingest", str(second), "--move", *args)
    assert moved.code == 0, moved.text
    assert set(_rows_by_document(database_url)) == {"second.md"}
    # A folder that was moved (the old root is gone) follows with --source.
    third = tmp_path / "c" / "docs"
    third.parent.mkdir()
    second.rename(third)
    assert _mdchunks("ingest", str(third), "--source", SOURCE, *args).code == 0
    assert set(_rows_by_document(database_url)) == {"second.md"}


# -- 8. edits the stat cannot see ----------------------------------------------------------


def test_a_verifying_run_sees_an_edit_that_kept_size_and_mtime(
    tmp_path: Path, database_url: str
) -> None:
    import os

    root = tmp_path / "docs"
    root.mkdir()
    page = root / "page.md"
    page.write_text("# Page\n\nThe original words.\n")
    (root / "other.md").write_text(FINE)
    data_dir = tmp_path / "data"
    assert _ingest(root, database_url, data_dir).code == 0
    before = page.stat()
    page.write_text("# Page\n\nThe rewritten text.\n")  # same size
    os.utime(page, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert page.stat().st_size == before.st_size

    def texts() -> str:
        rows = query(database_url, "SELECT text FROM content_chunks WHERE rel_path = 'page.md'")
        return " ".join(text for (text,) in rows)

    stat_based = _ingest(root, database_url, data_dir)
    assert stat_based.code == 0, stat_based.text
    assert "original" in texts()  # the default trusts the stat, as make and rsync do
    verified = _ingest(root, database_url, data_dir, "--verify")
    assert verified.code == 0, verified.text
    assert "1 processed, 1 unchanged" in verified.out
    assert "rewritten" in texts() and "original" not in texts()
    assert_invariants(database_url, SOURCE)
    again = _ingest(root, database_url, data_dir)
    assert "0 processed, 2 unchanged" in again.out, again.out


# -- 9. the small ones -----------------------------------------------------------------------


@pytest.fixture
def ingested(tmp_path: Path, database_url: str) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "fine.md").write_text(FINE)
    assert _ingest(root, database_url, tmp_path / "data").code == 0
    return root


def test_a_huge_query_gets_a_clear_message(ingested: Path, database_url: str) -> None:
    from mdchunks import api
    from mdchunks.errors import UsageError

    query_text = " ".join(f"word{i}" for i in range(26_000))
    with pytest.raises(UsageError, match=r"too long .*26,000 words"):
        api.search(query_text, database_url=database_url, match="any")
    # A CJK query has no spaces: its characters are counted too.
    with pytest.raises(UsageError, match=r"too long .*10,001 characters"):
        api.search("站" * 10_001, database_url=database_url, match="any")
    # One at the limit is searched (in well under the minutes a longer one
    # took once every language parsed it).
    assert api.search(" ".join(["word"] * 1_000), database_url=database_url) == []


def test_search_of_an_unknown_source_is_a_usage_error(ingested: Path, database_url: str) -> None:
    done = _mdchunks("search", "paragraph", "--source", "nosuch", "--database-url", database_url)
    assert done.code == 2, done.text
    assert "unknown source 'nosuch' (known sources: docs)" in done.err


def test_drop_waits_with_lock_wait_and_no_is_not_a_failure(
    ingested: Path, tmp_path: Path, database_url: str
) -> None:
    import os
    import pty

    from mdchunks.source import lock

    args = (
        "--source",
        SOURCE,
        "--database-url",
        database_url,
        "--data-dir",
        str(tmp_path / "data"),
    )
    with lock.source_lock(database_url, SOURCE, wait_seconds=0):
        busy = _mdchunks("drop", *args, "--yes", "--lock-wait", "0")
    assert busy.code == 4, busy.text
    assert "--lock-wait" in busy.err
    # Answering "n" on a terminal: nothing dropped, exit 0 (1 is for failed documents).
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "mdchunks", "drop", *args],
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli_env(),
        )
        os.write(controller, b"n\n")
        out, err = process.communicate(timeout=120)
    finally:
        os.close(controller)
        os.close(terminal)
    assert process.returncode == 0, (out, err)
    assert b"nothing dropped" in out
    assert set(_rows_by_document(database_url)) == {"fine.md"}


def test_a_running_backfill_is_named_a_backfill(tmp_path: Path, database_url: str) -> None:
    from reliability_support import start_cli, wait_until

    root = tmp_path / "docs"
    root.mkdir()
    for i in range(400):  # enough work for the backfill to be seen running
        sections = "".join(
            f"## Part {j}\n\n" + f"Words of page {i}, part {j}. " * 40 + "\n\n" for j in range(8)
        )
        (root / f"page-{i:03d}.md").write_text(f"# Page {i}\n\n{sections}")
    data_dir = tmp_path / "data"
    assert _ingest(root, database_url, data_dir).code == 0
    args = ("--database-url", database_url, "--data-dir", str(data_dir))
    backfill = start_cli("backfill", "--source", SOURCE, "--full-reprocess", *args)
    try:
        seen = wait_until(
            lambda: bool(
                query(
                    database_url,
                    "SELECT 1 FROM pg_stat_activity WHERE application_name = %s",
                    [f"mdchunks backfill pid {backfill.pid} {SOURCE}"],
                )
            ),
            timeout=120,
        )
        refused = _ingest(root, database_url, data_dir, "--lock-wait", "0")
    finally:
        from reliability_support import finish

        done = finish(backfill)
    assert seen and done.code == 0, done.text
    assert refused.code == 4, refused.text
    assert f"(`mdchunks backfill`, process {backfill.pid})" in refused.err
