"""Markdown text -> HeadingIndex: parse, convert offsets, extract text, derive paths."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mdchunks.heading_index.hierarchy import derive_structure
from mdchunks.heading_index.inline_syntax import normalize_label
from mdchunks.heading_index.inline_text import plain_text
from mdchunks.heading_index.link_refs import parse_definitions
from mdchunks.heading_index.markers import atx_content, lines_with_offsets, setext_content
from mdchunks.heading_index.mdx import DIALECTS, Dialect, heading_source, scan
from mdchunks.heading_index.mdx_unindent import unindent
from mdchunks.heading_index.model import Heading, HeadingIndex
from mdchunks.heading_index.offsets import code_point_offsets
from mdchunks.heading_index.parse import (
    RawHeading,
    definition_sites,
    encode,
    front_matter_end_byte,
    heading_prefix_length,
    parse,
)
from mdchunks.heading_index.recovery import recovered_headings_taking
from mdchunks.heading_index.skeleton import Skeleton, skeleton
from tree_sitter import Tree

# What a blank line holds (CommonMark: spaces and tabs), and line endings.
_BLANK = frozenset(" \t\r\n")


@dataclass(frozen=True, slots=True)
class _Located:
    """A heading with code-point offsets and its inline source, before the hierarchy."""

    level: int
    start: int
    end: int
    content: str


def build_index(text: str, dialect: Dialect = "commonmark") -> HeadingIndex:
    """All structural headings of a markdown document, offsets in code points.

    `dialect` is the markdown the document is written in: CommonMark (with
    GFM tables), or MDX (`.mdx`: JSX, ESM and expressions, no indented code),
    whose blocks are read from a masked copy of the text (heading_index/mdx.py).
    """
    if dialect not in DIALECTS:
        raise ValueError(f"unknown markdown dialect {dialect!r} (known: {', '.join(DIALECTS)})")
    if not text:
        return HeadingIndex(headings=(), length=0)
    mdx = dialect == "mdx"
    # What the parser reads: for MDX a masked copy, same code points, same lines.
    hidden: tuple[tuple[int, int], ...] = ()
    blank_or_not = text
    if mdx:
        mdx_scan = scan(text)
        source = encode(mdx_scan.masked)
        hidden = mdx_scan.hidden
        # Blank for a lead-in: in MDX, ESM and tags on lines of their own too.
        blank_or_not = mdx_scan.blank
    else:
        source = encode(text)
    prefix_length = heading_prefix_length(source)
    if prefix_length == 0:
        return HeadingIndex(headings=(), length=len(text), hidden=hidden)
    if mdx:
        # Moving indentation within lines keeps every line's candidates for
        # a heading: the prefix is the same before and after.
        head, blocks, tree = unindent(source[:prefix_length], _parse_blocks)
        source = head + source[prefix_length:]
    else:
        blocks, tree = _parse_blocks(source[:prefix_length])
    front_matter_byte = front_matter_end_byte(tree)
    # The tree is about 200 bytes a byte of heading-dense text (issue 42:
    # memory per document), so it is held no longer than needed. One with an
    # error is handed to the recovery, which parses the text after the error
    # again: kept here too, both trees would be held at once. One of the whole
    # text without error also holds its link labels: taken before it is
    # dropped if a heading could ask for them (holds a `[`); else, if asked
    # after all, parsed again, as they are after an error.
    whole: Tree | None = None
    if prefix_length == len(source) and not tree.root_node.has_error:
        whole = tree
    trees = [tree]
    del tree
    raw_headings = [
        RawHeading(raw.level, blocks.original(raw.start), blocks.original(raw.end), raw.setext)
        for raw in recovered_headings_taking(trees, blocks.source)
    ]
    labels: frozenset[str] | None = None
    if whole is not None and any(b"[" in source[h.start : h.end] for h in raw_headings):
        labels = _references(whole, blocks.source)
    del whole
    located = _locate(text, source, raw_headings)
    del raw_headings

    def document_labels() -> frozenset[str]:
        # Definitions may follow the last heading: they need the whole parse.
        # (Definitions are never cut: the skeleton's bytes of them are the text's.)
        if labels is not None:
            return labels
        whole_blocks, whole_tree = _parse_blocks(source)
        return _references(whole_tree, whole_blocks.source)

    references = _LazyLabels(document_labels)
    try:
        texts = [
            plain_text(heading_source(heading.content) if mdx else heading.content, references)
            for heading in located
        ]
    finally:
        # The inline reducers keep `references` in reference cycles, freed only
        # by the cyclic GC; released here, they no longer keep the parse tree
        # and the encoded document alive until then (GBs for a big document).
        references.release()
    structure = derive_structure(
        [heading.level for heading in located], [heading.start for heading in located], len(text)
    )
    front_matter_end = _front_matter_end(text, source, blocks.original(front_matter_byte))
    headings: list[Heading] = []
    for i, heading in enumerate(located):
        parent = structure.parents[i]
        path = (*headings[parent].path, texts[i]) if parent is not None else (texts[i],)
        lead_in = _lead_in(blank_or_not, heading.start, front_matter_end if i == 0 else None)
        headings.append(
            Heading(
                level=heading.level,
                text=texts[i],
                start=heading.start,
                end=heading.end,
                section_end=structure.section_ends[i],
                path=path,
                parent=parent,
                lead_in=lead_in,
            )
        )
    return HeadingIndex(headings=tuple(headings), length=len(text), hidden=hidden)


def _parse_blocks(source: bytes) -> tuple[Skeleton, Tree]:
    """The block parse of `source`'s skeleton (heading_index/skeleton.py): the
    same blocks at the same lines, a fraction of the bytes. Unless the parse
    has an error node: tree-sitter's error recovery weighs the bytes and lines
    it skips, so on a malformed document (a pipe table the grammar cannot
    parse) shorter lines can tip it to another recovery and other headings.
    Then the whole text is parsed, as it was before the skeleton."""
    blocks = skeleton(source)
    tree = parse(blocks.source)
    if tree.root_node.has_error and blocks.source is not source:
        del tree  # freed before the whole text's parse, not held beside it
        blocks = Skeleton(source, source)
        tree = parse(source)
    return blocks, tree


def _front_matter_end(text: str, source: bytes, end_byte: int) -> int:
    """Code-point offset just past the front matter, 0 without (the parser decides)."""
    end = min(end_byte, len(source))
    if end == 0 or len(source) == len(text):
        return end
    return code_point_offsets(source, [end])[0]


def _lead_in(text: str, start: int, front_matter_end: int | None) -> int:
    """Code points of blank text (spaces, tabs, line endings) right before `start`.

    For the first heading (`front_matter_end` given, 0 without front matter),
    blank text reaching back into the front matter makes everything before it
    lead-in, front matter included: a chunk starting anywhere up there holds no
    content before the heading. Heading lines and front matter fences are not
    blank, so the runs scanned for different headings never overlap: linear.
    """
    position = start
    while position > 0 and text[position - 1] in _BLANK:
        position -= 1
    if front_matter_end is not None and position <= front_matter_end:
        return start
    return start - position


def _locate(text: str, source: bytes, raw_headings: list[RawHeading]) -> list[_Located]:
    """Code-point offsets and inline source of each heading."""
    byte_offsets = sorted({offset for raw in raw_headings for offset in (raw.start, raw.end)})
    if len(source) == len(text):  # ASCII: bytes are code points
        to_code_point = {offset: offset for offset in byte_offsets}
    else:
        code_points = code_point_offsets(source, byte_offsets)
        to_code_point = dict(zip(byte_offsets, code_points, strict=True))
    located: list[_Located] = []
    for raw in raw_headings:
        start, end = to_code_point[raw.start], to_code_point[raw.end]
        if not raw.setext:  # one line
            line = text[start:end].rstrip("\r\n")
            located.append(_Located(raw.level, start, end, atx_content(line)))
            continue
        lines = lines_with_offsets(text[start:end])
        paragraph = [line.lstrip(" \t") for _, line in lines[:-1]]
        # Leading link reference definitions are not part of the heading
        # (the parser sometimes leaves them in the paragraph).
        _, used = parse_definitions(paragraph) if paragraph[0].startswith("[") else ([], 0)
        if used == len(paragraph):
            continue  # only definitions: no heading at all
        located.append(
            _Located(raw.level, start + lines[used][0], end, setext_content(paragraph[used:]))
        )
    return located


class _LazyLabels:
    """The document's link labels, collected on the first look-up.

    Only a bracket that is not an inline link asks, and most headings have
    none: then the definitions are never looked for (and the part of the
    document after the last heading never parsed). One per build_index call.
    """

    def __init__(self, collect: Callable[[], frozenset[str]]) -> None:
        self._collect: Callable[[], frozenset[str]] | None = collect
        self._labels: frozenset[str] | None = None

    def __contains__(self, label: object) -> bool:
        if self._labels is None:
            if self._collect is None:
                raise RuntimeError("the labels were released before they were collected")
            self._labels = self._collect()
        return label in self._labels

    def release(self) -> None:
        """Drop the collector (and the parse it holds); collected labels stay."""
        self._collect = None


def _references(tree: Tree, source: bytes) -> frozenset[str]:
    """Normalised labels of every link reference definition in the document."""
    sites = definition_sites(tree, source)
    labels = {
        normalize_label(source[start + 1 : end - 1].decode("utf-8", "replace"))
        for start, end in sites.labels
    }
    for start, end in sites.paragraphs:
        paragraph = source[start:end].decode("utf-8", "replace")
        lines = [line.lstrip(" \t") for _, line in lines_with_offsets(paragraph)]
        labels.update(parse_definitions(lines)[0])
    labels.discard("")
    return frozenset(labels)
