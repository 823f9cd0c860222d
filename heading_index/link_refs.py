"""Link reference definitions (`[label]: /url "title"`) at the start of a paragraph.

Heading text needs them twice: `[text][label]` is a link (reduced to `text`)
only if `label` is defined somewhere in the document, and a setext "heading"
whose paragraph starts with definitions starts after them (or is no heading
at all when nothing else is left). tree-sitter-markdown 0.5 misses some
definitions (one-character labels, definitions opening a setext heading's
paragraph), so paragraphs are re-read here. The rules follow markdown-it's
`reference` block rule, applied to a paragraph's lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from mdchunks.heading_index.inline_syntax import (
    link_destination,
    link_title_end,
    normalize_label,
    unescape,
    valid_link,
)


def parse_definitions(lines: Sequence[str]) -> tuple[list[str], int]:
    """Labels defined by the leading definitions of a paragraph, and lines used.

    `lines` are the paragraph's lines without line endings or indentation.
    Returns the normalised labels (in order) and how many lines they occupy.
    """
    text = "\n".join(lines) + "\n"  # joined once: no copy per definition
    labels: list[str] = []
    pos = 0
    while pos < len(text) and text[pos] == "[":
        found = _one_definition(text, pos)
        if found is None:
            break
        label, pos = found
        labels.append(label)
    return labels, text.count("\n", 0, pos)


def _one_definition(text: str, start: int) -> tuple[str, int] | None:
    """The definition at `start` (a line start): (label, start of the line after it)."""
    size = len(text)
    # Label: up to the first unescaped `]`; a `[` inside is not allowed.
    pos = start + 1
    label_end = -1
    while pos < size:
        char = text[pos]
        if char == "[":
            return None
        if char == "]":
            label_end = pos
            break
        if char == "\\":
            pos += 1
        pos += 1
    if label_end < 0 or text[label_end + 1 : label_end + 2] != ":":
        return None
    pos = _skip(text, label_end + 2, " \t\n")
    destination = link_destination(text, pos, size)
    if not destination.ok or not valid_link(destination.value):
        return None
    # An optional title, separated by whitespace, then nothing else on its line;
    # if the title fails that test, the definition ends after the destination.
    end = _definition_end(text, destination.pos)
    if end < 0:
        return None
    label = normalize_label(text[start + 1 : label_end])
    if not label:
        return None
    return label, end + 1


def _definition_end(text: str, destination_end: int) -> int:
    """Position of the line ending that closes the definition, or -1."""
    pos = _skip(text, destination_end, " \t\n")
    if pos > destination_end:
        title_end = link_title_end(text, pos, len(text))
        if title_end >= 0:
            after_title = _skip(text, title_end, " \t")
            if text[after_title] == "\n":
                return after_title
            if not unescape(text[pos + 1 : title_end - 1]):
                return -1  # markdown-it retries without the title only if it is non-empty
    after_destination = _skip(text, destination_end, " \t")
    return after_destination if text[after_destination] == "\n" else -1


def _skip(text: str, pos: int, chars: str) -> int:
    while pos < len(text) - 1 and text[pos] in chars:
        pos += 1
    return pos
