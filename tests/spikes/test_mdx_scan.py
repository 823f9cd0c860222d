"""The harness's MDX scan (`python -m spikes.mdx_reference scan`, docs/harness.md)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from spikes.mdx_reference import main, parse_reference, scan

PAGE = (
    "---\ntitle: Middleware\n---\nimport { Steps } from 'x';\n\nIntro.\n\n"
    "<Steps>\n## Basic usage\n</Steps>\n\n```sh\n# not a heading\n```\n"
)


def _record(path: str, headings: list[tuple[int, int, str]]) -> str:
    return json.dumps(
        {
            "path": path,
            "error": None,
            "headings": [
                {"level": level, "line": line, "end_line": line, "text": text}
                for line, level, text in headings
            ],
        }
    )


def test_the_scan_counts_headings_against_the_reference_and_titles_at_the_root(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.mdx").write_text(PAGE, encoding="utf-8")
    (tmp_path / "b.md").write_text("# One\n\n## Two\n", encoding="utf-8")
    reference = parse_reference(
        [
            _record("a.mdx", [(9, 2, "Basic usage")]),
            _record("b.md", [(1, 1, "One"), (3, 2, "Other")]),  # one lost, one invented
        ]
    )
    found = scan(tmp_path, reference)
    assert (found.pages, found.headings) == (2, 3)
    assert (found.differing, found.lost, found.invented) == (("b.md",), 1, 1)
    # a.mdx has a front-matter title: its every chunk names it at the root.
    assert found.titled == 1
    assert found.rooted == found.titled_chunks >= 1


def test_the_scan_command_prints_a_row_and_fails_on_a_difference(tmp_path: Path) -> None:
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "a.mdx").write_text(PAGE, encoding="utf-8")
    listed = tmp_path / "ref.jsonl"
    listed.write_text(_record("a.mdx", [(9, 2, "Basic usage")]) + "\n", encoding="utf-8")
    done = CliRunner().invoke(main, ["scan", str(corpus), "--reference", str(listed)])
    assert done.exit_code == 0, done.output
    header, row = done.output.splitlines()[:2]
    assert header.split() == [
        "corpus", "pages", "headings", "differ", "lost", "invented", "titled", "chunks", "rooted"
    ]  # fmt: skip
    assert row.split()[1:7] == ["1", "1", "0", "0", "0", "1"]
    listed.write_text(_record("a.mdx", [(13, 1, "not a heading")]) + "\n", encoding="utf-8")
    assert (
        CliRunner().invoke(main, ["scan", str(corpus), "--reference", str(listed)]).exit_code == 1
    )
