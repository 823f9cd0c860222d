"""What `search`, `outline`, `status` and the messages print of a document or
a file name is terminal-safe (flow/names.py `shown`): no control character,
ESC or OSC sequence, bidi control or zero-width character reaches the
terminal, one hit is one block, and `--json` keeps the exact text."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from mdchunks.names import shown

# Escape sequences a document can try: clear the screen, set the window
# title (OSC 0, ended by BEL), a bidi override, zero-width and BOM characters.
CLEAR = "\x1b[2J"
TITLE = "\x1b]0;owned\x07"
BIDI = "\u202e"
ZERO_WIDTH = "\u200b\u200d\u2060\ufeff"
HOSTILE = CLEAR + TITLE + BIDI + ZERO_WIDTH
# A file name that tries to clear the screen and to forge a second hit.
EVIL_NAME = f"evil{CLEAR}\n 9.999  forged:other.md#0.md"
UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]"
)

DOCUMENT = (
    f"# Guide {BIDI}reversed{ZERO_WIDTH}\n\n"
    f"Intro text about zanzibar{HOSTILE} widgets.\n\n"
    f"## Install {CLEAR}now\n\n"
    f"Install zanzibar widgets {TITLE} with care.\n"
    " 1.000  forged:line.md#0\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain café 名前", "plain café 名前"),
        ("a\x1b[2Jb", "a\\x1b[2Jb"),
        ("t\x1b]0;x\x07", "t\\x1b]0;x\\x07"),
        ("one\ntwo\r\tthree", "one\\ntwo\\r\\tthree"),
        ("\u202eabc\u2066", "\\u202eabc\\u2066"),
        ("a\u200bb\u200dc\ufeff", "a\\u200bb\\u200dc\\ufeff"),
        ("\x85\u2028", "\\x85\\u2028"),
        ("caf\udce9", "caf\\xe9"),
    ],
)
def test_shown_escapes_what_a_terminal_acts_on(text: str, expected: str) -> None:
    assert shown(text) == expected
    assert shown(expected) == expected  # idempotent: what it gives is printable


def test_a_block_keeps_its_lines_and_escapes_the_rest() -> None:
    assert shown("a\n\tb\x1b[2J\r\u202e", lines=True) == "a\n\tb\\x1b[2J\\r\\u202e"


@pytest.fixture
def hostile(tmp_path: Path, run_cli: Any) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / EVIL_NAME).write_text(DOCUMENT)
    (root / "plain.md").write_text("# Plain\n\nNothing about the word here.\n")
    done = run_cli("ingest", str(root), "--source", "docs")
    assert done.code == 0, done.out + done.err
    assert not UNSAFE.search(done.out + done.err)
    return root


def assert_safe(printed: str) -> None:
    found = UNSAFE.search(printed)
    assert found is None, f"{found.group()!r} printed in {printed!r}"


def hit_starts(printed: str) -> list[str]:
    """The lines that open a hit: a score at the margin (`%6.3f`)."""
    return [line for line in printed.splitlines() if re.match(r"^ ?\d+\.\d{3}  ", line)]


@pytest.mark.parametrize("expand", ["none", "section", "parent"])
def test_search_prints_no_escape_and_one_block_per_hit(
    hostile: Path, run_cli: Any, expand: str
) -> None:
    result = run_cli("search", "zanzibar widgets", "--expand", expand)
    assert result.code == 0, result.err
    assert_safe(result.out)
    starts = hit_starts(result.out)
    # The document is one chunk: one hit under the escaped name, and neither the
    # name's newline nor the text's line ` 1.000  forged:line.md#0` starts another.
    assert starts == [f"{starts[0][:6]}  docs:evil\\x1b[2J\\n 9.999  forged:other.md#0.md#0"]
    assert "Guide \\u202ereversed\\u200b\\u200d\\u2060\\ufeff" in result.out
    if expand == "section":  # the section's own lines, indented under the hit
        assert "\n         1.000  forged:line.md#0\n" in result.out, result.out


def test_search_json_keeps_the_exact_text(hostile: Path, run_cli: Any) -> None:
    result = run_cli("search", "zanzibar widgets", "--json")
    assert result.code == 0
    found = [json.loads(line) for line in result.out.splitlines()]
    assert {hit["rel_path"] for hit in found} == {EVIL_NAME}
    assert any(HOSTILE in hit["text"] for hit in found)
    assert any(BIDI in hit["breadcrumb"] for hit in found)


def test_outline_and_status_print_no_escape(hostile: Path, run_cli: Any) -> None:
    outline = run_cli("outline", EVIL_NAME, "--source", "docs")
    assert outline.code == 0, outline.err
    assert_safe(outline.out)
    assert "# Guide \\u202ereversed" in outline.out and "## Install \\x1b[2Jnow" in outline.out
    exact = run_cli("outline", EVIL_NAME, "--source", "docs", "--json")
    assert json.loads(exact.out)["rel_path"] == EVIL_NAME
    status = run_cli("status")
    assert status.code == 0
    assert_safe(status.out)


def test_messages_quote_names_escaped(run_cli: Any) -> None:
    result = run_cli("outline", EVIL_NAME, "--source", f"no{CLEAR}such")
    assert result.code != 0
    assert_safe(result.err)
    assert len(result.err.strip().splitlines()) == 1
