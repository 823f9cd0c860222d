"""How deeply a markdown document nests its blocks (block quotes, list items, ...).

Why it matters: cocoindex's `RecursiveSplitter(language="markdown")` bundles
tree-sitter 0.25.10 with an assertion on the external scanner's state
(`length <= 1024`): the scanner keeps one entry per open block, and a
document that opens 255 blocks at once aborts the whole process (SIGABRT),
whatever the chunk size. Measured (docs/hostile-folders.md): 254 nested
block quotes (`>>>…`, `> > …`), 254 nested list items (by indentation or
`- - …` on one line), 127 quote+list pairs, or 254 quotes holding a fenced or
indented code block split fine; one more open block aborts. A heading before
them, six levels of headings, no heading at all: the same limit. Our own
parse (py-tree-sitter 0.26) does not abort there: it stops nesting at 254.

`block_nesting_depth` measures the deepest stack of open blocks from our
parse. It is only needed for a document that could nest that deep, and
`nesting_bound` tells those apart with one regular-expression pass: a block
can open only where every enclosing block's marker or indentation is matched
on its line, each of which takes at least one column (a tab counts as four),
and a leaf block (a fence, an HTML block) adds one more. So the widest run of
container syntax at the start of any line, plus one, bounds the depth.
"""

from __future__ import annotations

import re

from mdchunks.heading_index.parse import encode, parse
from tree_sitter import Node

# The deepest stack of open blocks the splitter survives (measured, above).
SPLITTER_MAX_NESTING = 254
# Where the flow stops trusting the markdown splitter: below the measured
# limit, for open blocks the scanner keeps that our count does not see.
SAFE_NESTING = 200

# A line's leading container syntax (indentation, quote markers, list
# markers: bullets, ordinal digits and their `.`/`)`) is [ \t>*+\-0-9.)].
_TAB_COLUMNS = 4

# Blocks the scanner keeps open while it reads their content; containers
# (list, section, document) are descended through, anything else is a leaf.
_OPEN_BLOCKS = frozenset(
    {"block_quote", "list_item", "fenced_code_block", "indented_code_block", "html_block"}
)
_PASS_THROUGH = frozenset({"document", "section", "list"})


def nesting_bound(text: str, *, at_least: int = 0) -> int:
    """An upper bound of `block_nesting_depth(text)`, from line prefixes alone.

    With `at_least`, lines whose prefix cannot reach it are not measured (the
    answer is then exact only when it is `at_least` or more); one C-speed
    regular-expression scan in any case.
    """
    widest = 0
    shortest = max(1, (at_least - 1) // _TAB_COLUMNS) if at_least else 1
    # Every line starts after a line ending (one is put before the first): a
    # pattern that starts with one lets the engine skip ahead to line starts.
    line_prefix = re.compile(rf"[\r\n]([ \t>*+\-0-9.)]{{{shortest},}})")
    for found in line_prefix.finditer("\n" + text):
        prefix = found.group(1)
        widest = max(widest, len(prefix) + prefix.count("\t") * (_TAB_COLUMNS - 1))
    return widest + 1 if widest or (text and not text.isspace()) else 0


def block_nesting_depth(text: str) -> int:
    """The deepest stack of open blocks in `text` (tree-sitter-markdown's block parse).

    A block quote, a list item, a fenced or indented code block and an HTML
    block each count one; a paragraph inside them adds nothing. Our parser
    stops nesting at 254, so any depth from 254 up reads as 254.
    """
    if not text:
        return 0
    tree = parse(encode(text))
    deepest = 0
    pending: list[tuple[Node, int]] = [(tree.root_node, 0)]
    while pending:
        node, depth = pending.pop()
        for child in node.children:
            if child.type in _OPEN_BLOCKS:
                deepest = max(deepest, depth + 1)
                pending.append((child, depth + 1))
            elif child.type in _PASS_THROUGH:
                pending.append((child, depth))
    return deepest


def markdown_split_is_safe(text: str, limit: int = SAFE_NESTING) -> bool:
    """True when the markdown splitter can be given `text` without aborting
    (its nesting stays within `limit`). Parses only a document whose line
    prefixes could nest that deep: almost none."""
    if nesting_bound(text, at_least=limit + 1) <= limit:
        return True
    return block_nesting_depth(text) <= limit
