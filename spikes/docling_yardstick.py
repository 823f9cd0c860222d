"""The importers scored against docling's public test data (issue 39):
`python -m spikes.docling_yardstick DOCLING_TESTS_DATA [--markitdown PYTHON]`.

DOCLING_TESTS_DATA is docling's `tests/data` folder (a checkout of
github.com/docling-project/docling): `{docx,html,pdf}/sources/*` with
docling's own conversions in `*/groundtruth/*.md` as the yardstick. Per
file and per format:

- headings by text: the converted markdown's headings (the heading index)
  against the ground truth's, matched in order on their text (lower case,
  letters and digits only, loose: a difflib ratio of 0.8 or one holding the
  other); recall over docling's, precision over ours;
- headings by relative level: of consecutive matched pairs, the share whose
  levels go the same way (deeper, same, shallower) in both;
- words kept: our words (letters and digits, lower case) as a multiset
  against docling's, link targets and image placeholders left out, over
  docling's count;
- seconds: conversion, best of three.

With `--markitdown PYTHON` (an interpreter with markitdown installed: a
spike-only venv, the product never imports it) markitdown's output is
scored the same way beside ours. PDFs with an outline are marked `(outline)`.
"""

from __future__ import annotations

import argparse
import difflib
import html
import itertools
import json
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)  # docling's placeholders: image, missing-text
_WORD = re.compile(r"[^\W_]+")
SUFFIX = {"docx": ".docx", "html": ".html", "pdf": ".pdf"}

# markitdown 0.1.9's OMML pre-processing strips the DOCX's namespaces here
# (mammoth then finds no body: every DOCX fails), so it is skipped: markitdown's
# DOCX is mammoth's conversion without equations.
_MARKITDOWN = """
import json, sys, time
from markitdown import MarkItDown
import markitdown.converters._docx_converter as docx_converter
docx_converter.pre_process_docx = lambda stream: stream
converter = MarkItDown()
out = {}
for path in sys.argv[1:]:
    best, text = float("inf"), ""
    for _ in range(3):
        started = time.perf_counter()
        try:
            text = converter.convert(path).text_content
        except Exception as exc:
            text = ""
        best = min(best, time.perf_counter() - started)
    out[path] = [text, best]
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Score:
    gt_headings: int
    our_headings: int
    matched: int
    level_pairs: int
    level_alike: int
    gt_words: int
    words_kept: int
    seconds: float


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(html.unescape(text).lower()))


def _words(markdown: str) -> Counter[str]:
    text = _LINK_TARGET.sub("]", html.unescape(_COMMENT.sub(" ", markdown)))
    return Counter(word.lower() for word in _WORD.findall(text))


def headings_of(markdown: str) -> list[tuple[int, str]]:
    from mdchunks.heading_index import build_index  # here: spikes/pdf_libraries runs without it

    return [(h.level, _norm(h.text)) for h in build_index(markdown).headings]


def _alike(a: str, b: str) -> bool:
    if not a or not b:
        return a == b
    if a == b or (min(len(a), len(b)) >= 4 and (a in b or b in a)):
        return True
    return difflib.SequenceMatcher(None, a, b).ratio() >= 0.8


def match(ours: list[tuple[int, str]], gt: list[tuple[int, str]]) -> list[tuple[int, int]]:
    """Pairs (our index, gt index), in order on both sides, greedy."""
    pairs: list[tuple[int, int]] = []
    start = 0
    for g, (_, text) in enumerate(gt):
        for o in range(start, len(ours)):
            if _alike(ours[o][1], text):
                pairs.append((o, g))
                start = o + 1
                break
    return pairs


def score(markdown: str, truth: str, seconds: float) -> Score:
    ours, gt = headings_of(markdown), headings_of(truth)
    pairs = match(ours, gt)
    alike = 0
    for (o1, g1), (o2, g2) in itertools.pairwise(pairs):
        sign_ours = (ours[o2][0] > ours[o1][0]) - (ours[o2][0] < ours[o1][0])
        sign_gt = (gt[g2][0] > gt[g1][0]) - (gt[g2][0] < gt[g1][0])
        alike += sign_ours == sign_gt
    want, got = _words(truth), _words(markdown)
    kept = sum(min(count, got[word]) for word, count in want.items())
    return Score(
        len(gt),
        len(ours),
        len(pairs),
        max(len(pairs) - 1, 0),
        alike,
        sum(want.values()),
        kept,
        seconds,
    )


def _convert(fmt: str, data: bytes) -> tuple[str, float]:
    from mdchunks.importers.registry import IMPORTERS

    best, text = float("inf"), ""
    for _ in range(3):
        started = time.perf_counter()
        try:
            text = IMPORTERS[fmt].convert(data).text
        except Exception as exc:  # scored as empty, said in the table
            text = ""
            print(f"  ours failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        best = min(best, time.perf_counter() - started)
    return text, best


def _has_outline(data: bytes) -> bool:
    import io

    from pypdf import PdfReader

    try:
        return bool(PdfReader(io.BytesIO(data)).outline)
    except Exception:
        return False


def _pairs(root: Path, fmt: str) -> list[tuple[Path, Path]]:
    found = []
    for source in sorted((root / fmt / "sources").glob(f"*{SUFFIX[fmt]}")):
        truth = root / fmt / "groundtruth" / f"{source.stem}.md"
        if not truth.exists():
            truth = root / fmt / "groundtruth" / f"{source.name}.md"
        if truth.exists():
            found.append((source, truth))
    return found


def _row(name: str, s: Score) -> str:
    recall = s.matched / s.gt_headings if s.gt_headings else 1.0
    precision = (
        s.matched / s.our_headings if s.our_headings else (1.0 if not s.gt_headings else 0.0)
    )
    levels = f"{s.level_alike}/{s.level_pairs}" if s.level_pairs else "-"
    words = s.words_kept / s.gt_words if s.gt_words else 1.0
    return (
        f"| {name} | {s.matched}/{s.gt_headings} | {recall:.2f} | {precision:.2f} | {levels} "
        f"| {words:.2f} | {s.seconds:.3f} |"
    )


def _total(scores: list[Score]) -> Score:
    return Score(*(sum(getattr(s, f) for s in scores) for f in Score.__dataclass_fields__))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="docling's tests/data folder")
    parser.add_argument("--markitdown", help="a Python with markitdown installed")
    parser.add_argument("--formats", default="pdf,docx,html")
    args = parser.parse_args()
    header = (
        "| file | headings matched | recall | precision | levels alike | words kept | seconds |"
    )
    rule = "|---|---|---|---|---|---|---|"
    for fmt in args.formats.split(","):
        pairs = _pairs(args.data, fmt)
        theirs: dict[str, list] = {}
        if args.markitdown:
            done = subprocess.run(
                [args.markitdown, "-c", _MARKITDOWN, *map(str, (s for s, _ in pairs))],
                capture_output=True,
                text=True,
                check=True,
            )
            theirs = json.loads(done.stdout)
        ours_scores: list[Score] = []
        their_scores: list[Score] = []
        without_outline: list[Score] = []  # the PDFs whose headings the pages must show
        print(f"\n## {fmt}\n\n{header}\n{rule}")
        for source, truth in pairs:
            data = source.read_bytes()
            gt = truth.read_text(encoding="utf-8")
            text, seconds = _convert(fmt, data)
            name = source.name + (" (outline)" if fmt == "pdf" and _has_outline(data) else "")
            ours = score(text, gt, seconds)
            ours_scores.append(ours)
            if fmt == "pdf" and "(outline)" not in name:
                without_outline.append(ours)
            print(_row(name + (" **empty**" if not _words(text) else ""), ours))
            if str(source) in theirs:
                their_text, their_seconds = theirs[str(source)]
                their = score(their_text, gt, their_seconds)
                their_scores.append(their)
                print(_row(f"  markitdown: {source.name}", their))
        print(_row("**all (ours)**", _total(ours_scores)))
        if without_outline:
            print(_row("**without outline (ours)**", _total(without_outline)))
        if their_scores:
            total = _total(their_scores)
            print(_row("**all (markitdown)**", total))
            ratio = total.seconds / max(_total(ours_scores).seconds, 1e-9)
            print(f"\n{fmt}: markitdown's seconds / ours = {ratio:.1f}x")


if __name__ == "__main__":
    main()
