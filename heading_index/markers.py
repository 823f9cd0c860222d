"""A heading's source lines -> the raw inline source of its text.

ATX: opening `#`s and the optional closing sequence removed. Setext: the
underline dropped and the paragraph lines kept (joined by newlines; the
inline reducer turns those into spaces). Both: a trailing attribute block
(`{#id .class}`: Pandoc, kramdown, MkDocs, VitePress) removed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# CommonMark line endings only: str.splitlines() would also split on
# \v, \f, \x1c-\x1e, \x85, \u2028 and \u2029, which are ordinary characters here.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
_SPACE_OR_TAB = " \t"
# `{#id}`, `{.class}`, `{#id .class key=value}`, `{: #id }`, `{-}`: at the very
# end, after whitespace (so an escaped `\{` or a word{brace} is left alone).
_ATTRIBUTE_BLOCK = re.compile(r"(?:^|[ \t])\{[ \t]*:?[ \t]*(?:[#.][^{}\r\n]*|-[ \t]*)\}[ \t]*$")


def lines_with_offsets(text: str) -> list[tuple[int, str]]:
    """(offset, line without its ending) for each line of `text`."""
    found: list[tuple[int, str]] = []
    for match in _LINE.finditer(text):
        line = match.group(0)
        if not line:
            break  # the empty match at the very end
        found.append((match.start(), line.rstrip("\r\n")))
        if match.end() == len(text):
            break
    return found


def strip_attribute_block(content: str) -> str:
    return _ATTRIBUTE_BLOCK.sub("", content)


def atx_content(line: str) -> str:
    """Inline source of an ATX heading line (`  ## Title ## {#t}` -> `Title`)."""
    after_marker = line.lstrip(_SPACE_OR_TAB).lstrip("#")
    # Attributes may sit after the closing sequence (Pandoc) or before it.
    content = strip_attribute_block(after_marker).rstrip(_SPACE_OR_TAB)
    # A closing sequence counts only when a space or tab precedes it (or it is
    # all there is): `# foo#` and `# foo \#` keep their hashes.
    without_closing = content.rstrip("#")
    if without_closing == "" or without_closing[-1] in _SPACE_OR_TAB:
        content = strip_attribute_block(without_closing)
    return content.strip(_SPACE_OR_TAB)


def setext_content(lines: Sequence[str]) -> str:
    """Inline source of a setext heading's paragraph lines (underline excluded)."""
    joined = "\n".join(line.lstrip(_SPACE_OR_TAB) for line in lines)
    return strip_attribute_block(joined.rstrip(_SPACE_OR_TAB)).rstrip(_SPACE_OR_TAB)
