"""The harness end to end: corpus reading, the mode seam, the command, determinism."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from mdchunks.heading_index import (
    StructureOptions,
    assign,
    budget_split_from,
    build_index,
    decode_document,
    structure_chunks,
)

from spikes.corpus import read_corpus
from spikes.heading_eval import evaluate, main
from spikes.metrics import ROOT as DOCUMENT_ROOT
from spikes.metrics import Ratio, Span, governing
from spikes.modes import MODES, Budgets, Mode, _splitter

ROOT = Path(__file__).resolve().parents[2]
KEYS = {
    "path",
    "mode",
    "chars",
    "headings",
    "chunks",
    "aligned",
    "pure",
    "truthful",
    "truthful_nested",
}
SECTIONS = "intro\n# A\naaaa\n## B\nbbbb\n# C\ncc\n"  # headings at 6, 15, 25; length 32


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "b.md").write_text(SECTIONS, encoding="utf-8")
    (root / "a.markdown").write_text(
        "# Guide\n\n"
        + "Some words here. " * 12
        + "\n\n## Install\n\n"
        + "More words. " * 10
        + "\n",
        encoding="utf-8",
    )
    (root / "sub" / "c.mdx").write_text("plain text, no headings at all\n", encoding="utf-8")
    (root / "bom.md").write_bytes(b"\xef\xbb\xbf# Title\nbody\n")
    (root / "notes.txt").write_text("# not markdown by name\n", encoding="utf-8")
    (root / "bad.md").write_bytes(b"# ok\n\xff\xfe broken\n")
    (root / "binary.md").write_bytes(b"# looks fine\n\x00\x01\x02")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "skipped.md").write_text("# hidden folder\n", encoding="utf-8")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "skipped.md").write_text("# vendored\n", encoding="utf-8")
    (root / ".dotfile.md").write_text("# hidden file\n", encoding="utf-8")
    (root / "UPPER.MD").write_text("# Upper\n", encoding="utf-8")
    return root


def test_read_corpus_order_decoding_and_skips(corpus: Path) -> None:
    messages: list[str] = []
    read = read_corpus(corpus, warn=messages.append)
    # sorted POSIX paths; hidden files and folders and node_modules skipped, as the flow does
    assert [d.rel_path for d in read.documents] == [
        "UPPER.MD",
        "a.markdown",
        "b.md",
        "bom.md",
        "sub/c.mdx",
    ]
    assert read.documents[2].path == f"{corpus.as_posix()}/b.md"
    assert read.documents[3].text == "# Title\nbody\n"  # one leading BOM removed
    assert [s.path for s in read.skipped] == [
        f"{corpus.as_posix()}/bad.md",
        f"{corpus.as_posix()}/binary.md",
    ]
    assert len(messages) == 2
    assert "bad.md" in messages[0]
    assert "invalid UTF-8 at byte offset 5" in messages[0]  # "# ok\n" is 5 bytes
    assert "binary.md: binary content: NUL byte at byte offset 13" in messages[1]


def test_a_single_file_is_a_corpus(corpus: Path) -> None:
    read = read_corpus(corpus / "b.md")
    assert read.root == (corpus / "b.md").as_posix()
    assert [d.text for d in read.documents] == [SECTIONS]


def test_a_new_chunker_is_one_more_mode(corpus: Path) -> None:
    # One chunk per document, [0, len): on b.md (SECTIONS) by hand:
    # aligned 0/3 (no heading at 0); pure 0/1 (6, 15, 25 inside);
    # truthful: governed by nothing, preamble [0, 6) -> 6 of 32; nested 32/32.
    whole = Mode("whole", "one chunk per document", lambda text, _b: [Span(0, len(text))])
    result = evaluate([corpus / "b.md"], [whole], Budgets())
    (row,) = result.totals
    assert (row.mode, row.scores.headings, row.scores.chunks) == ("whole", 3, 1)
    assert row.scores.aligned == Ratio(0, 3)
    assert row.scores.pure == Ratio(0, 1)
    assert row.scores.truthful == Ratio(6, 32)
    assert row.scores.truthful_nested == Ratio(32, 32)


def test_budget_modes_cover_their_documents(corpus: Path) -> None:
    budgets = Budgets(chunk_size=60, min_chunk_size=30, chunk_overlap=10)
    text = (corpus / "a.markdown").read_text(encoding="utf-8")
    for name in ("none", "markdown"):
        spans = MODES[name].chunk(text, budgets)
        assert len(spans) > 2
        assert all(0 <= s.start < s.end <= len(text) for s in spans)
        assert [s.start for s in spans] == sorted(s.start for s in spans)


def test_totals_sum_the_documents(corpus: Path) -> None:
    result = evaluate([corpus], [MODES["markdown"]], Budgets(60, 30, 10))
    (row,) = result.totals
    docs = result.documents
    names = [d.path.rsplit("/", 1)[1] for d in docs]
    assert names == ["UPPER.MD", "a.markdown", "b.md", "bom.md", "c.mdx"]
    assert row.scores.chars == sum(d.scores.chars for d in docs)
    assert row.scores.truthful.hits == sum(d.scores.truthful.hits for d in docs)
    assert row.scores.truthful.total == sum(d.scores.truthful.total for d in docs)
    assert result.skipped == 2


def test_the_command_prints_totals_and_per_document_rows(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    args = [str(corpus), "--modes", "markdown", "--per-doc", "--json", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # per-document table (header, rule, 5 rows), a blank line, totals (header, rule, 1 row)
    assert len(lines) == 2 + 5 + 1 + 2 + 1
    assert lines[7] == ""
    c_row = next(line for line in lines if "c.mdx" in line)
    assert " n/a " in c_row  # no headings: hdg-aligned undefined
    assert "bad.md" in result.stderr
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert len(payload["totals"]) == 1
    assert len(payload["documents"]) == 5


def test_unknown_mode_is_a_usage_error(corpus: Path) -> None:
    result = CliRunner().invoke(main, [str(corpus), "--modes", "none,nonsense"])
    assert result.exit_code == 2
    assert "unknown mode 'nonsense'" in result.output


def test_bad_budgets_are_a_usage_error(corpus: Path) -> None:
    result = CliRunner().invoke(
        main,
        [str(corpus), "--chunk-size", "100", "--min-chunk-size", "50", "--chunk-overlap", "100"],
    )
    assert result.exit_code == 2
    assert "chunk overlap must be at least 0 and below the chunk size 100" in result.output


def _run(corpus: Path, json_file: Path, hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "COCOINDEX_DISABLE_USAGE_TRACKING": "1"}
    command = [sys.executable, "-m", "spikes.heading_eval", str(corpus), "--per-doc"]
    command += ["--chunk-size", "60", "--min-chunk-size", "30", "--chunk-overlap", "10"]
    command += ["--json", str(json_file)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def test_two_runs_give_identical_output(corpus: Path, tmp_path: Path) -> None:
    # Separate processes with different hash seeds: no set or dict order leaks out.
    first = _run(corpus, tmp_path / "1.json", "1")
    second = _run(corpus, tmp_path / "2.json", "2")
    assert first == second
    assert (tmp_path / "1.json").read_bytes() == (tmp_path / "2.json").read_bytes()

    payload = json.loads((tmp_path / "1.json").read_text(encoding="utf-8"))
    assert set(payload) == {"totals", "documents"}
    # The default modes are all four (the structure modes are as cheap as the split).
    assert [(t["path"], t["mode"]) for t in payload["totals"]] == [
        (corpus.as_posix(), "none"),
        (corpus.as_posix(), "markdown"),
        (corpus.as_posix(), "structure-first"),
        (corpus.as_posix(), "structure-common"),
    ]
    assert len(payload["documents"]) == 5 * 4
    for entry in payload["totals"] + payload["documents"]:
        assert set(entry) == KEYS
        assert all(isinstance(entry[k], int) for k in ("chars", "headings", "chunks"))
        assert all(isinstance(entry[k], int) for k in ("aligned", "pure"))
        assert entry["aligned"] <= entry["headings"]
        assert entry["pure"] <= entry["chunks"]
        for fraction in (entry["truthful"], entry["truthful_nested"]):
            assert fraction is None or 0.0 <= fraction <= 1.0


def test_hand_built_offsets_agree_with_the_heading_index() -> None:
    # The metric tests use hand-built indexes; this pins them to build_index.
    index = build_index(SECTIONS)
    assert index.length == 32
    assert [(h.level, h.text, h.start, h.end, h.section_end, h.path) for h in index.headings] == [
        (1, "A", 6, 10, 25, ("A",)),
        (2, "B", 15, 20, 25, ("A", "B")),
        (1, "C", 25, 29, 32, ("C",)),
    ]


@pytest.mark.parametrize("sample", sorted((ROOT / "sample").glob("*.md")), ids=lambda p: p.name)
def test_metrics_judge_the_breadcrumb_the_flow_stores(sample: Path) -> None:
    # The governing heading of the metrics is the one heading_index.assign
    # gives each chunk, on real documents split by the real splitter.
    text = decode_document(sample.read_bytes())
    index = build_index(text)
    spans = MODES["markdown"].chunk(text, Budgets())
    stored = [columns.heading_path for columns in assign(index, [(s.start, s.end) for s in spans])]
    judged = [h.path if h is not None else () for h in governing(index, spans)]
    assert judged == stored
    assert any(judged)


def test_structure_modes_score_the_heading_each_chunk_names(corpus: Path) -> None:
    # b.md is SECTIONS: "intro\n# A\naaaa\n## B\nbbbb\n# C\ncc\n" (A 6, B 15, C 25).
    # The structure chunker (min size 1000) makes the preamble [0, 5) "intro"
    # and one chunk [10, 31) "aaaa\n## B\nbbbb\n# C\ncc": A's body with B and C
    # merged in (neither is shallower than A). It names A (classic rule) or the
    # document root (the deepest common ancestor of A and C).
    first = MODES["structure-first"].chunk(SECTIONS, Budgets())
    common = MODES["structure-common"].chunk(SECTIONS, Budgets())
    assert first == [Span(0, 5, DOCUMENT_ROOT), Span(10, 31, 0)]
    assert common == [Span(0, 5, DOCUMENT_ROOT), Span(10, 31, DOCUMENT_ROOT)]
    modes = [MODES["structure-first"], MODES["structure-common"]]
    by_mode = {row.mode: row.scores for row in evaluate([corpus / "b.md"], modes, Budgets()).totals}
    for scores in by_mode.values():
        # aligned: chunk starts {0, 10}; 10 is A's body start -> 1/3 (B, C inside)
        assert scores.aligned == Ratio(1, 3)
        assert scores.pure == Ratio(1, 2)  # B (15) and C (25) are inside [10, 31)
    # first:  truthful 5 (preamble [0, 6)) + 5 (A's own text [6, 15) from 10) = 10 of 26
    #         nested   5 + 15 (A's section [6, 25) from 10)                  = 20 of 26
    assert (by_mode["structure-first"].truthful, by_mode["structure-first"].truthful_nested) == (
        Ratio(10, 26),
        Ratio(20, 26),
    )
    # common: truthful 5 + 0 (the root's own text is [0, 6)) = 5 of 26
    #         nested   5 + 21 (the root holds everything)     = 26 of 26
    assert (by_mode["structure-common"].truthful, by_mode["structure-common"].truthful_nested) == (
        Ratio(5, 26),
        Ratio(26, 26),
    )


@pytest.mark.parametrize("merged_path", ["first", "common"])
@pytest.mark.parametrize("sample", sorted((ROOT / "sample").glob("*.md")), ids=lambda p: p.name)
def test_structure_modes_judge_the_breadcrumb_the_structure_chunker_stores(
    sample: Path, merged_path: str
) -> None:
    text = decode_document(sample.read_bytes())
    index = build_index(text)
    spans = MODES[f"structure-{merged_path}"].chunk(text, Budgets())
    options = StructureOptions(merged_path="common" if merged_path == "common" else "first")
    chunks = structure_chunks(text, index, options, budget_split_from(_splitter())).chunks
    assert [(s.start, s.end) for s in spans] == [(c.start, c.end) for c in chunks]
    judged = [h.path if h is not None else () for h in governing(index, spans)]
    assert judged == [c.heading_path for c in chunks]
    assert any(judged)


def test_provenance_is_a_dated_header_only_when_asked_for(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    args = [str(corpus / "b.md"), "--modes", "markdown", "--split-levels", "2"]
    plain = CliRunner().invoke(main, args)
    assert plain.exit_code == 0 and plain.stdout.startswith("| doc")
    result = CliRunner().invoke(main, [*args, "--provenance", "--json", str(out)])
    assert result.exit_code == 0, result.output
    header, blank, *table = result.stdout.splitlines()
    assert header.startswith(f"# {(corpus / 'b.md').as_posix()} (1 markdown files), measured ")
    for part in ("cocoindex 1.", "tree-sitter-markdown 0.", "heading_index v", "Python 3."):
        assert part in header
    assert "budgets 2000/1000/200 UTF-8 bytes, split levels 1-2; command: " in header
    assert blank == "" and table[0].startswith("| doc")
    assert json.loads(out.read_text(encoding="utf-8"))["provenance"] == header
    with pytest.raises(ValueError, match="split levels"):
        Budgets(split_levels=7)
