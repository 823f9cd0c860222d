"""`python -m spikes.heading_scan [PATH...]`: does the heading index find every heading?

For every markdown document under each PATH (default: the bundled corpora,
`corpora/rust-book`, `corpora/tldr` and the CommonMark spec's examples, each
example one document), compare the headings of `heading_index.build_index`
with the reference's, markdown-it-py's CommonMark with GFM pipe tables
(`spikes.commonmark_reference`): the line, level and text of every top-level
heading. Front matter, which the index knows and CommonMark does not
(docs/heading-index.md), is blanked in the reference's copy of the text, line
for line. Prints one row per PATH (documents, reference headings, documents
that differ, headings missed, extra and changed) and the first differences,
`path:line: expected ... found ...`. Exit status 1 if any document differs.
Deterministic; needs no database.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import click
from mdchunks.heading_index import build_index
from mdchunks.heading_index.blocks import front_matter_end

from spikes.commonmark_reference import (
    CORPORA,
    SPEC_JSON,
    ReferenceHeading,
    line_of,
    reference_headings,
    spec_examples,
)
from spikes.corpus import read_corpus

DEFAULT_PATHS = (CORPORA / "rust-book", CORPORA / "tldr", SPEC_JSON)
_NOT_A_LINE_ENDING = re.compile(r"[^\r\n]")


@dataclass(frozen=True, slots=True)
class Difference:
    path: str
    line: int  # 0-based
    expected: ReferenceHeading | None  # None: an extra heading
    found: ReferenceHeading | None  # None: a missed heading


@dataclass(frozen=True, slots=True)
class RootScan:
    root: str
    documents: int
    headings: int  # the reference's
    documents_differing: int
    differences: tuple[Difference, ...]

    def count(self, kind: str) -> int:
        return sum(1 for d in self.differences if _kind(d) == kind)


def _kind(difference: Difference) -> str:
    if difference.found is None:
        return "missed"
    return "extra" if difference.expected is None else "changed"


def found_headings(text: str) -> list[ReferenceHeading]:
    """The index's headings, as the reference states them."""
    return [
        ReferenceHeading(line_of(text, h.start), h.level, h.text)
        for h in build_index(text).headings
    ]


def expected_headings(text: str) -> list[ReferenceHeading]:
    """The reference's headings, front matter blanked (its line endings kept)."""
    end = front_matter_end(text, len(text))
    blanked = _NOT_A_LINE_ENDING.sub("", text[:end]) + text[end:]
    return reference_headings(blanked, tables=True)


def differences(path: str, text: str) -> list[Difference]:
    """Where the index and the reference disagree, by line."""
    found = {h.line: h for h in found_headings(text)}
    expected = {h.line: h for h in expected_headings(text)}
    return [
        Difference(path, line, expected.get(line), found.get(line))
        for line in sorted(found.keys() | expected.keys())
        if expected.get(line) != found.get(line)
    ]


def _documents(root: Path) -> Iterable[tuple[str, str]]:
    if root.suffix == ".json" and root.is_file():  # the spec's examples
        for example in spec_examples():
            yield f"{root.as_posix()}#example-{example['example']}", str(example["markdown"])
        return
    for document in read_corpus(root).documents:
        yield document.path, document.text


def scan(root: Path) -> RootScan:
    documents = headings = differing = 0
    found: list[Difference] = []
    for path, text in _documents(root):
        documents += 1
        headings += len(expected_headings(text))
        these = differences(path, text)
        differing += bool(these)
        found += these
    return RootScan(root.as_posix(), documents, headings, differing, tuple(found))


def _describe(heading: ReferenceHeading | None) -> str:
    return "nothing" if heading is None else f"H{heading.level} {heading.text!r}"


def report(scans: Sequence[RootScan], shown: int) -> list[str]:
    lines = [
        f"{'path':<40} {'documents':>9} {'headings':>8} {'differ':>6} "
        f"{'missed':>6} {'extra':>5} {'changed':>7}"
    ]
    for s in scans:
        lines.append(
            f"{s.root:<40} {s.documents:>9} {s.headings:>8} {s.documents_differing:>6} "
            f"{s.count('missed'):>6} {s.count('extra'):>5} {s.count('changed'):>7}"
        )
    every = [d for s in scans for d in s.differences]
    for d in every[:shown]:
        lines.append(
            f"{d.path}:{d.line + 1}: expected {_describe(d.expected)}, found {_describe(d.found)}"
        )
    if len(every) > shown:
        lines.append(f"... {len(every) - shown} more (--show N)")
    return lines


@click.command(help=__doc__.split("\n\n", 1)[1] if __doc__ else None)
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--show", default=20, show_default=True, help="How many differences to print.")
def main(paths: tuple[Path, ...], show: int) -> None:
    scans = [scan(path) for path in paths or DEFAULT_PATHS]
    click.echo("\n".join(report(scans, show)))
    sys.exit(1 if any(s.differences for s in scans) else 0)


if __name__ == "__main__":
    main()
